// bf16_bits.h: bfloat16 to float32 as a shift of its bits, the form GCC vectorises in the
// plugin's own loops (Eigen's scalar cast is not), and back where no rounding is needed.
#pragma once

#include <cstdint>
#include <cstring>
#include <tide/low_precision.hpp>

namespace tide_mkldnn {

// Exact: a bfloat16 is float32's upper half.
inline float Widened(float v) { return v; }
inline float Widened(tide::bfloat16 v) {
  const uint32_t u = uint32_t(Eigen::numext::bit_cast<uint16_t>(v)) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline void WidenBf16(const tide::bfloat16* s, float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = Widened(s[i]);
}

// The upper halves of float32 values whose lower halves are zero (values picked or routed from
// bfloat16 ones, never computed): exact, no rounding.
inline void NarrowExactBf16(const float* s, tide::bfloat16* d, int64_t n) {
  auto* bits = reinterpret_cast<uint16_t*>(d);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, s + i, sizeof u);
    bits[i] = uint16_t(u >> 16);
  }
}

}  // namespace tide_mkldnn
