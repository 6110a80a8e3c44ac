// device_tracer.h: the device plugins' own tracers (TideDeviceDef.tracer) for a profile: started
// and stopped together, their records mapped onto the core's clock (std::chrono::steady_clock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/platform/place.h"

namespace tide::core {

// One record of a device's tracer, on the core's clock (steady_clock ns since its epoch).
struct DeviceTraceRecord {
  std::string name;
  Place place;
  int32_t stream = 0;
  int64_t begin_ns = 0, end_ns = 0;
  uint64_t bytes = 0;
  int32_t kind = 0;  // TideTraceKind
};

// How a kind's tracer clock was mapped onto the core's: core = tracer + offset_ns, known to within
// +- uncertainty_ns (half the narrowest bracket of two core clock readings around a tracer one).
struct DeviceTraceClock {
  std::string kind;
  int64_t offset_ns = 0;
  int64_t uncertainty_ns = 0;
};

// Starts every device kind's tracer (those that have one). A kind whose start fails is logged and
// left out.
void StartDeviceTracers();
// Synchronises the traced kinds' contexts (so queued work has run), stops the tracers and returns
// their records, and in `clocks` how each kind's clock was aligned. Nothing when none was started.
std::vector<DeviceTraceRecord> StopDeviceTracers(std::vector<DeviceTraceClock>* clocks);

// The steady_clock's ns since its epoch: the time base of the records and the profiler.
int64_t CoreClockNs();

}  // namespace tide::core
