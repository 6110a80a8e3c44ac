// rnn_util.h: the element-wise pieces of the rnn op's CUDA kernels (rnn_ops.cc), which cuDNN's
// RNN calls do not do: the dropout masks between layers in the CPU kernel's format (each element
// 0 or 1 / (1 - p), upscale_in_train, drawn on philox.cuh's generator), their application, the
// DropoutState bytes, a device array of sequence lengths, and the rows of sequences of length 0
// (which cuDNN does not take) set after it. Host functions, float and double.
#pragma once

#include <cstdint>

#include "gpu.h"

namespace tide_cuda {

// masks[i] = 0 with probability p (a float uniform draw < p, as the CPU kernel draws), else
// 1 / (1 - p) (0 when p = 1); element i's draw depends only on (seed, i).
template <typename T>
void RnnDropoutMasks(const Gpu& g, T* masks, int64_t n, uint64_t seed, float p);

// out[i] = x[i] * masks[i] (out may be x).
template <typename T>
void RnnApplyMask(const Gpu& g, const T* x, const T* masks, T* out, int64_t n);

// bytes[i] = 0 where masks[i] == 0, else 1; all 1 when masks is null.
template <typename T>
void RnnKeepBytes(const Gpu& g, const T* masks, uint8_t* bytes, int64_t n);

// p[0, n) = v.
void FillInt32(const Gpu& g, int32_t* p, int64_t n, int32_t v);

// In dst [outer, batch, inner], the rows [o, b, :] of each sequence b whose lengths[b] (device) is
// 0 become src's (0 where src is null); the rest stay.
template <typename T>
void RnnSetEmptyRows(const Gpu& g, T* dst, const T* src, int64_t outer, int64_t batch,
                     int64_t inner, const int32_t* lengths);

// The rnn op's seed attribute as a generator seed: 0 draws a fresh one (philox.cuh's SeedOf).
uint64_t RnnDropoutSeed(int32_t seed);

}  // namespace tide_cuda
