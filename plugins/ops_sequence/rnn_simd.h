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

// One LSTM row with Fluid's default activations (sigmoid gates, tanh cell and candidate) in one
// fused pass; lstm_op.cc's CellForward / CellBackward say what each computes. Every pointer is
// valid: a missing c_prev or peephole is a row of zeros, a gradient not wanted a scratch row.
void LstmCellForwardSigmoidTanh(int64_t d, float* g, const float* pc, const float* wic,
                                const float* wfc, const float* woc, float* c, float* pre, float* h);
void LstmCellBackwardSigmoidTanh(int64_t d, const float* g, const float* pre, const float* pc,
                                 const float* wic, const float* wfc, const float* woc,
                                 const float* dh, float* dc, float* dg, float* dpc);

}  // namespace ops_sequence
