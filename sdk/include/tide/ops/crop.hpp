// tide/ops/crop.hpp: crop's box (Out = X[offsets : offsets + shape]), with its errors, for every
// implementation of it: the shape from Y's dims when Y is given, else the attribute (-1: the rest
// of the dim); the offsets from the Offsets tensor (int32) when given, else the attribute (empty:
// zeros).
#ifndef TIDE_OPS_CROP_HPP_
#define TIDE_OPS_CROP_HPP_

#include <cstddef>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

struct CropGeom {
  Dims shape;                    // Out's dims
  std::vector<int64_t> offsets;  // the box's first index in X, per dim
};

// `read_offsets(Tensor)` gives the values of the (int32) Offsets tensor where it lives (a device
// reads them back to the host).
template <typename ReadOffsets>
CropGeom GetCropGeom(const KernelContext& ctx, const Dims& x, ReadOffsets&& read_offsets) {
  const char* op = ctx.op_type();
  CropGeom g;
  if (ctx.HasInput("Y")) {
    g.shape = ctx.Input("Y").dims();
  } else {
    const auto s = ctx.Attr<std::vector<int32_t>>("shape");
    g.shape.assign(s.begin(), s.end());
  }
  if (ctx.HasInput("Offsets")) {
    Tensor t = ctx.Input("Offsets");
    TIDE_CHECK(t.dtype() == TIDE_INT32, "op '", op, "': Offsets must be int32");
    g.offsets = read_offsets(t);
  } else {
    const auto o = ctx.Attr<std::vector<int32_t>>("offsets");
    g.offsets.assign(o.begin(), o.end());
  }
  if (g.offsets.empty()) g.offsets.assign(x.size(), 0);
  TIDE_CHECK(g.shape.size() == x.size() && g.offsets.size() == x.size(), "op '", op, "': shape ",
             ToString(g.shape), " and offsets need one value per dim of X ", ToString(x));
  for (size_t i = 0; i < x.size(); ++i) {
    if (g.shape[i] < 0) g.shape[i] = x[i] - g.offsets[i];  // -1: the rest of the dim
    TIDE_CHECK(g.offsets[i] >= 0 && g.shape[i] >= 0 && g.offsets[i] + g.shape[i] <= x[i], "op '",
               op, "': the box at offset ", g.offsets[i], " of size ", g.shape[i],
               " leaves X's dim ", i, " (", x[i], ")");
  }
  return g;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_CROP_HPP_
