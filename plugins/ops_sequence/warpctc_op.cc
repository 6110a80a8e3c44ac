// warpctc_op.cc: warpctc (Fluid's op behind F.ctc_loss / layers.warpctc), the CTC loss of
// Graves et al. with the softmax inside, as Baidu's warp-ctc computes it for Paddle: per sequence
// -log p(label | softmax(logits)) by the alpha-beta recursion in log space (float64 here, for
// float32 logits too), and at once its gradient w.r.t. the logits (softmax minus the posterior
// of each class at each step), which warpctc_grad scales by Loss@GRAD (and 1 / length with
// norm_by_times). Sequences come padded ([Tmax, B, C] with LogitsLength / LabelLength) or as
// LoD sequences ([sum T, C] and [sum L, 1]). An infeasible label (length plus repeats above the
// steps) has loss 0 and gradient 0, and a sequence of no steps (and no labels) loss inf, as
// warp-ctc gives.
#include <cmath>
#include <limits>
#include <string>
#include <tide/ops/int_inputs.hpp>
#include <vector>

#include "common.h"

namespace ops_sequence {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double LogAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// The batch: each sequence's first logits row and step stride, its length, and its labels.
struct CtcBatch {
  int64_t num_classes = 0, max_steps = 0;
  std::vector<int64_t> steps;                // T of each sequence
  std::vector<std::vector<int64_t>> labels;  // the labels of each sequence
  bool padded = false;
  Level logits_lod;  // the LoD form's logits offsets
};

// Reads and checks the inputs of warpctc (the padded or the LoD form).
CtcBatch GetCtcBatch(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor logits = ctx.Input("Logits");
  const Dims& ld = logits.dims();
  const std::vector<int64_t> label = tide::ops::IntValues(ctx, "Label");
  const Dims label_dims = ctx.Input("Label").dims();
  CtcBatch b;
  b.padded = ctx.HasInput("LogitsLength");
  TIDE_CHECK(b.padded == ctx.HasInput("LabelLength"), "op '", op,
             "': give both LogitsLength and LabelLength (padded input) or neither (LoD input)");
  if (b.padded) {
    TIDE_CHECK(ld.size() == 3 && ld[0] > 0 && ld[1] > 0 && ld[2] > 0, "op '", op, "': Logits ('",
               ctx.InputName("Logits"), "') must be [Tmax, B, C] with each dim > 0, got ",
               tide::ToString(ld));
    const int64_t batch = ld[1];
    TIDE_CHECK(label_dims.size() == 2 && label_dims[0] == batch, "op '", op, "': Label ('",
               ctx.InputName("Label"), "') must be padded [B, Lmax] with B = ", batch, ", got ",
               tide::ToString(label_dims));
    const std::vector<int64_t> tl = tide::ops::IntValues(ctx, "LogitsLength");
    const std::vector<int64_t> ll = tide::ops::IntValues(ctx, "LabelLength");
    TIDE_CHECK(static_cast<int64_t>(tl.size()) == batch && static_cast<int64_t>(ll.size()) == batch,
               "op '", op, "': LogitsLength ('", ctx.InputName("LogitsLength"), "') and ",
               "LabelLength ('", ctx.InputName("LabelLength"), "') must hold B = ", batch,
               " lengths each, got ", tl.size(), " and ", ll.size());
    b.num_classes = ld[2];
    b.max_steps = ld[0];
    for (int64_t i = 0; i < batch; ++i) {
      TIDE_CHECK(tl[i] >= 0 && tl[i] <= ld[0], "op '", op, "': LogitsLength ('",
                 ctx.InputName("LogitsLength"), "')[", i, "] = ", tl[i], " is outside [0, ", ld[0],
                 "]");
      TIDE_CHECK(ll[i] >= 0 && ll[i] <= label_dims[1], "op '", op, "': LabelLength ('",
                 ctx.InputName("LabelLength"), "')[", i, "] = ", ll[i], " is outside [0, ",
                 label_dims[1], "]");
      b.steps.push_back(tl[i]);
      const auto first = label.begin() + i * label_dims[1];
      b.labels.emplace_back(first, first + ll[i]);
    }
  } else {
    TIDE_CHECK(ld.size() == 2 && ld[1] > 0, "op '", op, "': Logits ('", ctx.InputName("Logits"),
               "') must be [sum of lengths, C] with a LoD (or padded [Tmax, B, C] with "
               "LogitsLength), got ",
               tide::ToString(ld));
    TIDE_CHECK(label_dims.size() == 2 && label_dims[1] == 1, "op '", op, "': Label ('",
               ctx.InputName("Label"), "') must be [sum of label lengths, 1] with a LoD, got ",
               tide::ToString(label_dims));
    b.logits_lod = InputLoD(ctx, "Logits", 1)[0];
    const Level label_lod = InputLoD(ctx, "Label", 1)[0];
    TIDE_CHECK(label_lod.size() == b.logits_lod.size(), "op '", op, "': Logits ('",
               ctx.InputName("Logits"), "') holds ", b.logits_lod.size() - 1,
               " sequences, Label ('", ctx.InputName("Label"), "') ", label_lod.size() - 1,
               "; they must hold as many");
    b.num_classes = ld[1];
    for (size_t i = 0; i + 1 < b.logits_lod.size(); ++i) {
      b.steps.push_back(static_cast<int64_t>(b.logits_lod[i + 1] - b.logits_lod[i]));
      b.max_steps = std::max(b.max_steps, b.steps.back());
      b.labels.emplace_back(label.begin() + label_lod[i], label.begin() + label_lod[i + 1]);
    }
  }
  const int blank = ctx.Attr<int32_t>("blank");
  TIDE_CHECK(blank >= 0 && blank < b.num_classes, "op '", op, "': attribute 'blank' = ", blank,
             " must be a class of Logits ('", ctx.InputName("Logits"), "'), in [0, ", b.num_classes,
             ")");
  for (size_t i = 0; i < b.labels.size(); ++i)
    for (size_t j = 0; j < b.labels[i].size(); ++j)
      TIDE_CHECK(b.labels[i][j] >= 0 && b.labels[i][j] < b.num_classes, "op '", op, "': Label ('",
                 ctx.InputName("Label"), "'): label ", j, " of sequence ", i, " is ",
                 b.labels[i][j], ", outside the classes [0, ", b.num_classes, ")");
  return b;
}

// The loss of one sequence and its gradient w.r.t. the logits: `logit(t, c)` reads the logits,
// `grad(t, c)` is where the gradient goes (zeroed by the caller).
template <typename T, typename In, typename Out>
T CtcSequence(int64_t steps, int64_t classes, const std::vector<int64_t>& label, int64_t blank,
              In logit, Out grad) {
  const int64_t len = static_cast<int64_t>(label.size());
  int64_t repeats = 0;
  for (int64_t i = 1; i < len; ++i) repeats += label[i] == label[i - 1];
  if (len + repeats > steps) return T(0);  // warp-ctc's 0 for an infeasible label
  // No steps and an empty label: warp-ctc's loss is inf (Paddle's F.ctc_loss(zero_infinity=True)
  // turns it into 0); nothing to take a gradient of.
  if (steps == 0) return std::numeric_limits<T>::infinity();
  // log-softmax of each step.
  std::vector<double> lp(steps * classes);
  for (int64_t t = 0; t < steps; ++t) {
    double mx = kNegInf, sum = 0;
    for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, static_cast<double>(logit(t, c)));
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(logit(t, c)) - mx);
    const double lse = mx + std::log(sum);
    for (int64_t c = 0; c < classes; ++c)
      lp[t * classes + c] = static_cast<double>(logit(t, c)) - lse;
  }
  // The label with blanks around and between: s even is blank, s odd label[(s - 1) / 2].
  const int64_t s_len = 2 * len + 1;
  auto ext = [&](int64_t s) { return s % 2 == 0 ? blank : label[(s - 1) / 2]; };
  // A path may skip the blank between two different labels.
  auto can_skip = [&](int64_t s) { return s >= 2 && ext(s) != blank && ext(s) != ext(s - 2); };
  std::vector<double> alpha(steps * s_len, kNegInf), beta(steps * s_len, kNegInf);
  alpha[0] = lp[blank];
  if (s_len > 1) alpha[1] = lp[ext(1)];
  for (int64_t t = 1; t < steps; ++t)
    for (int64_t s = 0; s < s_len; ++s) {
      const double* prev = &alpha[(t - 1) * s_len];
      double a = prev[s];
      if (s >= 1) a = LogAdd(a, prev[s - 1]);
      if (can_skip(s)) a = LogAdd(a, prev[s - 2]);
      alpha[t * s_len + s] = a == kNegInf ? kNegInf : a + lp[t * classes + ext(s)];
    }
  const int64_t last = (steps - 1) * s_len;
  beta[last + s_len - 1] = lp[(steps - 1) * classes + ext(s_len - 1)];
  if (s_len > 1) beta[last + s_len - 2] = lp[(steps - 1) * classes + ext(s_len - 2)];
  for (int64_t t = steps - 2; t >= 0; --t)
    for (int64_t s = 0; s < s_len; ++s) {
      const double* next = &beta[(t + 1) * s_len];
      double b = next[s];
      if (s + 1 < s_len) b = LogAdd(b, next[s + 1]);
      if (s + 2 < s_len && can_skip(s + 2)) b = LogAdd(b, next[s + 2]);
      beta[t * s_len + s] = b == kNegInf ? kNegInf : b + lp[t * classes + ext(s)];
    }
  double log_p = alpha[last + s_len - 1];
  if (s_len > 1) log_p = LogAdd(log_p, alpha[last + s_len - 2]);
  // d(-log p) / d logit(t, c) = softmax(t, c) - sum over s with ext(s) = c of
  // alpha(t, s) beta(t, s) / (p y(t, c)) (alpha and beta both hold y(t, c)).
  std::vector<double> occupancy(classes);
  for (int64_t t = 0; t < steps; ++t) {
    std::fill(occupancy.begin(), occupancy.end(), kNegInf);
    for (int64_t s = 0; s < s_len; ++s)
      occupancy[ext(s)] = LogAdd(occupancy[ext(s)], alpha[t * s_len + s] + beta[t * s_len + s]);
    for (int64_t c = 0; c < classes; ++c) {
      const double y = lp[t * classes + c];
      const double post = occupancy[c] == kNegInf ? 0 : std::exp(occupancy[c] - y - log_p);
      grad(t, c) = static_cast<T>(std::exp(y) - post);
    }
  }
  return static_cast<T>(-log_p);
}

