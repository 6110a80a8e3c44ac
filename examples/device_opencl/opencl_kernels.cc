// opencl_kernels.cc: the "opencl" place's kernels, enough to train an MLP or fit_a_line on the
// device: elementwise_add / sub / mul and their grads, relu, square, scale, fill_constant, mul,
// matmul_v2 (forward), mean, softmax_with_cross_entropy, sgd. Each reads its inputs' shapes and
// attributes through the SDK's shared op semantics (tide/ops/*.hpp), so it computes the shapes
// and raises the errors Tide's CPU kernels do, and queues kernels.cl's kernels on its place's
// command queue without waiting. What a kernel does not implement (a general or numpy
// broadcast, double on a device without fp64, fill_constant's tensor inputs) it declines before
// writing anything: the core then runs the CPU's kernel with copies.
#include <cstring>
#include <string>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/elementwise.hpp>
#include <tide/ops/fill_value.hpp>
#include <tide/ops/loss.hpp>
#include <tide/ops/matmul_v2.hpp>
#include <tide/ops/scale.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

#include "opencl_runtime.h"

namespace tide_opencl {
namespace {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::Tensor;

template <typename T>
constexpr int kDtype = std::is_same_v<T, double> ? 1 : 0;

// The place's context, after declining a double kernel on a device without fp64.
template <typename T>
const Context& Ready(const KernelContext& ctx) {
  const Context& c = ContextOf(ctx);
  if (!c.kernels[kDtype<T>])
    TIDE_THROW(TIDE_UNIMPLEMENTED, "opencl kernel of '", ctx.op_type(), "': device ",
               ctx.place().ToString(), " has no cl_khr_fp64");
  return c;
}

template <typename T>
Launch Kernel(const KernelContext& ctx, const Context& c, const char* name) {
  return Launch(ctx, c, kDtype<T>, name);
}

// Fluid's broadcast of Y over X as [pre, n, post], or a decline, from the SDK's check-only reader
// (GetElementwiseShape, or GetElementwiseGradShape for a grad: Out@GRAD's dims checked too), so
// that the decline comes before any output is allocated: the general pairing (a size-1 dim inside
// Y's range) and numpy's rule (Y bigger than X somewhere) are the CPU kernel's.
tide::ops::Broadcast FluidBroadcastOrDecline(const KernelContext& ctx, bool grad) {
  const tide::ops::ElementwiseShape s =
      grad ? tide::ops::GetElementwiseGradShape(ctx) : tide::ops::GetElementwiseShape(ctx);
  const Dims x = ctx.Input("X").dims(), y = ctx.Input("Y").dims();
  if (s.numpy)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "opencl kernel of '", ctx.op_type(), "': X ", tide::ToString(x),
               " and Y ", tide::ToString(y),
               " broadcast by numpy's rule, which this kernel does not implement");
  tide::ops::Broadcast bc = s.b;
  if (bc.general)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "opencl kernel of '", ctx.op_type(), "': Y ", tide::ToString(y),
               " repeats inside X ", tide::ToString(x),
               ", a broadcast this kernel does not implement");
  if (bc.same) bc.pre = 1, bc.n = tide::ops::DimsProduct(x), bc.post = 1;
  return bc;
}

