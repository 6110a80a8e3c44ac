// crf_decoding_op.cc: crf_decoding (Fluid 1.x): the Viterbi path of each sequence under the
// linear-chain CRF of linear_chain_crf (same Emission, Transition and sequence layout:
// crf_common.h). With a Label, ViterbiPath instead holds 1 where the path agrees with the label and
// 0 where it does not (Fluid's per-token correctness, which chunk_eval-style evaluators read).
#include <algorithm>
#include <limits>

#include "crf_common.h"

namespace ops_sequence {
namespace {

// The best tag path of one sequence of `len` steps, into path[0, len). Ties go to the lowest tag,
// as in Fluid (strictly greater scores replace the running best).
template <typename T>
void Viterbi(int64_t len, int64_t D, const T* x, const T* w, int64_t* path, T* score,
             int64_t* track) {
  for (int64_t i = 0; i < D; ++i) score[i] = w[crf::kStartRow * D + i] + x[i];
  for (int64_t k = 1; k < len; ++k) {
    for (int64_t i = 0; i < D; ++i) {
      T best = std::numeric_limits<T>::lowest();
      int64_t best_j = 0;
      for (int64_t j = 0; j < D; ++j) {
        const T v = score[(k - 1) * D + j] + w[(j + crf::kStateBase) * D + i];
        if (v > best) {
          best = v;
          best_j = j;
        }
      }
      score[k * D + i] = best + x[k * D + i];
      track[k * D + i] = best_j;
    }
  }
  T best = std::numeric_limits<T>::lowest();
  int64_t tag = 0;
  for (int64_t i = 0; i < D; ++i) {
    const T v = score[(len - 1) * D + i] + w[crf::kEndRow * D + i];
    if (v > best) {
      best = v;
      tag = i;
    }
  }
  path[len - 1] = tag;
  for (int64_t k = len - 1; k >= 1; --k) path[k - 1] = tag = track[k * D + tag];
}

template <typename T>
void CrfDecodingKernel(KernelContext& ctx) {
  const crf::Sequences s = crf::GetSequences(ctx, "Emission");
  Tensor emission = ctx.Input("Emission");
  const T* x = emission.data<T>();
  const T* w = ctx.Input("Transition").data<T>();
  const int64_t D = s.tags;
  const int64_t* label = ctx.HasInput("Label") ? crf::StepTags(ctx, "Label", s) : nullptr;
  Tensor out = ctx.Output("ViterbiPath");
  const Dims od = s.padded ? Dims{emission.dim(0), emission.dim(1)} : Dims{s.rows, 1};
  int64_t* path = out.mutable_data<int64_t>(od, ctx.place());
  std::fill(path, path + s.rows, int64_t{0});  // padding steps: 0, as in Fluid
  T* score = ctx.TempBuffer<T>(static_cast<size_t>(std::max<int64_t>(s.rows * D, 1)));
  int64_t* track = ctx.TempBuffer<int64_t>(static_cast<size_t>(std::max<int64_t>(s.rows * D, 1)));
  for (size_t q = 0; q < s.count(); ++q) {
    const int64_t b = s.begin[q], len = s.end[q] - s.begin[q];
    if (len == 0) continue;
    Viterbi(len, D, x + b * D, w, path + b, score + b * D, track + b * D);
    if (label)
      for (int64_t r = b; r < s.end[q]; ++r) path[r] = path[r] == label[r] ? 1 : 0;
  }
  if (!s.padded) out.set_lod(s.lod);
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("crf_decoding")
        .NoGradient()
        .Comment(
            "Viterbi decoding of a linear-chain CRF (Fluid 1.x): ViterbiPath holds each "
            "sequence's highest-scoring tag path (score as in linear_chain_crf); with Label, 1 "
            "where that path equals Label and 0 elsewhere. Padding steps (with Length) are 0.")
        .Input("Emission",
               "tag scores: a LoDTensor [N, D] (one-level LoD), or [S, T, D] with Length")
        .Input("Transition", "[D + 2, D], as linear_chain_crf's")
        .Input("Label", "int64 tags, [N, 1] (or [S, T] with Length): compare instead of decode")
        .AsDispensable()
        .Input("Length", "int64 [S]: each padded sequence's length")
        .AsDispensable()
        .Output("ViterbiPath", "int64: [N, 1] with Emission's LoD, or [S, T] with Length")
        .KernelDataTypeFrom("Emission")
        .InferShape([](tide::InferShapeContext& c) {
          crf::CheckShapes(c, false);
          if (c.IsRuntime()) return;  // the kernel sizes and labels ViterbiPath
          const Dims ed = c.InputDims("Emission");
          if (c.HasInput("Length")) {
            c.SetOutputDims("ViterbiPath",
                            {ed.size() > 1 ? ed[0] : -1, ed.size() > 1 ? ed[1] : -1});
          } else {
            c.SetOutputDims("ViterbiPath", {ed.empty() ? -1 : ed[0], 1});
            c.ShareLoD("Emission", "ViterbiPath");
          }
          c.SetOutputDataType("ViterbiPath", TIDE_INT64);
        }));
TIDE_REGISTER_KERNEL("crf_decoding", "cpu", CrfDecodingKernel, OPS_SEQUENCE_FLOAT_TYPES);
