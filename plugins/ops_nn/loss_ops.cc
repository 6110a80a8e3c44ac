// loss_ops.cc: Paddle's element-wise losses with their grads: huber_loss (F.smooth_l1_loss;
// Residual = Y - X, Out = r^2 / 2 within delta, delta (|r| - delta / 2) beyond), kldiv_loss
// (F.kl_div: Target (log Target with log_target) against log-probabilities X, reduced by
// `reduction`) and sigmoid_cross_entropy_with_logits (F.binary_cross_entropy_with_logits: the
// stable max(x, 0) - x l + log(1 + e^-|x|), pos_weight, ignore_index, normalize). The formulas
// and their edge cases (Target <= 0 gives 0, ignore_index compared after truncating the label to
// int) are Paddle's CPU kernels'.
#include <cmath>
#include <string>

#include "common.h"

namespace ops_nn {
namespace {

// A grad output of forward input `p`, sized as `like`; null when not asked for.
template <typename T>
T* GradOut(KernelContext& ctx, const char* p, const Tensor& like) {
  const std::string g = GradVarName(p);
  if (!ctx.HasOutput(g.c_str())) return nullptr;
  return ctx.Output(g.c_str()).mutable_data<T>(like.dims(), ctx.place());
}

// ---- huber_loss
void HuberShape(tide::InferShapeContext& ctx) {
  CheckSameDims(ctx, "X", "Y");
  CheckSameType(ctx, "X", "Y");
  for (const char* o : {"Out", "Residual"}) {
    ctx.SetOutputDims(o, ctx.InputDims("X"));
    ctx.SetOutputDataType(o, ctx.InputDataType("X"));
  }
  ctx.ShareLoD("X", "Out");
}

void CheckDelta(const TideAttrValue& v) {
  TIDE_CHECK(v.f >= 0, "attribute 'delta' of huber_loss must be >= 0, got ", v.f);
}

template <typename T>
void HuberKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  CheckSameDims(ctx, x, y, "X", "Y");
  const T delta = static_cast<T>(ctx.Attr<float>("delta"));
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  T* res = ctx.Output("Residual").mutable_data<T>(x.dims(), ctx.place());
  const T *a = x.data<T>(), *b = y.data<T>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const T r = b[i] - a[i], ar = std::abs(r);
    res[i] = r;
    out[i] = ar <= delta ? T(0.5) * r * r : delta * (ar - T(0.5) * delta);
  }
}

template <typename T>
void HuberGradKernel(KernelContext& ctx) {
  Tensor res = ctx.Input("Residual");
  const T* r = res.data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  const T delta = static_cast<T>(ctx.Attr<float>("delta"));
  T* dx = GradOut<T>(ctx, "X", res);
  T* dy = GradOut<T>(ctx, "Y", res);
  for (int64_t i = 0, n = res.numel(); i < n; ++i) {
    const T d = std::abs(r[i]) <= delta ? r[i] : (r[i] > 0 ? delta : -delta);
    if (dx) dx[i] = -d * g[i];
    if (dy) dy[i] = d * g[i];
  }
}

// ---- kldiv_loss
enum class Reduction { kNone, kBatchMean, kMean, kSum };

Reduction ReductionOf(const char* op, const std::string& r) {
  if (r == "none") return Reduction::kNone;
  if (r == "batchmean") return Reduction::kBatchMean;
  if (r == "mean") return Reduction::kMean;
  if (r == "sum") return Reduction::kSum;
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op,
             "': reduction must be 'none', 'batchmean', 'mean' or 'sum', got '", r, "'");
}

void KlDivShape(tide::InferShapeContext& ctx) {
  CheckSameDims(ctx, "X", "Target");
  CheckSameType(ctx, "X", "Target");
  const Reduction r = ReductionOf(ctx.op_type(), ctx.Attr<std::string>("reduction"));
  ctx.SetOutputDims("Loss", r == Reduction::kNone ? ctx.InputDims("X") : Dims{});
  ctx.SetOutputDataType("Loss", ctx.InputDataType("X"));
}

// The divisor of the reduced sum: 1, X's first dim (batchmean) or its numel (mean).
template <typename T>
T KlDivDivisor(Reduction r, const Tensor& x) {
  if (r == Reduction::kBatchMean) return x.rank() > 0 ? static_cast<T>(x.dim(0)) : T(1);
  if (r == Reduction::kMean) return static_cast<T>(x.numel());
  return T(1);
}

