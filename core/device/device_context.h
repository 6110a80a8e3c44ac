// device_context.h: the core's handle on one place's device (Fluid's DeviceContext): the
// device plugin's context (stream, handles, thread pool) and its copy and sync functions. One per
// place, made on first use by the pool.
#pragma once

#include <tide/plugin_api.h>

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/platform/place.h"
#include "core/registry/op_info.h"

namespace tide::core {

class DeviceContext {
 public:
  DeviceContext(const DeviceInfo& device, const Place& place);
  // A context for work of `role` (not TIDE_STREAM_COMPUTE): the device's context_create_role.
  DeviceContext(const DeviceInfo& device, const Place& place, TideStreamRole role,
                int32_t priority);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  const Place& place() const { return place_; }
  // The context for work of `role`: for TIDE_STREAM_COPY_IN and TIDE_STREAM_COPY_OUT the
  // device's copy streams (context_create_role at priority -1, each made on first use) where the
  // device has them, follows contract 2 and --copy_stream is on; otherwise, and for the other
  // roles, this context. Called on the place's compute context; kernels run only there.
  DeviceContext* ForRole(TideStreamRole role);
  // Whether ForRole(role) gives a context of its own (without making it).
  bool HasRole(TideStreamRole role) const;
  const DeviceInfo& device() const { return *device_; }
  void* plugin_context() const { return ctx_; }
  bool host_accessible() const { return device_->def.host_accessible != 0; }

  // Waits for the work queued here. An error it reports (an asynchronous fault) names the last
  // op launched here, the likeliest culprit, besides what synchronised.
  void Synchronize();
  // Notes the kernel launched here last (registry entries live as long as the process).
  void NoteLaunch(const KernelEntry* kernel) {
    last_launch_.store(kernel, std::memory_order_relaxed);
  }
  // True when the device follows device contract 1, for which the core synchronises after each
  // host-to-device copy and before each free.
  bool legacy_contract() const { return device_->legacy_contract(); }
  // The device plugin's extension struct `name`, or nullptr.
  const void* Extension(const char* name) const;
  // Queued on this context's stream; Synchronize before reading on the host.
  void Copy(TideCopyKind kind, void* dst, const void* src, size_t size);
  // True when the device copies from another device of its kind itself (copy_peer).
  bool has_peer_copy() const { return device_->def.copy_peer != nullptr; }
  // Queued on this context's stream: `size` bytes from device `src_device` of this kind.
  void CopyPeer(void* dst, int32_t src_device, const void* src, size_t size);
  // Queued: `size` bytes at dst set to `value` (the plugin's memset, or a copy from the host).
  void Memset(void* dst, int32_t value, size_t size);
  // Queued host-to-device copy whose source may change as soon as this returns. Staged through
  // the device's pinned memory when it has host_alloc and events, so the copy overlaps compute.
  void CopyFromHost(void* dst, const void* src, size_t size);
  bool has_events() const { return device_->def.event_create != nullptr; }
  // Host functions (TideDeviceDef.launch_host_func): fn(data) runs on a thread of the plugin
  // once the work queued here so far is done, and must not call the device or the core.
  bool has_host_func() const {
    return device_->def.launch_host_func != nullptr && !legacy_contract();
  }
  void LaunchHostFunc(void (*fn)(void*), void* data);
  // Pinned host memory (the device's host_alloc) of at least `size` bytes, from this context's
  // free list or new; *got is its size. nullptr when the device has no host_alloc. GivePinned
  // takes it back once no queued work uses it.
  void* TakePinned(size_t size, size_t* got);
  void GivePinned(void* ptr, size_t size);
  // Work queued on this context from now on waits for the work queued on `other` so far: an
  // event when the device has them (the host does not wait), else other.Synchronize().
  void WaitFor(DeviceContext& other);

  // Events for ordering contexts of one device (has_events()): RecordEvent marks the work queued
  // here so far; WaitEvent makes work queued here from now on wait for an event's marker.
  void* CreateEvent() { return NewEvent(); }
  void DestroyEvent(void* event);
  void RecordEvent(void* event);
  void WaitEvent(void* event);
  bool QueryEvent(void* event);  // true when the event's marker is reached

  // Capture and replay (TideDeviceDef.graphs): BeginCapture records the work queued here from
  // now on instead of running it; EndCapture returns what was recorded (throws when the capture
  // failed; the context is out of capture either way); LaunchGraph queues it here; DestroyGraph
  // gives it back, after the caller synchronised its last launch. A device of contract 1 gets
  // no capture (the core synchronises it after copies, which a capture cannot hold).
  bool has_graphs() const { return device_->def.graphs != nullptr && !legacy_contract(); }
  void BeginCapture();
  void* EndCapture();
  void LaunchGraph(void* graph);
  void DestroyGraph(void* graph);

