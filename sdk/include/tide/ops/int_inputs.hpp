// tide/ops/int_inputs.hpp: Paddle 2.x's tensor-valued attributes (ShapeTensor, AxisTensor,
// StartsTensorList, an index tensor...): the int32 or int64 values an op reads from an input (and
// the one float of a factor such as the interps' Scale), with the errors every implementation
// gives. Header only; host data (the core hands such inputs to a kernel on the host, or the kernel
// copies them there first).
#ifndef TIDE_OPS_INT_INPUTS_HPP_
#define TIDE_OPS_INT_INPUTS_HPP_

#include <tide/plugin.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tide {
namespace ops {

// The int32 or int64 values of input `param`'s i-th variable.
inline std::vector<int64_t> IntValues(const KernelContext& ctx, const char* param, size_t i = 0) {
  Tensor t = ctx.Input(param, i);
  if (t.dtype() == TIDE_INT32)
    return std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + t.numel());
  TIDE_CHECK(t.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param, i), "') must be int32 or int64, got ", DataTypeName(t.dtype()));
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

// The one value of input `param`'s i-th variable.
inline int64_t IntScalar(const KernelContext& ctx, const char* param, size_t i = 0) {
  const std::vector<int64_t> v = IntValues(ctx, param, i);
  TIDE_CHECK(v.size() == 1, "op '", ctx.op_type(), "': ", param, "[", i, "] ('",
             ctx.InputName(param, i), "') must hold one value, got ", v.size());
  return v[0];
}

// One value from each variable of a duplicable input (a Paddle "...TensorList").
inline std::vector<int64_t> IntScalars(const KernelContext& ctx, const char* param) {
  std::vector<int64_t> v;
  for (size_t i = 0; i < ctx.InputCount(param); ++i) v.push_back(IntScalar(ctx, param, i));
  return v;
}

// The one value of float32 or float64 input `param` (a factor given as a tensor).
inline double FloatScalar(const KernelContext& ctx, const char* param) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.dtype() == TIDE_FP32 || t.dtype() == TIDE_FP64, "op '", ctx.op_type(), "': ", param,
             " ('", ctx.InputName(param), "') must be float32 or float64, got ",
             DataTypeName(t.dtype()));
  TIDE_CHECK(t.numel() == 1, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') must hold one value, got ", t.numel());
  return t.dtype() == TIDE_FP32 ? t.data<float>()[0] : t.data<double>()[0];
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_INT_INPUTS_HPP_
