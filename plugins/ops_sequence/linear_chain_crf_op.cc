// linear_chain_crf_op.cc: linear_chain_crf (Fluid 1.x: the negative log-likelihood of each
// sequence's Label path under a linear-chain CRF) and its grad. The forward pass keeps Fluid's
// intermediate outputs, which the grad reads: EmissionExps (exp of each Emission row minus its
// max), TransitionExps (exp of Transition) and Alpha (the forward vectors, each row rescaled to
// sum 1). Layout of Transition and of the sequences: crf_common.h.
#include <algorithm>
#include <cmath>

#include "crf_common.h"

namespace ops_sequence {
namespace {

// -log p(label path | one sequence of `len` steps): log Z - score(path). x and label point at the
// sequence's first step; alpha receives its normalised forward vectors.
template <typename T>
T SequenceNll(const char* op, int64_t len, int64_t tags, const T* x, const T* row_max,
              const T* x_exps, const T* w, const T* w_exps, const int64_t* label, T* alpha) {
  const int64_t D = tags;
  for (int64_t i = 0; i < D; ++i) alpha[i] = w_exps[crf::kStartRow * D + i] * x_exps[i];
  // log Z accumulates each step's rescaling factor and the row maxima taken out of x_exps.
  T log_z = row_max[0] + std::log(crf::NormalizeL1(op, alpha, D));
  for (int64_t k = 1; k < len; ++k) {
    const T* prev = alpha + (k - 1) * D;
    T* cur = alpha + k * D;
    for (int64_t i = 0; i < D; ++i) {
      T sum = 0;
      for (int64_t j = 0; j < D; ++j) sum += prev[j] * w_exps[(j + crf::kStateBase) * D + i];
      cur[i] = x_exps[k * D + i] * sum;
    }
    log_z += row_max[k] + std::log(crf::NormalizeL1(op, cur, D));
  }
  T end = 0;
  for (int64_t i = 0; i < D; ++i) end += alpha[(len - 1) * D + i] * w_exps[crf::kEndRow * D + i];
  TIDE_CHECK(end > 0 && std::isfinite(static_cast<double>(end)), "op '", op,
             "': the end transitions give a partition function of ", end);
  log_z += std::log(end);
  T score = w[crf::kStartRow * D + label[0]] + x[label[0]] + w[crf::kEndRow * D + label[len - 1]];
  for (int64_t k = 1; k < len; ++k)
    score += x[k * D + label[k]] + w[(label[k - 1] + crf::kStateBase) * D + label[k]];
  return log_z - score;
}

template <typename T>
void LinearChainCrfKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  const crf::Sequences s = crf::GetSequences(ctx, "Label");
  const int64_t* label = crf::StepTags(ctx, "Label", s);
  Tensor emission = ctx.Input("Emission"), transition = ctx.Input("Transition");
  const int64_t D = s.tags;
  const T* x = emission.data<T>();
  const T* w = transition.data<T>();
  Tensor alpha_t = ctx.Output("Alpha"), x_exps_t = ctx.Output("EmissionExps");
  Tensor w_exps_t = ctx.Output("TransitionExps"), ll_t = ctx.Output("LogLikelihood");
  T* alpha = alpha_t.mutable_data<T>(emission.dims(), ctx.place());
  T* x_exps = x_exps_t.mutable_data<T>(emission.dims(), ctx.place());
  T* w_exps = w_exps_t.mutable_data<T>(transition.dims(), ctx.place());
  T* ll = ll_t.mutable_data<T>({static_cast<int64_t>(s.count()), 1}, ctx.place());
  std::fill(alpha, alpha + s.rows * D, T(0));  // padding steps keep 0, as in Fluid
  T* row_max = ctx.TempBuffer<T>(static_cast<size_t>(std::max<int64_t>(s.rows, 1)));
  for (int64_t r = 0; r < s.rows; ++r) {
    const T* xr = x + r * D;
    row_max[r] = *std::max_element(xr, xr + D);
    for (int64_t i = 0; i < D; ++i) x_exps[r * D + i] = std::exp(xr[i] - row_max[r]);
  }
  for (int64_t i = 0; i < (D + 2) * D; ++i) w_exps[i] = std::exp(w[i]);
  for (size_t q = 0; q < s.count(); ++q) {
    const int64_t b = s.begin[q], len = s.end[q] - s.begin[q];
    ll[q] = len == 0 ? T(0)  // an empty sequence costs 0 (Fluid)
                     : SequenceNll(op, len, D, x + b * D, row_max + b, x_exps + b * D, w, w_exps,
                                   label + b, alpha + b * D);
  }
  if (!s.padded) {
    alpha_t.set_lod(s.lod);
    x_exps_t.set_lod(s.lod);
  }
}

// The gradient of one sequence's cost, scaled by its output gradient g: for Emission the tag
// marginals minus the label's one-hot, for Transition the start/end marginals and the pairwise
// marginals minus the label's transitions (added to dw, shared by all sequences).
template <typename T>
void SequenceGrad(const char* op, T g, int64_t len, int64_t D, const T* x_exps, const T* w_exps,
                  const T* alpha, const int64_t* label, T* beta, T* dx, T* dw) {
  // Backward vectors, rescaled per step like alpha (only their direction matters below).
  T* last = beta + (len - 1) * D;
  for (int64_t i = 0; i < D; ++i) last[i] = w_exps[crf::kEndRow * D + i];
  crf::NormalizeL1(op, last, D);
  for (int64_t k = len - 2; k >= 0; --k) {
    for (int64_t i = 0; i < D; ++i) {
      T sum = 0;
      for (int64_t j = 0; j < D; ++j)
        sum +=
            w_exps[(i + crf::kStateBase) * D + j] * x_exps[(k + 1) * D + j] * beta[(k + 1) * D + j];
      beta[k * D + i] = sum;
    }
    crf::NormalizeL1(op, beta + k * D, D);
  }
  for (int64_t k = 0; k < len; ++k) {
    T sum = 0;
    for (int64_t i = 0; i < D; ++i) sum += alpha[k * D + i] * beta[k * D + i];
    for (int64_t i = 0; i < D; ++i) dx[k * D + i] = g * alpha[k * D + i] * beta[k * D + i] / sum;
    dx[k * D + label[k]] -= g;
  }
  if (!dw) return;
  for (int64_t i = 0; i < D; ++i) {
    dw[crf::kStartRow * D + i] += dx[i];  // start weights act like step 0's emissions
    dw[crf::kEndRow * D + i] += dx[(len - 1) * D + i];
  }
  for (int64_t k = 1; k < len; ++k) {
    const T* a = alpha + (k - 1) * D;
    T sum = 0;
    for (int64_t i = 0; i < D; ++i)
      for (int64_t j = 0; j < D; ++j)
        sum += a[i] * w_exps[(i + crf::kStateBase) * D + j] * x_exps[k * D + j] * beta[k * D + j];
    const T scale = g / sum;
    for (int64_t i = 0; i < D; ++i)
      for (int64_t j = 0; j < D; ++j)
        dw[(i + crf::kStateBase) * D + j] += scale * a[i] * w_exps[(i + crf::kStateBase) * D + j] *
                                             x_exps[k * D + j] * beta[k * D + j];
    dw[(label[k - 1] + crf::kStateBase) * D + label[k]] -= g;
  }
}

// Checks that forward output `param` kept the dims `want` (the grad reads it as such).
void CheckSaved(const KernelContext& ctx, const char* param, const Dims& want) {
  const Dims d = ctx.Input(param).dims();
  TIDE_CHECK(d == want, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') has dims ", tide::ToString(d), ", expected ", tide::ToString(want),
             " (as linear_chain_crf wrote it)");
}

template <typename T>
void LinearChainCrfGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  const crf::Sequences s = crf::GetSequences(ctx, "Label");
  const int64_t* label = crf::StepTags(ctx, "Label", s);
  const Dims ed = ctx.Input("Emission").dims(), td = ctx.Input("Transition").dims();
  CheckSaved(ctx, "Alpha", ed);
  CheckSaved(ctx, "EmissionExps", ed);
  CheckSaved(ctx, "TransitionExps", td);
  Tensor dll = ctx.Input(GradVarName("LogLikelihood").c_str());
  TIDE_CHECK(dll.numel() == static_cast<int64_t>(s.count()), "op '", op,
             "': LogLikelihood@GRAD has ", dll.numel(), " values, one per sequence (", s.count(),
             ") expected");
  const T* g = dll.data<T>();
  const T* alpha = ctx.Input("Alpha").data<T>();
  const T* x_exps = ctx.Input("EmissionExps").data<T>();
  const T* w_exps = ctx.Input("TransitionExps").data<T>();
  const int64_t D = s.tags, n = s.rows * D;
  Tensor dx_t = ctx.OptionalOutput(GradVarName("Emission").c_str());
  Tensor dw_t = ctx.OptionalOutput(GradVarName("Transition").c_str());
  T* dx = dx_t ? dx_t.mutable_data<T>(ed, ctx.place())
               : ctx.TempBuffer<T>(static_cast<size_t>(std::max<int64_t>(n, 1)));
  std::fill(dx, dx + n, T(0));  // padding steps and empty sequences get 0
  T* dw = nullptr;
  if (dw_t) {
    dw = dw_t.mutable_data<T>(td, ctx.place());
    std::fill(dw, dw + (D + 2) * D, T(0));
  }
  T* beta = ctx.TempBuffer<T>(static_cast<size_t>(std::max<int64_t>(n, 1)));
  for (size_t q = 0; q < s.count(); ++q) {
    const int64_t b = s.begin[q], len = s.end[q] - s.begin[q];
    if (len == 0) continue;
    SequenceGrad(op, g[q], len, D, x_exps + b * D, w_exps, alpha + b * D, label + b, beta + b * D,
                 dx + b * D, dw);
  }
  if (dx_t) SetGradLoD(ctx, dx_t, ctx.Input("Emission"));
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("linear_chain_crf")
        .Comment(
            "Linear-chain CRF cost (Fluid 1.x): LogLikelihood[s] = log Z(s) - score(Label path "
            "of s), the NEGATIVE log-likelihood of sequence s, where score = Transition[0, y0] + "
            "sum_k Emission[k, yk] + sum_k Transition[2 + y(k-1), yk] + Transition[1, y(last)]. "
            "Sequences come from Label's LoD, or from Length over a padded Emission. An empty "
            "sequence costs 0.")
        .Input("Emission", "unscaled tag scores: a LoDTensor [N, D], or [S, T, D] with Length")
        .Input("Transition", "[D + 2, D]: start weights, end weights, then row 2 + i = from tag i")
        .Input("Label", "int64 tags: [N, 1] with the sequences' LoD, or [S, T] with Length")
        .Input("Length", "int64 [S]: each padded sequence's length")
        .AsDispensable()
        .Output("Alpha", "the forward vectors, each step rescaled to sum 1; Emission's dims")
        .AsIntermediate()
        .Output("EmissionExps", "exp(Emission - its row max); Emission's dims")
        .AsIntermediate()
        .Output("TransitionExps", "exp(Transition)")
        .AsIntermediate()
        .Output("LogLikelihood", "[S, 1]: each sequence's negative log-likelihood")
        .KernelDataTypeFrom("Emission")
        .InferShape([](tide::InferShapeContext& c) {
          crf::CheckShapes(c, true);
          if (c.IsRuntime()) return;  // the kernel sizes LogLikelihood from the sequences
          const Dims ed = c.InputDims("Emission");
          const TideDataType dt = c.InputDataType("Emission");
          for (const char* o : {"Alpha", "EmissionExps"}) {
            c.SetOutputDims(o, ed);
            c.SetOutputDataType(o, dt);
          }
          c.SetOutputDims("TransitionExps", c.InputDims("Transition"));
          c.SetOutputDataType("TransitionExps", dt);
          c.SetOutputDims("LogLikelihood", {c.HasInput("Length") ? ed[0] : -1, 1});
          c.SetOutputDataType("LogLikelihood", dt);
        })
        .Grad([](tide::GradMaker& g) {
          g.NewOp("linear_chain_crf_grad")
              .Input("Emission", g.Input("Emission"))
              .Input("Transition", g.Input("Transition"))
              .Input("Label", g.Input("Label"))
              .Input("Length", g.Input("Length"))
              .Input("Alpha", g.Output("Alpha"))
              .Input("EmissionExps", g.Output("EmissionExps"))
              .Input("TransitionExps", g.Output("TransitionExps"))
              .Input(GradVarName("LogLikelihood"), g.OutputGrad("LogLikelihood"))
              .Output(GradVarName("Emission"), g.InputGrad("Emission"))
              .Output(GradVarName("Transition"), g.InputGrad("Transition"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("linear_chain_crf_grad")
                     .Input("Emission")
                     .Input("Transition")
                     .Input("Label")
                     .Input("Length")
                     .AsDispensable()
                     .Input("Alpha")
                     .Input("EmissionExps")
                     .Input("TransitionExps")
                     .Input(GradVarName("LogLikelihood"))
                     .Output(GradVarName("Emission"))
                     .AsDispensable()
                     .Output(GradVarName("Transition"))
                     .AsDispensable()
                     .KernelDataTypeFrom("EmissionExps")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradLikeInputs(c, {"Emission", "Transition"});
                     }));
TIDE_REGISTER_KERNEL("linear_chain_crf", "cpu", LinearChainCrfKernel, OPS_SEQUENCE_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("linear_chain_crf_grad", "cpu", LinearChainCrfGradKernel,
                     OPS_SEQUENCE_FLOAT_TYPES);
