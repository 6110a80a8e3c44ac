// arena_plan.h: one memory arena for a frozen plan's temporaries: each gets an offset, and two
// whose lifetimes (op ranges) do not overlap may share bytes, as the executor's release plan lets
// one temporary's memory go to the next.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tide::core {

// A temporary of `bytes`, live from op `first` through op `last` (inclusive: an op's inputs and
// outputs never share).
struct ArenaRequest {
  uint64_t bytes = 0;
  size_t first = 0, last = 0;
};

struct ArenaLayout {
  std::vector<uint64_t> offsets;  // parallel to the requests, multiples of the alignment
  uint64_t bytes = 0;             // the arena's size
};

// Largest first, each at the lowest aligned offset clear of every placed request whose lifetime
// overlaps its own (the greedy-by-size placement TFLite and ONNX Runtime use).
ArenaLayout PlanArena(const std::vector<ArenaRequest>& requests, uint64_t alignment);

}  // namespace tide::core
