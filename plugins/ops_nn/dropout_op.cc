// dropout_op.cc: dropout (Fluid 1.x: "downgrade_in_infer" scales at inference, "upscale_in_train"
// scales in training) and its grad, dX = dOut * Mask. Mask always holds dOut/dX per element: 0
// or 1 (downgrade_in_infer) / 1 / (1 - p) (upscale_in_train) in training, the constant factor at
// inference, so the grad is right in both modes.
#include <random>
#include <tide/ops/dropout.hpp>

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
  const auto a = tide::ops::GetDropoutArgs<T>(ctx);
  const int64_t n = a.n;
  if (a.is_test) {
    const T factor = a.upscale ? T(1) : static_cast<T>(1.0f - a.p);
    for (int64_t i = 0; i < n; ++i) a.out[i] = a.x[i] * factor;
    if (a.mask) std::fill(a.mask, a.mask + n, factor);
    return;
  }
  if (a.p == 1.0f) {  // everything dropped
    std::fill(a.out, a.out + n, T(0));
    if (a.mask) std::fill(a.mask, a.mask + n, T(0));
    return;
  }
  // Fluid's generator: minstd_rand from the op's fixed seed (tide/ops/dropout.hpp) or a random
  // device.
  std::minstd_rand engine(a.seed.fixed ? a.seed.value : std::random_device()());
  std::uniform_real_distribution<float> dist(0, 1);
  const T keep = a.upscale ? T(1) / (T(1) - static_cast<T>(a.p)) : T(1);
  for (int64_t i = 0; i < n; ++i) {
    const T m = dist(engine) < a.p ? T(0) : keep;
    a.out[i] = a.x[i] * m;
    if (a.mask) a.mask[i] = m;
  }
}

template <typename T>
void DropoutGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetDropoutGradArgs<T>(ctx);
  EigenEval(ctx, tide::EigenVector<T>(a.dx, a.n),
            tide::ConstEigenVector<T>(a.dout, a.n) * tide::ConstEigenVector<T>(a.mask, a.n));
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
                                  .Input("Seed",
                                         "Paddle: the generator's seed as a one-element "
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
