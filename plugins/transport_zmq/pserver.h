// pserver.h: the parameter server loop behind listen_and_serv. Sync mode: each round it takes every
// trainer's gradients (into "<grad>.trainer_<id>" when there are several trainers; the optimize
// blocks sum and scale them), runs the optimize blocks once all trainers' send barriers are in,
// then answers the barriers and serves the parameters. Async mode: each gradient's block runs as it
// comes.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common.h"
#include "server.h"

namespace tide_zmq {

// What a trainer's gradient must look like (from the program), so a malformed one is refused
// instead of failing the optimize block.
struct GradSpec {
  bool sparse = false;  // a SelectedRows: dims are the dense variable's (height, row shape)
  int32_t dtype = TIDE_UNDEFINED;
  tide::Dims dims;
};

struct PServerConfig {
  ServerOptions server;
  int32_t fanin = 1;
  bool sync_mode = true;
  std::map<std::string, int32_t> grad_to_block;  // gradient (block) name -> optimize block
  std::map<std::string, GradSpec> grad_specs;    // optional, per gradient name
  std::vector<int32_t> optimize_blocks;          // the order they run in, sync mode
  int32_t lr_decay_block = -1;                   // run first, once per round (or per request)
  std::set<std::string> served;                  // what trainers may get
  std::vector<std::string> checkpoint_vars;
  std::string checkpoint_dir;
  int32_t checkpoint_interval = 0;
  int64_t deadline_ms = kDefaultDeadlineMs;
};

class PServer {
 public:
  PServer(tide::OpRunContext& ctx, PServerConfig cfg);
  // Serves until every trainer has sent COMPLETE. Throws when a round stalls past the deadline.
  void Run();

 private:
  void Handle(Incoming& in);
  void OnSend(Incoming& in);
  void OnBarrier(Incoming& in);
  void OnGet(Incoming& in);
  void OnComplete(Incoming& in);
  // After resuming from a checkpoint: take the trainers' round (the highest any reports).
  void Adopt(int64_t round, const Incoming& in);
  void MaybeFinishRound();
  void RunOptimize(const std::vector<int32_t>& blocks);
  void ServeGet(Incoming& in);
  void ServeDeferredGets();  // those whose round has come
  void Ack(const Incoming& in);
  void CheckStall();
  // Answers the gets parked longer than the deadline with an error (their round never came).
  void ExpireGets();
  bool Initialized(const std::string& name);
  void Checkpoint();
  std::string Target(const std::string& name, int32_t trainer) const;
  std::string Label() const { return "listen_and_serv " + cfg_.server.endpoint; }

  tide::OpRunContext& ctx_;
  PServerConfig cfg_;
  RpcServer server_;
  int64_t rounds_done_ = 0;
  // After resuming from a checkpoint the trainers say which round they are at (they went on while
  // the pserver was down, or restarted too): the first request's round becomes the pserver's, a
  // higher one from another trainer replaces it (a trainer behind missed the answer that ended
  // the round when the pserver died). Settled (true) once a round finishes: then every trainer
  // was at one round.
  bool adopted_ = true;
  bool round_taken_ = false;  // a trainer's round was taken since resuming
  std::set<int32_t> barrier_, completed_;
  std::map<int32_t, std::set<std::string>> received_;
  std::vector<Incoming> deferred_barriers_, deferred_gets_;
  Clock::time_point first_barrier_;
  int64_t applied_sends_ = 0;
};

}  // namespace tide_zmq
