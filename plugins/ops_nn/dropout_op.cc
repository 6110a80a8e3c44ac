// dropout_op.cc: dropout (Fluid 1.x: "downgrade_in_infer" scales at inference, "upscale_in_train"
// scales in training) and its grad, dX = dOut * Mask. Mask always holds dOut/dX per element: 0
// or 1 (downgrade_in_infer) / 1 / (1 - p) (upscale_in_train) in training, the constant factor at
// inference, so the grad is right in both modes.
#include <random>

#include "common.h"

namespace ops_nn {
namespace {

void DropoutInferShape(tide::InferShapeContext& ctx) {
  Dims x = ctx.InputDims("X");
  TideDataType t = ctx.InputDataType("X");
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", t);
  ctx.ShareLoD("X", "Out");
  if (ctx.HasOutput("Mask")) {
    ctx.SetOutputDims("Mask", x);
    ctx.SetOutputDataType("Mask", t);
  }
}

template <typename T>
void DropoutKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  Tensor mask = ctx.OptionalOutput("Mask");
  const float p = ctx.Attr<float>("dropout_prob");
  const bool upscale = ctx.Attr<std::string>("dropout_implementation") == "upscale_in_train";
  const int64_t n = x.numel();
  const T* xd = x.data<T>();
  T* od = out.mutable_data<T>(x.dims(), ctx.place());
  T* md = mask ? mask.mutable_data<T>(x.dims(), ctx.place()) : nullptr;
  if (ctx.Attr<bool>("is_test")) {
    const T factor = upscale ? T(1) : static_cast<T>(1.0f - p);
    for (int64_t i = 0; i < n; ++i) od[i] = xd[i] * factor;
    if (md) std::fill(md, md + n, factor);
    return;
  }
  if (p == 1.0f) {  // everything dropped
    std::fill(od, od + n, T(0));
    if (md) std::fill(md, md + n, T(0));
    return;
  }
  // Fluid's generator: minstd_rand seeded with `seed` (fix_seed) or a random device.
  std::minstd_rand engine;
  // Paddle 2.x: a Seed input (one int) gives the seed.
  if (ctx.HasInput("Seed"))
    engine.seed(static_cast<uint32_t>(IntScalar(ctx, "Seed")));
  else
    engine.seed(ctx.Attr<bool>("fix_seed") ? static_cast<uint32_t>(ctx.Attr<int32_t>("seed"))
                                           : std::random_device()());
  std::uniform_real_distribution<float> dist(0, 1);
  const T keep = upscale ? T(1) / (T(1) - static_cast<T>(p)) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    const T m = dist(engine) < p ? T(0) : keep;
    od[i] = xd[i] * m;
    if (md) md[i] = m;
  }
}

template <typename T>
void DropoutGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor mask = ctx.Input("Mask"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  TIDE_CHECK(mask.dims() == dout.dims(), "op '", op, "': Mask ", tide::ToString(mask.dims()),
             " and Out@GRAD ", tide::ToString(dout.dims()), " differ");
  dx.Resize(dout.dims());
  EigenEval(ctx, tide::FlatMutable<T>(dx, ctx.place()), tide::Flat<T>(dout) * tide::Flat<T>(mask));
}

tide::OpSchema DropoutAttrs(tide::OpSchema s) {
  return s.Attr("dropout_prob", 0.5f, "probability of zeroing an element")
      .Check([](const TideAttrValue& v) {
        TIDE_CHECK(v.f >= 0.0f && v.f <= 1.0f, "attribute 'dropout_prob' must be in [0, 1], got ",
                   v.f);
      })
      .Attr("is_test", false,
            "inference: no dropping; scale by 1 - dropout_prob "
            "(downgrade_in_infer) or pass through (upscale_in_train)")
      .Attr("fix_seed", false, "use `seed` (reproducible masks) instead of a random seed")
      .Attr("seed", int32_t(0), "the generator's seed when fix_seed")
      .Attr("dropout_implementation", std::string("downgrade_in_infer"),
            "downgrade_in_infer: train Out = X * mask, infer Out = X * (1 - p); "
            "upscale_in_train: train Out = X * mask / (1 - p), infer Out = X")
      .InSet({"downgrade_in_infer", "upscale_in_train"});
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(DropoutAttrs(tide::OpSchema("dropout")
                                  .Comment("Randomly zeroes elements of X with probability "
                                           "dropout_prob (Fluid 1.x dropout).")
                                  .Input("X", "the input")
                                  .Input("Seed", "Paddle: the generator's seed as a one-element "
                                         "int tensor (optional; training only)")
                                  .AsDispensable()
                                  .Output("Out", "the dropped-out input, X's dims")
                                  .Output("Mask",
                                          "dOut/dX per element (0 where dropped), X's "
                                          "dims and dtype; Paddle's inference programs "
                                          "leave it out")
                                  .AsIntermediate()
                                  .AsDispensable()
                                  .InferShape(DropoutInferShape)
                                  .Grad([](tide::GradMaker& g) {
                                    g.NewOp("dropout_grad")
                                        .Input("Mask", g.Output("Mask"))
                                        .Input(GradVarName("Out"), g.OutputGrad("Out"))
                                        .Output(GradVarName("X"), g.InputGrad("X"))
                                        .CopyAttrs();
                                  })));
TIDE_REGISTER_OP(DropoutAttrs(tide::OpSchema("dropout_grad")
                                  .Comment("X@GRAD = Out@GRAD * Mask.")
                                  .Input("Mask", "the forward mask")
                                  .Input(GradVarName("Out"), "gradient of Out")
                                  .Output(GradVarName("X"), "gradient of X")
                                  .KernelDataTypeFrom(GradVarName("Out"))
                                  .InferShape(tide::SameShapeAsInput(GradVarName("Out"),
                                                                     GradVarName("X")))));
TIDE_REGISTER_KERNEL("dropout", "cpu", DropoutKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("dropout_grad", "cpu", DropoutGradKernel, OPS_NN_FLOAT_TYPES);
