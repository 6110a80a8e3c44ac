// feed_fetch.cc: the feed and fetch ops a prepared block runs, and the lists they work on.
#include "core/executor/feed_fetch.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/executor/core_ops.h"
#include "core/executor/data_transform.h"
#include "core/executor/device_compile.h"
#include "core/executor/executor.h"
#include "core/executor/kernel_choice.h"
#include "core/registry/registry.h"

namespace tide::core {

void AddFeedFetchOps(BlockDesc* block, const std::vector<std::string>& feeds,
                     const std::vector<std::string>& fetches, std::vector<std::string>* feed_out,
                     std::vector<std::string>* fetch_out) {
  for (const auto& name : feeds)
    TIDE_ENFORCE(block->FindVarRecursive(name) != nullptr, "cannot feed '", name,
                 "': no variable of that name in block ", block->idx(), " or its parents");
  std::vector<std::pair<int, std::string>> have_feed, have_fetch;
  auto col_of = [](const OpDesc& op) {
    const int32_t* col = std::get_if<int32_t>(&op.GetAttr("col"));
    TIDE_ENFORCE(col != nullptr, "op '", op.type(), "': attribute 'col' must be an int");
    return *col;
  };
  std::string feed_var = kFeedVarName;  // the variable the program's feed ops read
  for (OpDesc* op : block->AllOps()) {
    const bool feed = op->type() == "feed", fetch = op->type() == "fetch";
    if (!(feed || fetch) || !op->HasAttr("col")) continue;
    const char* param = feed ? "Out" : "X";
    const auto& args = feed ? op->Output(param) : op->Input(param);
    TIDE_ENFORCE(args.size() == 1, "op '", op->type(), "' (col ", col_of(*op), ") must have one ",
                 param, " variable, has ", args.size());
    (feed ? have_feed : have_fetch).emplace_back(col_of(*op), args[0]);
    if (feed && !op->Input("X").empty()) feed_var = op->Input("X")[0];
  }
  auto targets = [](std::vector<std::pair<int, std::string>> v) {
    std::sort(v.begin(), v.end());
    std::vector<std::string> out;
    for (auto& p : v) out.push_back(p.second);
    return out;
  };
  if (!have_feed.empty()) {
    *feed_out = targets(have_feed);
    auto a = *feed_out, b = feeds;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<std::string> missing, extra;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(missing));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(extra));
    if (!b.empty() && !missing.empty()) {
      auto list = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& n : v) out += (out.empty() ? "'" : ", '") + n + "'";
        return out.empty() ? std::string("none") : out;
      };
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "the program feeds ", list(a),
                " through its own feed ops (a loaded model's inputs): feed each of those. "
                "Missing: ",
                list(missing), "; not its inputs: ", list(extra));
    }
    // Variables the caller added to a loaded model (a fine-tuning label) get feed ops of their
    // own, after the model's, reading the model's feed variable.
    for (const std::string& name : extra) {
      OpDesc* op = block->PrependOp();
      *op = OpDesc("feed", {{"X", {feed_var}}}, {{"Out", {name}}},
                   {{"col", static_cast<int32_t>(feed_out->size())}});
      op->set_block(block);
      feed_out->push_back(name);
    }
  } else if (!feeds.empty()) {
    VarDesc* fv = block->Var(kFeedVarName);
    fv->set_type(TIDE_VAR_FEED_MINIBATCH);
    fv->set_persistable(true);
    for (size_t i = feeds.size(); i-- > 0;) {
      OpDesc* op = block->PrependOp();
      *op = OpDesc("feed", {{"X", {kFeedVarName}}}, {{"Out", {feeds[i]}}},
                   {{"col", static_cast<int32_t>(i)}});
      op->set_block(block);
    }
    *feed_out = feeds;
  }
  if (!have_fetch.empty() && (fetches.empty() || targets(have_fetch) == fetches)) {
    *fetch_out = targets(have_fetch);
    return;
  }
  if (!have_fetch.empty()) {
    // The caller asks for other variables, or another order, than the program's own fetch ops
    // (a loaded model's outputs): those ops go, and the caller's list is fetched instead.
    for (size_t i = block->OpSize(); i-- > 0;)
      if (block->Op(i)->type() == "fetch" && block->Op(i)->HasAttr("col"))
        block->RemoveOps(i, i + 1);
  }
  if (!fetches.empty()) {
    VarDesc* fv = block->Var(kFetchVarName);
    fv->set_type(TIDE_VAR_FETCH_LIST);
    fv->set_persistable(true);
    for (size_t i = 0; i < fetches.size(); ++i) {
      TIDE_ENFORCE(block->FindVarRecursive(fetches[i]) != nullptr, "cannot fetch '", fetches[i],
                   "': no variable of that name in block ", block->idx(), " or its parents");
      OpDesc* op = block->AppendOp();
      *op = OpDesc("fetch", {{"X", {fetches[i]}}}, {{"Out", {kFetchVarName}}},
                   {{"col", static_cast<int32_t>(i)}});
      op->set_block(block);
    }
    *fetch_out = fetches;
  }
}

namespace {
bool Names(const std::vector<std::string>& names, const std::string& var) {
  return std::find(names.begin(), names.end(), var) != names.end();
}

// Whether a fetch of `var` must stay after `op`: it writes or reads var (a reader may be a CPU
// fallback, whose host copy the fetch then reuses), runs sub-blocks, or runs itself (control
// flow, collectives: an op without kernels may finish its outputs later, e.g. an allreduce on a
// communication stream that a later sync op waits for). The core's compiled-group node is a
// kernel call on the compute stream.
bool FetchStaysAfter(const OpDesc& op, const std::string& var) {
  if (Names(op.OutputArgumentNames(), var) || Names(op.InputArgumentNames(), var)) return true;
  if (HasBlockAttr(op.attrs())) return true;
  if (op.type() == kCompiledGroupOp) return false;
  const OpInfo* info = Registry::Global().FindOp(op.type());
  return !info || info->run != nullptr;
}
}  // namespace

