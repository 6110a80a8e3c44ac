// beam_search_op.cc: one step of beam search (Fluid 1.x, math/beam_search.cc). Inputs have a
// 2-level LoD: level 0 groups the prefixes (rows of pre_ids) by source sentence, level 1 gives
// each prefix its rows of candidates (ids / scores [rows, K]). For each source the beam_size
// best (prefix, candidate) pairs are kept, best first (a tie goes to the later prefix, then to
// the earlier candidate); a prefix that already ended (pre_id == end_id) offers only end_id with
// its score, so ended beams stay ended; a source whose kept pairs all extend ended prefixes
// with end_id is finished and keeps none. Outputs: selected_ids / selected_scores [M, 1] with
// LoD [level 0 of the input in absolute offsets, each prefix's selected items] and parent_idx
// (int32 [M], the prefix row each item extends).
#include <cmath>

#include "common.h"

namespace ops_sequence {
namespace {

template <typename T>
struct Item {
  size_t offset;  // the prefix row
  int64_t id;
  T score;
  bool operator<(const Item& o) const {
    return score < o.score || (score == o.score && offset < o.offset);
  }
};

// Keeps `top` sorted best first with at most beam_size items (Fluid's Insert).
template <typename T>
void Insert(std::vector<Item<T>>* top, const Item<T>& item, size_t beam_size) {
  auto& beam = *top;
  size_t n = beam.size();
  if (n < beam_size) {
    beam.resize(++n);
  } else if (item < beam[beam_size - 1]) {
    return;
  }
  for (int k = static_cast<int>(n) - 2; k >= 0; --k) {
    if (beam[k] < item) {
      beam[k + 1] = beam[k];
    } else {
      beam[k + 1] = item;
      return;
    }
  }
  beam[0] = item;
}

// The 2-level LoD the step works on: scores' when it has one, else pre_ids' (both index the
// prefixes); level 0 made absolute (prefix rows).
LoD StepLoD(const KernelContext& ctx, const Tensor& scores, const Tensor& pre_ids, int32_t level) {
  const char* op = ctx.op_type();
  const bool from_scores = scores.lod().size() >= 2;
  const Tensor& src = from_scores ? scores : pre_ids;
  const char* param = from_scores ? "scores" : "pre_ids";
  LoD lod = src.lod();
  TIDE_CHECK(lod.size() == 2, "op '", op, "': ", param, " ('", ctx.InputName(param), "', dims ",
             tide::ToString(src.dims()), ") has a ", lod.size(), "-level LoD ", LoDString(lod),
             "; beam search needs 2 levels (source sentences -> prefixes -> candidate rows)");
  CheckLoD(ctx, param, ctx.InputName(param), lod, scores.dim(0));
  TIDE_CHECK(level == 0, "op '", op,
             "': level must be 0 (the source level of the 2-level LoD), got ", level);
  Level abs;
  for (uint64_t o : lod[0]) abs.push_back(lod[1][o]);
  return {abs, lod[1]};
}

template <typename T>
void BeamSearchKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor pre_ids = ctx.Input("pre_ids"), pre_scores = ctx.Input("pre_scores"),
         scores = ctx.Input("scores");
  Tensor ids = ctx.OptionalInput("ids");
  const int64_t beam_size = ctx.Attr<int32_t>("beam_size");
  const int64_t end_id = ctx.Attr<int32_t>("end_id");
  const bool accumulated = ctx.Attr<bool>("is_accumulated");
  TIDE_CHECK(beam_size > 0, "op '", op, "': beam_size must be > 0, got ", beam_size);
  TIDE_CHECK(scores.rank() >= 1, "op '", op, "': scores ('", ctx.InputName("scores"),
             "') must have rank >= 1");
  const int64_t rows = scores.dim(0);
  const int64_t width = RowWidth(scores.dims());
  TIDE_CHECK(pre_ids.numel() == rows && pre_scores.numel() == rows, "op '", op, "': pre_ids ('",
             ctx.InputName("pre_ids"), "', ", pre_ids.numel(), " elements) and pre_scores ('",
             ctx.InputName("pre_scores"), "', ", pre_scores.numel(),
             ") must have one element per row of scores ('", ctx.InputName("scores"), "', ", rows,
             " rows)");
  TIDE_CHECK(pre_ids.dtype() == TIDE_INT64, "op '", op, "': pre_ids ('", ctx.InputName("pre_ids"),
             "') must be int64, got ", tide::DataTypeName(pre_ids.dtype()));
  if (ids) {
    TIDE_CHECK(ids.numel() == scores.numel() && ids.dtype() == TIDE_INT64, "op '", op, "': ids ('",
               ctx.InputName("ids"), "', ", tide::DataTypeName(ids.dtype()), " ",
               tide::ToString(ids.dims()), ") must be int64 with scores' dims ",
               tide::ToString(scores.dims()));
  }
  const LoD lod = StepLoD(ctx, scores, pre_ids, ctx.Attr<int32_t>("level"));
  const Level& sources = lod[0];  // absolute: prefix rows of each source
  const int64_t* pid = pre_ids.data<int64_t>();
  const T* psc = pre_scores.data<T>();
  const T* sc = scores.data<T>();
  const int64_t* idd = ids ? ids.data<int64_t>() : nullptr;

