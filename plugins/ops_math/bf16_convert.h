// bf16_convert.h: float <-> bfloat16 over arrays, vectorized for the CPU the pack runs on. AMP
// casts every weight to bfloat16 and every weight gradient back on each step; Eigen converts
// one element at a time (its bfloat16 packets are fixed at compile time: none in a portable
// build). The results are Eigen's, bit for bit.
#pragma once

#include <cstdint>

namespace ops_math {

// y[i] = x[i] rounded to bfloat16's nearest even value; a NaN becomes the quiet NaN of its sign
// (0x7fc0 / 0xffc0), as Eigen::bfloat16(float) does.
void FloatToBfloat16(const float* x, uint16_t* y, int64_t n);

// y[i] = x[i] widened to float (exact).
void Bfloat16ToFloat(const uint16_t* x, float* y, int64_t n);

// acc[i] += x[i] widened to float.
void AddBfloat16(const uint16_t* x, float* acc, int64_t n);

// y[i] = (x[i] * scale + bias) in float, rounded to bfloat16 once (bias_after_scale; else
// (x[i] + bias) * scale); y may be x.
void ScaleBfloat16(const uint16_t* x, uint16_t* y, int64_t n, float scale, float bias,
                   bool bias_after_scale);

}  // namespace ops_math
