// cuda_device.cc: the CUDA device plugin's device: place kind "gpu" (one place per visible
// device), cudaMalloc memory under the core's allocator, one context per place (a stream, cuBLAS
// and cuDNN handles bound to it, published as "tide.cuda"), copies queued on the stream (host to
// device through pinned staging), NCCL as its collective library ("tide.collective",
// cuda_collective.cc), the tracer on CUPTI (cupti_tracer.cc), and the plugin's entry points. The
// kernels are in *_ops.*.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "cuda_check.h"
#include "cuda_collective.h"
#include "cuda_libs.h"
#include "cupti_tracer.h"
#include "gpu.h"

namespace tide_cuda {
namespace {

constexpr const char* kPluginName = "device_cuda";
constexpr int kMaxDevices = 64;
// Host-to-device staging: kSlots pinned buffers of kSlotBytes, used round robin so that copying
// the next chunk into one overlaps the DMA of the previous one.
constexpr int kSlots = 4;
constexpr size_t kSlotBytes = size_t(4) << 20;

std::string Bytes(uint64_t n) {
  char buf[64];
  if (n >= (uint64_t(1) << 30))
    std::snprintf(buf, sizeof(buf), "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(n),
                  double(n) / double(uint64_t(1) << 30));
  else if (n >= (uint64_t(1) << 20))
    std::snprintf(buf, sizeof(buf), "%llu bytes (%.2f MiB)", static_cast<unsigned long long>(n),
                  double(n) / double(uint64_t(1) << 20));
  else
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(n));
  return buf;
}

struct StagingSlot {
  char* buf = nullptr;
  cudaEvent_t done = nullptr;  // recorded after the DMA that reads buf
  bool pending = false;
};

struct CudaContext {
  ContextState state;  // first: kernels reach it from the extension pointer
  int device = 0;
  int32_t role = TIDE_STREAM_COMPUTE;  // a role context (the copy stream) has no library handles
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  NcclContext nccl;         // the "tide.collective" table (NCCL on `stream` and its own)
  bool use_pinned = true;   // --use_pinned_memory when the context was made
  std::mutex mu;            // guards the staging slots
  char* staging = nullptr;  // kSlots * kSlotBytes pinned bytes, made on the first H2D copy
  bool staging_failed = false;
  std::array<StagingSlot, kSlots> slots;
  int next_slot = 0;
};

// Frees what a context holds; tolerates a half-made one and a CUDA runtime that is shutting
// down (errors are ignored: nothing can be done about them at that point).
// Never throws: the core calls it through a function that cannot report errors.
void DestroyContextState(CudaContext* c) noexcept {
  if (!c) return;
  {
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    if (prev != c->device) cudaSetDevice(c->device);
    if (c->stream) cudaStreamSynchronize(c->stream);
    if (c->cudnn) Cudnn().cudnnDestroy(c->cudnn);  // loaded, or the handle would be null
    if (c->cublas) Cublas().cublasDestroy_v2(c->cublas);
    for (auto& s : c->slots)
      if (s.done) cudaEventDestroy(s.done);
    if (c->staging) cudaFreeHost(c->staging);
    if (c->state.error_word_host) cudaFreeHost(c->state.error_word_host);
    if (c->stream) cudaStreamDestroy(c->stream);
    if (prev >= 0 && prev != c->device) cudaSetDevice(prev);
    cudaGetLastError();
  }
  delete c;
}

// TIDE_CUDA_ALLOW_TF32=1 lets cuBLAS round float32 inputs to TF32 on tensor cores (faster, about
// 1e-3 relative error); off by default so float32 results match the CPU's. (conv_ops.cc reads it
// for cuDNN.)
bool AllowTf32() {
  const char* v = std::getenv("TIDE_CUDA_ALLOW_TF32");
  return v && std::strcmp(v, "1") == 0;
}

// cuBLAS and cuDNN handles on the context's stream. A library that cannot be loaded or set up
// leaves its handle null (logged): only the ops that need it fail, saying why.
void CreateLibraryHandles(CudaContext* c, const std::string& where) {
  try {
    const CublasApi& api = Cublas();
    cublasStatus_t s = api.cublasCreate_v2(&c->cublas);
    if (s != CUBLAS_STATUS_SUCCESS) {
      c->cublas = nullptr;
      TIDE_THROW(TIDE_UNAVAILABLE, "cublasCreate: ", CublasStatusText(s));
    }
    s = api.cublasSetStream_v2(c->cublas, c->stream);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = api.cublasSetMathMode(c->cublas,
                                AllowTf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    if (s != CUBLAS_STATUS_SUCCESS)
      TIDE_THROW(TIDE_UNAVAILABLE, "setting up cuBLAS: ", CublasStatusText(s));
  } catch (const std::exception& e) {
    if (c->cublas) Cublas().cublasDestroy_v2(c->cublas);
    c->cublas = nullptr;
    tide::Log(TIDE_LOG_WARNING, kPluginName,
              where + ": cuBLAS is unavailable (" + e.what() + "); mul/matmul kernels will fail");
  }
  try {
    const CudnnApi& api = Cudnn();
    cudnnStatus_t s = api.cudnnCreate(&c->cudnn);
    if (s != CUDNN_STATUS_SUCCESS) {
      c->cudnn = nullptr;
      TIDE_THROW(TIDE_UNAVAILABLE, "cudnnCreate: ", CudnnStatusText(s));
    }
    s = api.cudnnSetStream(c->cudnn, c->stream);
    if (s != CUDNN_STATUS_SUCCESS)
      TIDE_THROW(TIDE_UNAVAILABLE, "cudnnSetStream: ", CudnnStatusText(s));
  } catch (const std::exception& e) {
    if (c->cudnn) Cudnn().cudnnDestroy(c->cudnn);
    c->cudnn = nullptr;
    tide::Log(TIDE_LOG_WARNING, kPluginName,
              where + ": cuDNN is unavailable (" + e.what() + "); conv2d kernels will fail");
  }
}

// What TideDeviceProperties points at: kept for the plugin's lifetime.
struct DeviceText {
  std::string name, driver, capability;
  uint64_t total_memory = 0;
  int32_t sms = 0;
};

bool IsPinned(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

// The GPUs the CUDA runtime sees, asked once; with none, why (cudaGetDeviceCount's error: no
// driver, one older than the runtime, no device, CUDA_VISIBLE_DEVICES hiding them).
struct Discovery {
  int32_t count = 0;
  std::string reason;  // kept for the process: TideDeviceDef.unavailable_reason hands it out
};
const Discovery& Discovered() {
  static const Discovery d = [] {
    Discovery r;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      r.reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + " (" +
                 cudaGetErrorString(e) + ")";
      if (e == cudaErrorInsufficientDriver)
        r.reason += "; is the NVIDIA driver (libcuda.so.1) installed, and as new as this runtime?";
      const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      if (e == cudaErrorNoDevice && visible)
        r.reason += std::string("; CUDA_VISIBLE_DEVICES is '") + visible + "'";
      tide::Log(TIDE_LOG_INFO, kPluginName, "no CUDA device: " + r.reason + "; no gpu places");
      return r;
    }
    r.count = std::min(n, kMaxDevices);
    if (r.count == 0) r.reason = "cudaGetDeviceCount found no CUDA device";
    return r;
  }();
  return d;
}

class CudaDevice : public tide::Device {
 public:
  const char* kind() const override { return "gpu"; }
  bool host_accessible() const override { return false; }
  size_t alignment() const override { return 256; }  // what cudaMalloc guarantees
  // The CUDA runtime and libraries need some device memory outside the allocator's budget.
  double DefaultMemoryFraction() const override { return 0.92; }
  uint64_t DefaultInitialMemoryMb() const override { return 256; }

  // 0 without a driver or a device: a machine without a GPU has no gpu places, which is no error;
  // UnavailableReason says why, in the error of a gpu place that does not exist.
  int32_t Count() override { return Discovered().count; }
  const char* UnavailableReason() const override {
    const std::string& why = Discovered().reason;
    return why.empty() ? nullptr : why.c_str();
  }

  void* Alloc(int32_t device, size_t size) override {
    CheckDevice(device);
    DeviceGuard guard(device);
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, size ? size : 1);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) cudaGetLastError();
      TIDE_THROW(TIDE_RESOURCE_EXHAUSTED, "out of GPU memory on gpu:", device, ": cudaMalloc of ",
                 Bytes(size), " failed; Tide's allocator already holds ",
                 Bytes(in_use_[device].load()), " of this device in ", blocks_[device].load(),
                 " block(s), and the device reports ", Bytes(free_b), " free of ", Bytes(total_b),
                 " (other processes may hold the rest). Lower the batch size, "
                 "--fraction_of_gpu_memory_to_use or --initial_gpu_memory_in_mb");
    }
    CudaCheck(e, "gpu:" + std::to_string(device) + ": cudaMalloc of " + Bytes(size));
    const uint64_t now = in_use_[device] += size;
    ++blocks_[device];
    uint64_t peak = peak_[device].load();
    while (now > peak && !peak_[device].compare_exchange_weak(peak, now)) {
    }
    return p;
  }

  void Free(int32_t device, void* ptr, size_t size) override {
    if (!ptr || device < 0 || device >= kMaxDevices) return;
    int prev = -1;
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    if (prev != device) cudaSetDevice(device);
    // Device contract 2's stream order: cudaFree waits for the device's queued work first.
    cudaFree(ptr);  // fails only while the runtime shuts down; nothing to do then
    cudaGetLastError();
    if (prev >= 0 && prev != device) cudaSetDevice(prev);
    in_use_[device] -= size;
    --blocks_[device];
  }

  void MemoryInfo(int32_t device, size_t* total, size_t* available) override {
    CheckDevice(device);
    DeviceGuard guard(device);
    CudaCheck(cudaMemGetInfo(available, total),
              "gpu:" + std::to_string(device) + ": cudaMemGetInfo");
  }

  void* CreateContext(int32_t device) override {
    return NewContext(device, TIDE_STREAM_COMPUTE, 0);
  }
  // Streams with roles (issue 33): the copy stream, a stream of its own at the priority asked
  // (clamped to the device's range; lower first, as the core's), for copies and events only.
  bool HasRoleContexts() const override { return true; }
  void* CreateRoleContext(int32_t device, int32_t role, int32_t priority) override {
    TIDE_CHECK(role != TIDE_STREAM_COMPUTE, "gpu:", device, ": the compute stream is no role's");
    return NewContext(device, role, priority);
  }

  // Capture and replay (issue 34, TideDeviceGraphs): CUDA graphs. The capture is relaxed (the
  // core's pool may still cudaMalloc meanwhile, and other threads use other streams); the graph
  // is instantiated once and launched on the context's stream.
  bool HasGraphs() const override { return true; }
  void BeginCapture(void* ctx) override {
    auto* c = static_cast<CudaContext*>(ctx);
    DeviceGuard guard(c->device);
    CudaCheck(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeRelaxed),
              "gpu:" + std::to_string(c->device) + ": cudaStreamBeginCapture");
  }
  void* EndCapture(void* ctx) override {
    auto* c = static_cast<CudaContext*>(ctx);
    DeviceGuard guard(c->device);
    const std::string where = "gpu:" + std::to_string(c->device);
    cudaGraph_t graph = nullptr;
    // Ends the capture even when it was invalidated (a call the graph cannot hold): the error
    // names the first such call's failure.
    CudaCheck(cudaStreamEndCapture(c->stream, &graph),
              where +
                  ": cudaStreamEndCapture (something queued while capturing cannot be "
                  "recorded in a CUDA graph)");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);  // the executable graph is a copy
    CudaCheck(e, where + ": cudaGraphInstantiate");
    return exec;
  }
  void LaunchGraph(void* ctx, void* graph) override {
    auto* c = static_cast<CudaContext*>(ctx);
    DeviceGuard guard(c->device);
    CudaCheck(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), c->stream),
              "gpu:" + std::to_string(c->device) + ": cudaGraphLaunch");
  }
  void DestroyGraph(void* graph) override {
    cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
  }

  // Host functions (issue 33, launch_host_func): cudaLaunchHostFunc, whose rules the ABI's are
  // (called on a CUDA thread once the stream gets there; none after a fault).
  bool HasHostFunc() const override { return true; }
  void LaunchHostFunc(void* ctx, void (*fn)(void*), void* data) override {
    auto* c = static_cast<CudaContext*>(ctx);
    DeviceGuard guard(c->device);
    CudaCheck(cudaLaunchHostFunc(c->stream, fn, data),
              "gpu:" + std::to_string(c->device) + ": cudaLaunchHostFunc");
  }

  void* NewContext(int32_t device, int32_t role, int32_t priority) {
    CheckDevice(device);
    const std::string where =
        "creating the context of gpu:" + std::to_string(device) +
        (role == TIDE_STREAM_COMPUTE ? "" : " (stream role " + std::to_string(role) + ")");
    DeviceGuard guard(device);
    auto* c = new CudaContext;
    c->device = device;
    c->role = role;
    try {
      int least = 0, greatest = 0;
      CudaCheck(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                where + ": cudaDeviceGetStreamPriorityRange");
      const int p = std::min(std::max(int(priority), greatest), least);  // greatest is lowest
      CudaCheck(cudaStreamCreateWithPriority(&c->stream, cudaStreamNonBlocking, p),
                where + ": cudaStreamCreateWithPriority");
      if (role == TIDE_STREAM_COMPUTE) CreateLibraryHandles(c, where);
      void* word = nullptr;
      CudaCheck(cudaHostAlloc(&word, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable),
                where + ": cudaHostAlloc of the error word");
      c->state.error_word_host = static_cast<int*>(word);
      *c->state.error_word_host = 0;
      void* dev_word = nullptr;
      CudaCheck(cudaHostGetDevicePointer(&dev_word, word, 0),
                where + ": cudaHostGetDevicePointer of the error word");
      c->state.error_word = static_cast<int*>(dev_word);
      for (auto& s : c->slots)
        CudaCheck(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming),
                  where + ": cudaEventCreateWithFlags");

      int major = 0, minor = 0, sms = 0;
      CudaCheck(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                where + ": cudaDeviceGetAttribute");
      CudaCheck(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
                where + ": cudaDeviceGetAttribute");
      CudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                where + ": cudaDeviceGetAttribute");
      c->use_pinned = tide::Flag("use_pinned_memory", "true") != "false";

      TideCudaContext& ext = c->state.ext;
      ext.struct_size = TIDE_STRUCT_SIZE(TideCudaContext, multiprocessor_count);
      ext.device = device;
      ext.stream = c->stream;
      ext.cublas = c->cublas;
      ext.cudnn = c->cudnn;
      ext.compute_capability_major = major;
      ext.compute_capability_minor = minor;
      ext.multiprocessor_count = sms;
      c->nccl.device = device;
      c->nccl.stream = c->stream;
    } catch (...) {
      DestroyContextState(c);
      throw;
    }
    return c;
  }

  void DestroyContext(void* ctx) override { DestroyContextState(static_cast<CudaContext*>(ctx)); }

  void Synchronize(void* ctx) override {
    auto* c = static_cast<CudaContext*>(ctx);
    cudaError_t e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess)
      CudaCheck(e, "gpu:" + std::to_string(c->device) +
                       ": cudaStreamSynchronize (an earlier kernel or copy failed "
                       "asynchronously; run with TIDE_CUDA_SYNC=1 to have the op that failed "
                       "report it)");
    volatile int* word = c->state.error_word_host;
    if (int code = *word) {
      *word = 0;
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "gpu:", c->device, ": ", DeviceErrorMessage(code));
    }
    if (c->role != TIDE_STREAM_COMPUTE) return;
    SynchronizeCommStream(&c->nccl);
    // An NCCL collective the op pack's watchdog aborted left its output unwritten.
    const std::string aborted = TakeAbortReason(&c->nccl);
    if (!aborted.empty()) TIDE_THROW(TIDE_UNAVAILABLE, "gpu:", c->device, ": ", aborted);
  }

  void Copy(void* ctx, TideCopyKind kind, void* dst, const void* src, size_t size) override {
    auto* c = static_cast<CudaContext*>(ctx);
    if (size == 0) return;
    DeviceGuard guard(c->device);
    switch (kind) {
      case TIDE_COPY_HOST_TO_DEVICE:
        CopyToDevice(c, dst, src, size);
        break;
      case TIDE_COPY_DEVICE_TO_HOST:
        // Into pageable memory this returns when the copy is done; into pinned memory it is
        // asynchronous and the core synchronises before it reads.
        CheckCopy(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToHost, c->stream), c, size,
                  "to the host");
        break;
      case TIDE_COPY_DEVICE_TO_DEVICE:
        CheckCopy(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, c->stream), c, size,
                  "on the device");
        break;
      default:
        TIDE_THROW(TIDE_INVALID_ARGUMENT, "gpu:", c->device, ": unknown copy kind ", int(kind));
    }
  }

  // gpu:i -> gpu:j without a host bounce (through the peer path when the devices allow it,
  // staged by the driver otherwise).
  bool HasPeerCopy() const override { return true; }
  void CopyPeer(void* ctx, void* dst, int32_t src_device, const void* src, size_t size) override {
    auto* c = static_cast<CudaContext*>(ctx);
    if (size == 0) return;
    DeviceGuard guard(c->device);
    CheckCopy(cudaMemcpyPeerAsync(dst, c->device, src, src_device, size, c->stream), c, size,
              "from another device");
  }

  int32_t DLPackDeviceType() const override { return 2 /* kDLCUDA */; }
  bool HasMemset() const override { return true; }
  void Memset(void* ctx, void* dst, int32_t value, size_t size) override {
    auto* c = static_cast<CudaContext*>(ctx);
    DeviceGuard guard(c->device);
    CheckCopy(cudaMemsetAsync(dst, value, size, c->stream), c, size, "set by cudaMemsetAsync");
  }

  bool HasProperties() const override { return true; }
  void Properties(int32_t device, TideDeviceProperties* p) override {
    CheckDevice(device);
    static std::mutex mu;
    static std::array<std::unique_ptr<DeviceText>, kMaxDevices> texts;
    std::lock_guard<std::mutex> lock(mu);
    if (!texts[device]) {
      cudaDeviceProp prop{};
      CudaCheck(cudaGetDeviceProperties(&prop, device),
                "cudaGetDeviceProperties(" + std::to_string(device) + ")");
      int driver = 0;
      if (cudaDriverGetVersion(&driver) != cudaSuccess) cudaGetLastError();
      auto t = std::make_unique<DeviceText>();
      t->name = prop.name;
      t->driver = std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
      t->capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
      t->total_memory = prop.totalGlobalMem;
      t->sms = prop.multiProcessorCount;
      texts[device] = std::move(t);
    }
    const DeviceText& t = *texts[device];
    p->name = t.name.c_str();
    p->vendor = "NVIDIA";
    p->driver_version = t.driver.c_str();
    p->compute_capability = t.capability.c_str();
    p->total_memory = t.total_memory;
    if (TIDE_HAS_FIELD(p, TideDeviceProperties, multiprocessor_count))
      p->multiprocessor_count = t.sms;
  }

  // Events, for the core's waits between streams (peer copies) without blocking the host, and
  // for the profiler's op times (so made with timing: the core makes few, from pools). The
  // plugin stages host-to-device copies into its own pinned slots (CopyToDevice), so it offers
  // no host_alloc.
  bool HasEvents() const override { return true; }
  void* CreateEvent(void* ctx) override {
    auto* c = static_cast<CudaContext*>(ctx);
    DeviceGuard guard(c->device);
    cudaEvent_t e = nullptr;
    CudaCheck(cudaEventCreateWithFlags(&e, cudaEventDefault),
              "gpu:" + std::to_string(c->device) + ": cudaEventCreateWithFlags");
    return e;
  }
  void DestroyEvent(void* e) override {
    cudaEventDestroy(static_cast<cudaEvent_t>(e));
    cudaGetLastError();
  }
  void RecordEvent(void* ctx, void* e) override {
    auto* c = static_cast<CudaContext*>(ctx);
    DeviceGuard guard(c->device);
    CudaCheck(cudaEventRecord(static_cast<cudaEvent_t>(e), c->stream),
              "gpu:" + std::to_string(c->device) + ": cudaEventRecord");
  }
  bool QueryEvent(void* e) override {
    cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(e));
    if (r == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    CudaCheck(r, "cudaEventQuery");
    return true;
  }
  void SynchronizeEvent(void* e) override {
    CudaCheck(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), "cudaEventSynchronize");
  }
  void WaitEvent(void* ctx, void* e) override {
    auto* c = static_cast<CudaContext*>(ctx);
    DeviceGuard guard(c->device);
    CudaCheck(cudaStreamWaitEvent(c->stream, static_cast<cudaEvent_t>(e), 0),
              "gpu:" + std::to_string(c->device) + ": cudaStreamWaitEvent");
  }

  // --- Profiling and memory statistics (issue 33) ---
  bool HasEventTiming() const override { return true; }
  float EventElapsedMs(void* start, void* end) override {
    float ms = 0;
    CudaCheck(
        cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
        "cudaEventElapsedTime");
    return ms;
  }
  // cudaMalloc straight under the core's allocator: what is in use is what is reserved.
  bool HasMemoryStats() const override { return true; }
  void MemoryStats(int32_t device, TideMemoryStats* s) override {
    CheckDevice(device);
    s->bytes_in_use = s->bytes_reserved = in_use_[device].load();
    s->peak_bytes_in_use = peak_[device].load();
    size_t free_b = 0, total_b = 0;
    DeviceGuard guard(device);
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) cudaGetLastError();
    if (TIDE_HAS_FIELD(s, TideMemoryStats, bytes_limit)) s->bytes_limit = total_b;
  }

  // The tracer, on CUPTI (cupti_tracer.cc), opened by the first profile on a machine with a GPU:
  // a process that never profiles, or has no GPU, never loads libcupti (4 MB). Without a GPU it
  // records nothing, on the host's clock; without libcupti, start fails saying why (the core
  // then profiles with events alone).
  bool HasTracer() const override { return CuptiTracerBuilt(); }
  bool CuptiTracing() { return Count() > 0 && CuptiTracerAvailable(); }
  void TraceStart() override {
    if (Count() == 0) return;
    if (!CuptiTracerAvailable()) TIDE_THROW(TIDE_UNAVAILABLE, "CUPTI: ", CuptiUnavailableReason());
    CuptiTraceStart();
  }
  void TraceStop() override {
    if (CuptiTracing()) CuptiTraceStop();
  }
  void TraceCollect(const TraceEmitter& emit) override {
    if (CuptiTracing()) CuptiTraceCollect(emit);
  }
  uint64_t TraceNowNs() override {
    if (CuptiTracing()) return CuptiTraceNowNs();
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
  }

  const void* Extension(void* ctx, const char* name) override {
    if (std::strcmp(name, TIDE_CUDA_CONTEXT_EXTENSION) == 0)
      return &static_cast<CudaContext*>(ctx)->state.ext;
    if (std::strcmp(name, TIDE_COLLECTIVE_EXTENSION) == 0 &&
        static_cast<CudaContext*>(ctx)->role == TIDE_STREAM_COMPUTE)
      return CollectiveTable(&static_cast<CudaContext*>(ctx)->nccl);
    return nullptr;
  }

 private:
  void CheckDevice(int32_t device) {
    if (device < 0 || device >= Count())
      TIDE_THROW(TIDE_UNAVAILABLE, "gpu:", device, " does not exist: ", Count(),
                 " CUDA device(s) are visible");
  }

  static void CheckCopy(cudaError_t e, const CudaContext* c, size_t size, const char* what) {
    if (e != cudaSuccess)
      CudaCheck(e, "gpu:" + std::to_string(c->device) + ": copying " + Bytes(size) + " " + what);
  }

  // Pageable host memory is copied into pinned staging slots first, so the DMA is truly
  // asynchronous (a pageable cudaMemcpyAsync may wait for the whole stream). Pinned sources,
  // or --use_pinned_memory=false, go straight to cudaMemcpyAsync.
  void CopyToDevice(CudaContext* c, void* dst, const void* src, size_t size) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->use_pinned && !c->staging && !c->staging_failed) {
      void* p = nullptr;
      cudaError_t e = cudaHostAlloc(&p, kSlots * kSlotBytes, cudaHostAllocPortable);
      if (e != cudaSuccess) {
        cudaGetLastError();
        c->staging_failed = true;
        tide::Log(TIDE_LOG_WARNING, kPluginName,
                  "gpu:" + std::to_string(c->device) + ": no pinned staging memory (" +
                      cudaGetErrorString(e) + "); host-to-device copies use pageable memory");
      } else {
        c->staging = static_cast<char*>(p);
        for (int i = 0; i < kSlots; ++i) c->slots[i].buf = c->staging + i * kSlotBytes;
      }
    }
    if (!c->staging || IsPinned(src)) {
      CheckCopy(cudaMemcpyAsync(dst, src, size, cudaMemcpyHostToDevice, c->stream), c, size,
                "to the device");
      return;
    }
    const char* from = static_cast<const char*>(src);
    char* to = static_cast<char*>(dst);
    for (size_t off = 0; off < size; off += kSlotBytes) {
      const size_t n = std::min(kSlotBytes, size - off);
      StagingSlot& s = c->slots[c->next_slot];
      c->next_slot = (c->next_slot + 1) % kSlots;
      if (s.pending) {  // its previous DMA must be done before the buffer is overwritten
        CheckCopy(cudaEventSynchronize(s.done), c, size, "to the device (waiting for staging)");
        s.pending = false;
      }
      std::memcpy(s.buf, from + off, n);
      CheckCopy(cudaMemcpyAsync(to + off, s.buf, n, cudaMemcpyHostToDevice, c->stream), c, size,
                "to the device (staged)");
      CheckCopy(cudaEventRecord(s.done, c->stream), c, size, "to the device (cudaEventRecord)");
      s.pending = true;
    }
  }

  std::array<std::atomic<uint64_t>, kMaxDevices> in_use_{};
  std::array<std::atomic<int64_t>, kMaxDevices> blocks_{};
  std::array<std::atomic<uint64_t>, kMaxDevices> peak_{};  // the most in_use_ ever
};

}  // namespace
}  // namespace tide_cuda

TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.AddDevice(std::make_unique<tide_cuda::CudaDevice>());
});
TIDE_PLUGIN("device_cuda", "0.1.0",
            "CUDA device (place kind gpu): cudaMalloc memory, a stream with cuBLAS/cuDNN "
            "handles per place, pinned staging for copies, and CUDA kernels of the in-tree "
            "op packs");
