// tide/ops/slice_inputs.hpp: where slice's and strided_slice's bounds come from. Each of starts,
// ends (and strided_slice's strides) separately: its ...TensorList (one one-element int tensor per
// axis) over its ...Tensor (1-D) over the attribute, the order of Fluid 1.8's kernels. At build
// time a bound held by a tensor is unknown, and so are the sliced dims. Each device reads the
// tensors its way; the box itself is tide/ops/tensor_shape.hpp's GetSliceGeom.
#ifndef TIDE_OPS_SLICE_INPUTS_HPP_
#define TIDE_OPS_SLICE_INPUTS_HPP_

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <tide/ops/axis.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// One bound kind: its attribute and its two inputs.
struct SliceBoundInputs {
  const char* attr;
  const char* tensor;
  const char* list;
};
inline constexpr SliceBoundInputs kSliceStarts{"starts", "StartsTensor", "StartsTensorList"};
inline constexpr SliceBoundInputs kSliceEnds{"ends", "EndsTensor", "EndsTensorList"};
inline constexpr SliceBoundInputs kSliceStrides{"strides", "StridesTensor", "StridesTensorList"};

inline bool IsStridedSlice(const char* op) {
  const std::string t = op;
  return t == "strided_slice" || t == "strided_slice_grad";
}

template <typename Ctx>
std::vector<int32_t> SliceIntsAttr(const Ctx& ctx, const char* name) {
  return ctx.HasAttr(name) ? ctx.template Attr<std::vector<int32_t>>(name) : std::vector<int32_t>{};
}

// Whether any bound comes from a tensor.
template <typename Ctx>
bool SliceBoundsFromTensors(const Ctx& ctx) {
  for (const SliceBoundInputs& b : {kSliceStarts, kSliceEnds, kSliceStrides})
    if (ctx.HasInput(b.tensor) || ctx.HasInput(b.list)) return true;
  return false;
}

// One bound kind at run time. `values(param)`: every value of input param's tensor;
// `scalars(param)`: the one value of each variable of a duplicable input (e.g. IntValues /
// IntScalars of tide/ops/int_inputs.hpp). Values beyond int32 are clamped (a start or end there
// means "from the start" or "to the end"; a stride there takes one element).
template <typename Values, typename Scalars>
std::vector<int32_t> SliceBoundFromInputs(const KernelContext& ctx, const SliceBoundInputs& b,
                                          Values values, Scalars scalars) {
  std::vector<int64_t> v;
  if (ctx.HasInput(b.list))
    v = scalars(b.list);
  else if (ctx.HasInput(b.tensor))
    v = values(b.tensor);
  else
    return SliceIntsAttr(ctx, b.attr);
  std::vector<int32_t> out;
  for (int64_t x : v)
    out.push_back(static_cast<int32_t>(std::clamp<int64_t>(x, INT32_MIN, INT32_MAX)));
  return out;
}

// strided_slice needs one stride per axis (slice has none: every step is 1).
inline void CheckStrides(const char* op, const std::vector<int32_t>& axes,
                         const std::vector<int32_t>& strides) {
  TIDE_CHECK(strides.size() == axes.size(), "op '", op, "': strides must have one value per axis (",
             axes.size(), " axes, ", strides.size(), " strides)");
}

// The box of X that slice / strided_slice (and their grads) take, at run time.
template <typename Values, typename Scalars>
SliceGeom SliceGeomFromInputs(const KernelContext& ctx, const Dims& x, Values values,
                              Scalars scalars) {
  const char* op = ctx.op_type();
  const std::vector<int32_t> axes = ctx.Attr<std::vector<int32_t>>("axes");
  std::vector<int32_t> strides;
  if (IsStridedSlice(op)) {
    strides = SliceBoundFromInputs(ctx, kSliceStrides, values, scalars);
    CheckStrides(op, axes, strides);
  }
  return GetSliceGeom(op, x, axes, SliceBoundFromInputs(ctx, kSliceStarts, values, scalars),
                      SliceBoundFromInputs(ctx, kSliceEnds, values, scalars), strides,
                      SliceIntsAttr(ctx, "decrease_axis"));
}

// The same at build time: with a bound from a tensor, the sliced dims are unknown (-1) until the
// kernel runs (Fluid leaves every dim unknown with a 1-D bound tensor); only the rank is checked.
inline SliceGeom SliceGeomAtBuild(const InferShapeContext& ctx, const Dims& x_in) {
  const char* op = ctx.op_type();
  const std::vector<int32_t> axes = ctx.Attr<std::vector<int32_t>>("axes");
  const bool strided = IsStridedSlice(op);
  if (!SliceBoundsFromTensors(ctx)) {
    const std::vector<int32_t> strides =
        strided ? SliceIntsAttr(ctx, "strides") : std::vector<int32_t>{};
    if (strided) CheckStrides(op, axes, strides);
    return GetSliceGeom(op, x_in, axes, SliceIntsAttr(ctx, "starts"), SliceIntsAttr(ctx, "ends"),
                        strides, SliceIntsAttr(ctx, "decrease_axis"));
  }
  Dims x = x_in;
  for (int32_t a : axes) x[NormAxis(op, a, x.size())] = -1;
  const std::vector<int32_t> zeros(axes.size(), 0);
  return GetSliceGeom(op, x, axes, zeros, zeros,
                      strided ? std::vector<int32_t>(axes.size(), 1) : std::vector<int32_t>{},
                      SliceIntsAttr(ctx, "decrease_axis"));
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SLICE_INPUTS_HPP_
