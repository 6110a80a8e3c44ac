// box.cuh: walks over a box of a larger tensor (slice, pad, expand, crop): element e of the box
// (row-major) <-> the element of the larger tensor at
// sum_d (start[d] + (idx[d] mod wrap[d]) * step[d]) * stride[d].
#pragma once

#include <climits>

#include "gpu.h"

namespace tide_cuda {

constexpr int kMaxRank = 9;

struct BoxView {
  int rank;
  int64_t dims[kMaxRank];    // the box, walked row-major
  int64_t start[kMaxRank];   // first index in the large tensor per dim
  int64_t step[kMaxRank];    // its step per box index (negative: backwards)
  int64_t wrap[kMaxRank];    // box index taken modulo this (expand), INT64_MAX: none
  int64_t stride[kMaxRank];  // the large tensor's row-major strides
};

__device__ __forceinline__ int64_t BoxOffset(const BoxView& v, int64_t e) {
  int64_t off = 0;
  for (int d = v.rank - 1; d >= 0; --d) {
    const int64_t q = e / v.dims[d], i = e - q * v.dims[d];
    off += (v.start[d] + (i % v.wrap[d]) * v.step[d]) * v.stride[d];
    e = q;
  }
  return off;
}

// box[e] = large[offset(e)]
template <typename T>
__global__ void BoxGatherKernel(const T* large, BoxView v, T* box, int64_t n) {
  TIDE_CUDA_LOOP(e, n) { box[e] = large[BoxOffset(v, e)]; }
}

// large[offset(e)] = box[e] (the offsets are distinct: no wrap)
template <typename T>
__global__ void BoxScatterKernel(const T* box, BoxView v, T* large, int64_t n) {
  TIDE_CUDA_LOOP(e, n) { large[BoxOffset(v, e)] = box[e]; }
}

// A box of `box` dims inside a tensor of `large` dims, at `start` with `step` (empty: 0 and 1).
inline BoxView MakeBox(const Gpu& g, const Dims& box, const Dims& large, const Dims& start,
                       const Dims& step) {
  TIDE_CHECK(box.size() <= size_t(kMaxRank), "op '", g.op(),
             "': the GPU kernel takes rank <= ", kMaxRank, ", got ", box.size());
  BoxView v{};
  v.rank = static_cast<int>(box.size());
  for (int d = 0; d < v.rank; ++d) {
    v.dims[d] = box[d];
    v.start[d] = start.empty() ? 0 : start[d];
    v.step[d] = step.empty() ? 1 : step[d];
    v.wrap[d] = INT64_MAX;
  }
  int64_t stride = 1;  // the large tensor's row-major strides
  for (int d = static_cast<int>(large.size()) - 1; d >= 0; --d) {
    if (d < v.rank) v.stride[d] = stride;
    stride *= large[d];
  }
  return v;
}

}  // namespace tide_cuda
