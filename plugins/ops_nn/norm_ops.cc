// norm_ops.cc: layer_norm, group_norm and instance_norm (Fluid 1.x), with grads: X seen as
// groups normalised on their own (tide/ops/norm.hpp), then Y = Scale * (X - mean) / sqrt(var +
// epsilon) + Bias with Scale/Bias per feature (layer_norm) or per channel. The grads recompute
// the statistics from X rather than trusting the saved ones. The forward CPU kernel is the SDK's
// header-only tide/kernels/norm.hpp.
#include <cmath>
#include <tide/kernels/norm.hpp>
#include <tide/ops/data_layout.hpp>
#include <tide/ops/norm.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::NormGroups;

using tide::ops::IsInstanceNorm;
using tide::ops::NormGroupsOf;
using tide::ops::NormMeanName;
using tide::ops::NormStatDims;
using tide::ops::NormVarName;

template <typename T>
void NormGradKernel(KernelContext& ctx) {
  const auto in = tide::ops::GetNormGradArgs<T>(ctx);
  const NormGroups& g = in.g;
  const double eps = in.eps;
  const T* xd = in.x;
  const T* gd = in.dy;
  const T* scale = in.scale;
  T* dx = in.dx;
  T* ds = in.dscale;
  T* db = in.dbias;
  if (ds) std::fill(ds, ds + g.affine, T(0));
  if (db) std::fill(db, db + g.affine, T(0));
  for (int64_t k = 0; k < g.groups; ++k) {
    T mean, rstd, var;
    tide::kernels::NormStats(xd, g, k, eps, &mean, &rstd, &var);
    double m1 = 0, m2 = 0;  // means of dy_hat and dy_hat * xhat
    for (int64_t j = 0; j < g.size; ++j) {
      const int64_t i = g.Offset(k, j), a = g.AffineIndex(i);
      const T xhat = (xd[i] - mean) * rstd;
      const T dyh = gd[i] * (scale ? scale[a] : T(1));
      m1 += dyh;
      m2 += dyh * xhat;
      if (ds) ds[a] += gd[i] * xhat;
      if (db) db[a] += gd[i];
    }
    m1 /= g.size;
    m2 /= g.size;
    if (!dx) continue;
    for (int64_t j = 0; j < g.size; ++j) {
      const int64_t i = g.Offset(k, j);
      const T xhat = (xd[i] - mean) * rstd;
      const T dyh = gd[i] * (scale ? scale[g.AffineIndex(i)] : T(1));
      dx[i] = rstd * (dyh - static_cast<T>(m1) - xhat * static_cast<T>(m2));
    }
  }
}

void NormInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  const NormGroups g = NormGroupsOf(ctx, x);
  for (const char* p : {"Scale", "Bias"}) {
    if (!ctx.HasInput(p)) continue;
    const int64_t n = DimsProductOrUnknown(ctx.InputDims(p));
    TIDE_CHECK(n < 0 || g.affine < 0 || n == g.affine, "op '", op, "': ", p, " has ", n,
               " elements, expected ", g.affine);
  }
  ctx.SetOutputDims("Y", x);
  ctx.SetOutputDataType("Y", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Y");
  const Dims stat = NormStatDims(ctx, x, g);
  for (const char* p : {NormMeanName(op), NormVarName(op)}) {
    if (!ctx.HasOutput(p)) continue;
    ctx.SetOutputDims(p, stat);
    ctx.SetOutputDataType(p, ctx.InputDataType("X"));
  }
}

