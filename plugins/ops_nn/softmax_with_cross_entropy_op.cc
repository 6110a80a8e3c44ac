// softmax_with_cross_entropy_op.cc: softmax and cross-entropy in one numerically stable pass
// (log-sum-exp), hard (int64 class ids, ignore_index) or soft (distribution) labels, along any
// axis, and its grad Logits@GRAD = (Softmax * sum(Label) - Label) * Loss@GRAD; with use_softmax
// false, the cross entropy of Logits taken as probabilities.
#include <algorithm>
#include <cmath>
#include <tide/ops/loss.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::ClassView;

void SwceInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  Dims logits = ctx.InputDims("Logits"), label = ctx.InputDims("Label");
  int axis = 0;
  tide::ops::GetClassView(op, logits, ctx.Attr<int32_t>("axis"), &axis);
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckSoftmaxLabel(op, logits, label, axis, soft);
  TideDataType lt = ctx.InputDataType("Label"), xt = ctx.InputDataType("Logits");
  TIDE_CHECK(lt == TIDE_UNDEFINED || (soft ? lt == xt : lt == TIDE_INT64), "op '", op,
             "': Label ('", ctx.InputName("Label"), "') must be ",
             soft ? tide::DataTypeName(xt) : "int64",
             " with soft_label = ", soft ? "true" : "false", ", got ", tide::DataTypeName(lt));
  Dims loss = logits;
  loss[axis] = 1;
  ctx.SetOutputDims("Softmax", logits);
  ctx.SetOutputDataType("Softmax", xt);
  ctx.SetOutputDims("Loss", loss);
  ctx.SetOutputDataType("Loss", xt);
  ctx.ShareLoD("Logits", "Softmax");
  ctx.ShareLoD("Logits", "Loss");
}

// The kernels read their inputs through tide/ops/loss.hpp; hard labels are checked before the
// (parallel) loops.
// log(p), its infinities clamped to +-1e20 as Paddle's TolerableValue does.
template <typename T>
T TolerableLog(T p) {
  const T l = std::log(p);
  return std::isinf(l) ? (l > 0 ? T(1e20) : T(-1e20)) : l;
}

// use_softmax = false: Logits already hold probabilities; Softmax is a copy of them and Loss their
// cross entropy (Paddle's cross_entropy_with_softmax without its softmax step).
template <typename T>
void CrossEntropyOfProbs(KernelContext& ctx, const tide::ops::SwceArgs<T>& a) {
  const ClassView v = a.v;
  const T* p = a.logits;
  std::copy(p, p + a.rows() * v.k, a.softmax);
  for (int64_t r = 0; r < a.rows(); ++r) {
    const int64_t i = r / v.post, j = r % v.post, base = i * v.k * v.post + j;
    if (a.label.soft) {
      T l = 0;
      for (int64_t c = 0; c < v.k; ++c)
        l -= a.label.soft[base + c * v.post] * TolerableLog(p[base + c * v.post]);
      a.loss[r] = l;
    } else {
      const int64_t cls = a.label.hard[r];
      a.loss[r] = cls == a.ignore ? T(0) : -TolerableLog(p[base + cls * v.post]);
    }
  }
  (void)ctx;
}

template <typename T>
void SwceKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetSwceArgs<T>(ctx);
  const ClassView v = a.v;
  const T* x = a.logits;
  if (a.label.hard) tide::ops::CheckHardLabels(ctx, a.label.hard, a.rows(), v.k, a.ignore);
  if (!ctx.Attr<bool>("use_softmax")) return CrossEntropyOfProbs(ctx, a);
  ParallelFor(ctx, a.rows(), 4 * v.k, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t i = r / v.post, j = r % v.post, base = i * v.k * v.post + j;
      T mx = x[base];
      for (int64_t c = 1; c < v.k; ++c) mx = std::max(mx, x[base + c * v.post]);
      T sum = 0;
      for (int64_t c = 0; c < v.k; ++c) sum += std::exp(x[base + c * v.post] - mx);
      const T lse = std::log(sum) + mx;  // log(sum(exp(x)))
      for (int64_t c = 0; c < v.k; ++c)
        a.softmax[base + c * v.post] = std::exp(x[base + c * v.post] - lse);
      if (a.label.soft) {
        T l = 0;
        for (int64_t c = 0; c < v.k; ++c)
          l -= a.label.soft[base + c * v.post] * (x[base + c * v.post] - lse);
        a.loss[r] = l;
      } else {
        const int64_t cls = a.label.hard[r];
        a.loss[r] = cls == a.ignore ? T(0) : lse - x[base + cls * v.post];
      }
    }
  });
}