template <typename T>
void KlDivKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), t = ctx.Input("Target");
  CheckSameDims(ctx, x, t, "X", "Target");
  const Reduction r = ReductionOf(ctx.op_type(), ctx.Attr<std::string>("reduction"));
  const bool log_target = ctx.Attr<bool>("log_target");
  const T *a = x.data<T>(), *b = t.data<T>();
  const int64_t n = x.numel();
  auto term = [&](int64_t i) -> T {
    if (log_target) return std::exp(b[i]) * (b[i] - a[i]);
    return b[i] > 0 ? b[i] * (std::log(b[i]) - a[i]) : T(0);
  };
  if (r == Reduction::kNone) {
    T* out = ctx.Output("Loss").mutable_data<T>(x.dims(), ctx.place());
    for (int64_t i = 0; i < n; ++i) out[i] = term(i);
    return;
  }
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += term(i);
  *ctx.Output("Loss").mutable_data<T>(Dims{}, ctx.place()) = sum / KlDivDivisor<T>(r, x);
}

template <typename T>
void KlDivGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), t = ctx.Input("Target");
  const Reduction r = ReductionOf(ctx.op_type(), ctx.Attr<std::string>("reduction"));
  const bool log_target = ctx.Attr<bool>("log_target");
  const T* b = t.data<T>();
  const T* g = ctx.Input(GradVarName("Loss").c_str()).data<T>();
  T* dx = GradOut<T>(ctx, "X", x);
  if (!dx) return;
  const T scale = T(1) / KlDivDivisor<T>(r, x);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const T gi = r == Reduction::kNone ? g[i] : g[0] * scale;
    dx[i] = log_target ? -std::exp(b[i]) * gi : (b[i] > 0 ? -b[i] * gi : T(0));
  }
}

