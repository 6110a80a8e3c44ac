// sim_device.cc: a test-only device plugin. Place kind "sim" (two devices) with its own memory
// pool (host memory the core must treat as device memory: every transfer is a counted copy),
// kernels for a few ops (elementwise_add, relu, scale; and an MLP's training ops in
// sim_mlp_kernels.cc), float32<->float64 casts (but no float16
// ones, and no layout transforms: the paths tests expect to fail), and ops that make and need
// particular layouts (sim.to_nhwc, sim.nchw_only).
//
// It behaves like a real accelerator, so the core's synchronisation is tested: kernels and copies
// run asynchronously on a per-device stream (a worker thread; TIDE_SIM_MAX_DELAY_US adds a random
// delay before each task, TIDE_SIM_KERNEL_US / TIDE_SIM_COPY_US a device time to each kernel /
// copy), the allocator is checked (guard bytes after each block, unknown and double frees counted),
// and frees are ordered on the stream. TIDE_SIM_HOST_ACCESSIBLE=1 declares the memory
// host-accessible (the core then reads it directly, after synchronising). It has events and
// "pinned" host memory whose copies read the source when they run, not when queued
// (TIDE_SIM_NO_PINNED=1: none), so a staging buffer reused too early sends the wrong bytes.
// TIDE_SIM_LIFECYCLE_LOG=<file>: at finalize, the counters are written there. It publishes a
// collective library ("tide.collective", sim_collective.h: Gloo behind the stream), unless
// TIDE_SIM_NO_COLLECTIVE=1.
//
// Device contract (TideDeviceDef.contract): TIDE_SIM_CONTRACT=<n> declares contract n instead
// of the header's (0: none, as a plugin built against the earlier 1.0). Planted contract
// violations the conformance kit must report (TIDE_SIM_PLANT_BUG, comma-separated):
// copy_reads_late, a host-to-device copy from pageable memory reads its source when it runs,
// not before it returns; free_at_once, a free releases the block at once instead of in stream
// order (the block is poisoned at once, as if another user took it, and given back on the
// stream, so the test process reads no unmapped memory).
//
// Profiling and memory statistics (issue 33): event timing on the sim clock (sim_stream.h), a
// tracer recording each kernel (under its op's name), copy and memset the streams run (one stream
// per device), and its pool's figures as memory_stats. Planted: elapsed_negative, event timing
// answers a negative time. Streams with roles (issue 33): a copy stream of its own per device
// (context_create_role; TIDE_SIM_NO_ROLE_CONTEXTS=1 offers none), traced on its own row; planted:
// wait_ignored, context_wait_event waits for nothing. Capture and replay (issue 34,
// TideDeviceGraphs; TIDE_SIM_NO_GRAPHS=1: none); planted: graph_once, a graph runs at its first
// launch only. Host functions (launch_host_func; TIDE_SIM_NO_HOST_FUNC=1: none); planted:
// host_func_early, a host function runs when queued. Subgraph claim-and-compile and a program pass
// (issue 33), with TIDE_SIM_COMPILE=1: see sim_compiler.h, with its planted faults. Vendor
// mistakes the core must survive: context_fails, context creation throws; free_throws, a free
// throws (after freeing), an exception from an entry that returns no status.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/scale.hpp>
#include <tide/plugin.hpp>
#include <vector>

#include "sim_collective.h"
#include "sim_compiler.h"
#include "sim_context.h"
#include "sim_kernels.h"
#include "sim_stream.h"

namespace {

std::atomic<uint64_t> g_h2d{0}, g_d2h{0}, g_d2d{0}, g_allocs{0}, g_frees{0};
std::atomic<uint64_t> g_h2d_bytes{0}, g_d2h_bytes{0}, g_ctx_created{0}, g_ctx_destroyed{0};
std::atomic<uint64_t> g_finalized{0}, g_alloc_errors{0}, g_peer{0};
std::atomic<uint64_t> g_pinned_allocs{0}, g_pinned_frees{0}, g_memsets{0}, g_event_records{0};
std::atomic<uint64_t> g_event_waits{0}, g_wrong_kind{0};
std::atomic<uint64_t> g_syncs{0}, g_event_syncs{0};
std::atomic<uint64_t> g_role_contexts{0};
std::atomic<int64_t> g_role_priority{0};
std::atomic<uint64_t> g_kernel_launches{0}, g_kernels_run{0};
std::atomic<uint64_t> g_captures{0}, g_graph_launches{0};
std::atomic<uint64_t> g_host_funcs{0}, g_host_funcs_run{0};

constexpr size_t kGuard = 64;  // guard bytes after each block
constexpr unsigned char kGuardByte = 0xA5;

unsigned EnvUnsigned(const char* name, unsigned fallback = 0) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : fallback;
}

