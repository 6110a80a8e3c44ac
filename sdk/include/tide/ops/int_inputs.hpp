// tide/ops/int_inputs.hpp: Paddle 2.x's tensor-valued attributes (ShapeTensor, AxisTensor,
// StartsTensorList, an index tensor...): the int32 or int64 values an op reads from an input (and
// the one float of a factor such as the interps' Scale, the one number of a value such as
// fill_constant's ValueTensor), with the errors every implementation gives. Header only; host data
// (the core hands such inputs to a kernel on the host, or the kernel copies them there first).
#ifndef TIDE_OPS_INT_INPUTS_HPP_
#define TIDE_OPS_INT_INPUTS_HPP_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// How a kernel reads a small input on the host: `read(tensor, dst, bytes)` puts the first `bytes`
// bytes of the tensor's data at host memory `dst`. A host kernel's inputs are there already
// (ReadOnHost); a device kernel passes a reader that copies them back from its device first.
struct ReadOnHost {
  void operator()(const Tensor& t, void* dst, size_t bytes) const {
    if (bytes) std::memcpy(dst, t.raw_data(), bytes);
  }
};

// The int32 or int64 values of input `param`'s i-th variable.
template <typename Read = ReadOnHost>
std::vector<int64_t> IntValues(const KernelContext& ctx, const char* param, size_t i = 0,
                               Read read = {}) {
  Tensor t = ctx.Input(param, i);
  const TideDataType dt = t.dtype();
  TIDE_CHECK(dt == TIDE_INT32 || dt == TIDE_INT64, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param, i), "') must be int32 or int64, got ", DataTypeName(dt));
  const size_t n = static_cast<size_t>(t.numel());
  if (dt == TIDE_INT64) {
    std::vector<int64_t> v(n);
    read(t, v.data(), n * sizeof(int64_t));
    return v;
  }
  std::vector<int32_t> v(n);
  read(t, v.data(), n * sizeof(int32_t));
  return std::vector<int64_t>(v.begin(), v.end());
}

// The one value of input `param`'s i-th variable.
template <typename Read = ReadOnHost>
int64_t IntScalar(const KernelContext& ctx, const char* param, size_t i = 0, Read read = {}) {
  const std::vector<int64_t> v = IntValues(ctx, param, i, read);
  TIDE_CHECK(v.size() == 1, "op '", ctx.op_type(), "': ", param, "[", i, "] ('",
             ctx.InputName(param, i), "') must hold one value, got ", v.size());
  return v[0];
}

// One value from each variable of a duplicable input (a Paddle "...TensorList").
template <typename Read = ReadOnHost>
std::vector<int64_t> IntScalars(const KernelContext& ctx, const char* param, Read read = {}) {
  std::vector<int64_t> v;
  for (size_t i = 0; i < ctx.InputCount(param); ++i) v.push_back(IntScalar(ctx, param, i, read));
  return v;
}

// Input `param`'s int64 values narrowed to int32 for an int32 attribute (sections, axes); a value
// outside int32 is refused, naming the op and the input, never wrapped.
inline std::vector<int32_t> AsInt32s(const KernelContext& ctx, const char* param,
                                     const std::vector<int64_t>& v) {
  for (int64_t x : v)
    TIDE_CHECK(x >= INT32_MIN && x <= INT32_MAX, "op '", ctx.op_type(), "': ", param, " ('",
               ctx.InputName(param), "') holds ", x, ", outside int32");
  return std::vector<int32_t>(v.begin(), v.end());
}

// The one value of float32 or float64 input `param` (a factor given as a tensor).
template <typename Read = ReadOnHost>
double FloatScalar(const KernelContext& ctx, const char* param, Read read = {}) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.dtype() == TIDE_FP32 || t.dtype() == TIDE_FP64, "op '", ctx.op_type(), "': ", param,
             " ('", ctx.InputName(param), "') must be float32 or float64, got ",
             DataTypeName(t.dtype()));
  TIDE_CHECK(t.numel() == 1, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') must hold one value, got ", t.numel());
  if (t.dtype() == TIDE_FP64) {
    double d;
    read(t, &d, sizeof d);
    return d;
  }
  float f;
  read(t, &f, sizeof f);
  return f;
}

// The one element of a float32, float64, int32 or int64 input (fill_constant's ValueTensor,
// scale's ScaleTensor) as it is stored: an integer stays exact.
struct Number {
  bool is_int = false;
  int64_t i = 0;
  double f = 0;
  double AsDouble() const { return is_int ? static_cast<double>(i) : f; }
};

template <typename Read = ReadOnHost>
Number NumberInput(const KernelContext& ctx, const char* param, Read read = {}) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == 1, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') must hold one element, got ", ToString(t.dims()));
  Number n;
  switch (t.dtype()) {
    case TIDE_FP32: {
      float v;
      read(t, &v, sizeof v);
      n.f = v;
      return n;
    }
    case TIDE_FP64:
      read(t, &n.f, sizeof n.f);
      return n;
    case TIDE_INT32: {
      int32_t v;
      read(t, &v, sizeof v);
      n.is_int = true;
      n.i = v;
      return n;
    }
    case TIDE_INT64:
      read(t, &n.i, sizeof n.i);
      n.is_int = true;
      return n;
    default:
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", ctx.op_type(), "': ", param, " ('",
                 ctx.InputName(param), "') must be float32, float64, int32 or int64, got ",
                 DataTypeName(t.dtype()));
  }
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_INT_INPUTS_HPP_
