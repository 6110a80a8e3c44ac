// tide/kernels/conv_direct_isa.hpp: the direct convolution's kernels per instruction set, built
// in a header: every function of one set carries that set's target attribute (AVX-512F with FMA:
// 4 vectors of 16 output channels by 6 output positions, 24 of the 32 registers accumulating;
// AVX2 with FMA: 2 vectors of 8 by 6, 12 of the 16), so an op pack or a compiled model built for
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
};
#include <tide/kernels/conv_direct_tile.hpp>  // NOLINT(build/include): once per set, by design
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
};
#include <tide/kernels/conv_direct_tile.hpp>  // NOLINT(build/include): once per set, by design
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
      DirectConvStage};
  return &isa;
}
inline const DirectConvIsa* DirectConvAvx2() {
  using namespace conv_avx2;  // NOLINT(build/namespaces)
  static const DirectConvIsa isa{"avx2",
                                 Vec::kLanes,
                                 6,
                                 2,
                                 {DirectConvRun<1, 6>, DirectConvRun<2, 6>, nullptr, nullptr},
                                 DirectConvStage};
  return &isa;
}

#else
inline const DirectConvIsa* DirectConvAvx512() { return nullptr; }
inline const DirectConvIsa* DirectConvAvx2() { return nullptr; }
#endif

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_DIRECT_ISA_HPP_
