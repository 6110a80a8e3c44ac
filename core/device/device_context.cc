// device_context.cc: device contexts over the device plugins' function tables.
#include "core/device/device_context.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/platform/enforce.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {
// The plugin's reason for reporting no device (TideDeviceDef.unavailable_reason, ABI 1.1; a 1.0
// table has none: the fields past its struct_size are zero). "" when it gives none.
std::string PluginsReason(const DeviceInfo& dev) {
  const TideDeviceDef& d = dev.def;
  const char* why = d.unavailable_reason ? d.unavailable_reason(d.self) : nullptr;
  return why ? why : "";
}
}  // namespace

const DeviceInfo& CheckedDevice(const Place& place) {
  TIDE_ENFORCE(place.valid(), "invalid place (no kind)");
  const DeviceInfo* dev = Registry::Global().FindDevice(place.kind);
  if (!dev) {
    std::string kinds;
    for (const DeviceInfo* d : Registry::Global().AllDevices())
      kinds += (kinds.empty() ? "" : ", ") + d->kind_name;
    TIDE_FAIL(TIDE_UNAVAILABLE, "place ", place.ToString(),
              " is not available: no loaded device plugin provides kind '", place.kind_name(),
              "' (loaded device kinds: ", kinds.empty() ? "none" : kinds,
              "; a plugin that failed to load may provide it: tide.plugins() or tide-plugins "
              "says why)",
              NotInitializedHint());
  }
  int32_t n = dev->def.device_count(dev->def.self);
  if (place.device < 0 || place.device >= n) {
    const std::string why = n == 0 ? PluginsReason(*dev) : "";
    TIDE_FAIL(TIDE_UNAVAILABLE, "place ", place.ToString(), " does not exist: the '",
              place.kind_name(), "' device plugin (", dev->plugin_file, ") reports ", n,
              " device(s)", why.empty() ? "" : ": " + why);
  }
  return *dev;
}

int32_t DeviceCount(const std::string& kind) {
  const DeviceInfo* dev = Registry::Global().FindDevice(PlaceKindId(kind));
  return dev ? dev->def.device_count(dev->def.self) : 0;
}

std::string DeviceUnavailableReason(const std::string& kind) {
  const DeviceInfo* dev = Registry::Global().FindDevice(PlaceKindId(kind));
  if (!dev)
    return StrCat("no loaded device plugin provides kind '", kind,
                  "' (a plugin that failed to load may provide it: tide.plugins() or "
                  "tide-plugins says why)");
  return dev->def.device_count(dev->def.self) == 0 ? PluginsReason(*dev) : "";
}

DeviceContext::DeviceContext(const DeviceInfo& device, const Place& place)
    : device_(&device), place_(place) {
  CallPlugin([&] { return device.def.context_create(device.def.self, place.device, &ctx_); },
             "creating the device context of " + place.ToString(), device.plugin_file);
}

DeviceContext::DeviceContext(const DeviceInfo& device, const Place& place, TideStreamRole role,
                             int32_t priority)
    : device_(&device), place_(place), role_(role) {
  CallPlugin(
      [&] {
        return device.def.context_create_role(device.def.self, place.device, role, priority, &ctx_);
      },
      [&] { return StrCat("creating the stream of role ", int(role), " on ", place.ToString()); },
      device.plugin_file);
  if (!ctx_)
    TIDE_FAIL(TIDE_INTERNAL, "device plugin ", device.plugin_file,
              " returned no context for the stream of role ", int(role), " on ", place.ToString());
}

bool DeviceContext::HasRole(TideStreamRole role) const {
  return (role == TIDE_STREAM_COPY_IN || role == TIDE_STREAM_COPY_OUT) && FLAGS_copy_stream &&
         device_->def.context_create_role && !legacy_contract() && role_ == TIDE_STREAM_COMPUTE;
}

DeviceContext* DeviceContext::ForRole(TideStreamRole role) {
  if (role != TIDE_STREAM_COPY_IN && role != TIDE_STREAM_COPY_OUT) return this;
  if (DeviceContext* c = copy_ready_[CopyRoleSlot(role)].load(std::memory_order_acquire))
    return FLAGS_copy_stream ? c : this;
  if (!HasRole(role)) return this;
  return DeviceContextPool::Global().MakeCopyContext(*this, role);
}

struct DeviceContext::Staging {
  void* ptr;
  size_t size;
  void* event;
};