// Planted bugs the conformance kit must report (test_conformance.py): TIDE_SIM_PLANT_BUG is a
// comma-separated list; see the kernels and the device below for what each does.
bool PlantedBug(const char* bug) {
  const char* v = std::getenv("TIDE_SIM_PLANT_BUG");
  if (!v) return false;
  const size_t n = std::strlen(bug);
  for (const char* p = v; *p;) {
    const char* end = std::strchr(p, ',');
    const size_t len = end ? size_t(end - p) : std::strlen(p);
    if (len == n && std::strncmp(p, bug, n) == 0) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
}

// The per-device state a context points at.
struct SimContext {
  int32_t device;
  int32_t role;  // TideStreamRole: compute (context_create) or a role context's
  SimStream stream;
  SimStream comm_stream;  // the collective library's communication stream
  std::unique_ptr<tide::CollectiveLibrary> collective;  // or null; goes before the streams
  SimContext(int32_t d, unsigned max_delay, int32_t r = TIDE_STREAM_COMPUTE)
      : device(d),
        role(r),
        stream(max_delay, 1234u + unsigned(d) + 101u * unsigned(r), d, r),
        comm_stream(max_delay, 4321u + unsigned(d), d, TIDE_STREAM_COMMUNICATION),
        collective(r == TIDE_STREAM_COMPUTE ? CreateSimCollective(&stream, &comm_stream)
                                            : nullptr) {}
  // Both streams; the first error.
  std::string Synchronize() {
    std::string error = stream.Synchronize();
    std::string comm = comm_stream.Synchronize();
    return error.empty() ? comm : error;
  }
};
// Each device's context while it lives (frees are queued on its stream).
std::atomic<SimContext*> g_contexts[2];

// Host memory handed out as device memory, with guard bytes checked on free.
class CheckedAllocator {
 public:
  void* Alloc(size_t size) {
    size_t padded = (size + kGuard + 63) / 64 * 64;
    auto* p = static_cast<unsigned char*>(std::aligned_alloc(64, padded));
    if (!p) TIDE_THROW(TIDE_RESOURCE_EXHAUSTED, "sim: out of memory for ", size, " bytes");
    std::memset(p + size, kGuardByte, kGuard);
    std::lock_guard<std::mutex> lock(mu_);
    sizes_[p] = size;
    in_use_ += size, reserved_ += padded;
    peak_ = std::max(peak_, in_use_);
    return p;
  }
  // The pool's figures (memory_stats): bytes handed out, bytes taken with padding and guards, the
  // most ever handed out (both sim devices share the pool).
  void Stats(TideMemoryStats* s) {
    std::lock_guard<std::mutex> lock(mu_);
    s->bytes_in_use = in_use_, s->bytes_reserved = reserved_, s->peak_bytes_in_use = peak_;
  }
  void Free(void* ptr, size_t size) {
    auto* p = static_cast<unsigned char*>(ptr);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sizes_.find(p);
      if (it == sizes_.end()) {
        ++g_alloc_errors;
        std::fprintf(stderr, "sim: free of %p, which is not a live block\n", ptr);
        return;
      }
      if (it->second != size) {
        ++g_alloc_errors;
        std::fprintf(stderr, "sim: free of %p with size %zu, allocated with %zu\n", ptr, size,
                     it->second);
      }
      for (size_t i = 0; i < kGuard; ++i)
        if (p[it->second + i] != kGuardByte) {
          ++g_alloc_errors;
          std::fprintf(stderr, "sim: a write past the end of the %zu-byte block at %p\n",
                       it->second, ptr);
          break;
        }
      in_use_ -= it->second;
      reserved_ -= (it->second + kGuard + 63) / 64 * 64;
      sizes_.erase(it);
    }
    std::free(p);
  }
  uint64_t live() {
    std::lock_guard<std::mutex> lock(mu_);
    return sizes_.size();
  }
  // True when [p, p + size) lies in one live block.
  bool Owns(const void* ptr, size_t size) {
    auto* p = static_cast<unsigned char*>(const_cast<void*>(ptr));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.upper_bound(p);
    if (it == sizes_.begin()) return false;
    --it;
    return p + size <= it->first + it->second;
  }

 private:
  std::mutex mu_;
  std::map<unsigned char*, size_t> sizes_;  // ordered: Owns finds the block holding a pointer
  uint64_t in_use_ = 0, reserved_ = 0, peak_ = 0;
};
CheckedAllocator g_memory;

