// tide/plugin/device.hpp: for device vendors: tide::Device, a place kind's memory, contexts
// (streams), copies and events, adapted to the C table TideDeviceDef. Which callbacks the core
// may call concurrently is written at TideDeviceDef in tide/plugin_api.h.
#ifndef TIDE_PLUGIN_DEVICE_HPP_
#define TIDE_PLUGIN_DEVICE_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tide/plugin/host.hpp>
#include <tide/plugin/tensor.hpp>
#include <vector>

namespace tide {

namespace detail {
// For the device entries that return no status (free, destroy, count, extension): an exception
// must not cross the C ABI, and the core has no way to hear it, so it is logged under the
// device's kind and the entry answers `fallback`.
template <typename R, typename F>
R Swallowed(const char* kind, const char* entry, R fallback, F&& fn) noexcept {
  std::string why;
  try {
    return fn();
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "an unknown C++ exception";
  }
  try {
    Log(TIDE_LOG_ERROR, kind,
        std::string("device '") + kind + "': " + entry + " threw (" + why +
            "); this entry must not throw, so the core goes on without it");
  } catch (...) {
  }
  return fallback;
}
}  // namespace detail

class Device {
 public:
  virtual ~Device() = default;
  virtual const char* kind() const = 0;
  virtual bool host_accessible() const { return false; }
  virtual size_t alignment() const { return 64; }
  virtual int32_t Count() = 0;
  // Why Count() is 0, for the error of a place that does not exist (TideDeviceDef.
  // unavailable_reason): e.g. "no OpenCL platform (is an ICD installed?)". nullptr or "" when
  // there is nothing to say. The string is the device's and must stay valid while the process
  // runs (a member set at discovery); any thread, cheap, like Count().
  virtual const char* UnavailableReason() const { return nullptr; }
  virtual void* Alloc(int32_t device, size_t size) = 0;  // throw tide::Error on failure
  virtual void Free(int32_t device, void* ptr, size_t size) = 0;
  virtual void MemoryInfo(int32_t device, size_t* total, size_t* available) = 0;
  virtual void* CreateContext(int32_t device) = 0;
  virtual void DestroyContext(void* ctx) = 0;
  virtual void Synchronize(void* ctx) = 0;
  virtual void Copy(void* ctx, TideCopyKind kind, void* dst, const void* src, size_t size) = 0;
  virtual const void* Extension(void* /*ctx*/, const char* /*name*/) { return nullptr; }
  // Once at process exit, after every context was destroyed (see TideDeviceDef.finalize).
  virtual void Finalize() {}
  // The device contract this device implements (TideDeviceDef.contract): the header's, whose
  // rules Copy and Free must follow (a host-to-device Copy has taken the source's bytes when it
  // returns; Free releases in stream order). Return an older one only for a device that follows
  // that one's rules; the core then synchronises for it.
  virtual uint32_t Contract() const { return TIDE_DEVICE_CONTRACT; }
  // Defaults of fraction_of_<kind>_memory_to_use / initial_<kind>_memory_in_mb; 0: 1.0 / 64.
  virtual double DefaultMemoryFraction() const { return 0; }
  virtual uint64_t DefaultInitialMemoryMb() const { return 0; }
  // Peer copies between two devices of this kind (see TideDeviceDef.copy_peer): a device that
  // has them returns true from HasPeerCopy and implements CopyPeer.
  virtual bool HasPeerCopy() const { return false; }
  virtual void CopyPeer(void* /*ctx*/, void* /*dst*/, int32_t /*src_device*/, const void* /*src*/,
                        size_t /*size*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no peer copies");
  }
  // Optional entries (see TideDeviceDef): a device that has one returns true from its Has*.
  // Properties: fill the fields props->struct_size covers (TIDE_HAS_FIELD).
  virtual bool HasProperties() const { return false; }
  virtual void Properties(int32_t /*device*/, TideDeviceProperties* /*props*/) {}
  virtual bool HasMemset() const { return false; }
  virtual void Memset(void* /*ctx*/, void* /*dst*/, int32_t /*value*/, size_t /*size*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no memset");
  }
  // Pinned host memory.
  virtual bool HasHostAlloc() const { return false; }
  virtual void* HostAlloc(size_t /*size*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no pinned host memory");
  }
  virtual void HostFree(void* /*ptr*/) {}
  // DLPack's DLDeviceType of this kind's memory (see TideDeviceDef); 0: none.
  virtual int32_t DLPackDeviceType() const { return 0; }
  // Events: all six.
  virtual bool HasEvents() const { return false; }
  virtual void* CreateEvent(void* /*ctx*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no events");
  }
  virtual void DestroyEvent(void* /*event*/) {}
  virtual void RecordEvent(void* /*ctx*/, void* /*event*/) {}
  virtual bool QueryEvent(void* /*event*/) { return true; }
  virtual void SynchronizeEvent(void* /*event*/) {}
  virtual void WaitEvent(void* /*ctx*/, void* /*event*/) {}

