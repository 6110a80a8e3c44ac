// crf_common.h: what linear_chain_crf, its grad and crf_decoding share (Fluid 1.x layout).
// Transition is [D + 2, D]: row 0 holds the start weights, row 1 the end weights and row 2 + i the
// weights of the transitions from tag i. Emission is either a LoDTensor [N, D] whose sequences are
// given by a one-level LoD, or (with a Length input) a padded [S, T, D] tensor whose sequence s
// is the first Length[s] steps of row s. Either way the kernels see a flat [rows, D] view and a
// list of [begin, end) row spans, one per sequence.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common.h"

namespace ops_sequence {
namespace crf {

// Transition's first rows: start, end, then one row per "from" tag.
constexpr int64_t kStartRow = 0;
constexpr int64_t kEndRow = 1;
constexpr int64_t kStateBase = 2;

struct Sequences {
  bool padded = false;
  int64_t rows = 0;            // rows of the flat [rows, tags] view of Emission
  int64_t tags = 0;            // D
  int64_t steps = 0;           // padded: T (the row stride of a sequence)
  std::vector<int64_t> begin;  // each sequence's first row in the flat view
  std::vector<int64_t> end;    // ... and one past its last
  LoD lod;                     // LoD mode: the LoD the spans come from
  size_t count() const { return begin.size(); }
};

// Emission's dims as Fluid allows them: [N, D] (LoD mode) or [S, T, D] (with Length).
inline void CheckEmissionDims(const char* op, const std::string& name, const Dims& d, bool padded) {
  if (padded)
    TIDE_CHECK(d.size() == 3, "op '", op, "': with Length, Emission ('", name,
               "') must be a padded [batch, max_len, tags] tensor, got ", tide::ToString(d));
  else
    TIDE_CHECK(d.size() == 2, "op '", op, "': Emission ('", name,
               "') must be a [N, tags] LoDTensor (or [batch, max_len, tags] with Length), got ",
               tide::ToString(d));
}

// Transition must be [tags + 2, tags] (unknown -1 dims pass at compile time).
inline void CheckTransitionDims(const char* op, const std::string& name, const Dims& t,
                                int64_t tags) {
  const bool ok = t.size() == 2 && (t[1] < 0 || tags < 0 || t[1] == tags) &&
                  (t[0] < 0 || tags < 0 || t[0] == tags + 2);
  TIDE_CHECK(ok, "op '", op, "': Transition ('", name, "') must be [tags + 2, tags] = [",
             tags < 0 ? std::string("D + 2") : std::to_string(tags + 2), ", ",
             tags < 0 ? std::string("D") : std::to_string(tags), "] (start row, end row, then ",
             "one row per tag), got ", tide::ToString(t));
}

// Label (or any per-step int64 input `param`) must hold one value per step of Emission: [N, 1] or
// [N] in LoD mode, [S, T] or [S, T, 1] when padded.
inline void CheckStepInputDims(const char* op, const char* param, const std::string& name,
                               const Dims& label, const Dims& emission, bool padded) {
  bool ok;
  if (padded)
    ok = (label.size() == 2 || (label.size() == 3 && label[2] == 1)) && label[0] == emission[0] &&
         label[1] == emission[1];
  else
    ok = (label.size() == 1 || (label.size() == 2 && label[1] == 1)) && label[0] == emission[0];
  TIDE_CHECK(ok, "op '", op, "': ", param, " ('", name, "') has dims ", tide::ToString(label),
             "; it must hold one tag per step of Emission ", tide::ToString(emission), ": ",
             padded ? "[batch, max_len] or [batch, max_len, 1]" : "[N, 1] or [N]");
}

// The sequences of Emission: from Length when the op has one, else from the one-level LoD of
// input `lod_param` (Fluid: Label for linear_chain_crf, Emission for crf_decoding), which must
// cover Emission's rows. Checks Emission's and Transition's dims.
inline Sequences GetSequences(const KernelContext& ctx, const char* lod_param) {
  const char* op = ctx.op_type();
  Tensor emission = ctx.Input("Emission");
  const Dims ed = emission.dims();
  Sequences s;
  s.padded = ctx.HasInput("Length");
  CheckEmissionDims(op, ctx.InputName("Emission"), ed, s.padded);
  s.tags = ed.back();
  TIDE_CHECK(s.tags > 0, "op '", op, "': Emission ('", ctx.InputName("Emission"),
             "') has no tags: ", tide::ToString(ed));
  CheckTransitionDims(op, ctx.InputName("Transition"), ctx.Input("Transition").dims(), s.tags);
  if (s.padded) {
    Tensor length = ctx.Input("Length");
    TIDE_CHECK(length.dtype() == TIDE_INT64, "op '", op, "': Length ('", ctx.InputName("Length"),
               "') must be int64, got ", tide::DataTypeName(length.dtype()));
    TIDE_CHECK(length.numel() == ed[0], "op '", op, "': Length ('", ctx.InputName("Length"),
               "') has ", length.numel(), " values; Emission ", tide::ToString(ed), " has ", ed[0],
               " sequences");
    s.steps = ed[1];
    s.rows = ed[0] * ed[1];
    const int64_t* len = length.data<int64_t>();
    for (int64_t i = 0; i < ed[0]; ++i) {
      TIDE_CHECK(len[i] >= 0 && len[i] <= s.steps, "op '", op, "': Length ('",
                 ctx.InputName("Length"), "')[", i, "] = ", len[i], " is outside [0, ", s.steps,
                 "] (Emission's max_len)");
      s.begin.push_back(i * s.steps);
      s.end.push_back(i * s.steps + len[i]);
    }
    return s;
  }
  s.rows = ed[0];
  Tensor src = ctx.Input(lod_param);
  s.lod = InputLoD(ctx, lod_param, 1);
  TIDE_CHECK(src.dim(0) == s.rows, "op '", op, "': ", lod_param, " ('", ctx.InputName(lod_param),
             "') has ", src.dim(0), " rows, Emission ('", ctx.InputName("Emission"), "') ", s.rows);
  const LoD elod = emission.lod();
  TIDE_CHECK(elod.empty() || elod == s.lod, "op '", op, "': Emission ('", ctx.InputName("Emission"),
             "') has LoD ", LoDString(elod), " but ", lod_param, " ('", ctx.InputName(lod_param),
             "') has ", LoDString(s.lod), "; they must agree");
  const Level& level = s.lod[0];
  for (size_t i = 0; i + 1 < level.size(); ++i) {
    s.begin.push_back(static_cast<int64_t>(level[i]));
    s.end.push_back(static_cast<int64_t>(level[i + 1]));
  }
  return s;
}

// The int64 tags of input `param` (one per step), checked against Emission and, on the steps
// that belong to a sequence, against [0, tags).
inline const int64_t* StepTags(const KernelContext& ctx, const char* param, const Sequences& s) {
  const char* op = ctx.op_type();
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.dtype() == TIDE_INT64, "op '", op, "': ", param, " ('", ctx.InputName(param),
             "') must be int64, got ", tide::DataTypeName(t.dtype()));
  CheckStepInputDims(op, param, ctx.InputName(param), t.dims(), ctx.Input("Emission").dims(),
                     s.padded);
  const int64_t* v = t.data<int64_t>();
  for (size_t q = 0; q < s.count(); ++q)
    for (int64_t r = s.begin[q]; r < s.end[q]; ++r)
      TIDE_CHECK(v[r] >= 0 && v[r] < s.tags, "op '", op, "': ", param, " ('", ctx.InputName(param),
                 "') holds tag ", v[r], " at step ", r, ", outside [0, ", s.tags,
                 ") (Emission's tags)");
  return v;
}

// The shape rule's checks of Emission, Transition and Label (when given or required), at compile
// time (-1 dims match anything; an undeclared shape is not checked) and at run time.
inline void CheckShapes(tide::InferShapeContext& c, bool label_required) {
  const char* op = c.op_type();
  const bool padded = c.HasInput("Length");
  const Dims ed = c.InputDims("Emission");
  if (ed.empty() && !c.IsRuntime()) return;
  CheckEmissionDims(op, c.InputName("Emission"), ed, padded);
  CheckTransitionDims(op, c.InputName("Transition"), c.InputDims("Transition"), ed.back());
  if (!label_required && !c.HasInput("Label")) return;
  Dims e = ed, l = c.InputDims("Label");
  for (size_t i = 0; i < std::min(e.size(), l.size()); ++i)
    if (e[i] < 0 || l[i] < 0) e[i] = l[i] = 0;
  CheckStepInputDims(op, "Label", c.InputName("Label"), l, e, padded);
}

// Scales x[0, n) to sum 1 and returns the sum it had. The forward and backward recursions
// renormalise each step so that long sequences neither overflow nor underflow.
template <typename T>
T NormalizeL1(const char* op, T* x, int64_t n) {
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  TIDE_CHECK(sum > 0 && std::isfinite(static_cast<double>(sum)), "op '", op,
             "': the unnormalised probabilities of the partial tag paths sum to ", sum,
             " (the Transition or Emission weights are too extreme)");
  const T inv = T(1) / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  return sum;
}

}  // namespace crf
}  // namespace ops_sequence
