// pserver.cc: rounds, barriers, deferred answers, optimize blocks and checkpoints of a pserver.
#include "pserver.h"

#include <algorithm>
#include <stdexcept>

#include "checkpoint.h"
#include "wire.h"

namespace tide_zmq {
namespace {

std::string Join(const std::set<int32_t>& s) {
  std::string out;
  for (int32_t v : s) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// Not one bad request but the pserver itself failing: stops the loop.
struct FatalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parameters are updated in place: wait until no zero-copy frame still reads them.
void WaitFramesSent(int64_t deadline_ms, const std::string& who) {
  if (!ServedFrames()->WaitZero(deadline_ms))
    LogWarning(who, ": ", ServedFrames()->count(), " parameter frame(s) still unsent after ",
               deadline_ms, " ms (a slow or dead trainer); updating anyway");
}

}  // namespace

PServer::PServer(tide::OpRunContext& ctx, PServerConfig cfg)
    : ctx_(ctx), cfg_(std::move(cfg)), server_(cfg_.server) {
  TIDE_CHECK(cfg_.fanin >= 1, Label(), ": Fanin must be >= 1, got ", cfg_.fanin);
  if (!cfg_.checkpoint_dir.empty()) {
    std::string path = CheckpointPath(cfg_.checkpoint_dir, cfg_.server.endpoint);
    int64_t round = LoadCheckpoint(path, ctx_.scope(), cfg_.checkpoint_vars, ctx_.place());
    if (round >= 0) {
      rounds_done_ = round;
      adopted_ = false;  // the trainers' next request says which round they are at
      LogWarning(Label(), ": resumed from checkpoint ", path, " (", cfg_.checkpoint_vars.size(),
                 " variable(s), round ", round, ")");
    }
  }
}

std::string PServer::Target(const std::string& name, int32_t trainer) const {
  if (cfg_.sync_mode && cfg_.fanin > 1) return name + ".trainer_" + std::to_string(trainer);
  return name;
}

void PServer::Ack(const Incoming& in) {
  transport::Response r;
  r.set_seq(in.request.seq());
  server_.Reply(in.identity, std::move(r));
}

void PServer::Run() {
  while (completed_.size() < static_cast<size_t>(cfg_.fanin)) {
    Incoming in;
    if (server_.Next(200, &in)) {
      try {
        Handle(in);
      } catch (const tide::Error& e) {  // one bad request: refuse it, keep serving
        LogWarning(Label(), ": refused a request from trainer ", in.request.trainer_id(), ": ",
                   e.what());
        server_.ReplyError(in.identity, in.request.seq(), e.code(), e.what());
      }
    }
    CheckStall();
  }
  LogInfo(Label(), ": all ", cfg_.fanin, " trainer(s) completed after ", rounds_done_, " round(s)");
}

void PServer::Handle(Incoming& in) {
  const int32_t t = in.request.trainer_id();
  TIDE_CHECK(t >= 0 && t < cfg_.fanin, "trainer id ", t, " is outside [0, Fanin=", cfg_.fanin, ")");
  std::string impostor = server_.CheckSender(in, t);
  if (!impostor.empty()) TIDE_THROW(TIDE_FAILED_PRECONDITION, "refused: ", impostor);
  switch (in.request.kind()) {
    case transport::SEND_VARS:
      return OnSend(in);
    case transport::SEND_BARRIER:
      return OnBarrier(in);
    case transport::GET_VARS:
      return OnGet(in);
    case transport::FETCH_BARRIER:
      return Ack(in);
    case transport::COMPLETE:
      return OnComplete(in);
    default:
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "unknown request kind");
  }
}

void PServer::Adopt(int64_t round, const Incoming& in) {
  if (adopted_ || !cfg_.sync_mode) return;
  if (round_taken_ && round <= rounds_done_) return;  // an earlier round: answered as finished
  const bool raised = round_taken_;
  if (raised)
    LogWarning(Label(), ": trainer ", in.request.trainer_id(), " is at round ", round,
               ", past round ", rounds_done_, " another trainer reported; continuing at round ",
               round, " (round ", rounds_done_, " finished before this pserver stopped)");
  else if (round != rounds_done_)
    LogWarning(Label(), ": trainer ", in.request.trainer_id(), " is at round ", round,
               ", this pserver's state is from round ", rounds_done_, "; continuing at round ",
               round);
  round_taken_ = true;
  rounds_done_ = round;
  if (!raised) return;
  // The trainers behind had finished the rounds before this one (one of them is past it): their
  // barriers are answered, what they sent for it is dropped, and their gets are served.
  for (auto& b : deferred_barriers_) Ack(b);
  deferred_barriers_.clear();
  barrier_.clear();
  received_.clear();
  ServeDeferredGets();
}

void PServer::OnSend(Incoming& in) {
  const auto& req = in.request;
  const int32_t t = req.trainer_id();
  // Check every variable before writing any.
  std::vector<tide::Variable> vars;
  for (int i = 0; i < req.vars_size(); ++i) {
    const auto& m = req.vars(i);
    auto it = cfg_.grad_to_block.find(m.name());
    TIDE_CHECK(it != cfg_.grad_to_block.end(), "pserver ", cfg_.server.endpoint,
               " takes no variable '", m.name(), "' (not in its grad_to_block_id)");
    auto spec = cfg_.grad_specs.find(m.name());
    if (spec != cfg_.grad_specs.end()) {
      const GradSpec& g = spec->second;
      tide::Dims dims(m.dims().begin(), m.dims().end());
      bool ok = m.dtype() == g.dtype &&
                (m.type() == transport::VariableMessage::SELECTED_ROWS) == g.sparse;
      if (ok && g.sparse)
        ok = m.height() == (g.dims.empty() ? 0 : g.dims[0]) && dims.size() == g.dims.size() &&
             std::equal(dims.begin() + 1, dims.end(), g.dims.begin() + 1);
      else if (ok)
        ok = dims == g.dims;
      TIDE_CHECK(ok, "gradient '", m.name(), "' from trainer ", t, " is ",
                 m.type() == transport::VariableMessage::SELECTED_ROWS ? "a SelectedRows " : "",
                 tide::DataTypeName(static_cast<TideDataType>(m.dtype())), tide::ToString(dims),
                 ", the program's is ", g.sparse ? "a SelectedRows " : "",
                 tide::DataTypeName(static_cast<TideDataType>(g.dtype)), tide::ToString(g.dims));
    }
    // A NaN or Inf gradient would make every parameter it touches NaN for every trainer (and,
    // with check_nan_inf, fail the optimize block and stop the pserver): refused, not applied.
    const std::string non_finite = FirstNonFinite(m, in.data[i]);
    TIDE_CHECK(non_finite.empty(), "gradient '", m.name(), "' from trainer ", t, " holds ",
               non_finite, ": refused, not applied (the pserver's parameters stay as they were)");
    std::string target = Target(m.name(), t);
    tide::Variable v = ctx_.scope().FindVar(target);
    TIDE_CHECK(v, "pserver ", cfg_.server.endpoint, " has no variable '", target, "'");
    vars.push_back(v);
  }
  if (cfg_.sync_mode) {  // after the checks: even a stale request must be well formed
    Adopt(req.round(), in);
    if (req.round() < rounds_done_) return Ack(in);  // a resent request of a finished round
    TIDE_CHECK(req.round() == rounds_done_, "trainer ", t, " sent gradients for round ",
               req.round(), " while the pserver is at round ", rounds_done_);
  }
  if (!cfg_.sync_mode) WaitFramesSent(cfg_.deadline_ms, Label());
  for (int i = 0; i < req.vars_size(); ++i) {
    DecodeVariable(req.vars(i), &in.data[i], vars[i], ctx_.place());
    if (cfg_.sync_mode) {
      received_[t].insert(req.vars(i).name());
    } else {
      std::vector<int32_t> blocks;
      if (cfg_.lr_decay_block >= 0) blocks.push_back(cfg_.lr_decay_block);
      blocks.push_back(cfg_.grad_to_block.at(req.vars(i).name()));
      try {
        RunOptimize(blocks);
      } catch (const std::exception& e) {
        throw FatalError(Label() + ": the optimize block of '" + req.vars(i).name() +
                         "' failed: " + e.what());
      }
    }
  }
  if (!cfg_.sync_mode && cfg_.checkpoint_interval > 0 &&
      ++applied_sends_ % cfg_.checkpoint_interval == 0)
    Checkpoint();
  Ack(in);
}

void PServer::OnBarrier(Incoming& in) {
  if (!cfg_.sync_mode) return Ack(in);
  const int64_t r = in.request.round();
  const int32_t t = in.request.trainer_id();
  Adopt(r, in);
  if (r < rounds_done_) return Ack(in);
  TIDE_CHECK(r == rounds_done_, "trainer ", t, " sent a send_barrier for round ", r,
             " while the pserver is at round ", rounds_done_);
  // A round is finished by its gradients: a barrier before any of them is refused (it cannot
  // make the pserver run the optimize blocks on gradients that never came).
  std::vector<std::string> missing;
  for (const auto& kv : cfg_.grad_to_block)
    if (!received_[t].count(kv.first) && !Initialized(Target(kv.first, t)))
      missing.push_back(kv.first);
  if (!missing.empty()) {
    std::string list;
    for (const auto& n : missing) list += (list.empty() ? "'" : ", '") + n + "'";
    TIDE_THROW(TIDE_FAILED_PRECONDITION, "trainer ", t, " sent a send_barrier for round ", r,
               " before its gradient(s) ", list, " (which have no value yet)");
  }
  if (barrier_.empty()) first_barrier_ = Clock::now();
  barrier_.insert(t);
  deferred_barriers_.push_back(std::move(in));
  MaybeFinishRound();
}

bool PServer::Initialized(const std::string& name) {
  tide::Variable v = ctx_.scope().FindVar(name);
  if (!v) return false;
  if (v.IsTensor()) return v.GetTensor().initialized();
  return true;  // a SelectedRows: an empty one is a valid gradient
}

void PServer::OnGet(Incoming& in) {
  if (cfg_.sync_mode) {
    Adopt(in.request.round(), in);
    if (in.request.round() > rounds_done_) {  // wait for this round's update
      deferred_gets_.push_back(std::move(in));
      return;
    }
  }
  ServeGet(in);
}

void PServer::OnComplete(Incoming& in) {
  const int32_t t = in.request.trainer_id();
  completed_.insert(t);
  barrier_.erase(t);
  LogInfo(Label(), ": trainer ", t, " completed (", completed_.size(), "/", cfg_.fanin, ")");
  Ack(in);
  MaybeFinishRound();
}

void PServer::ServeGet(Incoming& in) {
  transport::Response resp;
  resp.set_seq(in.request.seq());
  std::vector<zmq::message_t> frames;
  for (const auto& name : in.request.names()) {
    TIDE_CHECK(cfg_.served.count(name), "pserver ", cfg_.server.endpoint, " serves no variable '",
               name, "'");
    tide::Variable v = ctx_.scope().FindVar(name);
    TIDE_CHECK(v, "pserver ", cfg_.server.endpoint, " has no variable '", name, "'");
    frames.emplace_back();
    EncodeVariable(v, name, 0, -1, Label() + " serving '" + name + "'", resp.add_vars(),
                   &frames.back(), ServedFrames());
  }
  server_.Reply(in.identity, std::move(resp), std::move(frames));
}

void PServer::MaybeFinishRound() {
  if (!cfg_.sync_mode || barrier_.empty()) return;
  const size_t active = static_cast<size_t>(cfg_.fanin) - completed_.size();
  if (barrier_.size() < active) return;
  for (int32_t t : barrier_)
    for (const auto& kv : cfg_.grad_to_block)
      if (!received_[t].count(kv.first))
        LogWarning(Label(), ": round ", rounds_done_, ": trainer ", t, " sent no '", kv.first,
                   "'; its previous value is used");
  try {
    std::vector<int32_t> blocks;
    if (cfg_.lr_decay_block >= 0) blocks.push_back(cfg_.lr_decay_block);
    blocks.insert(blocks.end(), cfg_.optimize_blocks.begin(), cfg_.optimize_blocks.end());
    RunOptimize(blocks);
  } catch (const std::exception& e) {  // fatal: tell the waiting trainers why, then stop
    std::string msg = Label() + ": the optimize blocks failed in round " +
                      std::to_string(rounds_done_) + ": " + e.what();
    for (auto& b : deferred_barriers_)
      server_.ReplyError(b.identity, b.request.seq(), TIDE_INTERNAL, msg);
    throw FatalError(msg);
  }
  ++rounds_done_;
  for (auto& b : deferred_barriers_) Ack(b);
  deferred_barriers_.clear();
  barrier_.clear();
  received_.clear();
  adopted_ = true;  // every trainer was at this round
  ServeDeferredGets();
  if (cfg_.checkpoint_interval > 0 && rounds_done_ % cfg_.checkpoint_interval == 0) Checkpoint();
}

void PServer::ServeDeferredGets() {
  std::vector<Incoming> gets;
  gets.swap(deferred_gets_);
  for (auto& g : gets) {
    if (g.request.round() > rounds_done_) {
      deferred_gets_.push_back(std::move(g));
      continue;
    }
    try {
      ServeGet(g);
    } catch (const tide::Error& e) {
      server_.ReplyError(g.identity, g.request.seq(), e.code(), e.what());
    }
  }
}

void PServer::RunOptimize(const std::vector<int32_t>& blocks) {
  WaitFramesSent(cfg_.deadline_ms, Label());
  for (int32_t b : blocks) ctx_.RunBlock(b, ctx_.scope());
}

void PServer::Checkpoint() {
  if (cfg_.checkpoint_dir.empty()) return;
  std::string path = CheckpointPath(cfg_.checkpoint_dir, cfg_.server.endpoint);
  SaveCheckpoint(path, ctx_.scope(), cfg_.checkpoint_vars, rounds_done_);
  LogInfo(Label(), ": checkpoint of round ", rounds_done_, " in ", path);
}

void PServer::ExpireGets() {
  for (auto it = deferred_gets_.begin(); it != deferred_gets_.end();) {
    if (MsSince(it->arrived) <= cfg_.deadline_ms) {
      ++it;
      continue;
    }
    std::string msg =
        tide::detail::Concat(Label(), ": a get for round ", it->request.round(), " from trainer ",
                             it->request.trainer_id(), " waited rpc_deadline ", cfg_.deadline_ms,
                             " ms; the pserver is at round ", rounds_done_);
    LogWarning(msg);
    server_.ReplyError(it->identity, it->request.seq(), TIDE_UNAVAILABLE, msg);
    it = deferred_gets_.erase(it);
  }
}

void PServer::CheckStall() {
  ExpireGets();
  if (!cfg_.sync_mode || barrier_.empty() || MsSince(first_barrier_) <= cfg_.deadline_ms) return;
  std::set<int32_t> missing;
  for (int32_t t = 0; t < cfg_.fanin; ++t)
    if (!barrier_.count(t) && !completed_.count(t)) missing.insert(t);
  std::string msg = tide::detail::Concat(
      Label(), ": round ", rounds_done_, ": trainer(s) ", Join(missing),
      " sent no send_barrier within rpc_deadline ", cfg_.deadline_ms, " ms of trainer(s) ",
      Join(barrier_), "; a trainer may have gone away. Stopping this pserver.");
  for (auto* list : {&deferred_barriers_, &deferred_gets_})
    for (auto& b : *list) server_.ReplyError(b.identity, b.request.seq(), TIDE_UNAVAILABLE, msg);
  TIDE_THROW(TIDE_UNAVAILABLE, msg);
}

}  // namespace tide_zmq
