// device_comm.h: a ring's communicator in a device's own collective library (NCCL, ...), reached
// through the device context extension "tide.collective" (tide/collective.h). c_comm_init makes
// one where the ring's place publishes the extension; the collectives on that place's tensors go
// through it, queued on the context's stream.
#pragma once

#include <tide/collective.h>

#include <cstddef>
#include <memory>
#include <string>
#include <tide/plugin.hpp>
#include <vector>

namespace tide_collective {

// The extension of a device context, or null when the device publishes none (or one older than
// the fields this op pack calls).
const TideCollectiveDef* FindCollectiveLibrary(TideDeviceContext* ctx);

class DeviceComm {
 public:
  // Joins the ring named by `unique_id` (rank of nranks) on ctx's device.
  DeviceComm(TideDeviceContext* ctx, const TideCollectiveDef* def, const std::vector<char>& id,
             int rank, int nranks);
  ~DeviceComm();
  DeviceComm(const DeviceComm&) = delete;
  DeviceComm& operator=(const DeviceComm&) = delete;

  // A new unique id (rank 0's), unique_id_size bytes.
  static std::vector<char> UniqueId(const TideCollectiveDef* def);

  const tide::Place& place() const { return place_; }
  TideDeviceContext* context() const { return ctx_; }
  const char* library() const { return def_->library ? def_->library : "the device's library"; }

  // One reduction per (send, recv, count), queued as one group. Throws naming the library.
  struct Buffer {
    const void* send;
    void* recv;
    size_t count;
  };
  void AllReduce(const std::vector<Buffer>& buffers, TideDataType dtype, TideReduceOp op);
  void Broadcast(const void* send, void* recv, size_t count, TideDataType dtype, int root);
  void AllGather(const void* send, void* recv, size_t send_count, TideDataType dtype);
  void ReduceScatter(const void* send, void* recv, size_t recv_count, TideDataType dtype,
                     TideReduceOp op);

 private:
  void Check(TideStatus* status, const char* what) const;

  TideDeviceContext* ctx_;
  const TideCollectiveDef* def_;
  tide::Place place_;
  TideCollectiveComm* comm_ = nullptr;
};

}  // namespace tide_collective
