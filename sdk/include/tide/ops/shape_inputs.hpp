// tide/ops/shape_inputs.hpp: Out's dims of the ops that take them as a tensor too
// (fill_constant, uniform_random, gaussian_random): ShapeTensor (1-D, its values) over
// ShapeTensorList (one value per variable) over the `shape` attribute, Fluid's precedence, with
// the error every implementation gives for a negative dim. Each device reads the tensors its way.
#ifndef TIDE_OPS_SHAPE_INPUTS_HPP_
#define TIDE_OPS_SHAPE_INPUTS_HPP_

#include <cstdint>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// `values(param)`: every value of input param's tensor; `scalars(param)`: the one value of each
// variable of a duplicable input (e.g. IntValues / IntScalars of tide/ops/int_inputs.hpp).
template <typename Values, typename Scalars>
Dims ShapeFromInputs(const KernelContext& ctx, Values values, Scalars scalars) {
  const char* from = "shape";
  Dims shape;
  if (ctx.HasInput("ShapeTensor")) {
    from = "ShapeTensor";
    shape = values("ShapeTensor");
  } else if (ctx.HasInput("ShapeTensorList")) {
    from = "ShapeTensorList";
    shape = scalars("ShapeTensorList");
  } else {
    shape = ctx.Attr<std::vector<int64_t>>("shape");
  }
  for (int64_t d : shape)
    TIDE_CHECK(d >= 0, "op '", ctx.op_type(), "': ", from, " ", ToString(shape),
               " has a negative dim");
  return shape;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SHAPE_INPUTS_HPP_
