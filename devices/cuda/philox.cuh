// philox.cuh: the counter-based generator of the CUDA plugin's random numbers (Philox4x32-10):
// element i's numbers depend only on (seed, i), so a seeded op repeats them on every run and every
// launch shape. Shared by random_ops.cu (uniform_random, gaussian_random, dropout) and
// rnn_util.cu (the rnn op's dropout masks). CUDA sources only.
#pragma once

#include <cstdint>
#include <random>

namespace tide_cuda {

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
__device__ __forceinline__ uint4 Philox(uint64_t counter, uint64_t seed) {
  uint4 c =
      make_uint4(static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u, 0u);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    const uint32_t hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = make_uint4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

__device__ __forceinline__ uint32_t Word(const uint4& r, int i) {
  return i == 0 ? r.x : i == 1 ? r.y : i == 2 ? r.z : r.w;
}

// Uniform in [0, 1): 24 random bits for float, 53 for double.
__device__ __forceinline__ float Unit(uint32_t a, float) { return (a >> 8) * (1.0f / 16777216.0f); }
__device__ __forceinline__ double Unit(uint32_t a, uint32_t b, double) {
  const uint64_t bits = (uint64_t(a) << 32 | b) >> 11;
  return bits * (1.0 / 9007199254740992.0);
}

// Element i's uniform draw in [0, 1).
template <typename T>
__device__ __forceinline__ T UniformAt(int64_t i, uint64_t seed) {
  if constexpr (sizeof(T) == 4) {
    const uint4 r = Philox(static_cast<uint64_t>(i) >> 2, seed);
    return Unit(Word(r, static_cast<int>(i & 3)), T());
  } else {
    const uint4 r = Philox(static_cast<uint64_t>(i) >> 1, seed);
    return (i & 1) ? Unit(r.z, r.w, T()) : Unit(r.x, r.y, T());
  }
}

// A fresh seed from the host's entropy.
inline uint64_t FreshSeed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}
// An op's seed attribute: 0 draws a fresh one; any other seed repeats the same numbers on every
// run.
inline uint64_t SeedOf(int32_t seed) {
  return seed ? static_cast<uint64_t>(static_cast<uint32_t>(seed)) : FreshSeed();
}

}  // namespace tide_cuda