  // Event timing (TideDeviceDef.event_elapsed_ms; needs the six event functions): the ms between
  // two recorded, done events, finite and >= 0.
  virtual bool HasEventTiming() const { return false; }
  virtual float EventElapsedMs(void* /*start*/, void* /*end*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no event timing");
  }
  // The device allocator's own figures (TideDeviceDef.memory_stats): fill the fields
  // stats->struct_size covers (TIDE_HAS_FIELD).
  virtual bool HasMemoryStats() const { return false; }
  virtual void MemoryStats(int32_t /*device*/, TideMemoryStats* /*stats*/) {}
  // The device's tracer (TideDeviceTracer): all four, or HasTracer false. TraceCollect hands
  // each record to `emit` (see TraceEmitter) and forgets it.
  class TraceEmitter {
   public:
    TraceEmitter(TideTraceEmitFn fn, void* sink) : fn_(fn), sink_(sink) {}
    void operator()(const char* name, int32_t device, int32_t stream, uint64_t begin_ns,
                    uint64_t end_ns, uint64_t bytes, TideTraceKind kind) const {
      TideTraceRecord r{};
      r.struct_size = TIDE_STRUCT_SIZE(TideTraceRecord, kind);
      r.name = name, r.device = device, r.stream = stream;
      r.begin_ns = begin_ns, r.end_ns = end_ns, r.bytes = bytes, r.kind = kind;
      fn_(sink_, &r);
    }

   private:
    TideTraceEmitFn fn_;
    void* sink_;
  };
  virtual bool HasTracer() const { return false; }
  virtual void TraceStart() {}
  virtual void TraceStop() {}
  virtual void TraceCollect(const TraceEmitter& /*emit*/) {}
  virtual uint64_t TraceNowNs() { return 0; }

  // Subgraph claim-and-compile (TideDeviceCompiler): a device that has it returns true from
  // HasCompiler and overrides the four below. GetCapability: the groups of ops of block
  // `block_idx` of the serialized `program` the device takes. Compile: the device's function for
  // the request (throw TIDE_UNIMPLEMENTED to decline its shapes), owned by the device until
  // ReleaseCompiled. RunCompiled: queue it on ctx like a kernel, sizing and allocating `outputs`.
  struct SubgraphGroup {
    std::vector<int32_t> ops;
    std::string cache_key;
  };
  virtual bool HasCompiler() const { return false; }
  virtual std::vector<SubgraphGroup> GetCapability(int32_t /*device*/,
                                                   const std::string& /*program*/,
                                                   int32_t /*block_idx*/) {
    return {};
  }
  virtual void* Compile(const TideCompileRequest& /*request*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' compiles nothing");
  }
  virtual void RunCompiled(void* /*compiled*/, void* /*ctx*/, const std::vector<Tensor>& /*inputs*/,
                           std::vector<Tensor>& /*outputs*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' compiles nothing");
  }
  virtual void ReleaseCompiled(void* /*compiled*/) {}

