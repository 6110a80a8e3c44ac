// act_simd.cc: see act_simd.h. Plain loops that GCC vectorizes; with target_clones it compiles an
// AVX-512, an AVX2 + FMA and a baseline version of each and picks one when the pack loads, so
// nothing here requires an ISA (as ops_sequence's rnn_simd.cc). Branch-free: both sides of x < 0
// are computed and one is selected.
//
// Not 1 + erf(x / sqrt2) with a fast erf (Eigen's generic_fast_erf_float): below x = -1 that sum
// cancels (gelu(-3) would be ~100 ulps off, and from x = -5.5 on it is 0 instead of -1e-7).
// Instead, with a = |x| and Phi the normal distribution function,
//   Phi(-a) = erfc(a / sqrt2) / 2 = exp(-a^2 / 2) * erfcx(a / sqrt2) / 2,   Phi(a) = 1 - Phi(-a),
// erfcx (smooth, in (0, 1]) as a rational function of a with positive coefficients (a minimax
// fit made for this file: relative error 1.5e-8 over [0, 15]). exp(-a^2 / 2) keeps all its bits:
// a^2 is split exactly into a^2's leading part (a's first 12 bits squared) and a small rest, and
// exp takes both (an exponent of -100 rounded to float would cost 100 ulps). The tanh form:
// 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)) with exp(-2|u|), its exponent computed in double (a^3
// needs more than 24 bits) and handed over as two floats. Measured against float64 at every
// float32 x (all 2^32, the AVX-512 clone): gelu within 6.3 ulps (erf form) and 3.6 (tanh form);
// the grads within 5.0 and 7.8 but in (-1.5, -0.4), around their zero at x = -0.75, where the
// terms Phi(x) and x phi(x) cancel; everywhere within 3.8 and 5.3 ulps of the terms' sum. The
// baseline clone (no FMA): up to 8.4 ulps (erf form) and 9.3 (tanh form's grad) on a grid.
//
// exp is Eigen's pexp_float (Cephes' polynomial after x = m ln2 + r); 2^m is built in the exponent
// bits, as two factors so that results down to the denormals round once (gelu(-13.5) is -1e-40).
#include "act_simd.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
// FP compares may trap (by default GCC assumes they can), which keeps it from turning the selects
// into vector blends: without traps every clone vectorizes. Nothing here sets FP flags.
#pragma GCC optimize("no-trapping-math")
// x86-64-v3 (AVX2 with FMA) rather than avx2 alone: fused multiply-adds round once, which takes
// the erf form's worst error from 8.4 ulps (SSE2, AVX2 without FMA) to 6.1, and are faster.
#define OPS_MATH_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define OPS_MATH_CLONES
#endif

namespace ops_math {
namespace {

inline uint32_t Bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}
inline float FromBits(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}

// x + kRound - kRound is x rounded to an integer (|x| < 2^22), and the sum's low mantissa bits
// hold that integer.
constexpr float kRound = 12582912.0f;  // 1.5 * 2^23

// 2^m for an integer m in [-126, 127]: m + 127 in the exponent bits (shifted in from the low
// bits of m + 127 + kRound). Any other m gives some float, never undefined behaviour.
inline float Pow2(float m) { return FromBits(Bits(m + (kRound + 127.0f)) << 23); }

// exp(h + l) = y * 2^m for h + l in [-113, 0], h exact (the reduction subtracts m ln2 from it
// without rounding) and l small: Eigen's pexp_float with the low part added to the remainder.
struct Exp2Parts {
  float y;  // in [0.7, 1.42]
  float m;  // an integer
};
inline Exp2Parts ExpHiLo(float h, float l) {
  const float m = ((h + l) * 1.44269504088896341f + kRound) - kRound;
  float r = h - m * 0.693359375f;  // exact: m has 8 bits, the constant 9
  r = r + m * 2.12194440e-4f;      // ln2 = 0.693359375 - 2.12194440e-4
  r = r + l;
  const float r2 = r * r;
  float p = 1.9875691500e-4f * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return {1.0f + (p * r2 + r), m};  // one rounding at 1
}

// 2^m for an integer m in [-252, 0] as two normal factors: (v * lo) * hi rounds once, even where
// v 2^m is denormal.
struct Pow2Pair {
  float lo, hi;
};
inline Pow2Pair Pow2Split(float m) {
  const float half = (m * 0.5f + kRound) - kRound;
  return {Pow2(half), Pow2(m - half)};
}
inline float Scaled(float v, Pow2Pair p) { return v * p.lo * p.hi; }

// Beyond these |x| every result is 0 (below) or x (above) in float32: the formulas run on |x|
// clamped to them (a NaN stays NaN through the clamp).
constexpr float kErfMaxAbs = 15.0f;   // gelu(-15) = -2e-50, gelu'(-15) = -1e-48
constexpr float kTanhMaxAbs = 11.0f;  // exp(-2|u|) = 1e-49 there
inline float ClampAbs(float x, float max_abs) {
  const float a = x < 0.0f ? -x : x;
  return a > max_abs ? max_abs : a;
}

constexpr float kInvSqrt2Pi = 0.398942280401432678f;  // 1 / sqrt(2 pi)

// Phi(-a) = half_erfcx * y * 2^m for a >= 0 (Phi the normal distribution function):
// erfcx(a / sqrt2) / 2 and exp(-a^2 / 2) = y * 2^m.
struct NormalTail {
  float half_erfcx;  // erfcx(a / sqrt2) / 2
  Exp2Parts e;       // exp(-a^2 / 2)
};
inline NormalTail NormalTailOf(float a) {
  float n = 4.160204437e-03f * a + 4.092790186e-02f;
  n = n * a + 1.841075122e-01f;
  n = n * a + 4.394696653e-01f;
  n = n * a + 0.5f;
  float d = 1.042797603e-02f * a + 1.025970876e-01f;
  d = d * a + 4.717741013e-01f;
  d = d * a + 1.206122160e+00f;
  d = d * a + 1.676824331e+00f;
  d = d * a + 1.0f;
  // a^2 = hi^2 + lo (a + hi), hi = a's leading 12 bits: hi^2 is exact, lo (a + hi) small.
  const float hi = FromBits(Bits(a) & 0xFFFFF000u);
  const float lo = a - hi;
  return {n / d, ExpHiLo(-0.5f * hi * hi, -0.5f * lo * (a + hi))};
}

// For the tanh form: exp(-2 |u|), 2 |u| = a (kC1 + kC3 a^2), as y * 2^m. The exponent is
// computed in double (a^3 needs more than float's 24 bits) and handed over as high + low floats.
constexpr double kC1 = 1.5957691216057307;  // 2 sqrt(2 / pi)
constexpr double kC3 = 1.5957691216057307 * 0.044715;
inline Exp2Parts ExpMinus2U(float a) {
  const double ad = a;
  const double w = -ad * (kC1 + kC3 * ad * ad);
  const float hi = static_cast<float>(w);
  return ExpHiLo(hi, static_cast<float>(w - static_cast<double>(hi)));
}

}  // namespace