  std::vector<std::vector<Item<T>>> per_prefix(rows);
  for (size_t s = 0; s + 1 < sources.size(); ++s) {
    std::vector<Item<T>> top;
    for (size_t off = sources[s]; off < sources[s + 1]; ++off) {
      if (pid[off] == end_id) {  // an ended prefix: all its mass on end_id
        Insert(&top, Item<T>{off, end_id, psc[off]}, static_cast<size_t>(beam_size));
        continue;
      }
      for (int64_t d = 0; d < width; ++d) {
        const size_t i = off * width + d;
        const T score = accumulated ? sc[i] : psc[off] + static_cast<T>(std::log(sc[i]));
        Insert(&top, Item<T>{off, idd ? idd[i] : d, score}, static_cast<size_t>(beam_size));
      }
    }
    bool finished = true;  // every kept item extends an ended prefix with end_id
    for (const auto& it : top)
      if (it.id != end_id || pid[it.offset] != end_id) finished = false;
    if (finished) continue;
    for (const auto& it : top) per_prefix[it.offset].push_back(it);
  }
  // One prefix's items in selection order (best first); prefixes in row order.
  Level low{0};
  std::vector<Item<T>> flat;
  for (const auto& items : per_prefix) {
    for (const auto& it : items) flat.push_back(it);
    low.push_back(flat.size());
  }
  const int64_t m = static_cast<int64_t>(flat.size());
  Tensor out_ids = ctx.Output("selected_ids"), out_scores = ctx.Output("selected_scores");
  int64_t* oi = out_ids.mutable_data<int64_t>({m, 1}, ctx.place());
  T* os = out_scores.mutable_data<T>({m, 1}, ctx.place());
  int32_t* parent = nullptr;
  Tensor parent_idx = ctx.OptionalOutput("parent_idx");
  if (parent_idx) parent = parent_idx.mutable_data<int32_t>({m}, ctx.place());
  for (int64_t i = 0; i < m; ++i) {
    oi[i] = flat[i].id;
    os[i] = flat[i].score;
    if (parent) parent[i] = static_cast<int32_t>(flat[i].offset);
  }
  const LoD out_lod{sources, low};
  out_ids.set_lod(out_lod);
  out_scores.set_lod(out_lod);
}

}  // namespace
}  // namespace ops_sequence

using namespace ops_sequence;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("beam_search")
                     .NoGradient()
                     .Comment("One step of beam search over 2-level LoD candidates (Fluid 1.x).")
                     .Input("pre_ids", "int64 [N, 1]: each prefix's last id")
                     .Input("pre_scores", "[N, 1]: each prefix's score")
                     .Input("ids", "int64 [N, K]: candidate ids (absent: the column index)")
                     .AsDispensable()
                     .Input("scores", "[N, K]: candidate scores, 2-level LoD")
                     .Output("selected_ids", "int64 [M, 1]")
                     .Output("selected_scores", "[M, 1]")
                     .Output("parent_idx", "int32 [M]: the prefix row each item extends")
                     .AsDispensable()
                     .Attr("level", int32_t{0}, "the source level of the LoD (0)")
                     .Attr("beam_size", int32_t{1}, "the number of items kept per source")
                     .GreaterThan(0)
                     .Attr("end_id", int32_t{0}, "the id that ends a sentence")
                     .Attr("is_accumulated", true,
                           "scores are accumulated (else: pre_score + log(score))")
                     .KernelDataTypeFrom("scores")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       if (ctx.IsRuntime()) return;
                       ctx.SetOutputDims("selected_ids", {-1, 1});
                       ctx.SetOutputDataType("selected_ids", TIDE_INT64);
                       ctx.SetOutputDims("selected_scores", {-1, 1});
                       ctx.SetOutputDataType("selected_scores", ctx.InputDataType("scores"));
                       ctx.SetOutputLoDLevel("selected_ids", 2);
                       ctx.SetOutputLoDLevel("selected_scores", 2);
                       if (ctx.HasOutput("parent_idx")) {
                         ctx.SetOutputDims("parent_idx", {-1});
                         ctx.SetOutputDataType("parent_idx", TIDE_INT32);
                       }
                     }));
TIDE_REGISTER_KERNEL("beam_search", "cpu", BeamSearchKernel, float, double);
