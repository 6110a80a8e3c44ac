// conv_direct_avx512.cc: the direct convolution's kernel for AVX-512 (this file alone is compiled
// with -mavx512f -mfma; conv_direct.cc calls it only where the CPU has them): 4 vectors of 16
// output channels by 6 output positions, 24 of the 32 registers accumulating.
#include "conv_direct_job.h"

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

namespace ops_nn {
namespace {
struct Vec {
  using T = __m512;
  static constexpr int kLanes = 16;
  static T Zero() { return _mm512_setzero_ps(); }
  static T Load(const float* p) { return _mm512_load_ps(p); }
  static T Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static T Fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static void Store(float* p, T v) { _mm512_store_ps(p, v); }
};
}  // namespace
}  // namespace ops_nn

#include "conv_direct_kernel.h"

namespace ops_nn {
const DirectConvIsa* DirectConvAvx512() {
  static const DirectConvIsa isa{
      "avx512",
      Vec::kLanes,
      6,
      4,
      {DirectConvRun<1, 6>, DirectConvRun<2, 6>, DirectConvRun<3, 6>, DirectConvRun<4, 6>},
      DirectConvStage};
  return &isa;
}
}  // namespace ops_nn
#else
namespace ops_nn {
const DirectConvIsa* DirectConvAvx512() { return nullptr; }
}  // namespace ops_nn
#endif
