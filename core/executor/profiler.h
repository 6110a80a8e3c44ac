// profiler.h: per-op wall time (--profile_ops): which kernels and transforms a program spends its
// time in. Off by default: the run loop then pays one flag check per op.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace tide::core {

struct OpProfile {
  std::string name;  // "conv2d {cpu, float32, OPAQUE, a_library}"
  uint64_t calls = 0;
  double total_ms = 0;
};

// One op run on the timeline (a Chrome trace "complete" event).
struct OpEvent {
  std::string name;  // the op type
  std::string kernel;  // its kernel key, "" for an op without kernels
  double start_us = 0;  // since the profiling started (the last reset)
  double dur_us = 0;
  uint64_t thread = 0;  // a small id per thread that ran ops
};

// Adds one timed call.
void RecordOpTime(const std::string& name, double ms);
// Adds one run to the timeline (kept up to kMaxOpEvents; later ones are counted, not kept).
void RecordOpEvent(const std::string& type, const std::string& kernel,
                   std::chrono::steady_clock::time_point start, double ms);
constexpr size_t kMaxOpEvents = 1 << 20;
std::vector<OpEvent> OpEvents();
uint64_t DroppedOpEvents();
// Everything recorded since the last reset, slowest first.
std::vector<OpProfile> OpProfiles();
void ResetOpProfiles();
// A table of OpProfiles().
std::string OpProfileReport();

}  // namespace tide::core
