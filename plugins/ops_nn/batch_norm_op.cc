// batch_norm_op.cc: batch_norm (train: batch statistics, running statistics updated in place;
// test / use_global_stats: the running statistics) over NCHW or NHWC, and its grad. The forward
// kernel is the SDK's header-only tide/kernels/batch_norm.hpp; the grad's inputs are read
// through tide/ops/batch_norm.hpp.
#include <cmath>
#include <tide/kernels/batch_norm.hpp>
#include <tide/ops/batch_norm.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::BnView;

void BnInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  Dims x = ctx.InputDims("X");
  std::string layout = ctx.Attr<std::string>("data_layout");
  const int64_t c = tide::ops::GetBnView(op, x, layout).c;
  for (const char* p : {"Scale", "Bias", "Mean", "Variance"}) {
    Dims d = ctx.InputDims(p);
    TIDE_CHECK(d.size() == 1 && DimsCompatible(d[0], c), "op '", op, "': ", p, " must be [C] = [",
               c, "] for X ", tide::ToString(x), " (", layout, "), got ", tide::ToString(d));
  }
  TideDataType t = ctx.InputDataType("X");
  ctx.SetOutputDims("Y", x);
  ctx.SetOutputDataType("Y", t);
  ctx.ShareLoD("X", "Y");
  // The statistics keep Mean's type: float32 for float16/bfloat16 X (Paddle's rule), X's else.
  const TideDataType mean_type = ctx.InputDataType("Mean");
  for (const char* p : {"MeanOut", "VarianceOut", "SavedMean", "SavedVariance"}) {
    if (!ctx.HasOutput(p)) continue;
    ctx.SetOutputDims(p, {c});
    ctx.SetOutputDataType(p, mean_type != TIDE_UNDEFINED ? mean_type : t);
  }
}

// Train: with xhat = (x - mean) * inv_std, dBias = sum(dy), dScale = sum(dy * xhat),
// dX = scale * inv_std / m * (m * dy - dBias - xhat * dScale).
// Global statistics (test mode): dX = dy * scale * inv_std of the running variance.
template <typename T>
void BnGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetBnGradArgs<T>(ctx);
  const BnView v = a.v;
  const bool global = a.global;
  std::vector<T> mu(a.mean, a.mean + v.c), inv_std(v.c);
  for (int64_t c = 0; c < v.c; ++c)
    inv_std[c] = global ? T(1) / std::sqrt(a.var[c] + a.eps) : a.var[c];
  const T* xd = a.x;
  const T* gd = a.dy;
  const T* sd = a.scale;
  std::vector<T> dbias(v.c, T(0)), dscale(v.c, T(0));
  ParallelFor(ctx, v.c, v.outer * v.inner, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      for (int64_t o = 0; o < v.outer; ++o) {
        const int64_t base = (o * v.c + c) * v.inner;
        for (int64_t i = 0; i < v.inner; ++i) {
          dbias[c] += gd[base + i];
          dscale[c] += gd[base + i] * (xd[base + i] - mu[c]) * inv_std[c];
        }
      }
  });
  if (Tensor ds = ctx.OptionalOutput(GradVarName("Scale").c_str()))
    std::copy(dscale.begin(), dscale.end(), ds.mutable_data<T>({v.c}, ctx.place()));
  if (Tensor db = ctx.OptionalOutput(GradVarName("Bias").c_str()))
    std::copy(dbias.begin(), dbias.end(), db.mutable_data<T>({v.c}, ctx.place()));
  Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str());
  if (!dx) return;
  T* dd = dx.mutable_data<T>(a.x_dims, ctx.place());
  const T m = static_cast<T>(v.outer * v.inner);
  ParallelFor(ctx, v.outer * v.c, v.inner, [&](int64_t b, int64_t e) {
    for (int64_t oc = b; oc < e; ++oc) {
      const int64_t c = oc % v.c, base = oc * v.inner;
      const T a = sd[c] * inv_std[c];
      for (int64_t i = 0; i < v.inner; ++i) {
        if (global) {
          dd[base + i] = gd[base + i] * a;
        } else {
          const T xhat = (xd[base + i] - mu[c]) * inv_std[c];
          dd[base + i] = a / m * (m * gd[base + i] - dbias[c] - xhat * dscale[c]);
        }
      }
    }
  });
}

