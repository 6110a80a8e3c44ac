// device_comm.h: a ring's communicator in a device's own collective library (NCCL, ...), reached
// through the device context extension "tide.collective" (tide/collective.h). c_comm_init makes
// one where the ring's place publishes the extension; the collectives on that place's tensors go
// through it, queued on the context's stream.
#pragma once

#include <tide/collective.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <tide/plugin.hpp>
#include <vector>

#include "watchdog.h"

namespace tide_collective {

// The extension of a device context, or null when the device publishes none (or one older than
// the fields this op pack calls).
const TideCollectiveDef* FindCollectiveLibrary(TideDeviceContext* ctx);

class DeviceComm {
 public:
  // Joins ring `ring_id`, named by `unique_id`, as rank of nranks on ctx's device; where the
  // library publishes the watchdog's functions, a Watchdog aborts a collective that takes longer
  // than `timeout`.
  DeviceComm(TideDeviceContext* ctx, const TideCollectiveDef* def, const std::vector<char>& id,
             int ring_id, int rank, int nranks, std::chrono::milliseconds timeout);
  ~DeviceComm();
  DeviceComm(const DeviceComm&) = delete;
  DeviceComm& operator=(const DeviceComm&) = delete;

  // A new unique id (rank 0's), unique_id_size bytes.
  static std::vector<char> UniqueId(const TideCollectiveDef* def);

  const tide::Place& place() const { return place_; }
  TideDeviceContext* context() const { return ctx_; }
  const char* library() const { return def_->library ? def_->library : "the device's library"; }

  // Has the watchdog mark the stream after collective `where`, just queued (nothing where the
  // library has no watchdog).
  void Watch(const std::string& where);
  // Why the watchdog aborted the communicator; empty while it has not (or there is no watchdog).
  std::string Aborted() const;

  // Whether the library publishes a communication stream (tide/collective.h).
  bool has_comm_stream() const { return comm_table_ != nullptr; }
  // The collectives, queued on the communication stream (after the context's stream's work so
  // far) when `comm_stream` and the library has one, else on the context's stream (after the
  // communication stream's work not yet waited for). AllReduce: one reduction per (send, recv,
  // count), queued as one group. Throw naming the library.
  struct Buffer {
    const void* send;
    void* recv;
    size_t count;
  };
  void AllReduce(const std::vector<Buffer>& buffers, TideDataType dtype, TideReduceOp op,
                 bool comm_stream);
  void Broadcast(const void* send, void* recv, size_t count, TideDataType dtype, int root,
                 bool comm_stream);
  void AllGather(const void* send, void* recv, size_t send_count, TideDataType dtype,
                 bool comm_stream);
  void ReduceScatter(const void* send, void* recv, size_t recv_count, TideDataType dtype,
                     TideReduceOp op, bool comm_stream);
  // The context's stream waits for the collectives queued on the communication stream so far
  // (c_sync_comm_stream); nothing when there are none it has not waited for.
  void CalcWaitComm();

 private:
  void Check(TideStatus* status, const char* what) const;
  // Runs fn (calls of the library with the communicator) where the watchdog allows it (see
  // Watchdog::Enter).
  template <typename Fn>
  void Call(Fn fn) {
    std::unique_lock<std::timed_mutex> entered;
    if (watchdog_) entered = watchdog_->Enter();
    fn();
  }

  // The table to queue the next collective with, its stream ordered (see AllReduce).
  const TideCollectiveDef* Stream(bool comm_stream);

  TideDeviceContext* ctx_;
  const TideCollectiveDef* def_;
  const TideCollectiveDef* comm_table_;  // the communication stream's, or null
  tide::Place place_;
  TideCollectiveComm* comm_ = nullptr;
  std::unique_ptr<Watchdog> watchdog_;  // or null
  // Collectives the executor's thread queued on the communication stream since the context's
  // stream last waited for it; the table of the last collective (whose stream Watch marks).
  bool comm_unwaited_ = false;
  const TideCollectiveDef* last_table_ = nullptr;
};

}  // namespace tide_collective
