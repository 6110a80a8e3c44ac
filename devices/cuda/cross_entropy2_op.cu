// cross_entropy2_op.cu: ops_nn's cross_entropy2 on the GPU: Y = -log(X[Label]) per row with
// Fluid's log(0) guard, MatchX = X[Label] (1 for ignore_index) for the grad, which reads MatchX and
// XShape instead of X (tide/ops/cross_entropy.hpp). A label out of range is a device error naming
// the op; its row's Y and MatchX are NaN, its X@GRAD row 0.
#include <tide/ops/cross_entropy.hpp>

#include "gpu.h"

namespace tide_cuda {
namespace {

const int64_t* Int64Labels(const KernelContext& ctx, const Tensor& label) {
  TIDE_CHECK(label.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': Label ('",
             ctx.InputName("Label"), "') must be int64, got ", tide::DataTypeName(label.dtype()));
  return label.data<int64_t>();
}

template <typename T>
__global__ void Xe2Kernel(const T* x, const int64_t* label, int64_t ignore, T* y, T* match,
                          int64_t n, int64_t d, int* err) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t cls = label[i];
    if (cls == ignore) {
      match[i] = T(1);
      y[i] = T(0);
    } else if (cls < 0 || cls >= d) {
      RaiseDeviceError(err, kCrossEntropy2LabelOutOfRange);
      match[i] = y[i] = T(NAN);
    } else {
      match[i] = x[i * d + cls];
      y[i] = -tide::ops::TolerableLog(match[i]);
    }
  }
}

template <typename T>
void Xe2(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  tide::ops::CheckCrossEntropyLabel(ctx.op_type(), x.dims(), label.dims(), false);
  const int64_t* l = Int64Labels(ctx, label);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const auto [n, d] = tide::ops::GetXeRows(x.dims());
  Dims yd = x.dims();
  yd.back() = 1;
  T* y = ctx.Output("Y").mutable_data<T>(yd, g.place());
  T* match = ctx.Output("MatchX").mutable_data<T>(yd, g.place());
  if (Tensor xs = ctx.OptionalOutput("XShape"))
    xs.mutable_data<T>(tide::ops::XShapeDims(x.dims()), g.place());
  Launch(g, "Xe2Kernel", n, Xe2Kernel<T>, x.data<T>(), l, ignore, y, match, n, d, g.error_word());
}

// X@GRAD[i, Label[i]] = -Y@GRAD[i] / max(MatchX[i], 1e-20), 0 elsewhere and for ignore_index.
template <typename T>
__global__ void Xe2GradKernel(const int64_t* label, int64_t ignore, const T* match, const T* dy,
                              T* dx, int64_t n, int64_t d, int* err) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t cls = label[i];
    if (cls == ignore) continue;
    if (cls < 0 || cls >= d) {
      RaiseDeviceError(err, kCrossEntropy2LabelOutOfRange);
      continue;
    }
    dx[i * d + cls] = -dy[i] / tide::ops::SafeDenominator(match[i]);
  }
}

template <typename T>
void Xe2Grad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor label = ctx.Input("Label"), match = ctx.Input("MatchX");
  Tensor dy = ctx.Input(GradVarName("Y").c_str());
  const Dims xd = tide::ops::CrossEntropy2GradXDims(ctx.op_type(), ctx.Input("XShape").dims(),
                                                    label.dims(), match.dims(), dy.dims());
  const int64_t* l = Int64Labels(ctx, label);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const auto [n, d] = tide::ops::GetXeRows(xd);
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(xd, g.place());
  g.Zero(dx, sizeof(T) * size_t(n * d));
  Launch(g, "Xe2GradKernel", n, Xe2GradKernel<T>, l, ignore, match.data<T>(), dy.data<T>(), dx, n,
         d, g.error_word());
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("cross_entropy2", "gpu", Xe2, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross_entropy2_grad", "gpu", Xe2Grad, TIDE_CUDA_FLOAT_TYPES);