template <int Op>
struct BinaryKernel {
  template <typename T>
  static void Run(KernelContext& ctx) {
    const Context& c = Ready<T>(ctx);
    Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
    const tide::ops::Broadcast bc = FluidBroadcastOrDecline(ctx, /*grad=*/false);
    const T* a = x.data<T>();
    const T* b = y.data<T>();
    T* o = out.mutable_data<T>(x.dims(), ctx.place());
    const cl_long total = x.numel();
    Kernel<T>(ctx, c, "binary")
        .Run1D(total, cl_int(Op), total, cl_long(bc.n), cl_long(bc.post), a, b, o);
  }
  template <typename T>
  static void Grad(KernelContext& ctx) {
    const Context& c = Ready<T>(ctx);
    Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
    const tide::ops::Broadcast bc = FluidBroadcastOrDecline(ctx, /*grad=*/true);
    const T* xd = x.data<T>();
    const T* yd = y.data<T>();
    const T* g = dout.data<T>();
    Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str());
    Tensor dy = ctx.OptionalOutput(GradVarName("Y").c_str());
    const cl_long total = x.numel();
    if (dx)
      Kernel<T>(ctx, c, "binary_grad_x")
          .Run1D(total, cl_int(Op), total, cl_long(bc.n), cl_long(bc.post), yd, g,
                 dx.mutable_data<T>(x.dims(), ctx.place()));
    if (dy)
      Kernel<T>(ctx, c, "binary_grad_y")
          .Run1D(bc.n, cl_int(Op), cl_long(bc.pre), cl_long(bc.n), cl_long(bc.post), xd, g,
                 dy.mutable_data<T>(y.dims(), ctx.place()));
  }
};

// Out = f(X) and X@GRAD = f'(X or Out) * Out@GRAD, one element each.
template <typename T>
void Unary(KernelContext& ctx, const char* kernel) {
  const Context& c = Ready<T>(ctx);
  Tensor x = ctx.Input("X");
  const T* a = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  Kernel<T>(ctx, c, kernel).Run1D(x.numel(), cl_long(x.numel()), a, o);
}
template <typename T>
void UnaryGrad(KernelContext& ctx, const char* input, const char* kernel) {
  const Context& c = Ready<T>(ctx);
  Tensor in = ctx.Input(input), dout = ctx.Input(GradVarName("Out").c_str());
  const T* a = in.data<T>();
  const T* g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(in.dims(), ctx.place());
  Kernel<T>(ctx, c, kernel).Run1D(in.numel(), cl_long(in.numel()), a, g, dx);
}
template <typename T>
void Relu(KernelContext& ctx) {
  Unary<T>(ctx, "relu");
}
template <typename T>
void ReluGrad(KernelContext& ctx) {
  UnaryGrad<T>(ctx, "Out", "relu_grad");
}
template <typename T>
void Square(KernelContext& ctx) {
  Unary<T>(ctx, "square");
}
template <typename T>
void SquareGrad(KernelContext& ctx) {
  UnaryGrad<T>(ctx, "X", "square_grad");
}

// ScaleTensor is a host input: its value is read on the host when the kernel launches.
template <typename T>
void Scale(KernelContext& ctx) {
  const Context& c = Ready<T>(ctx);
  if (ctx.InputVar("X").IsSelectedRows())
    TIDE_THROW(TIDE_UNIMPLEMENTED, "opencl kernel of 'scale': SelectedRows X is the CPU's");
  Tensor x = ctx.Input("X");
  const double s = tide::ops::ScaleFactor(ctx);
  double b = ctx.Attr<float>("bias");
  if (!ctx.Attr<bool>("bias_after_scale")) b *= s;  // scale * (x + bias)
  const T* a = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  Kernel<T>(ctx, c, "scale").Run1D(x.numel(), cl_long(x.numel()), T(s), T(b), a, o);
}

// Any element type: a fill of the value's bytes (clEnqueueSVMMemFill takes patterns of 1 to 128
// bytes), no kernel needed.
template <typename T>
void FillConstant(KernelContext& ctx) {
  if (ctx.HasInput("ShapeTensor") || ctx.HasInput("ShapeTensorList") || ctx.HasInput("ValueTensor"))
    TIDE_THROW(TIDE_UNIMPLEMENTED,
               "opencl kernel of 'fill_constant': takes the shape and value attributes only");
  const Context& c = ContextOf(ctx);
  const T v = tide::ops::FillValue<T>(ctx, [](const char*) -> tide::ops::Number {
    TIDE_THROW(TIDE_INTERNAL, "unreachable: ValueTensor declined");
  });
  const auto shape = ctx.Attr<std::vector<int64_t>>("shape");
  T* o = ctx.Output("Out").mutable_data<T>(Dims(shape.begin(), shape.end()), ctx.place());
  const size_t n = static_cast<size_t>(tide::ops::DimsProduct(Dims(shape.begin(), shape.end())));
  if (n == 0) return;
  TIDE_CL_CHECK(clEnqueueSVMMemFill(c.queue, o, &v, sizeof(T), n * sizeof(T), 0, nullptr, nullptr),
                "fill_constant of ", n, " elements");
}

