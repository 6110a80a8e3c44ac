// cuda_collective.h: the CUDA device's collective library for the collective op pack: NCCL
// behind the device context extension "tide.collective" (tide/collective.h), each collective
// queued on the context's stream, or on the library's communication stream (a second CUDA stream
// of the context, ordered with the first by events) for use_calc_stream = false. NCCL is opened on
// first use (cuda_libs.h); a plugin built without nccl.h, or a machine without libnccl.so.2,
// publishes no table, and the op pack stages GPU tensors through host memory instead (logged once).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <tide/plugin.hpp>
#include <tide/plugin/collective.hpp>

namespace tide_cuda {

// One per device context (CudaContext holds it): the table handed to the op pack, filled on the
// first request.
struct NcclContext {
  int device = 0;
  void* stream = nullptr;  // cudaStream_t: the context's
  std::once_flag once;
  std::unique_ptr<tide::CollectiveLibrary> library;  // made on the first request, if NCCL is there
  std::mutex abort_mu;
  std::string abort_reason;  // the op pack's watchdog aborted a communicator: why, until reported
  std::atomic<void*> comm_stream{nullptr};  // cudaStream_t: the library's communication stream
};

// The context's "tide.collective" table, or null where NCCL is not there.
const TideCollectiveDef* CollectiveTable(NcclContext* c);

// Waits for the collectives queued on the context's communication stream (the context's
// synchronize does, after its own stream); nothing before NCCL was opened.
void SynchronizeCommStream(NcclContext* c);

// The reason the op pack's watchdog gave when it aborted one of the context's communicators
// since the last call (whose collectives then ended without their result), or empty: the
// context's synchronize reports it.
std::string TakeAbortReason(NcclContext* c);

}  // namespace tide_cuda
