// noinfer_ops.cc: an op pack whose op has kernels but no shape inference (tests only): Tide
// refuses it at load time instead of giving its output shape ().
#include <tide/plugin.hpp>

namespace {
template <typename T>
void Copy(tide::KernelContext& ctx) {
  ctx.Output("Out").CopyFrom(ctx.Input("X"), ctx.place());
}
}  // namespace

TIDE_REGISTER_OP(tide::OpSchema("noinfer.copy").Input("X", "input").Output("Out", "a copy"));
TIDE_REGISTER_KERNEL("noinfer.copy", "cpu", Copy, float);
TIDE_PLUGIN("noinfer_ops", "0.0.1", "an op without shape inference, for tests");
