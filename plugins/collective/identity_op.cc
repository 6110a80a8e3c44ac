// identity_op.cc: Fluid's c_identity, the entry of a tensor-parallel layer: forward, Out is a copy
// of X; backward, X's gradient is Out's summed over the ring (c_allreduce_sum), since every rank
// of the ring used X to compute its own part of the layer.
#include <tide/plugin.hpp>

namespace tide_collective {
namespace {

void IdentityRun(tide::OpRunContext& ctx) {
  const std::string x = ctx.Inputs("X").at(0), out = ctx.Outputs("Out").at(0);
  tide::Variable xv = ctx.scope().FindVar(x);
  TIDE_CHECK(xv && xv.IsTensor() && xv.GetTensor().initialized(), "op 'c_identity': X ('", x,
             "') is not an initialised LoDTensor in the scope");
  if (x == out) return;
  tide::Variable ov = ctx.scope().FindVar(out);
  if (!ov) ov = ctx.scope().Var(out);
  const tide::Tensor in = xv.GetTensor();
  ov.GetTensor().CopyFrom(in, in.place(), ctx.device_context());
}

}  // namespace
}  // namespace tide_collective

TIDE_REGISTER_OP(tide::OpSchema("c_identity")
                     .Comment("Out = X (a copy); X's gradient is the sum of Out's over every "
                              "rank of ring ring_id (c_allreduce_sum): the input of a "
                              "tensor-parallel layer.")
                     .Input("X", "the tensor")
                     .Output("Out", "a copy of X")
                     .Attr("ring_id", int32_t(0), "the communicator of the gradient's allreduce")
                     .Attr("use_calc_stream", true, "unused in the forward copy (Fluid's)")
                     .Attr("use_model_parallel", true, "unused (Fluid's)")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("c_allreduce_sum")
                           .Input("X", g.OutputGrad("Out"))
                           .Output("Out", g.InputGrad("X"))
                           .Attr("ring_id", g.Attr<int32_t>("ring_id"))
                           .Attr("use_calc_stream", true)
                           .Attr("use_model_parallel", true);
                     })
                     .Run(tide_collective::IdentityRun));
