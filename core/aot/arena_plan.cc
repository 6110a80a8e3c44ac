// arena_plan.cc: see arena_plan.h.
#include "core/aot/arena_plan.h"

#include <algorithm>
#include <numeric>

namespace tide::core {

ArenaLayout PlanArena(const std::vector<ArenaRequest>& requests, uint64_t alignment) {
  const uint64_t align = std::max<uint64_t>(alignment, 1);
  auto round_up = [&](uint64_t n) { return (n + align - 1) / align * align; };
  ArenaLayout layout;
  layout.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const ArenaRequest& r = requests[i];
    // The placed requests live at the same time as this one, by offset.
    std::vector<size_t> clash;
    for (size_t j : placed)
      if (requests[j].first <= r.last && r.first <= requests[j].last) clash.push_back(j);
    std::sort(clash.begin(), clash.end(),
              [&](size_t a, size_t b) { return layout.offsets[a] < layout.offsets[b]; });
    uint64_t offset = 0;
    for (size_t j : clash) {
      if (offset + r.bytes <= layout.offsets[j]) break;  // fits in the gap before j
      offset = std::max(offset, round_up(layout.offsets[j] + requests[j].bytes));
    }
    layout.offsets[i] = offset;
    layout.bytes = std::max(layout.bytes, round_up(offset + r.bytes));
    placed.push_back(i);
  }
  return layout;
}

}  // namespace tide::core