DeviceContext::~DeviceContext() {
  if (!ctx_) return;
  for (auto& copy : copy_) {  // before this context: their queued copies feed this one's work
    if (!copy) continue;
    try {
      copy->Synchronize();
    } catch (const std::exception& e) {
      LOG(WARNING) << "destroying a copy stream of " << place_.ToString() << ": " << e.what();
    }
    copy.reset();
  }
  ReleaseStaging();
  for (auto& [ptr, size] : pinned_) device_->def.host_free(device_->def.self, ptr);
  const TideDeviceDef& d = device_->def;
  if (marker_) DestroyEvent(marker_);
  for (void* ev : timing_events_) DestroyEvent(ev);
  d.context_destroy(d.self, ctx_);
}

void* DeviceContext::NewEvent() {
  void* ev = nullptr;
  CallPlugin([&] { return device_->def.event_create(device_->def.self, ctx_, &ev); },
             [&] { return "creating an event on " + place_.ToString(); }, device_->plugin_file);
  return ev;
}

// Pinned buffers may still be read by queued copies: wait for each, then give it back.
void DeviceContext::ReleaseStaging() {
  const TideDeviceDef& d = device_->def;
  std::lock_guard<std::mutex> lock(staging_mu_);
  for (Staging& s : staging_) {
    if (TideStatus* st = d.event_synchronize(d.self, s.event)) {
      LOG(WARNING) << "releasing the staging memory of " << place_.ToString() << ": "
                   << st->message;
      delete st;
    }
    DestroyEvent(s.event);
    d.host_free(d.self, s.ptr);
  }
  staging_.clear();
}

void DeviceContext::Synchronize() {
  CallPlugin([&] { return device_->def.synchronize(device_->def.self, ctx_); },
             [&] {
               std::string what = "synchronising " + place_.ToString();
               if (const KernelEntry* k = last_launch_.load(std::memory_order_relaxed))
                 what += StrCat(" (work queued there failed; the last op launched on ",
                                place_.ToString(), " was op '", k->op_type, "', kernel ",
                                k->key.ToString(), " from plugin ", k->plugin,
                                ": set TIDE_SYNC_OPS=1 to check each op as it runs)");
               return what;
             },
             device_->plugin_file);
}

void DeviceContext::BeginCapture() {
  const TideDeviceGraphs& g = *device_->def.graphs;
  CallPlugin([&] { return g.capture_begin(device_->def.self, ctx_); },
             [&] { return "starting a capture on " + place_.ToString(); }, device_->plugin_file);
}

void* DeviceContext::EndCapture() {
  const TideDeviceGraphs& g = *device_->def.graphs;
  void* graph = nullptr;
  CallPlugin([&] { return g.capture_end(device_->def.self, ctx_, &graph); },
             [&] { return "ending the capture on " + place_.ToString(); }, device_->plugin_file);
  if (!graph)
    TIDE_FAIL(TIDE_INTERNAL, "device plugin ", device_->plugin_file,
              " returned no graph for the capture on ", place_.ToString());
  return graph;
}

void DeviceContext::LaunchGraph(void* graph) {
  const TideDeviceGraphs& g = *device_->def.graphs;
  CallPlugin([&] { return g.graph_launch(device_->def.self, ctx_, graph); },
             [&] { return "launching a captured graph on " + place_.ToString(); },
             device_->plugin_file);
}

void DeviceContext::DestroyGraph(void* graph) {
  device_->def.graphs->graph_destroy(device_->def.self, graph);
}

const void* DeviceContext::Extension(const char* name) const {
  if (!device_->def.context_extension) return nullptr;
  return device_->def.context_extension(device_->def.self, ctx_, name);
}

void DeviceContext::Copy(TideCopyKind kind, void* dst, const void* src, size_t size) {
  if (size == 0) return;
  CallPlugin([&] { return device_->def.copy(device_->def.self, ctx_, kind, dst, src, size); },
             [&] { return StrCat("copying ", size, " bytes on ", place_.ToString()); },
             device_->plugin_file);
  // Contract 1: the copy may read its host source until the context is synchronised.
  if (kind == TIDE_COPY_HOST_TO_DEVICE && legacy_contract()) Synchronize();
}

void DeviceContext::CopyPeer(void* dst, int32_t src_device, const void* src, size_t size) {
  if (size == 0) return;
  CallPlugin(
      [&] { return device_->def.copy_peer(device_->def.self, ctx_, dst, src_device, src, size); },
      [&] {
        return StrCat("copying ", size, " bytes from ", place_.kind_name(), ":", src_device, " to ",
                      place_.ToString());
      },
      device_->plugin_file);
}