TideSimCounters Snapshot() {
  TideSimCounters c{};
  c.struct_size = sizeof(c);
  c.host_to_device = g_h2d, c.device_to_host = g_d2h, c.device_to_device = g_d2d;
  c.allocs = g_allocs, c.frees = g_frees;
  c.host_to_device_bytes = g_h2d_bytes, c.device_to_host_bytes = g_d2h_bytes;
  c.contexts_created = g_ctx_created, c.contexts_destroyed = g_ctx_destroyed;
  c.finalized = g_finalized, c.allocator_errors = g_alloc_errors;
  c.live_blocks = g_memory.live();
  c.peer = g_peer;
  c.pinned_allocs = g_pinned_allocs, c.pinned_frees = g_pinned_frees, c.memsets = g_memsets;
  c.event_records = g_event_records, c.event_waits = g_event_waits;
  c.wrong_kind_copies = g_wrong_kind;
  c.synchronizes = g_syncs, c.event_synchronizes = g_event_syncs;
  c.kernel_launches = g_kernel_launches;
  c.compiles = SimCompileStats().compiles, c.compile_declines = SimCompileStats().declines;
  c.fused_launches = SimCompileStats().fused_launches;
  c.compiled_releases = SimCompileStats().releases;
  c.role_contexts = g_role_contexts, c.role_priority = g_role_priority;
  c.captures = g_captures, c.graph_launches = g_graph_launches;
  c.host_funcs = g_host_funcs, c.host_funcs_run = g_host_funcs_run;
  c.kernels_run = g_kernels_run;
  return c;
}