// ---- sigmoid_cross_entropy_with_logits
void SigmoidCeShape(tide::InferShapeContext& ctx) {
  CheckSameDims(ctx, "X", "Label");
  CheckSameType(ctx, "X", "Label");
  if (ctx.HasInput("pos_weight")) {
    CheckSameDims(ctx, "X", "pos_weight");
    CheckSameType(ctx, "X", "pos_weight");
  }
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

// What the loss is divided by: 1, or with normalize the count of labels not ignore_index (at
// least 1: where every label is ignored Paddle's int count stays 0 and its loss is NaN).
template <typename T>
T SigmoidCeNorm(KernelContext& ctx, const T* label, int64_t n) {
  if (!ctx.Attr<bool>("normalize")) return T(1);
  const T ignore = static_cast<T>(ctx.Attr<int32_t>("ignore_index"));
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += std::abs(label[i] - ignore) > T(1e-6);
  return static_cast<T>(std::max<int64_t>(count, 1));
}

template <typename T>
struct SigmoidCeArgs {
  Tensor x;
  const T *logit, *label, *pos_weight;
  int32_t ignore;
  T norm;
  bool ignored(int64_t i) const { return static_cast<int32_t>(label[i]) == ignore; }
};

template <typename T>
SigmoidCeArgs<T> GetSigmoidCeArgs(KernelContext& ctx) {
  SigmoidCeArgs<T> a;
  a.x = ctx.Input("X");
  Tensor label = ctx.Input("Label"), pw = ctx.OptionalInput("pos_weight");
  CheckSameDims(ctx, a.x, label, "X", "Label");
  if (pw) CheckSameDims(ctx, a.x, pw, "X", "pos_weight");
  a.logit = a.x.template data<T>();
  a.label = label.data<T>();
  a.pos_weight = pw ? pw.data<T>() : nullptr;
  a.ignore = ctx.Attr<int32_t>("ignore_index");
  a.norm = SigmoidCeNorm(ctx, a.label, a.x.numel());
  return a;
}

template <typename T>
void SigmoidCeKernel(KernelContext& ctx) {
  const auto a = GetSigmoidCeArgs<T>(ctx);
  T* out = ctx.Output("Out").mutable_data<T>(a.x.dims(), ctx.place());
  for (int64_t i = 0, n = a.x.numel(); i < n; ++i) {
    const T x = a.logit[i], l = a.label[i];
    if (a.ignored(i)) {
      out[i] = T(0);
      continue;
    }
    // log(1 + e^-x) as the stable max(-x, 0) + log(1 + e^-|x|), times pos_weight (F's
    // 1 + (pos_weight - 1) Label, which it computes before the op).
    const T softplus_neg = std::max(-x, T(0)) + std::log1p(std::exp(-std::abs(x)));
    const T w = a.pos_weight ? a.pos_weight[i] : T(1);
    out[i] = ((T(1) - l) * x + w * softplus_neg) / a.norm;
  }
}

template <typename T>
void SigmoidCeGradKernel(KernelContext& ctx) {
  const auto a = GetSigmoidCeArgs<T>(ctx);
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = GradOut<T>(ctx, "X", a.x);
  if (!dx) return;
  for (int64_t i = 0, n = a.x.numel(); i < n; ++i) {
    const T x = a.logit[i], l = a.label[i];
    if (a.ignored(i)) {
      dx[i] = T(0);
      continue;
    }
    const T sig = T(1) / (T(1) + std::exp(-x));
    const T w = a.pos_weight ? a.pos_weight[i] : T(1);
    // d/dx [(1 - l) x + w log(1 + e^-x)] = (1 - l) - w (1 - sigmoid(x)).
    dx[i] = ((T(1) - l) - w * (T(1) - sig)) * g[i] / a.norm;
  }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("huber_loss")
                     .Comment("Residual = Y - X; Out = Residual^2 / 2 where |Residual| <= delta, "
                              "else delta (|Residual| - delta / 2).")
                     .Input("X", "the prediction")
                     .Input("Y", "the target, X's dims")
                     .Output("Out", "the loss, X's dims")
                     .Output("Residual", "Y - X (for the grad)")
                     .AsIntermediate()
                     .RequiredAttr("delta", TIDE_ATTR_FLOAT, "where the loss turns linear (>= 0)")
                     .Check(CheckDelta)
                     .KernelDataTypeFrom("X")
                     .InferShape(HuberShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("huber_loss_grad")
                           .Input("Residual", g.Output("Residual"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("huber_loss_grad")
                     .Input("Residual")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .RequiredAttr("delta", TIDE_ATTR_FLOAT)
                     .KernelDataTypeFrom("Residual")
                     .InferShape([](tide::InferShapeContext& c) {
                       for (const char* p : {"X", "Y"}) {
                         const std::string g = GradVarName(p);
                         if (!c.HasOutput(g.c_str())) continue;
                         c.SetOutputDims(g.c_str(), c.InputDims("Residual"));
                         c.SetOutputDataType(g.c_str(), c.InputDataType("Residual"));
                       }
                     }));
TIDE_REGISTER_KERNEL("huber_loss", "cpu", HuberKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("huber_loss_grad", "cpu", HuberGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("kldiv_loss")
                     .Comment("Loss = Target (log Target - X) (0 where Target <= 0), or with "
                              "log_target e^Target (Target - X); reduced by `reduction`.")
                     .Input("X", "log-probabilities")
                     .Input("Target", "probabilities (log-probabilities with log_target)")
                     .Output("Loss", "X's dims with reduction 'none', else 0-D")
                     .Attr("reduction", std::string("mean"),
                           "'none', 'batchmean' (sum / X's first dim), 'mean' or 'sum'")
                     .Attr("log_target", false, "Target holds log-probabilities")
                     .KernelDataTypeFrom("X")
                     .InferShape(KlDivShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("kldiv_loss_grad")
                           .Input("X", g.Input("X"))
                           .Input("Target", g.Input("Target"))
                           .Input(GradVarName("Loss"), g.OutputGrad("Loss"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("kldiv_loss_grad")
                     .Input("X")
                     .Input("Target")
                     .Input(GradVarName("Loss"))
                     .Output(GradVarName("X"))
                     .Attr("reduction", std::string("mean"))
                     .Attr("log_target", false)
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("kldiv_loss", "cpu", KlDivKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("kldiv_loss_grad", "cpu", KlDivGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("sigmoid_cross_entropy_with_logits")
        .Comment("Out = (1 - Label) X + pos_weight log(1 + e^-X), computed "
                 "stably; 0 where int(Label) == ignore_index; with normalize divided by the "
                 "count of labels that are not ignore_index.")
        .Input("X", "logits")
        .Input("Label", "targets in [0, 1], X's dims")
        .Input("pos_weight", "weights of the log(1 + e^-X) term, X's dims (optional)")
        .AsDispensable()
        .Output("Out", "the loss, X's dims")
        .Attr("normalize", false, "divide by the count of labels not ignore_index")
        .Attr("ignore_index", int32_t(-100), "a label (truncated to int) to give loss 0")
        .KernelDataTypeFrom("X")
        .InferShape(SigmoidCeShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("sigmoid_cross_entropy_with_logits_grad")
              .Input("X", g.Input("X"))
              .Input("Label", g.Input("Label"))
              .Input("pos_weight", g.Input("pos_weight"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("sigmoid_cross_entropy_with_logits_grad")
                     .Input("X")
                     .Input("Label")
                     .Input("pos_weight")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("normalize", false)
                     .Attr("ignore_index", int32_t(-100))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("sigmoid_cross_entropy_with_logits", "cpu", SigmoidCeKernel,
                     OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sigmoid_cross_entropy_with_logits_grad", "cpu", SigmoidCeGradKernel,
                     OPS_NN_FLOAT_TYPES);