void DeviceContext::Memset(void* dst, int32_t value, size_t size) {
  if (size == 0) return;
  const TideDeviceDef& d = device_->def;
  if (d.memset) {
    CallPlugin([&] { return d.memset(d.self, ctx_, dst, value, size); },
               [&] { return StrCat("setting ", size, " bytes on ", place_.ToString()); },
               device_->plugin_file);
    return;
  }
  if (host_accessible()) {  // ordered after the queued work that may still use the bytes
    Synchronize();
    std::memset(dst, value, size);
    return;
  }
  std::vector<unsigned char> bytes(size, static_cast<unsigned char>(value));
  Copy(TIDE_COPY_HOST_TO_DEVICE, dst, bytes.data(), size);  // pageable: taken when copy returns
}

void DeviceContext::CopyFromHost(void* dst, const void* src, size_t size) {
  if (size == 0) return;
  const TideDeviceDef& d = device_->def;
  if (!d.host_alloc || !has_events() || legacy_contract()) {
    Copy(TIDE_COPY_HOST_TO_DEVICE, dst, src, size);
    return;
  }
  // A free pinned buffer big enough (its last copy done), else a new one; a few at most, the
  // oldest waited for when all are busy.
  constexpr size_t kMaxBuffers = 4, kMinBytes = size_t(64) << 10;
  std::lock_guard<std::mutex> lock(staging_mu_);
  Staging* use = nullptr;
  for (Staging& s : staging_) {
    if (s.size >= size && QueryEvent(s.event)) {
      use = &s;
      break;
    }
  }
  if (!use && staging_.size() >= kMaxBuffers) {  // replace the smallest, once its copy is done
    auto smallest =
        std::min_element(staging_.begin(), staging_.end(),
                         [](const Staging& a, const Staging& b) { return a.size < b.size; });
    CallPlugin([&] { return d.event_synchronize(d.self, smallest->event); },
               [&] { return "waiting for a staged copy on " + place_.ToString(); },
               device_->plugin_file);
    DestroyEvent(smallest->event);
    d.host_free(d.self, smallest->ptr);
    staging_.erase(smallest);
  }
  if (!use) {
    size_t bytes = kMinBytes;
    while (bytes < size) bytes *= 2;
    Staging s{nullptr, bytes, nullptr};
    CallPlugin([&] { return d.host_alloc(d.self, bytes, &s.ptr); },
               [&] {
                 return StrCat("allocating ", bytes, " bytes of pinned host memory for ",
                               place_.ToString());
               },
               device_->plugin_file);
    try {
      s.event = NewEvent();
    } catch (...) {
      d.host_free(d.self, s.ptr);
      throw;
    }
    staging_.push_back(s);
    use = &staging_.back();
  }
  std::memcpy(use->ptr, src, size);
  Copy(TIDE_COPY_HOST_TO_DEVICE, dst, use->ptr, size);
  RecordEvent(use->event);
}

void DeviceContext::LaunchHostFunc(void (*fn)(void*), void* data) {
  const TideDeviceDef& d = device_->def;
  CallPlugin([&] { return d.launch_host_func(d.self, ctx_, fn, data); },
             [&] { return "queuing a host function on " + place_.ToString(); },
             device_->plugin_file);
}

void* DeviceContext::TakePinned(size_t size, size_t* got) {
  const TideDeviceDef& d = device_->def;
  if (!d.host_alloc) return nullptr;
  {
    std::lock_guard<std::mutex> lock(pinned_mu_);
    for (auto it = pinned_.begin(); it != pinned_.end(); ++it) {
      if (it->second < size) continue;
      void* ptr = it->first;
      *got = it->second;
      pinned_.erase(it);
      return ptr;
    }
  }
  size_t bytes = size_t(4) << 10;  // powers of two: a few sizes serve every run
  while (bytes < size) bytes *= 2;
  void* ptr = nullptr;
  CallPlugin([&] { return d.host_alloc(d.self, bytes, &ptr); },
             [&] {
               return StrCat("allocating ", bytes, " bytes of pinned host memory for ",
                             place_.ToString());
             },
             device_->plugin_file);
  *got = bytes;
  return ptr;
}

void DeviceContext::GivePinned(void* ptr, size_t size) {
  constexpr size_t kKeep = 16;  // a run's fetches, reused by the next run
  {
    std::lock_guard<std::mutex> lock(pinned_mu_);
    if (pinned_.size() < kKeep) {
      pinned_.emplace_back(ptr, size);
      return;
    }
  }
  device_->def.host_free(device_->def.self, ptr);
}