class SimDevice : public tide::Device {
 public:
  SimDevice()
      : host_accessible_(EnvUnsigned("TIDE_SIM_HOST_ACCESSIBLE") != 0),
        max_delay_us_(EnvUnsigned("TIDE_SIM_MAX_DELAY_US")),
        contract_(EnvUnsigned("TIDE_SIM_CONTRACT", TIDE_DEVICE_CONTRACT)),
        copy_reads_late_(PlantedBug("copy_reads_late")),
        free_at_once_(PlantedBug("free_at_once")),
        elapsed_negative_(PlantedBug("elapsed_negative")),
        wait_ignored_(PlantedBug("wait_ignored")),
        graph_once_(PlantedBug("graph_once")),
        host_func_early_(PlantedBug("host_func_early")) {}
  const char* kind() const override { return "sim"; }
  uint32_t Contract() const override { return contract_; }
  bool host_accessible() const override { return host_accessible_; }
  int32_t Count() override { return 2; }
  void* Alloc(int32_t, size_t size) override {
    ++g_allocs;
    return g_memory.Alloc(size);
  }
  void Free(int32_t device, void* p, size_t size) override {
    ++g_frees;
    SimContext* c = g_contexts[device].load();
    // Planted: the block is someone else's at once (poisoned: NaN for floats), whatever queued
    // work still reads it.
    if (free_at_once_) std::memset(p, 0xFF, size);
    // Work queued before the free may still use the block: free it in stream order.
    if (c)  // never recorded by a capture: the core keeps what a capture uses alive
      c->stream.EnqueueLive([p, size] { g_memory.Free(p, size); });
    else
      g_memory.Free(p, size);
    if (PlantedBug("free_throws")) TIDE_THROW(TIDE_INTERNAL, "sim: planted free failure");
  }
  void MemoryInfo(int32_t, size_t* total, size_t* available) override {
    *total = *available = size_t(1) << 30;  // 1 GiB per sim device
  }
  void* CreateContext(int32_t device) override {
    if (PlantedBug("context_fails")) TIDE_THROW(TIDE_UNAVAILABLE, "sim: planted: no stream");
    ++g_ctx_created;
    auto* c = new SimContext(device, max_delay_us_);
    g_contexts[device].store(c);
    return c;
  }
  // Streams with roles (issue 33): a copy stream of its own, traced on its own row.
  bool HasRoleContexts() const override { return EnvUnsigned("TIDE_SIM_NO_ROLE_CONTEXTS") == 0; }
  void* CreateRoleContext(int32_t device, int32_t role, int32_t priority) override {
    TIDE_CHECK(role > TIDE_STREAM_COMPUTE && role <= TIDE_STREAM_COMMUNICATION, "sim: role ", role,
               " is no role context's");
    ++g_role_contexts, ++g_ctx_created;  // contexts_created counts every kind, as destroyed does
    g_role_priority = priority;
    return new SimContext(device, max_delay_us_, role);
  }
  void DestroyContext(void* ctx) override {
    auto* c = static_cast<SimContext*>(ctx);
    c->Synchronize();
    if (c->role == TIDE_STREAM_COMPUTE) g_contexts[c->device].store(nullptr);
    delete c;
    ++g_ctx_destroyed;
  }
  void Synchronize(void* ctx) override {
    ++g_syncs;
    RefuseWhileCapturing(ctx, "synchronize");
    std::string error = static_cast<SimContext*>(ctx)->Synchronize();
    if (!error.empty()) TIDE_THROW(TIDE_INTERNAL, "sim: a queued kernel failed: ", error);
  }
  void Copy(void* ctx, TideCopyKind kind, void* dst, const void* src, size_t size) override {
    auto* c = static_cast<SimContext*>(ctx);
    // The kind says which side is this device's memory (a sim block): check the core's word.
    const bool src_sim = g_memory.Owns(src, size), dst_sim = g_memory.Owns(dst, size);
    if (src_sim != (kind != TIDE_COPY_HOST_TO_DEVICE) ||
        dst_sim != (kind != TIDE_COPY_DEVICE_TO_HOST)) {
      ++g_wrong_kind;
      std::fprintf(stderr, "sim: a copy of kind %d from %s memory to %s memory\n", int(kind),
                   src_sim ? "sim" : "host", dst_sim ? "sim" : "host");
    }
    if (kind != TIDE_COPY_DEVICE_TO_DEVICE) RefuseWhileCapturing(ctx, "a copy to or from the host");
    if (kind == TIDE_COPY_HOST_TO_DEVICE) {
      ++g_h2d;
      g_h2d_bytes += size;
      if (IsPinned(src) || copy_reads_late_) {  // read when the copy runs, as a DMA engine would
        c->stream.EnqueueTraced([dst, src, size] { std::memcpy(dst, src, size); }, "memcpy HtoD",
                                TIDE_TRACE_COPY, size);
        return;
      }
      // The host buffer may change as soon as this returns (pageable memory): take it now.
      auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                        static_cast<const char*>(src) + size);
      c->stream.EnqueueTraced([dst, staged] { std::memcpy(dst, staged->data(), staged->size()); },
                              "memcpy HtoD", TIDE_TRACE_COPY, size);
      return;
    }
    if (kind == TIDE_COPY_DEVICE_TO_HOST) {
      ++g_d2h;
      g_d2h_bytes += size;
    } else {
      ++g_d2d;
    }
    c->stream.EnqueueTraced([dst, src, size] { std::memcpy(dst, src, size); },
                            kind == TIDE_COPY_DEVICE_TO_HOST ? "memcpy DtoH" : "memcpy DtoD",
                            TIDE_TRACE_COPY, size);
  }
  bool IsPinned(const void* p) {
    std::lock_guard<std::mutex> lock(pinned_mu_);
    for (const auto& b : pinned_)
      if (p >= b.first && p < b.first + b.second) return true;
    return false;
  }
  bool HasPeerCopy() const override { return true; }
  void CopyPeer(void* ctx, void* dst, int32_t src_device, const void* src, size_t size) override {
    TIDE_CHECK(src_device >= 0 && src_device < 2, "sim: no device ", src_device);
    ++g_peer;
    static_cast<SimContext*>(ctx)->stream.EnqueueTraced(
        [dst, src, size] { std::memcpy(dst, src, size); }, "memcpy PtoP", TIDE_TRACE_COPY, size);
  }
  bool HasProperties() const override { return true; }
  void Properties(int32_t, TideDeviceProperties* p) override {
    p->name = "Tide sim device (test only)";
    p->vendor = "Tide";
    p->driver_version = "0.1";
    p->compute_capability = "sim-1";
    p->total_memory = size_t(1) << 30;
    if (TIDE_HAS_FIELD(p, TideDeviceProperties, multiprocessor_count)) p->multiprocessor_count = 1;
  }
  int32_t DLPackDeviceType() const override { return 12 /* kDLExtDev */; }
  bool HasMemset() const override { return true; }
  void Memset(void* ctx, void* dst, int32_t value, size_t size) override {
    ++g_memsets;
    static_cast<SimContext*>(ctx)->stream.EnqueueTraced([=] { std::memset(dst, value, size); },
                                                        "memset", TIDE_TRACE_OTHER, size);
  }
  // "Pinned" memory: host memory the copies read when they run (not when queued), so a core that
  // reuses a staging buffer before its copy ran sends the wrong bytes.
  bool HasHostAlloc() const override { return EnvUnsigned("TIDE_SIM_NO_PINNED") == 0; }
  void* HostAlloc(size_t size) override {
    ++g_pinned_allocs;
    void* p = std::malloc(size);
    if (!p) TIDE_THROW(TIDE_RESOURCE_EXHAUSTED, "sim: out of pinned memory for ", size, " bytes");
    std::lock_guard<std::mutex> lock(pinned_mu_);
    pinned_.push_back({static_cast<char*>(p), size});
    return p;
  }
  void HostFree(void* p) override {
    ++g_pinned_frees;
    std::lock_guard<std::mutex> lock(pinned_mu_);
    for (auto it = pinned_.begin(); it != pinned_.end(); ++it)
      if (it->first == p) {
        pinned_.erase(it);
        std::free(p);
        return;
      }
    ++g_alloc_errors;
  }
  bool HasEvents() const override { return true; }
  void* CreateEvent(void*) override { return new SimEvent; }
  void DestroyEvent(void* e) override { delete static_cast<SimEvent*>(e); }
  void RecordEvent(void* ctx, void* e) override {
    ++g_event_records;
    RefuseWhileCapturing(ctx, "an event record");
    static_cast<SimContext*>(ctx)->stream.Record(static_cast<SimEvent*>(e));
  }
  bool QueryEvent(void* e) override {
    auto* ev = static_cast<SimEvent*>(e);
    std::lock_guard<std::mutex> lock(ev->mu);
    return ev->reached >= ev->recorded;
  }
  void SynchronizeEvent(void* e) override {
    ++g_event_syncs;
    auto* ev = static_cast<SimEvent*>(e);
    uint64_t target;
    {
      std::lock_guard<std::mutex> lock(ev->mu);
      target = ev->recorded;
    }
    ev->WaitFor(target);
  }
  void WaitEvent(void* ctx, void* e) override {
    ++g_event_waits;
    if (wait_ignored_) return;  // planted: later work does not wait
    RefuseWhileCapturing(ctx, "an event wait");
    static_cast<SimContext*>(ctx)->stream.Wait(static_cast<SimEvent*>(e));
  }

  // --- Capture and replay (issue 34; TideDeviceGraphs) ---
  // The compute stream records the tasks queued between BeginCapture and EndCapture, and a
  // launch queues them again. As CUDA, it refuses what a graph cannot hold while capturing (host
  // copies, events, synchronize) and then fails the capture. TIDE_SIM_NO_GRAPHS=1 offers none.
  // Planted: graph_once, a graph runs at its first launch only (later launches queue nothing).
  struct SimGraph {
    std::vector<SimStream::Task> tasks;
    bool launched = false;
  };
  bool HasGraphs() const override { return EnvUnsigned("TIDE_SIM_NO_GRAPHS") == 0; }
  void BeginCapture(void* ctx) override {
    ++g_captures;
    static_cast<SimContext*>(ctx)->stream.BeginCapture();
  }
  void* EndCapture(void* ctx) override {
    try {
      return new SimGraph{static_cast<SimContext*>(ctx)->stream.EndCapture()};
    } catch (const std::runtime_error& e) {
      TIDE_THROW(TIDE_FAILED_PRECONDITION, e.what());
    }
  }
  void LaunchGraph(void* ctx, void* graph) override {
    ++g_graph_launches;
    RefuseWhileCapturing(ctx, "a graph launch");
    auto* g = static_cast<SimGraph*>(graph);
    if (!(graph_once_ && g->launched)) static_cast<SimContext*>(ctx)->stream.Launch(g->tasks);
    g->launched = true;
  }
  void DestroyGraph(void* graph) override { delete static_cast<SimGraph*>(graph); }
  // --- Host functions (issue 33; launch_host_func) ---
  // Queued on the stream and called by its worker when it gets there (after the work queued
  // before; the work queued after waits for it). TIDE_SIM_NO_HOST_FUNC=1 offers none. Planted:
  // host_func_early, the function is called at once, before the work queued ahead of it ran.
  bool HasHostFunc() const override { return EnvUnsigned("TIDE_SIM_NO_HOST_FUNC") == 0; }
  void LaunchHostFunc(void* ctx, void (*fn)(void*), void* data) override {
    ++g_host_funcs;
    RefuseWhileCapturing(ctx, "a host function");
    auto run = [fn, data] {
      ++g_host_funcs_run;
      fn(data);
    };
    if (host_func_early_)
      run();
    else
      static_cast<SimContext*>(ctx)->stream.Enqueue(run);
  }
  // Throws (and spoils the capture) when ctx's stream is capturing.
  static void RefuseWhileCapturing(void* ctx, const char* what) {
    auto* c = static_cast<SimContext*>(ctx);
    if (c->stream.FailCapture(std::string(what) + " while capturing"))
      TIDE_THROW(TIDE_FAILED_PRECONDITION, "sim: ", what,
                 " while the stream is capturing (a graph cannot hold it)");
  }
  // --- Profiling and memory statistics (issue 33) ---
  // Event timing on the sim clock: when the stream reached each marker.
  bool HasEventTiming() const override { return true; }
  float EventElapsedMs(void* start, void* end) override {
    auto when = [](void* e, const char* which) {
      auto* ev = static_cast<SimEvent*>(e);
      std::lock_guard<std::mutex> lock(ev->mu);
      TIDE_CHECK(ev->recorded > 0 && ev->reached >= ev->recorded, "sim: the ", which, " event is ",
                 ev->recorded ? "not done yet" : "not recorded");
      return ev->reached_ns;
    };
    const uint64_t a = when(start, "start"), b = when(end, "end");
    TIDE_CHECK(b >= a, "sim: the end event was reached before the start event");
    const float ms = float(double(b - a) / 1e6);
    return elapsed_negative_ ? -ms - 1.0f : ms;  // planted: a negative time
  }
  bool HasMemoryStats() const override { return true; }
  void MemoryStats(int32_t, TideMemoryStats* s) override {
    g_memory.Stats(s);
    if (TIDE_HAS_FIELD(s, TideMemoryStats, bytes_limit)) s->bytes_limit = size_t(1) << 30;
  }
  // The tracer: the streams record what they run while it is on (sim_stream.h).
  bool HasTracer() const override { return true; }
  void TraceStart() override {
    std::lock_guard<std::mutex> lock(SimTrace().mu);
    SimTrace().records.clear();
    SimTrace().on = true;
  }
  void TraceStop() override { SimTrace().on = false; }
  void TraceCollect(const TraceEmitter& emit) override {
    std::vector<SimTraceRecord> records;
    {
      std::lock_guard<std::mutex> lock(SimTrace().mu);
      records.swap(SimTrace().records);
    }
    for (const SimTraceRecord& r : records)
      emit(r.name.c_str(), r.device, r.stream, r.begin_ns, r.end_ns, r.bytes, r.kind);
  }
  uint64_t TraceNowNs() override { return SimClockNs(); }

  // --- Subgraph claim-and-compile (issue 33; sim_compiler.h) ---
  bool HasCompiler() const override { return EnvUnsigned("TIDE_SIM_COMPILE") != 0; }
  std::vector<SubgraphGroup> GetCapability(int32_t, const std::string& program,
                                           int32_t block_idx) override {
    return SimCapability(program, block_idx);
  }
  void* Compile(const TideCompileRequest& request) override { return SimCompile(request); }
  void RunCompiled(void* compiled, void* ctx, const std::vector<tide::Tensor>& inputs,
                   std::vector<tide::Tensor>& outputs) override {
    ++g_kernel_launches;
    SimRunCompiled(compiled, static_cast<SimContext*>(ctx)->stream, inputs, outputs);
  }
  void ReleaseCompiled(void* compiled) override { SimReleaseCompiled(compiled); }

  const void* Extension(void* ctx, const char* name) override {
    if (std::strcmp(name, TIDE_SIM_CONTEXT_EXTENSION) == 0) {
      static thread_local TideSimCounters counters;
      counters = Snapshot();
      return &counters;
    }
    if (std::strcmp(name, "tide.sim.stream") == 0) return &static_cast<SimContext*>(ctx)->stream;
    if (std::strcmp(name, TIDE_COLLECTIVE_EXTENSION) == 0) {
      const auto& library = static_cast<SimContext*>(ctx)->collective;
      return library ? library->def() : nullptr;
    }
    return nullptr;
  }
  void Finalize() override {
    ++g_finalized;
    if (const char* path = std::getenv("TIDE_SIM_LIFECYCLE_LOG")) {
      TideSimCounters c = Snapshot();
      if (FILE* f = std::fopen(path, "w")) {
        std::fprintf(f,
                     "contexts_created=%llu contexts_destroyed=%llu finalized=%llu "
                     "allocator_errors=%llu pinned_allocs=%llu pinned_frees=%llu allocs=%llu "
                     "frees=%llu live_blocks=%llu\n",
                     (unsigned long long)c.contexts_created,
                     (unsigned long long)c.contexts_destroyed, (unsigned long long)c.finalized,
                     (unsigned long long)c.allocator_errors, (unsigned long long)c.pinned_allocs,
                     (unsigned long long)c.pinned_frees, (unsigned long long)c.allocs,
                     (unsigned long long)c.frees, (unsigned long long)c.live_blocks);
        std::fclose(f);
      }
    }
  }

 private:
  bool host_accessible_;
  unsigned max_delay_us_;
  uint32_t contract_;
  bool copy_reads_late_, free_at_once_, elapsed_negative_, wait_ignored_, graph_once_;
  bool host_func_early_;
  std::mutex pinned_mu_;
  std::vector<std::pair<char*, size_t>> pinned_;
};

