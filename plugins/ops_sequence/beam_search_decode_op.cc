// beam_search_decode_op.cc: beam_search_decode (Fluid 1.x, beam_search_decode_op.h): walks the
// arrays of beam_search steps (Ids, Scores; element t has the 2-level LoD beam_search gives)
// back from the last step to build each source's sentences. A sentence starts at a beam that
// ended (was pruned) or lived to the last step, and follows its prefixes back to the first
// step; repeated end ids at its tail are dropped. Each source's sentences come best first (by
// their last score; ties keep their order). Outputs SentenceIds / SentenceScores [L, 1] have a
// 2-level LoD: source -> sentences -> ids. Kernel-less: the steps are tensor arrays.
#include <algorithm>
#include <tide/plugin/data_type_visit.hpp>

#include "common.h"

namespace ops_sequence {
namespace {

template <typename T>
struct Sentence {
  std::vector<int64_t> ids;
  std::vector<T> scores;
};

tide::TensorArray InputArray(tide::OpRunContext& ctx, const char* param) {
  auto names = ctx.Inputs(param);
  TIDE_CHECK(names.size() == 1, "op 'beam_search_decode': input ", param, " needs one variable");
  tide::Variable v = ctx.scope().FindVar(names[0]);
  TIDE_CHECK(v && v.IsTensorArray(), "op 'beam_search_decode': ", param, " ('", names[0],
             "') does not hold a tensor array (the beam_search steps)");
  return v.GetTensorArray();
}

// Step t of Ids, checked: int64 with a 2-level LoD that fits its rows.
LoD StepLoD(tide::OpRunContext& ctx, const Tensor& ids, const Tensor& scores, size_t t) {
  const LoD lod = ids.lod();
  TIDE_CHECK(ids.initialized() && scores.initialized(), "op 'beam_search_decode': step ", t,
             " was never written");
  TIDE_CHECK(lod.size() == 2, "op 'beam_search_decode': step ", t, " of Ids has a ", lod.size(),
             "-level LoD ", LoDString(lod), "; beam_search gives 2 levels");
  const std::string err = LoDError(lod, ids.dim(0));
  TIDE_CHECK(err.empty(), "op 'beam_search_decode': step ", t, " of Ids has LoD ", LoDString(lod),
             " that does not fit its ", ids.dim(0), " rows: ", err);
  TIDE_CHECK(ids.dtype() == TIDE_INT64 && scores.numel() == ids.numel(),
             "op 'beam_search_decode': step ", t, " has ", tide::DataTypeName(ids.dtype()), " ids ",
             tide::ToString(ids.dims()), " and scores ", tide::ToString(scores.dims()),
             "; ids are int64, one score each");
  return lod;
}

template <typename T>
void Decode(tide::OpRunContext& ctx, tide::TensorArray step_ids, tide::TensorArray step_scores,
            int64_t end_id) {
  const size_t steps = step_ids.size();
  const LoD first = StepLoD(ctx, step_ids.at(0), step_scores.at(0), 0);
  const size_t sources = first[0].size() - 1;
  std::vector<std::vector<Sentence<T>>> sentences(sources);
  std::vector<std::vector<size_t>> prefixes(sources);  // each sentence's row at the step being read
  for (size_t t = steps; t-- > 0;) {
    Tensor ids = step_ids.at(t), scores = step_scores.at(t);
    const LoD lod = StepLoD(ctx, ids, scores, t);
    TIDE_CHECK(lod[0].size() - 1 == sources, "op 'beam_search_decode': step ", t, " has ",
               lod[0].size() - 1, " source(s), step 0 has ", sources);
    TIDE_CHECK(scores.dtype() == tide::DataTypeOf<T>(), "op 'beam_search_decode': step ", t,
               " scores are ", tide::DataTypeName(scores.dtype()), ", step ", steps - 1, "'s ",
               tide::DataTypeName(tide::DataTypeOf<T>()));
    const int64_t* id = ids.data<int64_t>();
    const T* sc = scores.data<T>();
    for (size_t s = 0; s < sources; ++s) {
      auto& sent = sentences[s];
      auto& pre = prefixes[s];
      const size_t p_begin = lod[0][s], p_end = lod[0][s + 1];
      if (pre.empty()) {  // the source's beams end here (pruned at the next step, or the last step)
        for (size_t p = p_begin; p < p_end; ++p)
          for (size_t c = lod[1][p]; c < lod[1][p + 1]; ++c) {
            pre.push_back(p);
            sent.push_back({{id[c]}, {sc[c]}});
          }
        continue;
      }
      for (size_t k = 0; k < pre.size(); ++k) {  // pre[k] is a candidate row of this step
        const size_t c = pre[k];
        TIDE_CHECK(c < static_cast<size_t>(ids.dim(0)), "op 'beam_search_decode': step ", t + 1,
                   " names prefix ", c, ", step ", t, " has ", ids.dim(0), " row(s)");
        if (id[c] != end_id || sent[k].ids.empty()) {
          sent[k].ids.push_back(id[c]);
          sent[k].scores.push_back(sc[c]);
        }
        size_t p = p_begin;  // the prefix whose candidates hold row c
        while (p < p_end && lod[1][p + 1] <= c) ++p;
        TIDE_CHECK(p < p_end, "op 'beam_search_decode': row ", c, " of step ", t,
                   " is outside source ", s);
        pre[k] = p;
      }
    }
  }
  Level source_level{0}, sentence_level{0};
  std::vector<int64_t> out_ids;
  std::vector<T> out_scores;
  for (auto& sent : sentences) {
    std::stable_sort(sent.begin(), sent.end(), [](const Sentence<T>& a, const Sentence<T>& b) {
      return a.scores.front() > b.scores.front();
    });
    for (const auto& one : sent) {
      out_ids.insert(out_ids.end(), one.ids.rbegin(), one.ids.rend());
      out_scores.insert(out_scores.end(), one.scores.rbegin(), one.scores.rend());
      sentence_level.push_back(out_ids.size());
    }
    source_level.push_back(sentence_level.size() - 1);
  }
  const int64_t n = static_cast<int64_t>(out_ids.size());
  tide::OwnedTensor hi, hs;
  int64_t* pi = hi.mutable_data<int64_t>({n, 1}, tide::Place("cpu", 0));
  T* ps = hs.mutable_data<T>({n, 1}, tide::Place("cpu", 0));
  std::copy(out_ids.begin(), out_ids.end(), pi);
  std::copy(out_scores.begin(), out_scores.end(), ps);
  const LoD lod{source_level, sentence_level};
  hi.set_lod(lod);
  hs.set_lod(lod);
  for (auto [param, t] :
       {std::pair<const char*, Tensor*>{"SentenceIds", &hi}, {"SentenceScores", &hs}}) {
    auto names = ctx.Outputs(param);
    TIDE_CHECK(names.size() == 1, "op 'beam_search_decode': output ", param, " needs one variable");
    ctx.scope().FindVar(names[0]).GetTensor().CopyFrom(*t, ctx.place(), ctx.device_context());
  }
}

void BeamSearchDecodeRun(tide::OpRunContext& ctx) {
  tide::TensorArray ids = InputArray(ctx, "Ids"), scores = InputArray(ctx, "Scores");
  TIDE_CHECK(ids.size() > 0, "op 'beam_search_decode': the Ids array ('", ctx.Inputs("Ids")[0],
             "') is empty");
  TIDE_CHECK(ids.size() == scores.size(), "op 'beam_search_decode': Ids has ", ids.size(),
             " step(s), Scores ", scores.size());
  const int64_t end_id = ctx.Attr<int32_t>("end_id");
  TIDE_CHECK(ctx.Attr<int32_t>("beam_size") > 0, "op 'beam_search_decode': beam_size must be > 0");
  TIDE_CHECK(scores.at(ids.size() - 1).initialized(),
             "op 'beam_search_decode': the last step of Scores was never written");
  tide::VisitDataType<float, double>(scores.at(ids.size() - 1).dtype(),
                                     "op 'beam_search_decode': Scores", [&](auto tag) {
                                       using T = typename decltype(tag)::type;
                                       Decode<T>(ctx, ids, scores, end_id);
                                     });
}

}  // namespace
}  // namespace ops_sequence

