// tide/kernels/conv_direct_isa.hpp: the direct convolution's kernels per instruction set, built
// in a header: every function of one set carries that set's target attribute (AVX-512F with FMA:
// 4 vectors of 16 output channels by 6 output positions, 24 of the 32 registers accumulating;
// AVX2 with FMA: 2 vectors of 8 by 6, 12 of the 16; and Winograd's row transforms,
// conv_winograd_row.hpp), so an op pack or a compiled model built for
// any x86-64 (plain -O2, no -m flags) still holds both, and conv_direct.hpp picks one by the CPU
// at run time. Nothing else is built with a set's attribute, so no inline function of another
// header is compiled for it and then chosen by the linker for every caller. Elsewhere (another
// architecture, another compiler) there is none, and the convolutions take im2col + GEMM.
#ifndef TIDE_KERNELS_CONV_DIRECT_ISA_HPP_
#define TIDE_KERNELS_CONV_DIRECT_ISA_HPP_

#include <cstdint>
#include <tide/kernels/conv_direct_job.hpp>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define TIDE_KERNELS_CONV_X86 1
#include <immintrin.h>
#endif

namespace tide {
namespace kernels {

#ifdef TIDE_KERNELS_CONV_X86

namespace conv_avx512 {
#define TIDE_KERNELS_CONV_TARGET __attribute__((target("avx512f,fma")))
struct Vec {
  using T = __m512;
  static constexpr int kLanes = 16;
  TIDE_KERNELS_CONV_TARGET static T Zero() { return _mm512_setzero_ps(); }
  TIDE_KERNELS_CONV_TARGET static T Load(const float* p) { return _mm512_load_ps(p); }
  TIDE_KERNELS_CONV_TARGET static T Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  TIDE_KERNELS_CONV_TARGET static T Fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  TIDE_KERNELS_CONV_TARGET static T Add(T a, T b) { return _mm512_add_ps(a, b); }
  TIDE_KERNELS_CONV_TARGET static T Relu(T a) { return _mm512_max_ps(a, _mm512_setzero_ps()); }
  TIDE_KERNELS_CONV_TARGET static void Store(float* p, T v) { _mm512_store_ps(p, v); }
  // Lanes 8h .. 8h + 7 (h 0 or 1).
  TIDE_KERNELS_CONV_TARGET static __m256 Half(T v, int h) {
    return h == 0 ? _mm512_castps512_ps256(v)
                  : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  }
  // For Winograd's rows (conv_winograd_row.hpp): unaligned, partial (the first n lanes; n < 1
  // none), lane shuffles.
  TIDE_KERNELS_CONV_TARGET static T LoadU(const float* p) { return _mm512_loadu_ps(p); }
  TIDE_KERNELS_CONV_TARGET static void StoreU(float* p, T v) { _mm512_storeu_ps(p, v); }
  TIDE_KERNELS_CONV_TARGET static __mmask16 Mask(int64_t n) {
    return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
  }
  TIDE_KERNELS_CONV_TARGET static T LoadN(const float* p, int64_t n) {
    return n >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(Mask(n), p);
  }
  TIDE_KERNELS_CONV_TARGET static void StoreN(float* p, T v, int64_t n) {
    if (n >= 16)
      _mm512_storeu_ps(p, v);
    else
      _mm512_mask_storeu_ps(p, Mask(n), v);
  }
  TIDE_KERNELS_CONV_TARGET static T Sub(T a, T b) { return _mm512_sub_ps(a, b); }
  TIDE_KERNELS_CONV_TARGET static T Set1(float v) { return _mm512_set1_ps(v); }
  // Lanes 0, 2, .., 30 (Even) or 1, 3, .., 31 (Odd) of a then b.
  TIDE_KERNELS_CONV_TARGET static T Even(T a, T b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
  }
  TIDE_KERNELS_CONV_TARGET static T Odd(T a, T b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
  }
  // a0 b0 a1 b1 .. of lanes 0-7 (Lo) or 8-15 (Hi).
  TIDE_KERNELS_CONV_TARGET static T InterleaveLo(T a, T b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), b);
  }
  TIDE_KERNELS_CONV_TARGET static T InterleaveHi(T a, T b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), b);
  }
};
#include <tide/kernels/conv_direct_tile.hpp>   // NOLINT(build/include): once per set, by design
#include <tide/kernels/conv_winograd_row.hpp>  // NOLINT(build/include): once per set, by design
#undef TIDE_KERNELS_CONV_TARGET
}  // namespace conv_avx512

