// cuda_collective.cc: NCCL as the CUDA device's collective library (see cuda_collective.h).
#include "cuda_collective.h"

#include <cstring>
#include <memory>
#include <string>
#include <tide/plugin.hpp>

#include "cuda_check.h"
#include "cuda_libs.h"

namespace tide_cuda {
namespace {
constexpr const char* kPluginName = "device_cuda";
}  // namespace

void SynchronizeCommStream(NcclContext* c) {
  void* comm = c->comm_stream.load();
  if (!comm) return;
  CudaCheck(cudaStreamSynchronize(static_cast<cudaStream_t>(comm)),
            "gpu:" + std::to_string(c->device) +
                ": cudaStreamSynchronize of the communication stream (an NCCL collective "
                "failed asynchronously)");
}

std::string TakeAbortReason(NcclContext* c) {
  std::lock_guard<std::mutex> lock(c->abort_mu);
  std::string reason;
  reason.swap(c->abort_reason);
  return reason;
}

#ifndef TIDE_CUDA_WITH_NCCL

const TideCollectiveDef* CollectiveTable(NcclContext* c) {
  std::call_once(c->once, [] {
    static std::once_flag logged;
    std::call_once(logged, [] {
      tide::Log(TIDE_LOG_WARNING, kPluginName,
                "this CUDA plugin was built without nccl.h: GPU tensors' collectives are "
                "staged through host memory (rebuild with NCCL's headers, e.g. NCCL_ROOT)");
    });
  });
  return nullptr;
}

#else

namespace {

// NCCL's result as an error naming the call and NCCL's text.
void NcclCheck(ncclResult_t r, const char* call) {
  if (r == ncclSuccess) return;
  TIDE_THROW(
      r == ncclInvalidArgument || r == ncclInvalidUsage ? TIDE_INVALID_ARGUMENT : TIDE_INTERNAL,
      "NCCL ", call, ": ", Nccl().ncclGetErrorString(r));
}

ncclComm_t AsNccl(TideCollectiveComm* c) { return reinterpret_cast<ncclComm_t>(c); }

ncclDataType_t NcclType(TideDataType t) {
  switch (t) {
    case TIDE_FP32:
      return ncclFloat32;
    case TIDE_FP64:
      return ncclFloat64;
    case TIDE_FP16:
      return ncclFloat16;
    case TIDE_BF16:
      return ncclBfloat16;
    case TIDE_INT32:
      return ncclInt32;
    case TIDE_INT64:
      return ncclInt64;
    case TIDE_UINT8:
      return ncclUint8;
    case TIDE_INT8:
      return ncclInt8;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "NCCL: data type ", tide::DataTypeName(t),
                 " is not supported (float32/64, float16, bfloat16, int32/64, uint8, int8)");
  }
}

ncclRedOp_t NcclOp(TideReduceOp op) {
  switch (op) {
    case TIDE_REDUCE_PROD:
      return ncclProd;
    case TIDE_REDUCE_MAX:
      return ncclMax;
    case TIDE_REDUCE_MIN:
      return ncclMin;
    default:
      return ncclSum;
  }
}

// NCCL on one context: its calls run with the context's device current and queue on its stream.
class NcclLibrary : public tide::CollectiveLibrary {
 public:
  // On the context's stream, with a communication stream of its own (a second NcclLibrary on it).
  explicit NcclLibrary(NcclContext* c) : NcclLibrary(c, static_cast<cudaStream_t>(c->stream)) {
    DeviceGuard guard(device_);
    const std::string where = "gpu:" + std::to_string(device_) + ": NCCL's communication stream: ";
    CudaCheck(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking),
              where + "cudaStreamCreateWithFlags");
    CudaCheck(cudaEventCreateWithFlags(&calc_done_, cudaEventDisableTiming),
              where + "cudaEventCreateWithFlags");
    CudaCheck(cudaEventCreateWithFlags(&comm_done_, cudaEventDisableTiming),
              where + "cudaEventCreateWithFlags");
    comm_ = std::unique_ptr<NcclLibrary>(new NcclLibrary(c, comm_stream_));
    SetCommStream(comm_.get());
    c->comm_stream.store(comm_stream_);
  }
  // Never throws: destroyed with the context, at exit.
  ~NcclLibrary() override {
    if (!comm_stream_) return;
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    if (prev != device_) cudaSetDevice(device_);
    context_->comm_stream.store(nullptr);
    cudaStreamSynchronize(comm_stream_);
    comm_.reset();
    if (calc_done_) cudaEventDestroy(calc_done_);
    if (comm_done_) cudaEventDestroy(comm_done_);
    cudaStreamDestroy(comm_stream_);
    if (prev >= 0 && prev != device_) cudaSetDevice(prev);
    cudaGetLastError();
  }

  // The two streams ordered by events, without the host waiting.
  void CommWaitCalc() override { Order(stream_, calc_done_, comm_stream_); }
  void CalcWaitComm() override { Order(comm_stream_, comm_done_, stream_); }

