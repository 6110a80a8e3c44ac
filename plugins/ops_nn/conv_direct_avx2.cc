// conv_direct_avx2.cc: the direct convolution's kernel for AVX2 (this file alone is compiled with
// -mavx2 -mfma; conv_direct.cc calls it only where the CPU has them): 2 vectors of 8 output
// channels by 6 output positions, 12 of the 16 registers accumulating.
#include "conv_direct_job.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace ops_nn {
namespace {
struct Vec {
  using T = __m256;
  static constexpr int kLanes = 8;
  static T Zero() { return _mm256_setzero_ps(); }
  static T Load(const float* p) { return _mm256_load_ps(p); }
  static T Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static T Fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static void Store(float* p, T v) { _mm256_store_ps(p, v); }
};
}  // namespace
}  // namespace ops_nn

#include "conv_direct_kernel.h"

namespace ops_nn {
const DirectConvIsa* DirectConvAvx2() {
  static const DirectConvIsa isa{"avx2",
                                 Vec::kLanes,
                                 6,
                                 2,
                                 {DirectConvRun<1, 6>, DirectConvRun<2, 6>, nullptr, nullptr},
                                 DirectConvStage};
  return &isa;
}
}  // namespace ops_nn
#else
namespace ops_nn {
const DirectConvIsa* DirectConvAvx2() { return nullptr; }
}  // namespace ops_nn
#endif