void DeviceContext::WaitFor(DeviceContext& other) {
  if (&other == this) return;
  const TideDeviceDef& d = other.device_->def;
  if (!has_events() || !other.has_events() || other.device_ != device_) {
    other.Synchronize();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(other.staging_mu_);
    if (!other.marker_) other.marker_ = other.NewEvent();
  }
  other.RecordEvent(other.marker_);
  CallPlugin(
      [&] { return d.context_wait_event(d.self, ctx_, other.marker_); },
      [&] { return place_.ToString() + " waiting for an event of " + other.place_.ToString(); },
      device_->plugin_file);
}

void DeviceContext::DestroyEvent(void* event) {
  device_->def.event_destroy(device_->def.self, event);
}

void DeviceContext::RecordEvent(void* event) {
  const TideDeviceDef& d = device_->def;
  CallPlugin([&] { return d.event_record(d.self, ctx_, event); },
             [&] { return "recording an event on " + place_.ToString(); }, device_->plugin_file);
}

bool DeviceContext::QueryEvent(void* event) {
  const TideDeviceDef& d = device_->def;
  int32_t done = 0;
  CallPlugin([&] { return d.event_query(d.self, event, &done); },
             [&] { return "querying an event on " + place_.ToString(); }, device_->plugin_file);
  return done != 0;
}

void DeviceContext::WaitEvent(void* event) {
  const TideDeviceDef& d = device_->def;
  CallPlugin([&] { return d.context_wait_event(d.self, ctx_, event); },
             [&] { return place_.ToString() + " waiting for an event"; }, device_->plugin_file);
}

void* DeviceContext::RecordTimingEvent() {
  void* ev = nullptr;
  {
    std::lock_guard<std::mutex> lock(timing_mu_);
    if (!timing_events_.empty()) {
      ev = timing_events_.back();
      timing_events_.pop_back();
    }
  }
  if (!ev) ev = NewEvent();
  const TideDeviceDef& d = device_->def;
  try {
    CallPlugin([&] { return d.event_record(d.self, ctx_, ev); },
               [&] { return "recording a timing event on " + place_.ToString(); },
               device_->plugin_file);
  } catch (...) {
    ReturnTimingEvent(ev);
    throw;
  }
  return ev;
}

void DeviceContext::ReturnTimingEvent(void* event) {
  std::lock_guard<std::mutex> lock(timing_mu_);
  timing_events_.push_back(event);
}

void DeviceContext::SynchronizeEvent(void* event) {
  const TideDeviceDef& d = device_->def;
  CallPlugin([&] { return d.event_synchronize(d.self, event); },
             [&] { return "waiting for an event on " + place_.ToString(); }, device_->plugin_file);
}

double DeviceContext::ElapsedMs(void* start, void* end) {
  const TideDeviceDef& d = device_->def;
  float ms = 0;
  CallPlugin([&] { return d.event_elapsed_ms(d.self, start, end, &ms); },
             [&] { return "timing two events on " + place_.ToString(); }, device_->plugin_file);
  TIDE_ENFORCE(std::isfinite(ms) && ms >= 0, "device plugin ", device_->plugin_file,
               " timed two events on ", place_.ToString(), " (event_elapsed_ms) at ", ms,
               " ms: an elapsed time must be finite and >= 0");
  return ms;
}

void FreeDeviceMemory(const DeviceInfo& device, const Place& place, void* ptr, size_t size) {
  if (device.legacy_contract())
    if (DeviceContext* ctx = DeviceContextPool::Global().Find(place)) {
      try {
        ctx->Synchronize();
      } catch (const std::exception& e) {  // the fault is the queued work's; free anyway
        LOG(WARNING) << "freeing " << size << " bytes on " << place.ToString() << ": " << e.what();
      }
    }
  device.def.free(device.def.self, place.device, ptr, size);
}

DeviceProperties GetDeviceProperties(const Place& place) {
  const DeviceInfo& dev = CheckedDevice(place);
  const TideDeviceDef& d = dev.def;
  DeviceProperties out;
  if (d.properties) {
    TideDeviceProperties p{};
    p.struct_size = sizeof(p);
    CallPlugin([&] { return d.properties(d.self, place.device, &p); },
               [&] { return "reading the properties of " + place.ToString(); }, dev.plugin_file);
    auto str = [](const char* s) { return std::string(s ? s : ""); };
    out.name = str(p.name), out.vendor = str(p.vendor), out.driver_version = str(p.driver_version);
    out.compute_capability = str(p.compute_capability);
    out.total_memory = p.total_memory;
    out.multiprocessor_count = p.multiprocessor_count;
  }
  if (out.name.empty()) out.name = place.ToString();
  if (out.total_memory == 0 && d.memory_info) {
    size_t total = 0, avail = 0;
    CallPlugin([&] { return d.memory_info(d.self, place.device, &total, &avail); },
               [&] { return "reading the memory of " + place.ToString(); }, dev.plugin_file);
    out.total_memory = total;
  }
  return out;
}

