// act_simd.h: float32 gelu and its derivative over runs of elements, compiled for the CPU the pack
// runs on (act_simd.cc): the SDK's GeluAct calls scalar erf / exp / tanh per element, ~10x slower.
// Both forms: the exact 0.5 x (1 + erf(x / sqrt2)) and the tanh approximation 0.5 x (1 + tanh(
// sqrt(2 / pi) (x + 0.044715 x^3))). Each result is within a few float32 ulps of the float64
// value (act_simd.cc has the figures), its tail below -3 too, where 1 + erf and 1 + tanh cancel;
// the grads likewise but near their zero at x = -0.75, where it is a few ulps of the terms
// summed. NaN stays NaN, gelu(-inf) = -0, gelu(inf) = inf.
#pragma once

#include <cstdint>

namespace ops_math {

// out[i] = gelu(x[i]). x and out may be the same array (gelu runs in place), as may dout and dx.
void GeluErf(const float* x, float* out, int64_t n);
void GeluTanh(const float* x, float* out, int64_t n);
// dx[i] = dout[i] * gelu'(x[i]).
void GeluErfGrad(const float* x, const float* dout, float* dx, int64_t n);
void GeluTanhGrad(const float* x, const float* dout, float* dx, int64_t n);

}  // namespace ops_math