template <typename T>
void WarpCtcKernel(KernelContext& ctx) {
  const CtcBatch b = GetCtcBatch(ctx);
  Tensor logits = ctx.Input("Logits");
  const T* x = logits.data<T>();
  const int64_t batch = static_cast<int64_t>(b.steps.size()), classes = b.num_classes;
  const int64_t blank = ctx.Attr<int32_t>("blank");
  T* loss = ctx.Output("Loss").mutable_data<T>({batch, 1}, ctx.place());
  const Dims grad_dims{b.max_steps, batch, classes};
  T* grad = ctx.Output("WarpCTCGrad").mutable_data<T>(grad_dims, ctx.place());
  std::fill(grad, grad + DimsProduct(grad_dims, 0, 3), T(0));
  // The gradient is always padded [Tmax, B, C], as Paddle's.
  for (int64_t i = 0; i < batch; ++i) {
    auto g = [&](int64_t t, int64_t c) -> T& { return grad[(t * batch + i) * classes + c]; };
    if (b.padded) {
      auto in = [&](int64_t t, int64_t c) { return x[(t * batch + i) * classes + c]; };
      loss[i] = CtcSequence<T>(b.steps[i], classes, b.labels[i], blank, in, g);
    } else {
      const T* first = x + static_cast<int64_t>(b.logits_lod[i]) * classes;
      auto in = [&](int64_t t, int64_t c) { return first[t * classes + c]; };
      loss[i] = CtcSequence<T>(b.steps[i], classes, b.labels[i], blank, in, g);
    }
  }
}