// Planted kernel bugs: TIDE_SIM_PLANT_BUG=scale, the scale kernel ignores `bias`; =relu_crash,
// the relu kernel kills the process.

// The kernels read their inputs' pointers now and compute on the stream, later.
template <typename T>
void Add(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  CheckOnSim(ctx, y, "Y");
  // Fluid's broadcast, from the semantics header every device shares.
  const tide::ops::Broadcast bc =
      tide::ops::GetBroadcast(ctx.op_type(), x.dims(), y.dims(), ctx.Attr<int32_t>("axis"), true);
  const T* a = x.data<T>();
  const T* b = y.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  const int64_t n = x.numel();
  StreamOf(ctx).Enqueue([=] {
    if (bc.same) {
      for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
    } else if (bc.general) {
      for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[bc.index(i)];
    } else {
      for (int64_t i = 0; i < bc.pre; ++i)
        for (int64_t j = 0; j < bc.n; ++j)
          for (int64_t k = 0, base = (i * bc.n + j) * bc.post; k < bc.post; ++k)
            o[base + k] = a[base + k] + b[j];
    }
  });
}

template <typename T>
void Relu(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  if (PlantedBug("relu_crash")) std::abort();
  const T* a = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  int64_t n = x.numel();
  StreamOf(ctx).Enqueue([=] {
    for (int64_t i = 0; i < n; ++i) o[i] = a[i] > 0 ? a[i] : T(0);
  });
}

