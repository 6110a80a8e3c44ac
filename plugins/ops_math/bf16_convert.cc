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

}  // namespace ops_math