tide::OpSchema BnAttrs(tide::OpSchema s) {
  return s
      .Attr("momentum", 0.9f,
            "running stat = running stat * momentum + batch stat * (1 - momentum)")
      .Attr("epsilon", 1e-5f, "added to the variance before the square root")
      .Check([](const TideAttrValue& v) {
        TIDE_CHECK(v.f >= 0.0f && v.f <= 0.001f, "attribute 'epsilon' must be in [0, 0.001], got ",
                   v.f);
      })
      .Attr("is_test", false, "inference: normalise with the running statistics, update nothing")
      .Attr("use_global_stats", false, "normalise with the running statistics in training too")
      .Attr("data_layout", std::string("NCHW"),
            "where the channel axis is: NCHW (axis 1) or NHWC (last)")
      .InSet({"NCHW", "NHWC", "AnyLayout"})
      .Attr("trainable_statistics", false,
            "Paddle: normalise with the batch's statistics even when is_test")
      .Attr("fuse_with_relu", false, "Paddle oneDNN fusion; must be false")
      .Check([](const TideAttrValue& v) {
        TIDE_CHECK(v.i == 0,
                   "attribute 'fuse_with_relu' (a Paddle oneDNN fusion) is not "
                   "supported; export the model without Paddle's inference optimisations");
      })
      .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    BnAttrs(tide::OpSchema("batch_norm")
                .Comment("Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias per channel. "
                         "Training uses the batch's mean and (biased) variance and updates the "
                         "running statistics MeanOut / VarianceOut (in place: the same variables "
                         "as Mean / Variance); is_test or use_global_stats use Mean / Variance.")
                .Input("X", "the input, rank 2-5, channels on axis 1 (NCHW) or last (NHWC)")
                .Input("Scale", "per-channel scale gamma, [C]")
                .AsFloat32Param()  // float32 for float16/bfloat16 X, as Paddle
                .Input("Bias", "per-channel shift beta, [C]")
                .AsFloat32Param()
                .Input("Mean", "running mean, [C]")
                .AsFloat32Param()
                .Input("Variance", "running variance, [C]")
                .AsFloat32Param()
                .Input("MomentumTensor", "Paddle: the momentum as a 1-element tensor (optional)")
                .AsDispensable()
                .Output("Y", "the normalised output, X's dims")
                .Output("MeanOut", "updated running mean (shares Mean's variable), [C]")
                .Output("VarianceOut", "updated running variance (shares Variance's variable), [C]")
                .Output("SavedMean",
                        "the mean used (the batch's in training), [C]; may be "
                        "absent in an inference program")
                .AsIntermediate()
                .AsDispensable()
                .Output("SavedVariance", "1 / sqrt(var + epsilon) used, [C]; may be absent")
                .AsIntermediate()
                .AsDispensable()
                .Output("ReserveSpace", "Paddle's cuDNN workspace (not written here)")
                .AsIntermediate()
                .AsDispensable()
                .KernelDataTypeFrom("X")
                .InPlace("Mean", "MeanOut")
                .InPlace("Variance", "VarianceOut")
                .InferShape(BnInferShape)
                .Grad([](tide::GradMaker& g) {
                  g.NewOp("batch_norm_grad")
                      .Input("X", g.Input("X"))
                      .Input("Scale", g.Input("Scale"))
                      .Input("Bias", g.Input("Bias"))
                      .Input("Mean", g.Input("Mean"))
                      .Input("Variance", g.Input("Variance"))
                      .Input("SavedMean", g.Output("SavedMean"))
                      .Input("SavedVariance", g.Output("SavedVariance"))
                      .Input(GradVarName("Y"), g.OutputGrad("Y"))
                      .Output(GradVarName("X"), g.InputGrad("X"))
                      .Output(GradVarName("Scale"), g.InputGrad("Scale"))
                      .Output(GradVarName("Bias"), g.InputGrad("Bias"))
                      .CopyAttrs();
                })));
TIDE_REGISTER_OP(BnAttrs(tide::OpSchema("batch_norm_grad")
                             .Comment("X@GRAD, Scale@GRAD and Bias@GRAD of batch_norm.")
                             .Input("X", "the forward input")
                             .Input("Scale", "the forward scale")
                             .AsFloat32Param()
                             .Input("Bias", "the forward bias (for its dims)")
                             .AsFloat32Param()
                             .Input("Mean", "running mean (used with global statistics)")
                             .AsFloat32Param()
                             .Input("Variance", "running variance (used with global statistics)")
                             .AsFloat32Param()
                             .Input("SavedMean", "the batch mean of the forward pass")
                             .AsFloat32Param()
                             .Input("SavedVariance", "the forward 1 / sqrt(var + epsilon)")
                             .AsFloat32Param()
                             .Input(GradVarName("Y"), "gradient of Y")
                             .Output(GradVarName("X"), "gradient of X")
                             .AsDispensable()
                             .Output(GradVarName("Scale"), "gradient of Scale")
                             .AsDispensable()
                             .Output(GradVarName("Bias"), "gradient of Bias")
                             .AsDispensable()
                             .KernelDataTypeFrom("X")
                             .InferShape(GradLike({"X", "Scale", "Bias"}))));
TIDE_REGISTER_KERNEL("batch_norm", "cpu", tide::kernels::BatchNorm, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("batch_norm_grad", "cpu", BnGradKernel, OPS_NN_FLOAT_TYPES);