// Logits@GRAD = WarpCTCGrad times each sequence's Loss@GRAD (divided by its length with
// norm_by_times), in the Logits' form (padded, or unpadded rows with the Logits' LoD).
template <typename T>
void WarpCtcGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor logits = ctx.Input("Logits"), wgrad = ctx.Input("WarpCTCGrad");
  const T* wg = wgrad.data<T>();
  const T* dloss = ctx.Input(GradVarName("Loss").c_str()).data<T>();
  const bool norm = ctx.Attr<bool>("norm_by_times");
  const Dims& gd = wgrad.dims();
  TIDE_CHECK(gd.size() == 3, "op '", op, "': WarpCTCGrad must be [Tmax, B, C], got ",
             tide::ToString(gd));
  const int64_t batch = gd[1], classes = gd[2];
  Tensor dx = ctx.Output(GradVarName("Logits").c_str());
  T* d = dx.mutable_data<T>(logits.dims(), ctx.place());
  if (ctx.HasInput("LogitsLength")) {
    TIDE_CHECK(logits.dims() == gd, "op '", op, "': WarpCTCGrad ", tide::ToString(gd),
               " must have Logits' dims ", tide::ToString(logits.dims()));
    const std::vector<int64_t> len = tide::ops::IntValues(ctx, "LogitsLength");
    for (int64_t t = 0; t < gd[0]; ++t)
      for (int64_t i = 0; i < batch; ++i) {
        const T scale = dloss[i] / (norm ? static_cast<T>(std::max<int64_t>(len[i], 1)) : T(1));
        for (int64_t c = 0; c < classes; ++c) {
          const int64_t k = (t * batch + i) * classes + c;
          d[k] = wg[k] * scale;
        }
      }
    return;
  }
  const Level lod = InputLoD(ctx, "Logits", 1)[0];
  TIDE_CHECK(static_cast<int64_t>(lod.size()) == batch + 1, "op '", op, "': WarpCTCGrad holds ",
             batch, " sequences, Logits' LoD ", LevelString(lod), " ", lod.size() - 1);
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t steps = static_cast<int64_t>(lod[i + 1] - lod[i]);
    const T scale = dloss[i] / (norm ? static_cast<T>(std::max<int64_t>(steps, 1)) : T(1));
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t c = 0; c < classes; ++c)
        d[(static_cast<int64_t>(lod[i]) + t) * classes + c] =
            wg[(t * batch + i) * classes + c] * scale;
  }
  SetGradLoD(ctx, dx, logits);
}

