// tide/ops/reshape.hpp: the shape rules of reshape / reshape2 (Fluid's: 0 copies X's dim, one -1
// is inferred) and flatten / flatten2 (2-D around `axis`), at compile time (dims may be unknown)
// and at run time; the target shape a kernel reads (Paddle 2.x's ShapeTensor / Shape, with a
// kernel's reader, see int_inputs.hpp), and the X@GRAD dims of the grads that only reshape
// Out@GRAD (reshape, flatten, squeeze2, unsqueeze2 and the *2 / _range variants).
#ifndef TIDE_OPS_RESHAPE_HPP_
#define TIDE_OPS_RESHAPE_HPP_

#include <cstddef>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// Out's dims for reshape of X to `shape`. With X's dims partly unknown (compile time), the -1 is
// inferred when X's unknown dims are all copied by 0s (they cancel), else left -1.
inline Dims ReshapeDims(const char* op, const std::vector<int64_t>& shape, const Dims& x) {
  Dims out(shape.size());
  int unknown = -1;
  int64_t explicit_product = 1;
  std::vector<bool> copied(x.size(), false);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TIDE_CHECK(unknown < 0, "op '", op, "': shape ", ToString(shape), " has more than one -1");
      unknown = static_cast<int>(i);
    } else if (shape[i] == 0) {
      TIDE_CHECK(i < x.size(), "op '", op, "': shape ", ToString(shape), " copies dim ", i,
                 " (0) but X ", ToString(x), " has rank ", x.size());
      out[i] = x[i];
      copied[i] = true;
    } else {
      TIDE_CHECK(shape[i] > 0, "op '", op, "': shape ", ToString(shape), " holds ", shape[i],
                 " at ", i, " (sizes must be > 0, or 0 to copy, or -1 to infer)");
      out[i] = shape[i];
      explicit_product *= shape[i];
    }
  }
  // X's elements not accounted for by copied dims.
  int64_t rest = 1;
  bool rest_known = true;
  for (size_t i = 0; i < x.size(); ++i)
    if (!copied[i]) {
      if (x[i] < 0)
        rest_known = false;
      else
        rest *= x[i];
    }
  if (unknown >= 0) {
    if (rest_known) {
      TIDE_CHECK(explicit_product > 0 && rest % explicit_product == 0, "op '", op,
                 "': cannot reshape X ", ToString(x), " to ", ToString(shape), ": ", rest,
                 " elements do not divide into ", explicit_product);
      out[unknown] = rest / explicit_product;
    } else {
      out[unknown] = -1;
    }
  } else if (rest_known) {
    TIDE_CHECK(rest == explicit_product, "op '", op, "': cannot reshape X ", ToString(x), " (",
               DimsProductOrUnknown(x), " elements) to ", ToString(shape));
  }
  return out;
}

// Out's dims for flatten at `axis` in [0, rank]: [prod(X.dims[:axis]), prod(X.dims[axis:])], -1
// where unknown.
inline Dims FlattenDims(const char* op, const Dims& x, int axis) {
  TIDE_CHECK(axis >= 0 && axis <= static_cast<int>(x.size()), "op '", op, "': axis ", axis,
             " must be in [0, ", x.size(), "] for X ", ToString(x));
  return {DimsProductOrUnknown(x, 0, axis), DimsProductOrUnknown(x, axis, x.size())};
}

// reshape's target: ShapeTensor (one value per variable) or Shape's values, in that order of
// precedence, else the attribute.
template <typename Read = ReadOnHost>
std::vector<int64_t> ReshapeTarget(const KernelContext& ctx, Read read = {}) {
  if (ctx.HasInput("ShapeTensor")) return IntScalars(ctx, "ShapeTensor", read);
  if (ctx.OptionalInput("Shape")) return IntValues(ctx, "Shape", 0, read);
  const auto a = ctx.Attr<std::vector<int32_t>>("shape");
  return std::vector<int64_t>(a.begin(), a.end());
}

// X@GRAD's dims (X's, from XShape or X) for a grad that reshapes Out@GRAD, which must hold as
// many elements.
inline Dims ReshapeGradXDims(const KernelContext& ctx, const Tensor& dout) {
  const Dims xd = ForwardXDims(ctx);
  TIDE_CHECK(DimsProduct(xd) == dout.numel(), "op '", ctx.op_type(), "': Out@GRAD ",
             ToString(dout.dims()), " does not have X's ", DimsProduct(xd), " elements (X ",
             ToString(xd), ")");
  return xd;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_RESHAPE_HPP_