void MoveFetchesEarly(BlockDesc* block) {
  size_t first = block->OpSize();  // the trailing fetch ops: [first, OpSize())
  while (first > 0 && block->Op(first - 1)->type() == "fetch") --first;
  if (first == block->OpSize()) return;
  std::vector<std::pair<size_t, OpDesc>> moved;  // (index to insert at, the fetch op)
  for (size_t f = first; f < block->OpSize(); ++f) {
    const OpDesc& fetch = *block->Op(f);
    const std::vector<std::string>& x = fetch.Input("X");
    size_t at = first;  // a malformed fetch stays where it is
    if (x.size() == 1) {
      at = 0;
      for (size_t i = first; i-- > 0;)
        if (FetchStaysAfter(*block->Op(i), x[0])) {
          at = i + 1;
          break;
        }
    }
    moved.emplace_back(at, fetch);
  }
  block->RemoveOps(first, block->OpSize());
  // Inserted from the last (position, column) back: earlier indices hold, and fetches at one
  // position end up in column order.
  std::stable_sort(moved.begin(), moved.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto it = moved.rbegin(); it != moved.rend(); ++it) {
    OpDesc* op = block->InsertOp(it->first);
    *op = it->second;
    op->set_block(block);
  }
}

void KeepFetchTargets(BlockDesc* block, const std::vector<std::string>& fetches) {
  if (fetches.empty()) return;
  for (size_t i = block->OpSize(); i-- > 0;) {
    OpDesc* op = block->Op(i);
    if (op->type() != kDeleteVarOp) continue;
    std::vector<std::string> names = op->Input("X");
    const size_t before = names.size();
    names.erase(std::remove_if(names.begin(), names.end(),
                               [&](const std::string& n) {
                                 return std::find(fetches.begin(), fetches.end(), n) !=
                                        fetches.end();
                               }),
                names.end());
    if (names.size() == before) continue;
    if (names.empty())
      block->RemoveOps(i, i + 1);
    else
      op->SetInput("X", std::move(names));
  }
}

void CheckFeed(const VarDesc& desc, const LoDTensor& t) {
  const std::string& name = desc.name();
  TIDE_ENFORCE(t.initialized(), "feed '", name, "' holds no data");
  if (desc.dtype() != TIDE_UNDEFINED && t.dtype() != desc.dtype())
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "feed '", name, "': data type ", DataTypeName(t.dtype()),
              " does not match the variable's ", DataTypeName(desc.dtype()));
  const auto& want = desc.shape();
  if (desc.zero_dim() && t.dims().size() != 0)
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "feed '", name, "': shape ", t.dims().ToString(),
              " does not match the variable's [] (0-D: feed a numpy scalar or a 0-D array)");
  if (!want.empty()) {
    bool ok = static_cast<int>(want.size()) == t.dims().size();
    for (size_t d = 0; ok && d < want.size(); ++d)
      ok = want[d] < 0 || want[d] == t.dims()[static_cast<int>(d)];
    if (!ok)
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "feed '", name, "': shape ", t.dims().ToString(),
                " does not match the variable's ", DDim(want).ToString(), " (-1 matches any size)");
  }
  std::string lod_error = CheckLoD(t.lod(), t.dims().size() ? t.dims()[0] : 0);
  TIDE_ENFORCE(lod_error.empty(), "feed '", name, "': invalid LoD ", LoDToString(t.lod()), ": ",
               lod_error);
}

Place FeedPlace(const PreparedBlock& block, const std::string& var, const Place& run_place) {
  PreparedBlock::Readers& readers = block.ReadersOf(var);
  const uint64_t generation = KernelChoice::Generation();
  if (readers.generation == generation && readers.run_place == run_place) return readers.place;
  bool any = false, agree = true;
  Place want;
  for (const PreparedBlock::Reader& r : readers.ops) {
    const OpInstance& op = *r.op;
    // A kernel's host input (KernelEntry::host_inputs) is read on the host: fed there, it is
    // never copied to the device and back.
    const Place at = r.fetch                                                ? HostPlace()
                     : op.info().run || !op.kernel()                        ? run_place
                     : op.kernel()->ReadsOnHost(op.inputs()[r.input].param) ? HostPlace()
                                                                            : op.kernel_place();
    if (any && at != want) {
      agree = false;
      break;
    }
    any = true;
    want = at;
  }
  readers.generation = generation;
  readers.run_place = run_place;
  readers.place = any && agree ? want : run_place;
  return readers.place;
}

void SetFeedList(Scope* scope, const std::vector<LoDTensor>& feeds) {
  auto* list = scope->Var(kFeedVarName)->GetMutable<FeedList>();
  list->assign(feeds.begin(), feeds.end());
}

std::vector<LoDTensor> TakeFetchList(Scope* scope, size_t count) {
  auto* list = scope->Var(kFetchVarName)->GetMutable<FetchList>();
  TIDE_ENFORCE(list->size() == count, "the fetch ops produced ", list->size(), " result(s) for ",
               count, " fetch target(s)");
  std::vector<LoDTensor> out(std::make_move_iterator(list->begin()),
                             std::make_move_iterator(list->end()));
  list->clear();
  for (auto& t : out) ToPlainLayout(&t);
  return out;
}

}  // namespace tide::core
