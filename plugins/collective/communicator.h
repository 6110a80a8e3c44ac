// communicator.h: a ring's Gloo context (made by c_comm_init), found by ring_id by the collective
// ops. Every collective gets a deadline; when one fails, the ranks that did not reach it are
// found through the rendezvous store and named.
#pragma once

#include <gloo/context.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ring_store.h"

namespace tide_collective {

constexpr const char* kPlugin = "collective";

class Communicator {
 public:
  Communicator(int ring_id, int rank, int nranks, std::shared_ptr<gloo::Context> context,
               std::shared_ptr<RingStore> store, std::chrono::milliseconds timeout);

  int ring_id() const { return ring_id_; }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  const std::shared_ptr<gloo::Context>& context() const { return context_; }

  // Runs one collective `fn(tag)` (tag: this collective's sequence number, the same on every rank
  // that issues the collectives in the same order). A failure becomes an error naming the op, the
  // ring and the ranks that never reached the collective; the ring is unusable afterwards.
  void Run(const std::string& op, const std::function<void(uint32_t tag)>& fn);

 private:
  [[noreturn]] void Fail(const std::string& op, uint64_t seq,
                         std::chrono::steady_clock::time_point start, const std::string& why);

  const int ring_id_, rank_, nranks_;
  std::shared_ptr<gloo::Context> context_;
  std::shared_ptr<RingStore> store_;
  const std::chrono::milliseconds timeout_;
  uint64_t seq_ = 0;
  std::string broken_;  // the failure that ended this ring, if any
};

// The ring `ring_id` of this process; an error naming `op` when c_comm_init has not made it.
Communicator& GetCommunicator(int ring_id, const std::string& op);
// Installs (or replaces) ring `ring_id`.
void SetCommunicator(int ring_id, std::unique_ptr<Communicator> comm);
// How many times ring `ring_id` was initialised in this process (the rendezvous generation).
int NextGeneration(int ring_id);

// The collective deadline: the core's flag collective_timeout_ms (TIDE_COLLECTIVE_TIMEOUT_MS).
std::chrono::milliseconds CollectiveTimeout();

}  // namespace tide_collective