  void UniqueId(void* id) override {
    NcclCheck(Nccl().ncclGetUniqueId(static_cast<ncclUniqueId*>(id)), "ncclGetUniqueId");
  }
  TideCollectiveComm* CommInit(const void* id, int32_t nranks, int32_t rank) override {
    ncclUniqueId uid;
    std::memcpy(&uid, id, sizeof(uid));
    ncclComm_t comm = nullptr;
    DeviceGuard guard(device_);
    NcclCheck(Nccl().ncclCommInitRank(&comm, nranks, uid, rank), "ncclCommInitRank");
    return reinterpret_cast<TideCollectiveComm*>(comm);
  }
  void CommDestroy(TideCollectiveComm* comm) override {
    DeviceGuard guard(device_);
    NcclCheck(Nccl().ncclCommDestroy(AsNccl(comm)), "ncclCommDestroy");
  }
  void AllReduce(TideCollectiveComm* comm, const void* send, void* recv, size_t count,
                 TideDataType dtype, TideReduceOp op) override {
    DeviceGuard guard(device_);
    NcclCheck(
        Nccl().ncclAllReduce(send, recv, count, NcclType(dtype), NcclOp(op), AsNccl(comm), stream_),
        "ncclAllReduce");
  }
  void Broadcast(TideCollectiveComm* comm, const void* send, void* recv, size_t count,
                 TideDataType dtype, int32_t root) override {
    DeviceGuard guard(device_);
    NcclCheck(Nccl().ncclBroadcast(send, recv, count, NcclType(dtype), root, AsNccl(comm), stream_),
              "ncclBroadcast");
  }
  void AllGather(TideCollectiveComm* comm, const void* send, void* recv, size_t send_count,
                 TideDataType dtype) override {
    DeviceGuard guard(device_);
    NcclCheck(Nccl().ncclAllGather(send, recv, send_count, NcclType(dtype), AsNccl(comm), stream_),
              "ncclAllGather");
  }
  void ReduceScatter(TideCollectiveComm* comm, const void* send, void* recv, size_t recv_count,
                     TideDataType dtype, TideReduceOp op) override {
    DeviceGuard guard(device_);
    NcclCheck(Nccl().ncclReduceScatter(send, recv, recv_count, NcclType(dtype), NcclOp(op),
                                       AsNccl(comm), stream_),
              "ncclReduceScatter");
  }
  void GroupStart() override { NcclCheck(Nccl().ncclGroupStart(), "ncclGroupStart"); }
  void GroupEnd() override { NcclCheck(Nccl().ncclGroupEnd(), "ncclGroupEnd"); }

  // The watchdog's, as ProcessGroupNCCL's: an event after each collective, NCCL's asynchronous
  // error, ncclCommAbort (which ends the communicator's kernels, so the stream moves on).
  void* MarkerRecord() override {
    DeviceGuard guard(device_);
    cudaEvent_t e = nullptr;
    CudaCheck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
              "NCCL watchdog: cudaEventCreateWithFlags");
    const cudaError_t r = cudaEventRecord(e, stream_);
    if (r != cudaSuccess) {
      cudaEventDestroy(e);
      CudaCheck(r, "NCCL watchdog: cudaEventRecord");
    }
    return e;
  }
  bool MarkerQuery(void* marker) override {
    const cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(marker));
    if (r == cudaErrorNotReady) {
      cudaGetLastError();  // not an error: clear it
      return false;
    }
    CudaCheck(r, "NCCL watchdog: cudaEventQuery");
    return true;
  }
  void MarkerDestroy(void* marker) override { cudaEventDestroy(static_cast<cudaEvent_t>(marker)); }
  void CommAsyncError(TideCollectiveComm* comm) override {
    ncclResult_t async = ncclSuccess;
    NcclCheck(Nccl().ncclCommGetAsyncError(AsNccl(comm), &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress)
      TIDE_THROW(TIDE_UNAVAILABLE, "NCCL: ", Nccl().ncclGetErrorString(async));
  }
  void CommAbort(TideCollectiveComm* comm, const char* reason) override {
    {
      std::lock_guard<std::mutex> lock(context_->abort_mu);
      context_->abort_reason = reason ? reason : "aborted";
    }
    DeviceGuard guard(device_);
    NcclCheck(Nccl().ncclCommAbort(AsNccl(comm)), "ncclCommAbort");
  }

 private:
  // A library on `stream` alone (the communication stream's).
  NcclLibrary(NcclContext* c, cudaStream_t stream)
      : CollectiveLibrary("NCCL", sizeof(ncclUniqueId), /*has_watchdog=*/true),
        context_(c),
        device_(c->device),
        stream_(stream) {}

  // Work queued on `waiter` from now on waits for the work queued on `first` so far.
  void Order(cudaStream_t first, cudaEvent_t event, cudaStream_t waiter) {
    DeviceGuard guard(device_);
    CudaCheck(cudaEventRecord(event, first), "NCCL's communication stream: cudaEventRecord");
    CudaCheck(cudaStreamWaitEvent(waiter, event, 0),
              "NCCL's communication stream: cudaStreamWaitEvent");
  }

  NcclContext* const context_;
  const int device_;
  const cudaStream_t stream_;
  // The primary's: its communication stream, that stream's library, and the two events.
  cudaStream_t comm_stream_ = nullptr;
  std::unique_ptr<NcclLibrary> comm_;
  cudaEvent_t calc_done_ = nullptr, comm_done_ = nullptr;
};

// Opens NCCL once per process; false (logged once) where it cannot be.
bool NcclLoaded() {
  static const bool loaded = [] {
    try {
      int version = 0;
      Nccl().ncclGetVersion(&version);
      tide::Log(TIDE_LOG_INFO, kPluginName,
                "NCCL " + std::to_string(version) + " loaded: the GPU's collective library");
      return true;
    } catch (const std::exception& e) {
      tide::Log(
          TIDE_LOG_WARNING, kPluginName,
          std::string(e.what()) + "; GPU tensors' collectives are staged through host memory");
      return false;
    }
  }();
  return loaded;
}

}  // namespace

const TideCollectiveDef* CollectiveTable(NcclContext* c) {
  std::call_once(c->once, [c] {
    if (NcclLoaded()) c->library = std::make_unique<NcclLibrary>(c);
  });
  return c->library ? c->library->def() : nullptr;
}

#endif  // TIDE_CUDA_WITH_NCCL

}  // namespace tide_cuda