  // Streams with roles (TideDeviceDef.context_create_role; needs HasEvents): a device that has
  // them returns true from HasRoleContexts and makes a context for `role` (a TideStreamRole, never
  // TIDE_STREAM_COMPUTE) at `priority` (0 default, lower first), destroyed by DestroyContext.
  virtual bool HasRoleContexts() const { return false; }
  virtual void* CreateRoleContext(int32_t /*device*/, int32_t role, int32_t /*priority*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' has no context for role ", role);
  }

  // Capture and replay (TideDeviceGraphs; contract 2): a device that has it returns true from
  // HasGraphs and overrides the four below. BeginCapture: work queued on ctx from now on is
  // recorded, not run; EndCapture: what was recorded (the device's; throw when the capture
  // failed); LaunchGraph: queue it on ctx; DestroyGraph: after the core synchronised it.
  virtual bool HasGraphs() const { return false; }
  virtual void BeginCapture(void* /*ctx*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' captures nothing");
  }
  virtual void* EndCapture(void* /*ctx*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' captures nothing");
  }
  virtual void LaunchGraph(void* /*ctx*/, void* /*graph*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' captures nothing");
  }
  virtual void DestroyGraph(void* /*graph*/) {}

  // Host functions (TideDeviceDef.launch_host_func; contract 2): a device that has them returns
  // true from HasHostFunc and queues fn(data) on ctx, called once its earlier work is done (see
  // plugin_api.h for the rules fn keeps).
  virtual bool HasHostFunc() const { return false; }
  virtual void LaunchHostFunc(void* /*ctx*/, void (* /*fn*/)(void*), void* /*data*/) {
    TIDE_THROW(TIDE_UNIMPLEMENTED, "device '", kind(), "' queues no host functions");
  }

  void AddGraphs(TideDeviceDef* d) {
    static const TideDeviceGraphs kGraphs = {
        TIDE_STRUCT_SIZE(TideDeviceGraphs, graph_destroy),
        [](void* s, void* ctx) -> TideStatus* {
          return detail::Guard([&] { static_cast<Device*>(s)->BeginCapture(ctx); });
        },
        [](void* s, void* ctx, void** graph) -> TideStatus* {
          *graph = nullptr;
          return detail::Guard([&] { *graph = static_cast<Device*>(s)->EndCapture(ctx); });
        },
        [](void* s, void* ctx, void* graph) -> TideStatus* {
          return detail::Guard([&] { static_cast<Device*>(s)->LaunchGraph(ctx, graph); });
        },
        [](void* s, void* graph) {
          auto* self = static_cast<Device*>(s);
          detail::Swallowed(self->kind(), "DestroyGraph", 0,
                            [&] { return self->DestroyGraph(graph), 0; });
        },
    };
    d->graphs = &kGraphs;
  }

  void AddCompiler(TideDeviceDef* d) {
    struct Answer {  // what release_arg keeps alive until release_capability
      std::vector<SubgraphGroup> groups;
      std::vector<TideSubgraphGroup> c;
    };
    static const TideDeviceCompiler kCompiler = {
        TIDE_STRUCT_SIZE(TideDeviceCompiler, release_compiled),
        [](void* s, int32_t device, const char* program, size_t len, int32_t block_idx,
           TideCapability* out) -> TideStatus* {
          return detail::Guard([&] {
            auto answer = std::make_unique<Answer>();
            answer->groups = static_cast<Device*>(s)->GetCapability(
                device, std::string(program, len), block_idx);
            for (const SubgraphGroup& g : answer->groups) {
              TideSubgraphGroup c{};
              c.struct_size = TIDE_STRUCT_SIZE(TideSubgraphGroup, cache_key);
              c.ops = g.ops.data(), c.num_ops = g.ops.size(), c.cache_key = g.cache_key.c_str();
              answer->c.push_back(c);
            }
            out->groups = answer->c.data();
            out->num_groups = answer->c.size();
            out->release_arg = answer.release();
          });
        },
        [](void*, TideCapability* cap) { delete static_cast<Answer*>(cap->release_arg); },
        [](void* s, const TideCompileRequest* request, TideCompiled** compiled) -> TideStatus* {
          *compiled = nullptr;
          return detail::Guard([&] {
            *compiled = static_cast<TideCompiled*>(static_cast<Device*>(s)->Compile(*request));
          });
        },
        [](void* s, TideCompiled* compiled, void* ctx, const TideTensor* const* inputs,
           size_t num_inputs, TideTensor* const* outputs, size_t num_outputs) -> TideStatus* {
          return detail::Guard([&] {
            std::vector<Tensor> in, out;
            for (size_t i = 0; i < num_inputs; ++i) in.emplace_back(inputs[i]);
            for (size_t i = 0; i < num_outputs; ++i) out.emplace_back(outputs[i]);
            static_cast<Device*>(s)->RunCompiled(compiled, ctx, in, out);
          });
        },
        [](void* s, TideCompiled* compiled) {
          auto* self = static_cast<Device*>(s);
          detail::Swallowed(self->kind(), "ReleaseCompiled", 0,
                            [&] { return self->ReleaseCompiled(compiled), 0; });
        },
    };
    d->compiler = &kCompiler;
  }

