// viterbi_decode_op.cc: viterbi_decode (paddle.text.viterbi_decode, the CRF decoder of PaddleNLP):
// the best-scoring tag path of each sequence under emission potentials Input [B, T, N] and
// transition scores Transition [N, N] (Transition[i][j] from tag i to tag j), over its first
// Length[b] steps. With include_bos_eos_tag, row N - 1 of Transition is added to the first step
// (start) and row N - 2 to the last (stop), as Paddle's kernel does. Ties go to the lower tag;
// Path is [B, max(Length)], 0 past each sequence's length.
#include <limits>
#include <string>
#include <vector>

#include "common.h"

namespace ops_sequence {
namespace {

void ViterbiShape(tide::InferShapeContext& c) {
  const Dims in = c.InputDims("Input"), tr = c.InputDims("Transition"), len = c.InputDims("Length");
  TIDE_CHECK(in.size() == 3, "op 'viterbi_decode': Input ('", c.InputName("Input"),
             "') must be [B, T, N] potentials, got ", tide::ToString(in));
  const auto fits = [](int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; };
  TIDE_CHECK(tr.size() == 2 && fits(tr[0], in[2]) && fits(tr[1], in[2]),
             "op 'viterbi_decode': Transition ('", c.InputName("Transition"),
             "') must be [N, N] with Input's N = ", in[2], ", got ", tide::ToString(tr));
  TIDE_CHECK(len.size() == 1 && fits(len[0], in[0]), "op 'viterbi_decode': Length ('",
             c.InputName("Length"), "') must be [B] with Input's B = ", in[0], ", got ",
             tide::ToString(len));
  const TideDataType lt = c.InputDataType("Length");
  TIDE_CHECK(lt == TIDE_INT64 || lt == TIDE_UNDEFINED, "op 'viterbi_decode': Length ('",
             c.InputName("Length"), "') must be int64, got ", tide::DataTypeName(lt));
  c.SetOutputDims("Scores", {in[0]});
  c.SetOutputDataType("Scores", c.InputDataType("Input"));
  c.SetOutputDims("Path", {in[0], -1});  // max(Length): known at run time
  c.SetOutputDataType("Path", TIDE_INT64);
}

// Index of the first maximum of v[0, n) (strictly greater wins, as Paddle's argmax).
template <typename T>
int64_t ArgMax(const T* v, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (v[j] > v[best]) best = j;
  return best;
}

template <typename T>
void ViterbiKernel(KernelContext& ctx) {
  Tensor input = ctx.Input("Input"), trans = ctx.Input("Transition"), length = ctx.Input("Length");
  const Dims& d = input.dims();
  TIDE_CHECK(d.size() == 3 && trans.dims() == Dims({d[2], d[2]}) && length.numel() == d[0] &&
                 length.dtype() == TIDE_INT64,
             "op 'viterbi_decode': needs Input [B, T, N], Transition [N, N] and int64 Length [B]; "
             "got ",
             tide::ToString(d), ", ", tide::ToString(trans.dims()), ", ",
             tide::DataTypeName(length.dtype()), " ", tide::ToString(length.dims()));
  const int64_t batch = d[0], steps = d[1], n = d[2];
  const bool bos_eos = ctx.Attr<bool>("include_bos_eos_tag");
  TIDE_CHECK(!bos_eos || n >= 2,
             "op 'viterbi_decode': include_bos_eos_tag needs N >= 2 tags "
             "(the last two are start and stop), Input ('",
             ctx.InputName("Input"), "') has ", n);
  const int64_t* len = length.data<int64_t>();
  int64_t max_len = 0;
  for (int64_t b = 0; b < batch; ++b) {
    TIDE_CHECK(len[b] >= 0 && len[b] <= steps, "op 'viterbi_decode': Length ('",
               ctx.InputName("Length"), "')[", b, "] = ", len[b], " is outside [0, ", steps, "]");
    max_len = std::max(max_len, len[b]);
  }
  const T* x = input.data<T>();
  const T* tr = trans.data<T>();
  const T* stop = tr + (n - 2) * n;
  const T* start = tr + (n - 1) * n;
  T* scores = ctx.Output("Scores").mutable_data<T>({batch}, ctx.place());
  int64_t* path = ctx.Output("Path").mutable_data<int64_t>({batch, max_len}, ctx.place());
  std::fill(path, path + batch * max_len, int64_t{0});
  std::vector<T> alpha(n), next(n), sum(n);
  std::vector<int64_t> back(std::max<int64_t>(max_len - 1, 0) * n);
  for (int64_t b = 0; b < batch; ++b) {
    const T* e = x + b * steps * n;
    const int64_t l = len[b];
    for (int64_t j = 0; j < n; ++j) {
      alpha[j] = e[j];
      // A one-step sequence gets start and stop at once; an empty one keeps step 0's scores.
      if (bos_eos) alpha[j] += start[j] + (l == 1 ? stop[j] : T(0));
    }
    for (int64_t t = 1; t < l; ++t) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < n; ++i) sum[i] = alpha[i] + tr[i * n + j];
        const int64_t i = ArgMax(sum.data(), n);
        back[(t - 1) * n + j] = i;
        next[j] = sum[i] + e[t * n + j];
        if (bos_eos && t == l - 1) next[j] += stop[j];
      }
      alpha.swap(next);
    }
    int64_t last = ArgMax(alpha.data(), n);
    scores[b] = alpha[last];
    if (l == 0) continue;
    path[b * max_len + l - 1] = last;
    for (int64_t t = l - 1; t >= 1; --t) {
      last = back[(t - 1) * n + last];
      path[b * max_len + t - 1] = last;
    }
  }
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("viterbi_decode")
        .NoGradient()
        .Comment("The highest-scoring tag path of each sequence (Viterbi) and its score, under "
                 "emission potentials Input and transition scores Transition.")
        .Input("Input", "emission potentials, [B, T, N]")
        .Input("Transition", "transition scores, [N, N]: Transition[i][j] from tag i to tag j")
        .Input("Length", "int64 [B]: each sequence's steps, in [0, T]")
        .Output("Scores", "[B]: each best path's score")
        .Output("Path", "int64 [B, max(Length)]: the best paths, 0 past each length")
        .Attr("include_bos_eos_tag", true,
              "add Transition's row N - 1 (start) at the first step and row N - 2 (stop) at "
              "the last")
        .KernelDataTypeFrom("Input")
        .InferShape(ViterbiShape));
TIDE_REGISTER_KERNEL("viterbi_decode", "cpu", ViterbiKernel, OPS_SEQUENCE_FLOAT_TYPES);