// Out[M, N] = X[M, K] Y[K, N], X and Y flattened to 2-D at their num_col_dims.
template <typename T>
void Mul(KernelContext& ctx) {
  const Context& c = Ready<T>(ctx);
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  const auto [m, k] = tide::ops::Flatten2D(x.dims(), xc);
  const auto [k2, n] = tide::ops::Flatten2D(y.dims(), yc);
  TIDE_CHECK(k == k2, "op '", ctx.op_type(), "': X ", tide::ToString(x.dims()), " has ", k,
             " columns, Y ", tide::ToString(y.dims()), " has ", k2, " rows");
  const Dims xd = x.dims(), yd = y.dims();  // dims() returns a copy
  Dims out_dims(xd.begin(), xd.begin() + xc);
  out_dims.insert(out_dims.end(), yd.begin() + yc, yd.end());
  const T* a = x.data<T>();
  const T* b = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(out_dims, ctx.place());
  Kernel<T>(ctx, c, "gemm")
      .Run({size_t(n), size_t(m), 1}, {16, 16, 1}, 2, cl_int(0), cl_int(0), cl_long(m), cl_long(n),
           cl_long(k), a, b, o);
}

// dX = dOut Y^T, dY = X^T dOut.
template <typename T>
void MulGrad(KernelContext& ctx) {
  const Context& c = Ready<T>(ctx);
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  const auto [m, k] = tide::ops::Flatten2D(x.dims(), xc);
  const int64_t n = tide::ops::Flatten2D(y.dims(), yc).second;
  TIDE_CHECK(dout.numel() == m * n, "op '", ctx.op_type(), "': Out@GRAD ",
             tide::ToString(dout.dims()), " does not hold ", m, " x ", n, " elements");
  const T* a = x.data<T>();
  const T* b = y.data<T>();
  const T* g = dout.data<T>();
  if (Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str()))  // [M, K] = [M, N] [N, K]
    Kernel<T>(ctx, c, "gemm")
        .Run({size_t(k), size_t(m), 1}, {16, 16, 1}, 2, cl_int(0), cl_int(1), cl_long(m),
             cl_long(k), cl_long(n), g, b, dx.mutable_data<T>(x.dims(), ctx.place()));
  if (Tensor dy = ctx.OptionalOutput(GradVarName("Y").c_str()))  // [K, N] = [K, M] [M, N]
    Kernel<T>(ctx, c, "gemm")
        .Run({size_t(n), size_t(k), 1}, {16, 16, 1}, 2, cl_int(1), cl_int(0), cl_long(k),
             cl_long(n), cl_long(m), a, g, dy.mutable_data<T>(y.dims(), ctx.place()));
}

// matmul_v2 forward: one gemm per batch matrix of Out, at the SDK's offsets (numpy's batch
// broadcast included). Its grad has no OpenCL kernel: it runs on the CPU.
template <typename T>
void MatmulV2(KernelContext& ctx) {
  const Context& c = Ready<T>(ctx);
  const tide::ops::MatmulV2Args<T> a = tide::ops::GetMatmulV2Args<T>(ctx);
  const auto& s = a.s;
  for (int64_t i = 0; i < s.batch; ++i)
    Kernel<T>(ctx, c, "gemm")
        .Run({size_t(s.n), size_t(s.m), 1}, {16, 16, 1}, 2, cl_int(s.tx), cl_int(s.ty),
             cl_long(s.m), cl_long(s.n), cl_long(s.k), a.x + s.x_off[i] * s.m * s.k,
             a.y + s.y_off[i] * s.k * s.n, a.out + i * s.m * s.n);
}