  void AddOptionalEntries(TideDeviceDef* d) {
    if (HasCompiler()) AddCompiler(d);
    if (HasGraphs()) AddGraphs(d);
    if (HasHostFunc())
      d->launch_host_func = [](void* s, void* ctx, void (*fn)(void*), void* data) -> TideStatus* {
        return detail::Guard([&] { static_cast<Device*>(s)->LaunchHostFunc(ctx, fn, data); });
      };
    if (HasEvents() && HasEventTiming())
      d->event_elapsed_ms = [](void* s, void* start, void* end, float* ms) -> TideStatus* {
        return detail::Guard([&] { *ms = static_cast<Device*>(s)->EventElapsedMs(start, end); });
      };
    if (HasMemoryStats())
      d->memory_stats = [](void* s, int32_t device, TideMemoryStats* stats) -> TideStatus* {
        return detail::Guard([&] { static_cast<Device*>(s)->MemoryStats(device, stats); });
      };
    if (HasTracer()) {
      static const TideDeviceTracer kTracer = {
          TIDE_STRUCT_SIZE(TideDeviceTracer, now_ns),
          [](void* s) -> TideStatus* {
            return detail::Guard([&] { static_cast<Device*>(s)->TraceStart(); });
          },
          [](void* s) -> TideStatus* {
            return detail::Guard([&] { static_cast<Device*>(s)->TraceStop(); });
          },
          [](void* s, TideTraceEmitFn emit, void* sink) -> TideStatus* {
            return detail::Guard(
                [&] { static_cast<Device*>(s)->TraceCollect(TraceEmitter(emit, sink)); });
          },
          [](void* s, uint64_t* ns) -> TideStatus* {
            return detail::Guard([&] { *ns = static_cast<Device*>(s)->TraceNowNs(); });
          },
      };
      d->tracer = &kTracer;
    }
    if (HasProperties())
      d->properties = [](void* s, int32_t device, TideDeviceProperties* p) -> TideStatus* {
        return detail::Guard([&] { static_cast<Device*>(s)->Properties(device, p); });
      };
    if (HasMemset())
      d->memset = [](void* s, void* ctx, void* dst, int32_t v, size_t n) -> TideStatus* {
        return detail::Guard([&] { static_cast<Device*>(s)->Memset(ctx, dst, v, n); });
      };
    if (HasHostAlloc()) {
      d->host_alloc = [](void* s, size_t size, void** p) -> TideStatus* {
        *p = nullptr;
        return detail::Guard([&] { *p = static_cast<Device*>(s)->HostAlloc(size); });
      };
      d->host_free = [](void* s, void* p) {
        auto* self = static_cast<Device*>(s);
        detail::Swallowed(self->kind(), "HostFree", 0, [&] { return self->HostFree(p), 0; });
      };
    }
    if (!HasEvents()) return;
    if (HasRoleContexts())
      d->context_create_role = [](void* s, int32_t device, int32_t role, int32_t priority,
                                  void** ctx) -> TideStatus* {
        *ctx = nullptr;
        return detail::Guard(
            [&] { *ctx = static_cast<Device*>(s)->CreateRoleContext(device, role, priority); });
      };
    d->event_create = [](void* s, void* ctx, void** e) -> TideStatus* {
      *e = nullptr;
      return detail::Guard([&] { *e = static_cast<Device*>(s)->CreateEvent(ctx); });
    };
    d->event_destroy = [](void* s, void* e) {
      auto* self = static_cast<Device*>(s);
      detail::Swallowed(self->kind(), "DestroyEvent", 0, [&] { return self->DestroyEvent(e), 0; });
    };
    d->event_record = [](void* s, void* ctx, void* e) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->RecordEvent(ctx, e); });
    };
    d->event_query = [](void* s, void* e, int32_t* done) -> TideStatus* {
      return detail::Guard([&] { *done = static_cast<Device*>(s)->QueryEvent(e) ? 1 : 0; });
    };
    d->event_synchronize = [](void* s, void* e) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->SynchronizeEvent(e); });
    };
    d->context_wait_event = [](void* s, void* ctx, void* e) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->WaitEvent(ctx, e); });
    };
  }

  TideDeviceDef def() {
    TideDeviceDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideDeviceDef, unavailable_reason);
    d.contract = Contract();
    d.dlpack_device_type = DLPackDeviceType();
    d.memory_fraction_default = DefaultMemoryFraction();
    d.initial_memory_mb_default = DefaultInitialMemoryMb();
    d.kind = kind();
    d.self = this;
    d.host_accessible = host_accessible() ? 1 : 0;
    d.alignment = alignment();
    d.device_count = [](void* s) -> int32_t {
      auto* dev = static_cast<Device*>(s);
      return detail::Swallowed(dev->kind(), "Count", int32_t{0}, [&] { return dev->Count(); });
    };
    d.unavailable_reason = [](void* s) -> const char* {
      auto* dev = static_cast<Device*>(s);
      return detail::Swallowed(dev->kind(), "UnavailableReason", static_cast<const char*>(nullptr),
                               [&] { return dev->UnavailableReason(); });
    };
    d.alloc = [](void* s, int32_t dev, size_t size, void** p) -> TideStatus* {
      *p = nullptr;
      return detail::Guard([&] { *p = static_cast<Device*>(s)->Alloc(dev, size); });
    };
    d.free = [](void* s, int32_t dev, void* p, size_t size) {
      auto* self = static_cast<Device*>(s);
      detail::Swallowed(self->kind(), "Free", 0, [&] { return self->Free(dev, p, size), 0; });
    };
    d.memory_info = [](void* s, int32_t dev, size_t* total, size_t* avail) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->MemoryInfo(dev, total, avail); });
    };
    d.context_create = [](void* s, int32_t dev, void** ctx) -> TideStatus* {
      return detail::Guard([&] { *ctx = static_cast<Device*>(s)->CreateContext(dev); });
    };
    d.context_destroy = [](void* s, void* ctx) {
      auto* self = static_cast<Device*>(s);
      detail::Swallowed(self->kind(), "DestroyContext", 0,
                        [&] { return self->DestroyContext(ctx), 0; });
    };
    d.synchronize = [](void* s, void* ctx) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->Synchronize(ctx); });
    };
    d.copy = [](void* s, void* ctx, TideCopyKind k, void* dst, const void* src,
                size_t size) -> TideStatus* {
      return detail::Guard([&] { static_cast<Device*>(s)->Copy(ctx, k, dst, src, size); });
    };
    d.context_extension = [](void* s, void* ctx, const char* name) -> const void* {
      auto* self = static_cast<Device*>(s);
      return detail::Swallowed(self->kind(), "Extension", static_cast<const void*>(nullptr),
                               [&] { return self->Extension(ctx, name); });
    };
    if (HasPeerCopy())
      d.copy_peer = [](void* s, void* ctx, void* dst, int32_t src_device, const void* src,
                       size_t size) -> TideStatus* {
        return detail::Guard(
            [&] { static_cast<Device*>(s)->CopyPeer(ctx, dst, src_device, src, size); });
      };
    d.finalize = [](void* s) {
      try {
        static_cast<Device*>(s)->Finalize();
      } catch (...) {  // nothing to report to at exit
      }
    };
    AddOptionalEntries(&d);
    return d;
  }
};

}  // namespace tide

#endif  // TIDE_PLUGIN_DEVICE_HPP_
