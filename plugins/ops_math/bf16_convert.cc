// bf16_convert.cc: see bf16_convert.h. Plain integer loops that GCC vectorizes; target_clones
// compiles an AVX-512, an AVX2 and a baseline version and picks one when the pack loads.
#include "bf16_convert.h"

#include <cstring>
#include <tide/low_precision.hpp>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define OPS_MATH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OPS_MATH_CLONES
#endif

namespace ops_math {

OPS_MATH_CLONES void FloatToBfloat16(const float* x, uint16_t* y, int64_t n) {
  tide::FloatToBfloat16Bits(x, y, n);  // inlined into each clone, vectorized for its ISA
}

OPS_MATH_CLONES void Bfloat16ToFloat(const uint16_t* x, float* y, int64_t n) {
  tide::Bfloat16BitsToFloat(x, y, n);
}

OPS_MATH_CLONES void AddBfloat16(const uint16_t* x, float* acc, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(x[i]) << 16;
    float v;
    std::memcpy(&v, &u, sizeof v);
    acc[i] += v;
  }
}

OPS_MATH_CLONES void ScaleBfloat16(const uint16_t* x, uint16_t* y, int64_t n, float scale,
                                   float bias, bool bias_after_scale) {
  constexpr int64_t kBlock = 256;  // widened on the stack, a block at a time
  float v[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = n - b < kBlock ? n - b : kBlock;
    tide::Bfloat16BitsToFloat(x + b, v, m);
    if (bias_after_scale)
      for (int64_t i = 0; i < m; ++i) v[i] = v[i] * scale + bias;
    else
      for (int64_t i = 0; i < m; ++i) v[i] = (v[i] + bias) * scale;
    tide::FloatToBfloat16Bits(v, y + b, m);
  }
}

}  // namespace ops_math
