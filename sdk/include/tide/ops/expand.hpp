// tide/ops/expand.hpp: where expand's repeats come from (Fluid 1.6+): ExpandTimes (a 1-D int
// tensor, one value per dim) over expand_times_tensor (one-element int tensors, one per dim) over
// the expand_times attribute, at run time and at build time (where a repeat held by a tensor is
// unknown, -1), with the errors every implementation gives. Each device reads the tensors its way.
#ifndef TIDE_OPS_EXPAND_HPP_
#define TIDE_OPS_EXPAND_HPP_

#include <tide/ops/tensor_shape.hpp>
#include <tide/plugin.hpp>

#include <cstdint>
#include <vector>

namespace tide {
namespace ops {

// The repeats at run time. `values(param)`: every value of input param's tensor; `scalars(param)`:
// the one value of each variable of a duplicable input (e.g. IntValues / IntScalars of
// tide/ops/int_inputs.hpp). ExpandDims checks them against X.
template <typename Values, typename Scalars>
std::vector<int32_t> ExpandTimesFromInputs(const KernelContext& ctx, Values values,
                                           Scalars scalars) {
  std::vector<int64_t> v;
  const char* from = "ExpandTimes";
  if (ctx.HasInput("ExpandTimes")) {
    v = values("ExpandTimes");
  } else if (ctx.HasInput("expand_times_tensor")) {
    from = "expand_times_tensor";
    v = scalars("expand_times_tensor");
  } else {
    return ctx.Attr<std::vector<int32_t>>("expand_times");
  }
  std::vector<int32_t> times;
  for (int64_t t : v) {
    TIDE_CHECK(t >= 1 && t <= INT32_MAX, "op '", ctx.op_type(), "': ", from, " ", ToString(v),
               " holds ", t, "; each repeat must be >= 1");
    times.push_back(static_cast<int32_t>(t));
  }
  return times;
}

// Out's dims at build time: a tensor input makes the repeats unknown (-1 in the attribute where
// Fluid's layer put a Variable; no attribute at all with ExpandTimes), and so Out's dims there.
inline Dims ExpandDimsAtBuild(const InferShapeContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  std::vector<int32_t> times = ctx.HasAttr("expand_times")
                                   ? ctx.Attr<std::vector<int32_t>>("expand_times")
                                   : std::vector<int32_t>{};
  const bool from_tensor = ctx.HasInput("ExpandTimes") || ctx.HasInput("expand_times_tensor");
  if (!from_tensor) return ExpandDims(op, x, times);
  if (ctx.HasInput("expand_times_tensor")) {
    const size_t n = ctx.InputCount("expand_times_tensor");
    TIDE_CHECK(n == x.size(), "op '", op, "': expand_times_tensor has ", n, " tensors but X ",
               ToString(x), " has rank ", x.size());
  }
  if (ctx.HasInput("ExpandTimes") || times.size() != x.size()) times.assign(x.size(), -1);
  Dims out = x;
  for (size_t i = 0; i < x.size(); ++i) {
    TIDE_CHECK(times[i] >= 1 || times[i] == -1, "op '", op, "': expand_times[", i, "] = ", times[i],
               " must be >= 1 (or -1 where a tensor gives it)");
    out[i] = times[i] == -1 || x[i] < 0 ? -1 : x[i] * times[i];
  }
  return out;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_EXPAND_HPP_
