// tide/ops/grad_outputs.hpp: a grad op's outputs: their shape inference where each input's
// gradient is shaped as the input; the gradient of an input, allocated on the kernel's place where
// the grad op has it (a gradient nobody needs is left out of the op); and the data of a two-input
// op's grad (X, Y, Out@GRAD in; X@GRAD, Y@GRAD out).
#ifndef TIDE_OPS_GRAD_OUTPUTS_HPP_
#define TIDE_OPS_GRAD_OUTPUTS_HPP_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// Grad shape inference: for each forward input `p` whose gradient the grad op outputs, each part
// of p@GRAD gets the dims and data type of that part of p (and its LoD with `share_lod`).
inline void GradsLikeInputs(InferShapeContext& ctx, std::initializer_list<const char*> params,
                            bool share_lod = false) {
  for (const char* p : params) {
    const std::string g = GradVarName(p);
    if (!ctx.HasOutput(g.c_str())) continue;
    for (size_t i = 0; i < ctx.OutputCount(g.c_str()); ++i) {
      ctx.SetOutputDims(g.c_str(), ctx.InputDims(p, i), i);
      ctx.SetOutputDataType(g.c_str(), ctx.InputDataType(p, i), i);
      if (share_lod) ctx.ShareLoD(p, g.c_str(), i, i);
    }
  }
}

// The gradient of input `param` (output param@GRAD; part i of a duplicable one) allocated with
// `dims`; null when the grad op does not have it.
template <typename T>
T* OptionalGrad(const KernelContext& ctx, const char* param, const Dims& dims, size_t i = 0) {
  Tensor t = ctx.OptionalOutput(GradVarName(param).c_str(), i);
  return t ? t.mutable_data<T>(dims, ctx.place()) : nullptr;
}

// X, Y and Out@GRAD's data, X@GRAD and Y@GRAD where wanted (X's and Y's dims).
template <typename T>
struct BinaryGradData {
  int64_t x_numel, y_numel;
  const T* x;
  const T* y;
  const T* dout;
  T* dx;
  T* dy;
};

template <typename T>
BinaryGradData<T> GetBinaryGradData(const KernelContext& ctx, const Tensor& x, const Tensor& y,
                                    const Tensor& dout) {
  return {x.numel(),
          y.numel(),
          x.data<T>(),
          y.data<T>(),
          dout.data<T>(),
          OptionalGrad<T>(ctx, "X", x.dims()),
          OptionalGrad<T>(ctx, "Y", y.dims())};
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_GRAD_OUTPUTS_HPP_