tide::OpSchema NormSchema(const std::string& type, const char* comment) {
  const char* mean = NormMeanName(type.c_str());
  const char* var = NormVarName(type.c_str());
  return tide::OpSchema(type)
      .Comment(comment)
      .Input("X", "the input")
      .Input("Scale", "the scale (optional)")
      .AsDispensable()
      .AsFloat32Param()  // float32 for float16/bfloat16 X, as Paddle
      .Input("Bias", "the bias (optional)")
      .AsDispensable()
      .AsFloat32Param()
      .Output("Y", "the normalised X")
      .Output(mean, "the groups' means")
      .AsIntermediate()
      .AsDispensable()  // Paddle 2.x's saved instance_norm binds only Y
      .Output(var, IsInstanceNorm(type.c_str()) ? "the groups' 1 / sqrt(var + epsilon)"
                                                : "the groups' variances")
      .AsIntermediate()
      .AsDispensable()
      .Attr("epsilon", 1e-5f, "added to the variance")
      .KernelDataTypeFrom("X")
      .InferShape(NormInferShape)
      .Grad([type](tide::GradMaker& g) {
        auto op = g.NewOp(type + "_grad");
        op.Input("X", g.Input("X"));
        if (!g.Input("Scale").empty()) op.Input("Scale", g.Input("Scale"));
        if (!g.Input("Bias").empty()) op.Input("Bias", g.Input("Bias"));
        op.Input(GradVarName("Y"), g.OutputGrad("Y")).Output(GradVarName("X"), g.InputGrad("X"));
        if (!g.Input("Scale").empty()) op.Output(GradVarName("Scale"), g.InputGrad("Scale"));
        if (!g.Input("Bias").empty()) op.Output(GradVarName("Bias"), g.InputGrad("Bias"));
        op.CopyAttrs();
      });
}

tide::OpSchema NormGradSchema(const std::string& type) {
  return tide::OpSchema(type)
      .Input("X")
      .Input("Scale")
      .AsDispensable()
      .AsFloat32Param()
      .Input("Bias")
      .AsDispensable()
      .AsFloat32Param()
      .Input(GradVarName("Y"))
      .Output(GradVarName("X"))
      .AsDispensable()
      .Output(GradVarName("Scale"))
      .AsDispensable()
      .Output(GradVarName("Bias"))
      .AsDispensable()
      .Attr("epsilon", 1e-5f)
      .KernelDataTypeFrom("X")
      .InferShape(GradLike({"X", "Scale", "Bias"}));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(NormSchema("layer_norm",
                            "Y = Scale * (X - mean) / sqrt(var + epsilon) + Bias, "
                            "the statistics over the dims from begin_norm_axis.")
                     .Attr("begin_norm_axis", int32_t(1), "the first normalised dim"));
TIDE_REGISTER_OP(NormGradSchema("layer_norm_grad").Attr("begin_norm_axis", int32_t(1)));
TIDE_REGISTER_OP(NormSchema("group_norm",
                            "Y = Scale * (X - mean) / sqrt(var + epsilon) + Bias "
                            "per channel, the statistics over each sample's "
                            "channel groups (X [N, C, ...], or [N, ..., C] "
                            "with NHWC).")
                     .Attr("groups", int32_t(1), "channel groups (dividing C)")
                     .Attr("data_layout", std::string("NCHW"), "NCHW or NHWC (channels last)")
                     .InSet({"NCHW", "NHWC"}));
TIDE_REGISTER_OP(NormGradSchema("group_norm_grad")
                     .Attr("groups", int32_t(1))
                     .Attr("data_layout", std::string("NCHW"))
                     .InSet({"NCHW", "NHWC"}));
TIDE_REGISTER_OP(NormSchema("instance_norm",
                            "Y = Scale * (X - mean) / sqrt(var + epsilon) + "
                            "Bias per channel, the statistics over each "
                            "sample's channel (X [N, C, ...])."));
TIDE_REGISTER_OP(NormGradSchema("instance_norm_grad"));
TIDE_REGISTER_KERNEL("layer_norm", "cpu", tide::kernels::Norm, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("layer_norm_grad", "cpu", NormGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("group_norm", "cpu", tide::kernels::Norm, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("group_norm_grad", "cpu", NormGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("instance_norm", "cpu", tide::kernels::Norm, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("instance_norm_grad", "cpu", NormGradKernel, OPS_NN_FLOAT_TYPES);
