// device_context.cc: device contexts over the device plugins' function tables.
#include "core/platform/device_context.h"

#include <glog/logging.h>

#include <cstdlib>

#include "core/platform/enforce.h"
#include "core/plugin/status.h"
#include "core/registry/registry.h"

namespace tide::core {

const DeviceInfo& CheckedDevice(const Place& place) {
  TIDE_ENFORCE(place.valid(), "invalid place (no kind)");
  const DeviceInfo* dev = Registry::Global().FindDevice(place.kind);
  if (!dev) {
    std::string kinds;
    for (const DeviceInfo* d : Registry::Global().AllDevices())
      kinds += (kinds.empty() ? "" : ", ") + d->kind_name;
    TIDE_FAIL(TIDE_UNAVAILABLE, "place ", place.ToString(), " is not available: no loaded device plugin provides kind '",
              place.kind_name(), "' (loaded device kinds: ", kinds.empty() ? "none" : kinds, ")");
  }
  int32_t n = dev->def.device_count(dev->def.self);
  if (place.device < 0 || place.device >= n)
    TIDE_FAIL(TIDE_UNAVAILABLE, "place ", place.ToString(), " does not exist: the '",
              place.kind_name(), "' device plugin (", dev->plugin_file, ") reports ", n,
              " device(s)");
  return *dev;
}

int32_t DeviceCount(const std::string& kind) {
  const DeviceInfo* dev = Registry::Global().FindDevice(PlaceKindId(kind));
  return dev ? dev->def.device_count(dev->def.self) : 0;
}

DeviceContext::DeviceContext(const DeviceInfo& device, const Place& place)
    : device_(&device), place_(place) {
  CallPlugin([&] { return device.def.context_create(device.def.self, place.device, &ctx_); },
             "creating the device context of " + place.ToString(), device.plugin_file);
}

DeviceContext::~DeviceContext() {
  if (ctx_) device_->def.context_destroy(device_->def.self, ctx_);
}

void DeviceContext::Synchronize() {
  CallPlugin([&] { return device_->def.synchronize(device_->def.self, ctx_); },
             [&] { return "synchronising " + place_.ToString(); }, device_->plugin_file);
}

const void* DeviceContext::Extension(const char* name) const {
  if (!device_->def.context_extension) return nullptr;
  return device_->def.context_extension(device_->def.self, ctx_, name);
}

void DeviceContext::Copy(TideCopyKind kind, void* dst, const void* src, size_t size) {
  if (size == 0) return;
  CallPlugin([&] { return device_->def.copy(device_->def.self, ctx_, kind, dst, src, size); },
             [&] { return StrCat("copying ", size, " bytes on ", place_.ToString()); }, device_->plugin_file);
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

DeviceContextPool& DeviceContextPool::Global() {
  static auto* pool = new DeviceContextPool;  // never destroyed: see Clear()
  return *pool;
}

namespace {
std::atomic<bool> g_shut_down{false};
}  // namespace

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
               " was already shut down (the process is ending)");
  auto& owned = contexts_[place];
  if (!owned) {
    owned = std::make_unique<DeviceContext>(dev, place);
    // After the first context, so that it runs before the teardown of any runtime the plugin
    // started while making it (atexit handlers run last-registered first).
    static bool at_exit = (std::atexit(ShutdownDevices), true);
    (void)at_exit;
  }
  if (fast) fast_[slot].store(owned.get(), std::memory_order_release);
  return owned.get();
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

void ShutdownDevices() {
  if (g_shut_down.exchange(true)) return;
  DeviceContextPool::Global().Clear();
  for (const DeviceInfo* d : Registry::Global().AllDevices())
    if (d->def.finalize) d->def.finalize(d->def.self);
}

}  // namespace tide::core