// use_softmax = false: Logits@GRAD = -Label / Softmax * Loss@GRAD (soft), or -Loss@GRAD /
// Softmax at the label's class and 0 elsewhere (hard), for rows [b, e).
template <typename T>
void ProbsGrad(const tide::ops::SwceGradArgs<T>& a, int64_t b, int64_t e) {
  const ClassView v = a.v;
  for (int64_t r = b; r < e; ++r) {
    const int64_t i = r / v.post, j = r % v.post, base = i * v.k * v.post + j;
    const int64_t cls = a.label.soft ? -1 : a.label.hard[r];
    for (int64_t c = 0; c < v.k; ++c) {
      const int64_t e2 = base + c * v.post;
      const T lab = a.label.soft ? a.label.soft[e2] : T(c == cls && cls != a.ignore ? 1 : 0);
      a.dlogits[e2] = lab == T(0) ? T(0) : -lab / a.softmax[e2] * a.dloss[r];
    }
  }
}

template <typename T>
void SwceGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetSwceGradArgs<T>(ctx);
  const ClassView v = a.v;
  if (a.label.hard) tide::ops::CheckHardLabels(ctx, a.label.hard, a.rows(), v.k, a.ignore);
  const bool use_softmax = ctx.Attr<bool>("use_softmax");
  ParallelFor(ctx, a.rows(), 2 * v.k, [&](int64_t b, int64_t e) {
    if (!use_softmax) return ProbsGrad(a, b, e);
    for (int64_t r = b; r < e; ++r) {
      const int64_t i = r / v.post, j = r % v.post, base = i * v.k * v.post + j;
      const T g = a.dloss[r];
      if (a.label.soft) {
        T s = 0;
        for (int64_t c = 0; c < v.k; ++c) s += a.label.soft[base + c * v.post];
        for (int64_t c = 0; c < v.k; ++c) {
          const int64_t e2 = base + c * v.post;
          a.dlogits[e2] = (a.softmax[e2] * s - a.label.soft[e2]) * g;
        }
        continue;
      }
      const int64_t cls = a.label.hard[r];
      for (int64_t c = 0; c < v.k; ++c) {
        const int64_t e2 = base + c * v.post;
        a.dlogits[e2] = cls == a.ignore ? T(0) : (a.softmax[e2] - (c == cls ? T(1) : T(0))) * g;
      }
    }
  });
}

tide::OpSchema SwceAttrs(tide::OpSchema s) {
  return s
      .Attr("soft_label", false, "Label is a distribution over the classes (float, Logits' dims)")
      .Attr("ignore_index", int32_t(-100),
            "a hard label with this value gets loss 0 and no gradient")
      .Attr("numeric_stable_mode", true,
            "kept for Fluid programs: the kernel is always stable "
            "(log-sum-exp)")
      .Attr("axis", int32_t(-1), "the class axis (negative counts from the end)")
      .Attr("use_softmax", true,
            "false: Logits already hold probabilities (Softmax is a copy of them; Paddle's "
            "F.cross_entropy(use_softmax=False))");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    SwceAttrs(tide::OpSchema("softmax_with_cross_entropy")
                  .Comment("Softmax = softmax(Logits) along axis; Loss = -log(Softmax[Label]) "
                           "(hard) or -sum(Label * log(Softmax)) (soft), computed as log-sum-exp "
                           "so large logits cannot overflow.")
                  .Input("Logits", "unnormalised scores, e.g. [N, K]")
                  .Input("Label",
                         "int64 class ids with 1 on the class axis (e.g. [N, 1]), or a "
                         "float distribution with Logits' dims (soft_label)")
                  .Output("Softmax", "softmax of Logits, Logits' dims")
                  .Output("Loss", "the cross entropy, Logits' dims with 1 on the class axis")
                  .KernelDataTypeFrom("Logits")
                  .InferShape(SwceInferShape)
                  .Grad([](tide::GradMaker& g) {
                    g.NewOp("softmax_with_cross_entropy_grad")
                        .Input("Label", g.Input("Label"))
                        .Input("Softmax", g.Output("Softmax"))
                        .Input(GradVarName("Loss"), g.OutputGrad("Loss"))
                        .Output(GradVarName("Logits"), g.InputGrad("Logits"))
                        .CopyAttrs();
                  })));
TIDE_REGISTER_OP(SwceAttrs(tide::OpSchema("softmax_with_cross_entropy_grad")
                               .Comment("Logits@GRAD = (Softmax * sum(Label) - Label) * Loss@GRAD "
                                        "(one-hot Label when hard; 0 for ignore_index).")
                               .Input("Label", "the forward labels")
                               .Input("Softmax", "the forward softmax")
                               .Input(GradVarName("Loss"), "gradient of Loss")
                               .Output(GradVarName("Logits"), "gradient of Logits")
                               .KernelDataTypeFrom("Softmax")
                               .InferShape([](tide::InferShapeContext& ctx) {
                                 const std::string g = GradVarName("Logits");
                                 ctx.SetOutputDims(g.c_str(), ctx.InputDims("Softmax"));
                                 ctx.SetOutputDataType(g.c_str(), ctx.InputDataType("Softmax"));
                               })));
TIDE_REGISTER_KERNEL("softmax_with_cross_entropy", "cpu", SwceKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("softmax_with_cross_entropy_grad", "cpu", SwceGradKernel, OPS_NN_FLOAT_TYPES);
