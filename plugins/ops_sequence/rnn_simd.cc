// rnn_simd.cc: see rnn_simd.h. Plain loops that GCC vectorizes; with target_clones it compiles an
// AVX-512, an AVX2 and a baseline version of each and picks one when the pack loads, so nothing
// here requires an ISA (Eigen's packets are fixed at compile time: SSE2 for a portable build).
// tanh is Eigen's rational approximation (the one its vectorized tanh uses for float).
#include "rnn_simd.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
// FP compares may trap (by default GCC assumes they can), which keeps it from turning tanh's
// clamp into vector selects: without traps every clone vectorizes. Nothing here sets FP flags.
#pragma GCC optimize("no-trapping-math")
#define OPS_SEQUENCE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OPS_SEQUENCE_CLONES
#endif

namespace ops_sequence {
namespace {

inline float FastTanh(float a) {
  const float clamp = 7.90531110763549805f;
  const float hi = a > clamp ? clamp : a;
  const float x = hi < -clamp ? -clamp : hi;
  const float x2 = x * x;
  float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = x2 * p + -8.60467152213735e-11f;
  p = x2 * p + 5.12229709037114e-08f;
  p = x2 * p + 1.48572235717979e-05f;
  p = x2 * p + 6.37261928875436e-04f;
  p = x2 * p + 4.89352455891786e-03f;
  p = x * p;
  float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = x2 * q + 2.26843463243900e-03f;
  q = x2 * q + 4.89352518554385e-03f;
  return p / q;  // near 0 that is x (1 - 1e-8): Eigen's special case for tiny x is not needed
}

}  // namespace

OPS_SEQUENCE_CLONES void TanhInPlace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = FastTanh(x[i]);
}

OPS_SEQUENCE_CLONES void SigmoidInPlace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * FastTanh(0.5f * x[i]) + 0.5f;
}

OPS_SEQUENCE_CLONES void ScaleByTanhDerivative(const float* y, float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] *= 1.0f - y[i] * y[i];
}

OPS_SEQUENCE_CLONES void ScaleBySigmoidDerivative(const float* y, float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] *= y[i] * (1.0f - y[i]);
}

// __restrict (on parameters, where GCC honours it): no row overlaps another; without it GCC gives
// up checking the overlaps of 11 pointers at run time and does not vectorize.
OPS_SEQUENCE_CLONES static void LstmForwardRow(int64_t d, float* __restrict cand,
                                               float* __restrict ig, float* __restrict fg,
                                               float* __restrict og, const float* __restrict pc,
                                               const float* __restrict wic,
                                               const float* __restrict wfc,
                                               const float* __restrict woc, float* __restrict c,
                                               float* __restrict pre, float* __restrict h) {
  for (int64_t j = 0; j < d; ++j) {
    const float ct = FastTanh(cand[j]);
    const float i = 0.5f * FastTanh(0.5f * (ig[j] + pc[j] * wic[j])) + 0.5f;
    const float f = 0.5f * FastTanh(0.5f * (fg[j] + pc[j] * wfc[j])) + 0.5f;
    const float cj = ct * i + pc[j] * f;
    const float o = 0.5f * FastTanh(0.5f * (og[j] + cj * woc[j])) + 0.5f;
    const float tc = FastTanh(cj);
    cand[j] = ct;
    ig[j] = i;
    fg[j] = f;
    og[j] = o;
    c[j] = cj;
    pre[j] = tc;
    h[j] = o * tc;
  }
}

void LstmCellForwardSigmoidTanh(int64_t d, float* g, const float* pc, const float* wic,
                                const float* wfc, const float* woc, float* c, float* pre,
                                float* h) {
  LstmForwardRow(d, g, g + d, g + 2 * d, g + 3 * d, pc, wic, wfc, woc, c, pre, h);
}

OPS_SEQUENCE_CLONES void LstmCellBackwardSigmoidTanh(
    int64_t d, const float* __restrict g, const float* __restrict pre, const float* __restrict pc,
    const float* __restrict wic, const float* __restrict wfc, const float* __restrict woc,
    const float* __restrict dh, float* __restrict dc, float* __restrict dg, float* __restrict dpc) {
  for (int64_t j = 0; j < d; ++j) {
    const float ct = g[j], i = g[d + j], f = g[2 * d + j], o = g[3 * d + j], tc = pre[j];
    const float dog = dh[j] * tc * o * (1.0f - o);
    const float dcj = dc[j] + dh[j] * o * (1.0f - tc * tc) + dog * woc[j];
    const float dig = dcj * ct * i * (1.0f - i);
    const float dfg = dcj * pc[j] * f * (1.0f - f);
    dg[j] = dcj * i * (1.0f - ct * ct);
    dg[d + j] = dig;
    dg[2 * d + j] = dfg;
    dg[3 * d + j] = dog;
    dc[j] = dcj;
    dpc[j] += dcj * f + dig * wic[j] + dfg * wfc[j];
  }
}

}  // namespace ops_sequence