template <typename T>
void Scale(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  // ScaleTensor is a host input (registered below): the core hands it over on the host, copied
  // down after the sim op that wrote it, and the factor is read here, before the work is queued.
  if (ctx.HasInput("ScaleTensor")) CheckOnHost(ctx, ctx.Input("ScaleTensor"), "ScaleTensor");
  T s = static_cast<T>(tide::ops::ScaleFactor(ctx)), b = static_cast<T>(ctx.Attr<float>("bias"));
  if (!ctx.Attr<bool>("bias_after_scale")) b *= s;  // scale * (x + bias)
  if (PlantedBug("scale")) b = T(0);
  const T* a = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  int64_t n = x.numel();
  StreamOf(ctx).Enqueue([=] {
    for (int64_t i = 0; i < n; ++i) o[i] = a[i] * s + b;
  });
}

// sim.fail: queues a kernel that fails on the stream (an asynchronous device fault).
template <typename T>
void Fail(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  out.mutable_data<T>(x.dims(), ctx.place());
  StreamOf(ctx).Enqueue([] { throw std::runtime_error("illegal address (sim.fail)"); });
}

// sim.busy: Out = X, after the stream spends `us` microseconds (a kernel of known device time,
// for the profiler's tests).
template <typename T>
void Busy(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  const T* a = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  const int64_t n = x.numel();
  const int32_t us = ctx.Attr<int32_t>("us");
  StreamOf(ctx).Enqueue([=] {
    std::this_thread::sleep_for(std::chrono::microseconds(us));
    std::memcpy(o, a, size_t(n) * sizeof(T));
  });
}

