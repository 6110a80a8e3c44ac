// bf16_convert.cc: see bf16_convert.h. Plain integer loops that GCC vectorizes; target_clones
// compiles an AVX-512, an AVX2 and a baseline version and picks one when the pack loads.
#include "bf16_convert.h"

#include <cstring>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define OPS_MATH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OPS_MATH_CLONES
#endif

namespace ops_math {

OPS_MATH_CLONES void FloatToBfloat16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &x[i], sizeof u);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
    y[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}

OPS_MATH_CLONES void Bfloat16ToFloat(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(x[i]) << 16;
    std::memcpy(&y[i], &u, sizeof u);
  }
}

OPS_MATH_CLONES void AddBfloat16(const uint16_t* x, float* acc, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(x[i]) << 16;
    float v;
    std::memcpy(&v, &u, sizeof v);
    acc[i] += v;
  }
}

}  // namespace ops_math
