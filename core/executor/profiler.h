// profiler.h: per-op wall time (--profile_ops): which kernels and transforms a program spends its
// time in. Off by default: the run loop then pays one flag check per op.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tide::core {

struct OpProfile {
  std::string name;  // "conv2d {cpu, float32, OPAQUE, a_library}"
  uint64_t calls = 0;
  double total_ms = 0;
};

// Adds one timed call.
void RecordOpTime(const std::string& name, double ms);
// Everything recorded since the last reset, slowest first.
std::vector<OpProfile> OpProfiles();
void ResetOpProfiles();
// A table of OpProfiles().
std::string OpProfileReport();

}  // namespace tide::core
