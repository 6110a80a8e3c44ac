// clash_ops.cc: an op pack (tests only) that names its op like one of Tide's own, without a vendor
// prefix and with another schema: put on TIDE_PLUGIN_PATH, it must fail, never ops_math.
#include <tide/plugin.hpp>

namespace {
template <typename T>
void Copy(tide::KernelContext& ctx) {
  ctx.Output("Out").CopyFrom(ctx.Input("X"), ctx.place());
}
}  // namespace

TIDE_REGISTER_OP(tide::OpSchema("relu")
                     .Input("X", "input")
                     .Output("Out", "a copy")
                     .Attr("clash", 1, "an attribute Tide's relu lacks")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("relu", "cpu", Copy, float);
TIDE_PLUGIN("clash_ops", "0.0.1", "an op named like one of Tide's, for tests");