bool GetDeviceMemoryStats(const Place& place, TideMemoryStats* stats) {
  const DeviceInfo& dev = CheckedDevice(place);
  const TideDeviceDef& d = dev.def;
  if (!d.memory_stats) return false;
  *stats = TideMemoryStats{};
  stats->struct_size = sizeof(*stats);
  CallPlugin([&] { return d.memory_stats(d.self, place.device, stats); },
             [&] { return "reading the memory statistics of " + place.ToString(); },
             dev.plugin_file);
  return true;
}

DeviceContextPool& DeviceContextPool::Global() {
  static auto* pool = new DeviceContextPool;  // never destroyed: see Clear()
  return *pool;
}

namespace {
std::atomic<bool> g_shut_down{false};
std::mutex g_hooks_mu;
std::vector<void (*)()>& ShutdownHooks() {
  static auto* hooks = new std::vector<void (*)()>;
  return *hooks;
}
}  // namespace

bool DevicesShutDown() { return g_shut_down.load(); }

void AddDeviceShutdownHook(void (*hook)()) {
  std::lock_guard<std::mutex> lock(g_hooks_mu);
  ShutdownHooks().push_back(hook);
}

DeviceContext* DeviceContextPool::Find(const Place& place) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = contexts_.find(place);
  return it == contexts_.end() ? nullptr : it->second.get();
}

DeviceContext* DeviceContextPool::Get(const Place& place) {
  bool fast = place.kind >= 0 && place.kind < kFastKinds && place.device >= 0 &&
              place.device < kFastDevices;
  size_t slot = fast ? size_t(place.kind) * kFastDevices + size_t(place.device) : 0;
  if (fast) {
    if (DeviceContext* c = fast_[slot].load(std::memory_order_acquire)) return c;
  }
  const DeviceInfo& dev = CheckedDevice(place);
  std::lock_guard<std::mutex> lock(mu_);
  TIDE_ENFORCE(!g_shut_down.load(), "the device of ", place.ToString(),
               " was already shut down (by tide.shutdown(), or the process is ending)");
  auto it = contexts_.find(place);
  if (it == contexts_.end()) {
    // Made before the entry: a plugin whose context_create fails leaves no null entry behind.
    auto made = std::make_unique<DeviceContext>(dev, place);
    it = contexts_.emplace(place, std::move(made)).first;
    // After the first context, so that it runs before the teardown of any runtime the plugin
    // started while making it (atexit handlers run last-registered first).
    static bool at_exit = (std::atexit(ShutdownDevices), true);
    (void)at_exit;
  }
  if (fast) fast_[slot].store(it->second.get(), std::memory_order_release);
  return it->second.get();
}

DeviceContext* DeviceContextPool::MakeCopyContext(DeviceContext& compute, TideStreamRole role) {
  std::lock_guard<std::mutex> lock(mu_);
  TIDE_ENFORCE(!g_shut_down.load(), "the device of ", compute.place().ToString(),
               " was already shut down (by tide.shutdown(), or the process is ending)");
  const int slot = DeviceContext::CopyRoleSlot(role);
  auto& copy = compute.copy_[slot];
  if (!copy) {
    // Copies are short and feed the compute stream or the host: ahead of its kernels where the
    // device ranks.
    copy = std::make_unique<DeviceContext>(*compute.device_, compute.place(), role,
                                           /*priority=*/-1);
    compute.copy_ready_[slot].store(copy.get(), std::memory_order_release);
  }
  return copy.get();
}

void DeviceContextPool::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& f : fast_) f.store(nullptr);
  for (auto& kv : contexts_) {
    try {
      kv.second->Synchronize();
    } catch (const std::exception& e) {
      LOG(WARNING) << "destroying the context of " << kv.first.ToString() << ": " << e.what();
    }
  }
  contexts_.clear();
}

void DeviceContextPool::SynchronizeAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& kv : contexts_) {
    for (auto& copy : kv.second->copy_)
      if (copy) copy->Synchronize();
    kv.second->Synchronize();
  }
}

void ShutdownDevices() {
  if (g_shut_down.exchange(true)) return;
  DeviceContextPool::Global().Clear();
  std::vector<void (*)()> hooks;
  {
    std::lock_guard<std::mutex> lock(g_hooks_mu);
    hooks = ShutdownHooks();
  }
  for (auto hook : hooks) hook();
  for (const DeviceInfo* d : Registry::Global().AllDevices())
    if (d->def.finalize) d->def.finalize(d->def.self);
}

}  // namespace tide::core