TIDE_REGISTER_OP(
    tide::OpSchema("beam_search_decode")
        .NoGradient()
        .Comment("The sentences of the beam_search steps in arrays Ids and Scores, best "
                 "first per source (Fluid 1.x).")
        .Input("Ids", "tensor array of the steps' selected_ids")
        .Input("Scores", "tensor array of the steps' selected_scores")
        .Output("SentenceIds", "int64 [L, 1], LoD source -> sentence -> ids")
        .Output("SentenceScores", "[L, 1], same LoD")
        .Attr("beam_size", int32_t{1}, "the beam size")
        .GreaterThan(0)
        .Attr("end_id", int32_t{0}, "the id that ends a sentence")
        .InferShape([](tide::InferShapeContext& ctx) {
          if (ctx.IsRuntime()) return;
          ctx.SetOutputDims("SentenceIds", {-1, 1});
          ctx.SetOutputDataType("SentenceIds", TIDE_INT64);
          ctx.SetOutputDims("SentenceScores", {-1, 1});
          ctx.SetOutputDataType("SentenceScores", ctx.InputDataType("Scores"));
          ctx.SetOutputLoDLevel("SentenceIds", 2);
          ctx.SetOutputLoDLevel("SentenceScores", 2);
        })
        .Run(ops_sequence::BeamSearchDecodeRun));
