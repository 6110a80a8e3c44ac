// watchdog.h: the watchdog of a ring's communicator in a device's collective library
// (tide/collective.h's marker_* / comm_get_async_error / comm_abort). A collective queued on a
// device's stream returns at once, so nothing on the executor's thread would notice one that never
// finishes: a thread of the watchdog's polls a marker recorded after each, and the library's
// asynchronous error, and aborts the communicator when a collective has not finished within the
// collective timeout or the library reports an error (PyTorch's ProcessGroupNCCL does the same
// with CUDA events, ncclCommGetAsyncError and ncclCommAbort). The abort's reason names the op,
// the ring, the rank and the time elapsed; the device's stream moves on and its next synchronize
// reports that reason.
#pragma once

#include <tide/collective.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace tide_collective {

class Watchdog {
 public:
  // Whether `def` publishes the watchdog's functions.
  static bool Supported(const TideCollectiveDef* def);

  // Watches `comm` of `def` (Supported) on `place` for ring `ring` ("ring 0, rank 1 of 2").
  Watchdog(const TideCollectiveDef* def, TideCollectiveComm* comm, std::string place,
           std::string ring, std::chrono::milliseconds timeout);
  // Stops the thread and releases the markers (not the communicator).
  ~Watchdog();
  // Stops the thread (at exit, before the devices' contexts go); idempotent.
  void Stop();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Marks the stream after the collective `where` ("op 'c_allreduce_sum' (collective #3 on ring
  // 0, rank 1 of 2)") was queued on it through `table` (the library's, or its communication
  // stream's).
  void Watch(const std::string& where, const TideCollectiveDef* table);
  // Why the watchdog aborted the communicator (which must then be neither used nor destroyed);
  // empty while it has not.
  std::string Aborted() const;
  // Held while calling the library with the communicator: an abort waits for the call (for a
  // second at most: a call the library blocks in, waiting for a peer, is what abort must end).
  // Throws TIDE_UNAVAILABLE with the reason once the communicator was aborted.
  std::unique_lock<std::timed_mutex> Enter();

 private:
  struct Pending {
    std::string where;
    std::chrono::steady_clock::time_point start;
    const TideCollectiveDef* table;  // whose marker it is
    void* marker;
  };
  void Loop();
  // The reason to abort now, or empty: the oldest pending collective's timeout, or the library's
  // asynchronous error. Drops the markers of finished collectives.
  std::string Check();
  void Abort(const std::string& reason);
  std::string Library() const;

  const TideCollectiveDef* def_;
  TideCollectiveComm* comm_;
  const std::string place_, ring_;
  const std::chrono::milliseconds timeout_;

  std::timed_mutex call_mu_;  // see Enter
  mutable std::mutex mu_;     // guards pending_, aborted_, stop_
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  std::string aborted_;
  bool stop_ = false;
  std::mutex join_mu_;  // Stop may come from the exit handler and the destructor
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace tide_collective