void WarpCtcShape(tide::InferShapeContext& c) {
  const char* op = c.op_type();
  const bool padded = c.HasInput("LogitsLength");
  TIDE_CHECK(padded == c.HasInput("LabelLength"), "op '", op,
             "': give both LogitsLength and LabelLength (padded input) or neither (LoD input)");
  const Dims ld = c.InputDims("Logits"), label = c.InputDims("Label");
  const TideDataType lt = c.InputDataType("Label");
  TIDE_CHECK(lt == TIDE_INT32 || lt == TIDE_INT64 || lt == TIDE_UNDEFINED, "op '", op,
             "': Label ('", c.InputName("Label"), "') must be int32 or int64, got ",
             tide::DataTypeName(lt));
  if (padded) {
    TIDE_CHECK(ld.size() == 3, "op '", op, "': with LogitsLength, Logits ('", c.InputName("Logits"),
               "') must be padded [Tmax, B, C], got ", tide::ToString(ld));
    TIDE_CHECK(label.size() == 2, "op '", op, "': with LabelLength, Label ('", c.InputName("Label"),
               "') must be padded [B, Lmax], got ", tide::ToString(label));
    c.SetOutputDims("Loss", {ld[1], 1});
    c.SetOutputDims("WarpCTCGrad", ld);
  } else {
    TIDE_CHECK(ld.size() == 2, "op '", op, "': Logits ('", c.InputName("Logits"),
               "') must be [sum of lengths, C] with a LoD (or padded [Tmax, B, C] with "
               "LogitsLength), got ",
               tide::ToString(ld));
    c.SetOutputDims("Loss", {-1, 1});
    c.SetOutputDims("WarpCTCGrad", {-1, -1, ld[1]});
  }
  const int64_t classes = ld.back();
  const int blank = c.Attr<int32_t>("blank");
  TIDE_CHECK(blank >= 0 && (classes < 0 || blank < classes), "op '", op,
             "': attribute 'blank' = ", blank, " must be a class of Logits ('",
             c.InputName("Logits"), "', ", classes, " classes)");
  c.SetOutputDataType("Loss", c.InputDataType("Logits"));
  c.SetOutputDataType("WarpCTCGrad", c.InputDataType("Logits"));
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("warpctc")
        .Comment("The CTC loss -log p(Label | softmax(Logits)) of each sequence (warp-ctc), and "
                 "its gradient w.r.t. Logits for the grad op.")
        .Input("Logits",
               "unnormalised scores: padded [Tmax, B, C] with LogitsLength, or "
               "[sum of lengths, C] with a one-level LoD; C counts the blank")
        .Input("Label",
               "int32 labels: padded [B, Lmax] with LabelLength, or [sum of label "
               "lengths, 1] with a one-level LoD")
        .Input("LogitsLength", "int64 [B]: each sequence's steps (padded form)")
        .AsDispensable()
        .Input("LabelLength", "int64 [B]: each sequence's label length (padded form)")
        .AsDispensable()
        .Output("WarpCTCGrad", "[Tmax, B, C]: d Loss / d Logits, padded (for the grad op)")
        .AsIntermediate()
        .Output("Loss", "[B, 1]: each sequence's loss")
        .Attr("blank", int32_t(0), "the blank class, in [0, C)")
        .Attr("norm_by_times", false, "the grad op divides each sequence's gradient by its steps")
        .KernelDataTypeFrom("Logits")
        .InferShape(WarpCtcShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("warpctc_grad")
              .Input("Logits", g.Input("Logits"))
              .Input("LogitsLength", g.Input("LogitsLength"))
              .Input("WarpCTCGrad", g.Output("WarpCTCGrad"))
              .Input(GradVarName("Loss"), g.OutputGrad("Loss"))
              .Output(GradVarName("Logits"), g.InputGrad("Logits"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("warpctc_grad")
                     .Input("Logits")
                     .Input("LogitsLength")
                     .AsDispensable()
                     .Input("WarpCTCGrad")
                     .Input(GradVarName("Loss"))
                     .Output(GradVarName("Logits"))
                     .Attr("blank", int32_t(0))
                     .Attr("norm_by_times", false)
                     .KernelDataTypeFrom("WarpCTCGrad")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradLikeInputs(c, {"Logits"});
                     }));
TIDE_REGISTER_KERNEL("warpctc", "cpu", WarpCtcKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("warpctc_grad", "cpu", WarpCtcGradKernel, OPS_SEQUENCE_FLOAT_TYPES);
