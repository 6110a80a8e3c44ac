// profiler.h: per-op time (--profile_ops): which kernels and transforms a program spends its time
// in, recorded by the run loop's hook (OpTimer), and the device plugins' own records for the
// Chrome trace. Off by default: the loop then pays one test per op.
//
// How an op is timed: on a device with event timing (TideDeviceDef.event_elapsed_ms), an event is
// recorded on the kernel's context before and after the op and the times are resolved when the
// outermost run on the thread ends and its ops are done (else at a later run's end, or when the
// profile stops), so the device is synchronised neither after every op nor after every run; the
// op's time is the device's. Elsewhere (no event timing, --sync_ops or --check_nan_inf) the loop
// synchronises after each kernel and the op's time is the host's, sync included.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/device/device_tracer.h"

namespace tide::core {

class DeviceContext;
class OpInstance;

struct OpProfile {
  std::string name;  // "conv2d {cpu, float32, OPAQUE, a_library}"
  uint64_t calls = 0;
  double total_ms = 0;
};

// One op run on the timeline (a Chrome trace "complete" event).
struct OpEvent {
  std::string name;     // the op type
  std::string kernel;   // its kernel key, "" for an op without kernels
  double start_us = 0;  // on the host, since the profiling started (the last reset)
  double dur_us = 0;    // on the host: the enqueue only, where the device timed the op
  uint64_t thread = 0;  // a small id per thread that ran ops
  // Where the device timed the op with events: its place, and its start and duration on the
  // device (mapped onto the host's clock since the profiling started); else "" and -1.
  std::string place;
  double device_start_us = -1, device_dur_us = -1;
};

// How the ops of one place were timed in the last profile.
struct OpTiming {
  std::string place;   // "sim:0"
  std::string method;  // "events" or "synchronised"
  // Events: the device's time of the first event mapped onto the host's clock to within
  // +- this (the narrowest bounds the host's readings give; see profiler.cc).
  double alignment_us = 0;
};

// Adds one timed call.
void RecordOpTime(const std::string& name, double ms);
// Adds one run to the timeline (kept up to kMaxOpEvents; later ones are counted, not kept).
void RecordOpEvent(const std::string& type, const std::string& kernel,
                   std::chrono::steady_clock::time_point start, double ms);
constexpr size_t kMaxOpEvents = 1 << 20;
std::vector<OpEvent> OpEvents();
uint64_t DroppedOpEvents();
std::vector<OpTiming> OpTimings();
// Everything recorded since the last reset, slowest first.
std::vector<OpProfile> OpProfiles();
void ResetOpProfiles();
// A table of OpProfiles().
std::string OpProfileReport();

// A profile with the devices' own records: StartProfile resets and starts the device tracers,
// StopProfile stops them and keeps their records (DeviceTraces, times in us since the start).
void StartProfile();
void StopProfile();
struct DeviceTrace {
  DeviceTraceRecord record;
  double start_us = 0, dur_us = 0;
};
std::vector<DeviceTrace> DeviceTraces();
std::vector<DeviceTraceClock> DeviceTraceClocks();

// The run loop's profiling hook (--profile_ops): times each op, its input conversions and the
// release of its temporaries included, into the table (under its type and kernel, "+transforms"
// when it converted inputs) and the timeline. Off, the loop has no timer and pays one test an op.
// Begin() before the first op of a run; the device times are resolved when the outermost profiled
// run on the thread ends (its timer is destroyed) once its ops are done.
class OpTimer {
 public:
  OpTimer() = default;
  ~OpTimer() {
    if (active_) End();
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;
  void Begin();
  // Before the op; `transforms`: the run's input conversions so far.
  void Start(const OpInstance& op, uint64_t transforms);
  // After it.
  void Stop(const OpInstance& op, uint64_t transforms);

 private:
  void End();

  bool active_ = false;
  std::chrono::steady_clock::time_point start_;
  uint64_t transforms_ = 0;
  DeviceContext* begin_ctx_ = nullptr;  // where begin_ was recorded, or null
  void* begin_ = nullptr;
  int64_t begin_recorded_ns_ = 0;  // the host's clock just before begin_ was recorded
};

// True when an op's kernel on `ctx` is timed with events (no sync after it while profiling).
bool TimesWithEvents(const DeviceContext* ctx);

}  // namespace tide::core
