// skip_layernorm_op.cc: Paddle's skip_layernorm, the inference op its skip_layernorm_fuse_pass
// makes of a residual add and the layer_norm after it (InferenceTranspiler makes it too):
// Out = layer_norm(X + Y) with Scale and Bias, X and Y of the same dims, flattened at
// begin_norm_axis to [left, right] (tide/ops/norm.hpp). One pass writes the sum, a second
// normalises it in place; the statistics as layer_norm's kernel computes them (in double, in the
// same order), so the result is layer_norm's of the sum. No gradient.
#include <cmath>
#include <tide/ops/norm.hpp>

#include "common.h"

namespace ops_nn {
namespace {

void SkipLayerNormInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  TIDE_CHECK(x.size() == y.size(), "op 'skip_layernorm': X ", tide::ToString(x), " and Y ",
             tide::ToString(y), " must have the same dims");
  for (size_t i = 0; i < x.size(); ++i)
    TIDE_CHECK(DimsCompatible(x[i], y[i]), "op 'skip_layernorm': X ", tide::ToString(x), " and Y ",
               tide::ToString(y), " must have the same dims");
  const tide::ops::NormGroups g =
      tide::ops::LayerNormGroups("skip_layernorm", x, ctx.Attr<int32_t>("begin_norm_axis"));
  for (const char* p : {"Scale", "Bias"}) {
    const int64_t n = DimsProductOrUnknown(ctx.InputDims(p));
    TIDE_CHECK(n < 0 || g.size < 0 || n == g.size, "op 'skip_layernorm': ", p, " has ", n,
               " elements, expected ", g.size);
  }
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

template <typename T>
void SkipLayerNormKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor xt = ctx.Input("X"), yt = ctx.Input("Y"), st = ctx.Input("Scale"), bt = ctx.Input("Bias");
  const Dims d = xt.dims();
  TIDE_CHECK(yt.dims() == d, "op '", op, "': X ", tide::ToString(d), " and Y ",
             tide::ToString(yt.dims()), " must have the same dims");
  const tide::ops::NormGroups g =
      tide::ops::LayerNormGroups(op, d, ctx.Attr<int32_t>("begin_norm_axis"));
  for (const Tensor* t : {&st, &bt})
    TIDE_CHECK(t->numel() == g.size, "op '", op, "': ", t == &st ? "Scale" : "Bias", " has ",
               t->numel(), " elements, expected ", g.size, " (X ", tide::ToString(d), ")");
  const T* x = xt.data<T>();
  const T* y = yt.data<T>();
  const T* scale = st.data<T>();
  const T* bias = bt.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(d, ctx.place());
  const double eps = ctx.Attr<float>("epsilon");
  const int64_t n = g.size;
  ParallelFor(ctx, g.groups, n * 6, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * n;
      const T* yr = y + r * n;
      T* o = out + r * n;
      double m = 0, v = 0;
      for (int64_t j = 0; j < n; ++j) {
        o[j] = xr[j] + yr[j];
        m += o[j];
      }
      m /= n;
      for (int64_t j = 0; j < n; ++j) {
        const double dv = o[j] - m;
        v += dv * dv;
      }
      v /= n;
      const T mean = static_cast<T>(m);
      const T rstd = static_cast<T>(1.0 / std::sqrt(v + eps));
      for (int64_t j = 0; j < n; ++j) o[j] = (o[j] - mean) * rstd * scale[j] + bias[j];
    }
  });
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("skip_layernorm")
        .Comment("Out = layer_norm(X + Y): the sum flattened to [left, right] at "
                 "begin_norm_axis, each row normalised with its mean and biased variance, then "
                 "times Scale plus Bias (right values each). Paddle's inference op "
                 "(skip_layernorm_fuse_pass); made by tide.transpiler.InferenceTranspiler of a "
                 "residual add and its layer_norm. No gradient.")
        .Input("X", "one addend")
        .Input("Y", "the other addend, X's dims")
        .Input("Scale", "per normalised element, right values")
        .Input("Bias", "per normalised element, right values")
        .Output("Out", "X's dims")
        .KernelDataTypeFrom("X")
        .InferShape(SkipLayerNormInferShape)
        .Attr("epsilon", 1e-5f, "added to the variance")
        .Attr("begin_norm_axis", int32_t(1), "the first normalised dim")
        .Attr("use_mkldnn", false, "use oneDNN where available (ignored by the plain kernel)"));
TIDE_REGISTER_KERNEL("skip_layernorm", "cpu", SkipLayerNormKernel, OPS_NN_FLOAT_TYPES);
