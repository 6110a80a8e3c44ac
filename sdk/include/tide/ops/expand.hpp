// tide/ops/expand.hpp: where expand's repeats come from (Fluid 1.6+): ExpandTimes (a 1-D int
// tensor, one value per dim) over expand_times_tensor (one-element int tensors, one per dim) over
// the expand_times attribute, at run time and at build time (where a repeat held by a tensor is
// unknown, -1), with the errors every implementation gives; and expand_v2's target shape (Paddle
// 2.x's Tensor.expand). Each device reads the tensors its way.
#ifndef TIDE_OPS_EXPAND_HPP_
#define TIDE_OPS_EXPAND_HPP_

#include <cstdint>
#include <tide/ops/tensor_shape.hpp>
#include <tide/plugin.hpp>
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

// expand_v2's target shape at run time: Shape (a 1-D int tensor) over expand_shapes_tensor (one
// one-element int tensor per dim) over the `shape` attribute, read as ExpandTimesFromInputs does.
template <typename Values, typename Scalars>
std::vector<int64_t> ExpandV2ShapeFromInputs(const KernelContext& ctx, Values values,
                                             Scalars scalars) {
  if (ctx.HasInput("Shape")) return values("Shape");
  if (ctx.HasInput("expand_shapes_tensor")) return scalars("expand_shapes_tensor");
  const auto s = ctx.Attr<std::vector<int32_t>>("shape");
  return std::vector<int64_t>(s.begin(), s.end());
}

// expand_v2's Out dims: X's dims aligned to the end of `shape`; a value of -1 keeps X's dim (-2
// too: Paddle's mark of a dim a tensor gives, unknown at build time), any other must equal X's
// dim or X's dim must be 1; the leading dims X lacks must be given (> 0). Unknown X dims (-1)
// stay unknown at build time.
inline Dims ExpandV2Dims(const char* op, const Dims& x, const std::vector<int64_t>& shape) {
  TIDE_CHECK(shape.size() >= x.size(), "op '", op, "': the target shape ", ToString(shape),
             " has fewer dims than X ", ToString(x));
  const size_t lead = shape.size() - x.size();
  Dims out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    if (i < lead) {
      TIDE_CHECK(s > 0 || s == -2, "op '", op, "': the target shape ", ToString(shape), " has ", s,
                 " at dim ", i, ", which X ", ToString(x), " lacks: it must be given (> 0)");
      out[i] = s > 0 ? s : -1;
      continue;
    }
    const int64_t xd = x[i - lead];
    if (s == -1 || s == -2) {
      out[i] = s == -1 ? xd : -1;
      continue;
    }
    TIDE_CHECK(s > 0, "op '", op, "': the target shape ", ToString(shape), " has ", s, " at dim ",
               i, "; each must be > 0, or -1 to keep X's dim");
    TIDE_CHECK(xd < 0 || xd == 1 || xd == s, "op '", op, "': X ", ToString(x), " cannot expand to ",
               ToString(shape), ": dim ", i, " is ", xd, " (only a dim of 1 expands)");
    out[i] = s;
  }
  return out;
}

// X's dims with 1s in front, to Out's rank: the repeats then pair dim by dim.
inline Dims ExpandV2XDims(const Dims& x, size_t rank) {
  Dims d(rank - x.size(), 1);
  d.insert(d.end(), x.begin(), x.end());
  return d;
}

// Out's dims at build time: the rank from Shape's length or expand_shapes_tensor's count (the
// dims unknown), else from the attribute (where -2 marks a dim a tensor gives).
inline Dims ExpandV2DimsAtBuild(const InferShapeContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  std::vector<int64_t> shape;
  if (ctx.HasInput("Shape")) {
    const Dims s = ctx.InputDims("Shape");
    TIDE_CHECK(s.size() == 1, "op '", op, "': Shape must be 1-D, got ", ToString(s));
    if (s[0] < 0) return Dims(x.size(), -1);
    shape.assign(static_cast<size_t>(s[0]), -2);
  } else if (ctx.HasInput("expand_shapes_tensor")) {
    shape.assign(ctx.InputCount("expand_shapes_tensor"), -2);
  } else {
    const auto s = ctx.Attr<std::vector<int32_t>>("shape");
    shape.assign(s.begin(), s.end());
  }
  return ExpandV2Dims(op, x, shape);
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_EXPAND_HPP_