template <typename T>
void Mean(KernelContext& ctx) {
  const Context& c = Ready<T>(ctx);
  Tensor x = ctx.Input("X");
  const T* a = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(Dims{1}, ctx.place());
  Kernel<T>(ctx, c, "mean").Run({64, 1, 1}, {64, 1, 1}, 1, cl_long(x.numel()), a, o);
}

template <typename T>
void MeanGrad(KernelContext& ctx) {
  const Context& c = Ready<T>(ctx);
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const T* g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  Kernel<T>(ctx, c, "mean_grad").Run1D(x.numel(), cl_long(x.numel()), g, dx);
}

// The host's copy of Label (a host input) on the device, in a scratch block of the kernel's
// that work queued now may still read. The bytes are taken before this returns.
template <typename L>
const L* UploadLabel(const KernelContext& ctx, const Context& c, const Tensor& label) {
  const size_t n = static_cast<size_t>(label.numel());
  L* d = ctx.TempBuffer<L>(n ? n : 1);
  Upload(c.queue, d, label.data<L>(), n * sizeof(L));
  return d;
}

// Hard labels are read on the host (a host input), where a label outside [0, K) is the error the
// CPU kernel raises: an OpenCL kernel has no way to fail one op.
template <typename T>
void SoftmaxXent(KernelContext& ctx) {
  if (ctx.HasAttr("use_softmax") && !ctx.Attr<bool>("use_softmax"))
    TIDE_THROW(TIDE_UNIMPLEMENTED,
               "opencl kernel of 'softmax_with_cross_entropy': use_softmax = false is the CPU's");
  const Context& c = Ready<T>(ctx);
  Tensor label = ctx.Input("Label");
  const tide::ops::SwceArgs<T> a = tide::ops::GetSwceArgs<T>(ctx);
  const bool soft = a.label.soft != nullptr;
  if (!soft) tide::ops::CheckHardLabels(ctx, a.label.hard, a.rows(), a.v.k, a.ignore);
  const int64_t* hard = soft ? reinterpret_cast<const int64_t*>(a.logits)  // unread
                             : UploadLabel<int64_t>(ctx, c, label);
  const T* soft_label = soft ? UploadLabel<T>(ctx, c, label) : a.logits;  // unread when hard
  Kernel<T>(ctx, c, "softmax_xent")
      .Run1D(a.rows(), cl_long(a.rows()), cl_long(a.v.k), cl_long(a.v.post), cl_int(soft),
             cl_long(a.ignore), a.logits, hard, soft_label, a.softmax, a.loss);
}

template <typename T>
void SoftmaxXentGrad(KernelContext& ctx) {
  if (ctx.HasAttr("use_softmax") && !ctx.Attr<bool>("use_softmax"))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "opencl kernel of 'softmax_with_cross_entropy_grad': ",
               "use_softmax = false is the CPU's");
  const Context& c = Ready<T>(ctx);
  Tensor label = ctx.Input("Label");
  const tide::ops::SwceGradArgs<T> a = tide::ops::GetSwceGradArgs<T>(ctx);
  const bool soft = a.label.soft != nullptr;
  if (!soft) tide::ops::CheckHardLabels(ctx, a.label.hard, a.rows(), a.v.k, a.ignore);
  const int64_t* hard =
      soft ? reinterpret_cast<const int64_t*>(a.softmax) : UploadLabel<int64_t>(ctx, c, label);
  const T* soft_label = soft ? UploadLabel<T>(ctx, c, label) : a.softmax;
  Kernel<T>(ctx, c, "softmax_xent_grad")
      .Run1D(a.rows(), cl_long(a.rows()), cl_long(a.v.k), cl_long(a.v.post), cl_int(soft),
             cl_long(a.ignore), a.softmax, hard, soft_label, a.dloss, a.dlogits);
}