namespace conv_avx2 {
#define TIDE_KERNELS_CONV_TARGET __attribute__((target("avx2,fma")))
struct Vec {
  using T = __m256;
  static constexpr int kLanes = 8;
  TIDE_KERNELS_CONV_TARGET static T Zero() { return _mm256_setzero_ps(); }
  TIDE_KERNELS_CONV_TARGET static T Load(const float* p) { return _mm256_load_ps(p); }
  TIDE_KERNELS_CONV_TARGET static T Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  TIDE_KERNELS_CONV_TARGET static T Fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  TIDE_KERNELS_CONV_TARGET static T Add(T a, T b) { return _mm256_add_ps(a, b); }
  TIDE_KERNELS_CONV_TARGET static T Relu(T a) { return _mm256_max_ps(a, _mm256_setzero_ps()); }
  TIDE_KERNELS_CONV_TARGET static void Store(float* p, T v) { _mm256_store_ps(p, v); }
  TIDE_KERNELS_CONV_TARGET static __m256 Half(T v, int) { return v; }
  TIDE_KERNELS_CONV_TARGET static T LoadU(const float* p) { return _mm256_loadu_ps(p); }
  TIDE_KERNELS_CONV_TARGET static void StoreU(float* p, T v) { _mm256_storeu_ps(p, v); }
  TIDE_KERNELS_CONV_TARGET static __m256i Mask(int64_t n) {
    const int32_t k = static_cast<int32_t>(n < 0 ? 0 : n > 8 ? 8 : n);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  TIDE_KERNELS_CONV_TARGET static T LoadN(const float* p, int64_t n) {
    return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, Mask(n));
  }
  TIDE_KERNELS_CONV_TARGET static void StoreN(float* p, T v, int64_t n) {
    if (n >= 8)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, Mask(n), v);
  }
  TIDE_KERNELS_CONV_TARGET static T Sub(T a, T b) { return _mm256_sub_ps(a, b); }
  TIDE_KERNELS_CONV_TARGET static T Set1(float v) { return _mm256_set1_ps(v); }
  // Within each 128-bit half, then the 64-bit pairs put in order.
  TIDE_KERNELS_CONV_TARGET static T Even(T a, T b) {
    const __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
  }
  TIDE_KERNELS_CONV_TARGET static T Odd(T a, T b) {
    const __m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
  }
  TIDE_KERNELS_CONV_TARGET static T InterleaveLo(T a, T b) {
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x20);
  }
  TIDE_KERNELS_CONV_TARGET static T InterleaveHi(T a, T b) {
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x31);
  }
};
#include <tide/kernels/conv_direct_tile.hpp>   // NOLINT(build/include): once per set, by design
#include <tide/kernels/conv_winograd_row.hpp>  // NOLINT(build/include): once per set, by design
#undef TIDE_KERNELS_CONV_TARGET
}  // namespace conv_avx2

// The kernels of each set (run only where the CPU has it: DirectConvForCpu).
inline const DirectConvIsa* DirectConvAvx512() {
  using namespace conv_avx512;  // NOLINT(build/namespaces)
  static const DirectConvIsa isa{
      "avx512",
      Vec::kLanes,
      6,
      4,
      {DirectConvRun<1, 6>, DirectConvRun<2, 6>, DirectConvRun<3, 6>, DirectConvRun<4, 6>},
      DirectConvStage,
      WinogradInputRow,
      WinogradOutputRow,
      DirectConvEpilogue};
  return &isa;
}
inline const DirectConvIsa* DirectConvAvx2() {
  using namespace conv_avx2;  // NOLINT(build/namespaces)
  static const DirectConvIsa isa{"avx2",
                                 Vec::kLanes,
                                 6,
                                 2,
                                 {DirectConvRun<1, 6>, DirectConvRun<2, 6>, nullptr, nullptr},
                                 DirectConvStage,
                                 WinogradInputRow,
                                 WinogradOutputRow,
                                 DirectConvEpilogue};
  return &isa;
}

#else
inline const DirectConvIsa* DirectConvAvx512() { return nullptr; }
inline const DirectConvIsa* DirectConvAvx2() { return nullptr; }
#endif

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_DIRECT_ISA_HPP_