// Out = X with its layout marked NHWC (the data is reinterpreted, as a test fixture).
template <typename T>
void ToNhwc(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  out.CopyFrom(x, ctx.place(), ctx.device_context());
  out.set_layout(TIDE_LAYOUT_NHWC);
}

// Out = X, for kernels registered NCHW-only: the core must hand them NCHW data.
template <typename T>
void NchwOnly(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  TIDE_CHECK(x.layout() != TIDE_LAYOUT_NHWC, "sim.nchw_only got NHWC data");
  out.CopyFrom(x, ctx.place(), ctx.device_context());
}

template <typename From, typename To>
void Cast(const tide::Tensor& in, tide::Tensor& out, TideDeviceContext* dc) {
  const From* a = in.data<From>();
  To* o = out.mutable_data<To>(in.place());
  int64_t n = in.numel();
  const void* s = tide::Host().DeviceContext_Extension(dc, "tide.sim.stream");
  TIDE_CHECK(s != nullptr, "sim cast: no sim context");
  const_cast<SimStream*>(static_cast<const SimStream*>(s))->Enqueue([=] {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<To>(a[i]);
  });
}

// sim.state_probe (tests/python/test_kernel_state.py): Out = [the runs this op's kernel state
// has counted, the probe states freed so far in the process]. The sim kernel declines an X of
// two elements, so the cpu kernel runs that op from then on, with a state of its own.
std::atomic<int64_t> g_probe_states_freed{0};
struct ProbeState {
  int64_t runs = 0;
  ~ProbeState() { ++g_probe_states_freed; }
};