// ParamOut = Param - LearningRate * Grad, all on the device (LearningRate float32 or T).
template <typename T>
void Sgd(KernelContext& ctx) {
  if (!ctx.InputVar("Grad").IsTensor())
    TIDE_THROW(TIDE_UNIMPLEMENTED, "opencl kernel of 'sgd': a SelectedRows Grad is the CPU's");
  const Context& c = Ready<T>(ctx);
  Tensor param = ctx.Input("Param"), grad = ctx.Input("Grad"), lr = ctx.Input("LearningRate");
  TIDE_CHECK(grad.numel() == param.numel(), "op 'sgd': Grad has ", grad.numel(),
             " elements, Param ", param.numel());
  const bool lr_float = lr.dtype() == TIDE_FP32;
  if (!lr_float && lr.dtype() != tide::DataTypeOf<T>())
    TIDE_THROW(TIDE_UNIMPLEMENTED, "opencl kernel of 'sgd': LearningRate of ",
               tide::DataTypeName(lr.dtype()), " with ", tide::DataTypeName(param.dtype()),
               " parameters");
  const T* p = param.data<T>();
  const T* g = grad.data<T>();
  T* o = ctx.Output("ParamOut").mutable_data<T>(param.dims(), ctx.place());
  const cl_long n = param.numel();
  if (lr_float)
    Kernel<T>(ctx, c, "sgd").Run1D(n, n, p, g, lr.data<float>(), o);
  else
    Kernel<T>(ctx, c, "sgd_lr_t").Run1D(n, n, p, g, lr.data<T>(), o);
}

}  // namespace
}  // namespace tide_opencl

namespace ocl = tide_opencl;
TIDE_REGISTER_KERNEL("elementwise_add", "opencl", ocl::BinaryKernel<0>::Run, float, double);
TIDE_REGISTER_KERNEL("elementwise_sub", "opencl", ocl::BinaryKernel<1>::Run, float, double);
TIDE_REGISTER_KERNEL("elementwise_mul", "opencl", ocl::BinaryKernel<2>::Run, float, double);
TIDE_REGISTER_KERNEL("elementwise_add_grad", "opencl", ocl::BinaryKernel<0>::Grad, float, double);
TIDE_REGISTER_KERNEL("elementwise_sub_grad", "opencl", ocl::BinaryKernel<1>::Grad, float, double);
TIDE_REGISTER_KERNEL("elementwise_mul_grad", "opencl", ocl::BinaryKernel<2>::Grad, float, double);
TIDE_REGISTER_KERNEL("relu", "opencl", ocl::Relu, float, double);
TIDE_REGISTER_KERNEL("relu_grad", "opencl", ocl::ReluGrad, float, double);
TIDE_REGISTER_KERNEL("square", "opencl", ocl::Square, float, double);
TIDE_REGISTER_KERNEL("square_grad", "opencl", ocl::SquareGrad, float, double);
TIDE_REGISTER_KERNEL_HOST_INPUTS("scale", "opencl", TIDE_HOST_INPUTS("ScaleTensor"), ocl::Scale,
                                 float, double);
TIDE_REGISTER_KERNEL("fill_constant", "opencl", ocl::FillConstant, float, double, int32_t, int64_t);
TIDE_REGISTER_KERNEL("mul", "opencl", ocl::Mul, float, double);
TIDE_REGISTER_KERNEL("mul_grad", "opencl", ocl::MulGrad, float, double);
TIDE_REGISTER_KERNEL("matmul_v2", "opencl", ocl::MatmulV2, float, double);
TIDE_REGISTER_KERNEL("mean", "opencl", ocl::Mean, float, double);
TIDE_REGISTER_KERNEL("mean_grad", "opencl", ocl::MeanGrad, float, double);
TIDE_REGISTER_KERNEL_HOST_INPUTS("softmax_with_cross_entropy", "opencl", TIDE_HOST_INPUTS("Label"),
                                 ocl::SoftmaxXent, float, double);
TIDE_REGISTER_KERNEL_HOST_INPUTS("softmax_with_cross_entropy_grad", "opencl",
                                 TIDE_HOST_INPUTS("Label"), ocl::SoftmaxXentGrad, float, double);
TIDE_REGISTER_KERNEL("sgd", "opencl", ocl::Sgd, float, double);
