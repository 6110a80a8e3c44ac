// communicator.h: a ring's Gloo context (made by c_comm_init), found by ring_id by the collective
// ops, and, where the ring's place has its own collective library, its communicator there
// (DeviceComm). Every collective gets a deadline; when one fails, the ranks that did not reach it
// are found through the rendezvous store and named.
#pragma once

#include <gloo/context.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <tide/plugin.hpp>
#include <vector>

#include "device_comm.h"
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

  // The ring's communicator in its place's collective library (tide/collective.h), or null: the
  // ring has only Gloo, and device tensors are staged through host memory.
  DeviceComm* device() const { return device_.get(); }
  void set_device(std::unique_ptr<DeviceComm> device) { device_ = std::move(device); }
  std::unique_ptr<DeviceComm> TakeDevice() { return std::move(device_); }
  // Logs, once per ring, that tensors on `place` are staged through host memory, and `why`.
  void NoteStaging(const tide::Place& place, const std::string& why);

  // Runs one collective `fn(tag)` (tag: this collective's sequence number, the same on every rank
  // that issues the collectives in the same order). `what` describes its data ("float32[8, 3]"),
  // which every rank must agree on. A failure becomes an error naming the op, the ring, the ranks
  // that never reached the collective and those that issued another one in its place; the ring
  // is unusable afterwards. With the flag collective_check (on by default) the ranks compare op
  // and `what` before exchanging any data. `engine` names what moved the data in that error.
  void Run(const std::string& op, const std::string& what,
           const std::function<void(uint32_t tag)>& fn, const std::string& engine = "Gloo");

  // The ring's communication "stream": tasks (each a Run and its unpacking) run on the ring's own
  // thread in the order they were queued, so a gradient bucket's allreduce overlaps the rest of
  // backward. Wait returns when every queued task is done and rethrows the first failure (naming
  // `op`, the op that waits); collectives run on the calling thread Wait first.
  void Async(std::function<void()> task);
  void Wait(const std::string& op);

  // "op 'c_allreduce_sum' (collective #3 on ring 0, rank 1 of 2)": how errors name collective
  // #seq.
  std::string Where(const std::string& op, uint64_t seq) const;

 private:
  void Check(const std::string& op, uint64_t seq, std::chrono::steady_clock::time_point start,
             const std::string& signature);
  [[noreturn]] void Fail(const std::string& op, uint64_t seq,
                         std::chrono::steady_clock::time_point start, const std::string& signature,
                         const std::string& why);
  void WorkerLoop();

  const int ring_id_, rank_, nranks_;
  std::shared_ptr<gloo::Context> context_;
  std::shared_ptr<RingStore> store_;
  std::unique_ptr<DeviceComm> device_;
  std::once_flag staging_noted_;
  const std::chrono::milliseconds timeout_;
  const bool check_;  // the flag collective_check
  uint64_t seq_ = 0;
  std::string broken_;  // the failure that ended this ring, if any

  std::mutex queue_mu_;  // guards queue_, pending_, async_error_, async_code_
  std::condition_variable queue_cv_;
  std::deque<std::function<void()>> queue_;
  size_t pending_ = 0;  // queued or running
  std::string async_error_;
  TideCode async_code_ = TIDE_OK;
  bool worker_started_ = false;  // the ring's thread, started by the first Async
};

// The ring `ring_id` of this process; an error naming `op` when c_comm_init has not made it.
Communicator& GetCommunicator(int ring_id, const std::string& op);
// Installs (or replaces) ring `ring_id`.
void SetCommunicator(int ring_id, std::unique_ptr<Communicator> comm);
// How many times ring `ring_id` was initialised in this process (the rendezvous generation).
int NextGeneration(int ring_id);

// The collective deadline: the core's flag collective_timeout_ms (TIDE_COLLECTIVE_TIMEOUT_MS).
std::chrono::milliseconds CollectiveTimeout();

// "float32[8, 3]": a tensor's data type and shape, as the collectives' signatures name them.
std::string Describe(TideDataType dtype, const std::vector<int64_t>& dims);

}  // namespace tide_collective
