// rnn_simd.h: float activations and their derivatives over runs of elements, compiled for the
// CPU the pack runs on (rnn_simd.cc): the recurrent ops spend most of their non-GEMM time here.
#pragma once

#include <cstdint>

namespace ops_sequence {

void TanhInPlace(float* x, int64_t n);
void SigmoidInPlace(float* x, int64_t n);
// d[i] *= 1 - y[i]^2 (tanh's derivative) / y[i] (1 - y[i]) (sigmoid's), y the activated value.
void ScaleByTanhDerivative(const float* y, float* d, int64_t n);
void ScaleBySigmoidDerivative(const float* y, float* d, int64_t n);

}  // namespace ops_sequence