  // Event timing (TideDeviceDef.event_elapsed_ms), for the profiler: events from a pool of this
  // context's, recorded on its stream, timed once done.
  bool has_event_timing() const { return device_->def.event_elapsed_ms != nullptr; }
  void* RecordTimingEvent();                 // an event from the pool, recorded now
  void ReturnTimingEvent(void* event);       // back to the pool (any time after its last use)
  void SynchronizeEvent(void* event);        // waits until the event's marker is reached
  double ElapsedMs(void* start, void* end);  // both done; checked finite and >= 0

 private:
  struct Staging;  // a pinned host buffer and the event that says when it is free again
  void* NewEvent();
  void ReleaseStaging();

  friend class DeviceContextPool;  // makes the copy streams' contexts, under its lock

  // The roles ForRole makes contexts for: TIDE_STREAM_COPY_IN and TIDE_STREAM_COPY_OUT.
  static constexpr int kCopyRoles = 2;
  static int CopyRoleSlot(TideStreamRole role) { return role == TIDE_STREAM_COPY_IN ? 0 : 1; }

  const DeviceInfo* device_;
  Place place_;
  TideStreamRole role_ = TIDE_STREAM_COMPUTE;
  void* ctx_ = nullptr;
  // The copy streams' contexts (ForRole), destroyed before this one; each set once, under the
  // pool's lock.
  std::array<std::unique_ptr<DeviceContext>, kCopyRoles> copy_;
  std::array<std::atomic<DeviceContext*>, kCopyRoles> copy_ready_{};
  void* marker_ = nullptr;  // event recorded by WaitFor callers on this context
  std::atomic<const KernelEntry*> last_launch_{nullptr};
  std::mutex staging_mu_;
  std::vector<Staging> staging_;
  std::mutex timing_mu_;
  std::vector<void*> timing_events_;  // free events for RecordTimingEvent
  std::mutex pinned_mu_;
  std::vector<std::pair<void*, size_t>> pinned_;  // free pinned buffers for TakePinned
};

// Gives `ptr` (`size` bytes of `place`'s device memory from its alloc) back to the device. For a
// device of contract 1 it first waits for the work queued on the place's context, which may still
// use the block; contract 2 devices release in stream order themselves.
void FreeDeviceMemory(const DeviceInfo& device, const Place& place, void* ptr, size_t size);

// What a device reports of itself (TideDeviceProperties), filled by the core where the plugin
// has no properties function.
struct DeviceProperties {
  std::string name, vendor, driver_version, compute_capability;
  uint64_t total_memory = 0;
  int32_t multiprocessor_count = 0;
};
DeviceProperties GetDeviceProperties(const Place& place);
// The device allocator's own figures (TideDeviceDef.memory_stats); false when the device's plugin
// reports none.
bool GetDeviceMemoryStats(const Place& place, TideMemoryStats* stats);

// The device of a place, checked: its kind has a device plugin and the ordinal exists. Errors
// say which plugin is missing or how many devices there are.
const DeviceInfo& CheckedDevice(const Place& place);
// Devices of a kind; 0 when no plugin provides it.
int32_t DeviceCount(const std::string& kind);
// Why a kind has no device: its plugin's unavailable_reason (ABI 1.1) when it reports 0 devices,
// or that no loaded plugin provides the kind; "" when it has devices or gives no reason.
std::string DeviceUnavailableReason(const std::string& kind);

class DeviceContextPool {
 public:
  static DeviceContextPool& Global();
  // The context of `place`, made on first use; throws when the place does not exist.
  DeviceContext* Get(const Place& place);
  // The context of `place` if one was made (and not yet destroyed), else nullptr.
  DeviceContext* Find(const Place& place);
  // Synchronises and destroys every context; later Gets make new ones.
  void Clear();
  // Waits for the work queued on every context made so far (their copy streams' too).
  void SynchronizeAll();
  // `compute`'s copy stream of `role` (TIDE_STREAM_COPY_IN or TIDE_STREAM_COPY_OUT), made now
  // if it has none (ForRole's slow path).
  DeviceContext* MakeCopyContext(DeviceContext& compute, TideStreamRole role);

 private:
  static constexpr int kFastKinds = 32, kFastDevices = 16;
  std::mutex mu_;
  std::map<Place, std::unique_ptr<DeviceContext>> contexts_;
  std::array<std::atomic<DeviceContext*>, kFastKinds * kFastDevices> fast_{};
};

// Ends the devices' lives: synchronises and destroys every context, runs the hooks added with
// AddDeviceShutdownHook (the memory pools give their free blocks back), then calls each device
// plugin's finalize once. Runs at process exit (registered when the first context is made) or
// at tide.shutdown(); later calls do nothing. After it, no context can be made again.
void ShutdownDevices();
// True once ShutdownDevices has begun.
bool DevicesShutDown();
// Runs `hook` in ShutdownDevices after the contexts are gone and before the devices' finalize
// (layers above the device's use it: the allocators).
void AddDeviceShutdownHook(void (*hook)());

}  // namespace tide::core
