// profiler.h: per-op wall time (--profile_ops): which kernels and transforms a program spends its
// time in, recorded by the run loop's hook (OpTimer). Off by default: the loop then pays one test
// per op.
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
  std::string name;     // the op type
  std::string kernel;   // its kernel key, "" for an op without kernels
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

class OpInstance;

// The run loop's profiling hook (--profile_ops): times each op, its input conversions and the
// release of its temporaries included, into the table (under its type and kernel, "+transforms"
// when it converted inputs) and the timeline. Off, the loop has no timer and pays one test an op.
class OpTimer {
 public:
  // Before the op; `transforms`: the run's input conversions so far.
  void Start(uint64_t transforms) {
    start_ = std::chrono::steady_clock::now();
    transforms_ = transforms;
  }
  // After it.
  void Stop(const OpInstance& op, uint64_t transforms);

 private:
  std::chrono::steady_clock::time_point start_;
  uint64_t transforms_ = 0;
};

}  // namespace tide::core