OPS_MATH_CLONES void GeluErf(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float a = ClampAbs(v, kErfMaxAbs);
    const NormalTail tail = NormalTailOf(a);
    const Pow2Pair p = Pow2Split(tail.e.m);
    const float q = tail.half_erfcx * tail.e.y;
    // x < 0: x Phi(x) = -a q 2^m; else x (1 - q 2^m).
    const float neg = Scaled(-a * q, p);
    const float pos = v * (1.0f - Scaled(q, p));
    out[i] = v < 0.0f ? neg : pos;
  }
}

OPS_MATH_CLONES void GeluErfGrad(const float* x, const float* dout, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float a = ClampAbs(v, kErfMaxAbs);
    const NormalTail tail = NormalTailOf(a);
    // gelu' = Phi(x) + x phi(x), phi(x) = exp(-a^2 / 2) / sqrt(2 pi): with d = (a / sqrt(2 pi)
    // - erfcx / 2) exp(-a^2 / 2), -d below 0 and 1 + d above.
    const float d = Scaled((a * kInvSqrt2Pi - tail.half_erfcx) * tail.e.y, Pow2Split(tail.e.m));
    dx[i] = dout[i] * (v < 0.0f ? -d : 1.0f + d);
  }
}

OPS_MATH_CLONES void GeluTanh(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float a = ClampAbs(v, kTanhMaxAbs);
    const Exp2Parts e = ExpMinus2U(a);
    const Pow2Pair p = Pow2Split(e.m);
    // 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)): x / (1 + E) above 0, x E / (1 + E) below, E =
    // exp(-2|u|).
    const float r = 1.0f / (1.0f + Scaled(e.y, p));
    const float neg = Scaled(-a * e.y * r, p);
    out[i] = v < 0.0f ? neg : v * r;
  }
}

OPS_MATH_CLONES void GeluTanhGrad(const float* x, const float* dout, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float a = ClampAbs(v, kTanhMaxAbs);
    const Exp2Parts e = ExpMinus2U(a);
    const Pow2Pair p = Pow2Split(e.m);
    // gelu = x s(2u), s the sigmoid; gelu' = s (1 + x (1 - s) 2u'), 2u' = kC1 + 3 kC3 x^2.
    // With E = exp(-2|u|) and r = 1 / (1 + E): above 0 s = r and 1 - s = E r, below s = E r and
    // 1 - s = r (no cancellation on either side).
    const float r = 1.0f / (1.0f + Scaled(e.y, p));
    const float du = a * (static_cast<float>(kC1) + static_cast<float>(3 * kC3) * a * a);  // a 2u'
    const float neg = Scaled(e.y * r * (1.0f - du * r), p);
    const float pos = r * (1.0f + du * Scaled(e.y * r, p));
    dx[i] = dout[i] * (v < 0.0f ? neg : pos);
  }
}

}  // namespace ops_math
