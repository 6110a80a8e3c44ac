// edit_distance_op.cc: edit_distance (Fluid 1.x): the Levenshtein distance (insertions,
// deletions, substitutions, each costing 1) of each hypothesis sequence to its reference, divided
// by the reference's length when normalized; the metric of speech and OCR models
// (fluid.evaluator.EditDistance, fluid.metrics.EditDistance).
#include <string>
#include <vector>

#include "common.h"

namespace ops_sequence {
namespace {

// Sequences of an int64 input: (begin, length) each, from its one-level LoD, or, with a length
// input, rows of a padded [S, T] (or [S, T, 1]) tensor.
struct Seqs {
  std::vector<int64_t> begin, len;
};

Seqs SeqsOf(const KernelContext& ctx, const char* param, const char* length_param) {
  const char* op = ctx.op_type();
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.dtype() == TIDE_INT64, "op '", op, "': ", param, " ('", ctx.InputName(param),
             "') must be int64, got ", tide::DataTypeName(t.dtype()));
  Seqs s;
  if (ctx.HasInput(length_param)) {
    const Dims d = t.dims();
    TIDE_CHECK(d.size() == 2 || (d.size() == 3 && d[2] == 1), "op '", op, "': with ", length_param,
               ", ", param, " ('", ctx.InputName(param), "') must be padded [batch, max_len], got ",
               tide::ToString(d));
    Tensor lens = ctx.Input(length_param);
    TIDE_CHECK(lens.dtype() == TIDE_INT64 && lens.numel() == d[0], "op '", op, "': ", length_param,
               " ('", ctx.InputName(length_param), "') must hold ", d[0], " int64 lengths, got ",
               tide::DataTypeName(lens.dtype()), " ", tide::ToString(lens.dims()));
    const int64_t* len = lens.data<int64_t>();
    for (int64_t i = 0; i < d[0]; ++i) {
      TIDE_CHECK(len[i] >= 0 && len[i] <= d[1], "op '", op, "': ", length_param, " ('",
                 ctx.InputName(length_param), "')[", i, "] = ", len[i], " is outside [0, ", d[1],
                 "]");
      s.begin.push_back(i * d[1]);
      s.len.push_back(len[i]);
    }
    return s;
  }
  const Dims d = t.dims();
  TIDE_CHECK(d.size() == 1 || (d.size() == 2 && d[1] == 1), "op '", op, "': ", param, " ('",
             ctx.InputName(param), "') must be [N, 1] with a LoD (or padded with ", length_param,
             "), got ", tide::ToString(d));
  const Level level = InputLoD(ctx, param, 1)[0];
  for (size_t i = 0; i + 1 < level.size(); ++i) {
    s.begin.push_back(static_cast<int64_t>(level[i]));
    s.len.push_back(static_cast<int64_t>(level[i + 1] - level[i]));
  }
  return s;
}

// Levenshtein distance of a[0, m) to b[0, n), one row of the table at a time.
int64_t Levenshtein(const int64_t* a, int64_t m, const int64_t* b, int64_t n) {
  std::vector<int64_t> row(n + 1);
  for (int64_t j = 0; j <= n; ++j) row[j] = j;
  for (int64_t i = 1; i <= m; ++i) {
    int64_t diag = row[0];
    row[0] = i;
    for (int64_t j = 1; j <= n; ++j) {
      const int64_t up = row[j];
      row[j] = std::min({up + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[n];
}

template <typename T>
void EditDistanceKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  const Seqs hyps = SeqsOf(ctx, "Hyps", "HypsLength");
  const Seqs refs = SeqsOf(ctx, "Refs", "RefsLength");
  TIDE_CHECK(hyps.len.size() == refs.len.size(), "op '", op, "': Hyps ('", ctx.InputName("Hyps"),
             "') holds ", hyps.len.size(), " sequences, Refs ('", ctx.InputName("Refs"), "') ",
             refs.len.size(), "; they must hold as many");
  const bool normalized = ctx.Attr<bool>("normalized");
  const int64_t* h = ctx.Input("Hyps").data<int64_t>();
  const int64_t* r = ctx.Input("Refs").data<int64_t>();
  const int64_t n = static_cast<int64_t>(hyps.len.size());
  float* out = ctx.Output("Out").mutable_data<float>({n, 1}, ctx.place());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ref_len = refs.len[i];
    TIDE_CHECK(!normalized || ref_len > 0, "op '", op, "': reference ", i, " of Refs ('",
               ctx.InputName("Refs"),
               "') is empty; a normalized distance divides by its length "
               "(set normalized=False)");
    const float d =
        static_cast<float>(Levenshtein(h + hyps.begin[i], hyps.len[i], r + refs.begin[i], ref_len));
    out[i] = normalized ? d / static_cast<float>(ref_len) : d;
  }
  *ctx.Output("SequenceNum").mutable_data<int64_t>({1}, ctx.place()) = n;
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("edit_distance")
        .NoGradient()
        .Comment("The Levenshtein distance of each Hyps sequence to its Refs sequence (Fluid 1.x), "
                 "divided by the reference's length when normalized.")
        .Input("Hyps", "int64 hypotheses: [N, 1] with a one-level LoD, or [S, T] with HypsLength")
        .Input("Refs", "int64 references: [M, 1] with a one-level LoD, or [S, T] with RefsLength")
        .Input("HypsLength", "int64 [S]: each padded hypothesis's length")
        .AsDispensable()
        .Input("RefsLength", "int64 [S]: each padded reference's length")
        .AsDispensable()
        .Output("Out", "float32 [S, 1]: the distances")
        .Output("SequenceNum", "int64 [1]: S, the number of sequences")
        .Attr("normalized", false, "divide each distance by its reference's length")
        .KernelDataTypeFrom("Hyps")
        .InferShape([](tide::InferShapeContext& c) {
          const char* op = c.op_type();
          TIDE_CHECK(
              c.HasInput("HypsLength") == c.HasInput("RefsLength"), "op '", op,
              "': give both HypsLength and RefsLength (padded input) or neither (LoD input)");
          if (c.IsRuntime()) return;  // the kernel sizes Out
          const Dims lens = c.HasInput("HypsLength") ? c.InputDims("HypsLength") : Dims{};
          c.SetOutputDims("Out", {lens.empty() ? -1 : lens[0], 1});
          c.SetOutputDataType("Out", TIDE_FP32);
          c.SetOutputDims("SequenceNum", {1});
          c.SetOutputDataType("SequenceNum", TIDE_INT64);
        }));
TIDE_REGISTER_KERNEL("edit_distance", "cpu", EditDistanceKernel, int64_t);
