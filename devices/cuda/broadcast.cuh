// broadcast.cuh: Fluid's elementwise broadcast (tide/ops/broadcast.hpp) on the device: which
// element of Y pairs with element i of X, for the elementwise and compare kernels.
#pragma once

#include <tide/ops/broadcast.hpp>

#include "gpu.h"

namespace tide_cuda {

// Element i of X pairs with element j = (i / post) % n of Y (j = i when the shapes agree), or
// through the shared header's index when Y has repeated dims inside its range (general).
struct YPairing {
  int64_t n, post;
  bool same, general;
  tide::ops::BroadcastIndex index;
  explicit YPairing(const tide::ops::Broadcast& b)
      : n(b.n), post(b.post), same(b.same), general(b.general), index(b.index) {}
  __device__ __forceinline__ int64_t operator()(int64_t i) const {
    if (same) return i;
    if (general) return index(i);
    return post == 1 ? i % n : (i / post) % n;
  }
};

}  // namespace tide_cuda