template <typename T>
void StateProbe(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const bool on_sim = ctx.place().c().kind == tide::Place("sim", 0).c().kind;
  if (on_sim && x.numel() == 2)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "sim.state_probe: the sim kernel declines an X of 2 elements");
  ProbeState* state = ctx.State<ProbeState>();
  if (!state) state = ctx.SetState(std::make_unique<ProbeState>());
  ++state->runs;
  tide::OwnedTensor host;
  host.Resize({2});
  float* h = host.mutable_data<float>(tide::Place("cpu", 0));
  h[0] = static_cast<float>(state->runs);
  h[1] = static_cast<float>(g_probe_states_freed.load());
  out.CopyFrom(host, ctx.place(), ctx.device_context());
  if (on_sim) tide::ThrowIfError(tide::Host().DeviceContext_Synchronize(ctx.device_context()));
}

}  // namespace

bool SimPlantedBug(const char* bug) { return PlantedBug(bug); }
SimCompileCounters& SimCompileStats() {
  static SimCompileCounters counters;
  return counters;
}
void CountSimKernelLaunch() { ++g_kernel_launches; }
void CountSimKernelRun() { ++g_kernels_run; }

extern "C" __attribute__((visibility("default"))) TideSimCounters tide_sim_counters(void) {
  return Snapshot();
}

// The plugin's own finalize (after the device's): noted in the lifecycle log, with whether the
// device was finalized first, as the core promises.
TIDE_ON_FINALIZE([] {
  if (const char* path = std::getenv("TIDE_SIM_LIFECYCLE_LOG"))
    if (FILE* f = std::fopen(path, "a")) {
      std::fprintf(f, "plugin_finalized=1 device_finalized_before=%llu\n",
                   (unsigned long long)g_finalized.load());
      std::fclose(f);
    }
});

TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.AddDevice(std::make_unique<SimDevice>());
  r.DataTypeCast("sim", TIDE_FP32, TIDE_FP64, &Cast<float, double>);
  r.DataTypeCast("sim", TIDE_FP64, TIDE_FP32, &Cast<double, float>);
  if (EnvUnsigned("TIDE_SIM_COMPILE") != 0)
    r.AddProgramPass("sim.drop_identity_scale", "sim", &SimDropIdentityScale);
});
TIDE_REGISTER_KERNEL("elementwise_add", "sim", Add, float, double);
TIDE_REGISTER_KERNEL("relu", "sim", Relu, float, double);
TIDE_REGISTER_KERNEL_HOST_INPUTS("scale", "sim", TIDE_HOST_INPUTS("ScaleTensor"), Scale, float,
                                 double);
TIDE_REGISTER_OP(tide::OpSchema("sim.to_nhwc")
                     .Input("X")
                     .Output("Out")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_OP(tide::OpSchema("sim.nchw_only")
                     .Input("X")
                     .Output("Out")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_OP(tide::OpSchema("sim.fail")
                     .Input("X")
                     .Output("Out")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sim.fail", "sim", Fail, float);
TIDE_REGISTER_OP(tide::OpSchema("sim.busy")
                     .Input("X")
                     .Output("Out")
                     .Attr("us", tide::AttrValue(int32_t(1000)), "device time the kernel takes")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sim.busy", "sim", Busy, float);
TIDE_REGISTER_OP(tide::OpSchema("sim.no_kernels")
                     .Input("X")
                     .Output("Out")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_OP(tide::OpSchema("sim.state_probe")
                     .Input("X")
                     .Output("Out")
                     .NoGradient()
                     .InferShape([](tide::InferShapeContext& ctx) {
                       ctx.SetOutputDims("Out", {2});
                       ctx.SetOutputDataType("Out", TIDE_FP32);
                     }));
TIDE_REGISTER_KERNEL("sim.state_probe", "sim", StateProbe, float);
TIDE_REGISTER_KERNEL("sim.state_probe", "cpu", StateProbe, float);
TIDE_REGISTER_KERNEL("sim.to_nhwc", "sim", ToNhwc, float);
TIDE_REGISTER_KERNEL("sim.to_nhwc", "cpu", ToNhwc, float);
TIDE_REGISTER_KERNEL_EX("sim.nchw_only", "sim", TIDE_LAYOUT_NCHW, "plain", 0, NchwOnly, float);
TIDE_REGISTER_KERNEL_EX("sim.nchw_only", "cpu", TIDE_LAYOUT_NCHW, "plain", 0, NchwOnly, float);
TIDE_PLUGIN_REQUIRES("device_sim", "0.1.0", "test-only device: counted copies, a few kernels",
                     "device_cpu");
