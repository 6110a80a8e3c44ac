// rnn_util.cu: see rnn_util.h.
#include "philox.cuh"
#include "rnn_util.h"

namespace tide_cuda {
namespace {

template <typename T>
__global__ void MasksKernel(T* masks, int64_t n, uint64_t seed, float p, T keep) {
  TIDE_CUDA_LOOP(i, n) { masks[i] = UniformAt<float>(i, seed) < p ? T(0) : keep; }
}

template <typename T>
__global__ void ApplyMaskKernel(const T* x, const T* masks, T* out, int64_t n) {
  TIDE_CUDA_LOOP(i, n) { out[i] = x[i] * masks[i]; }
}

template <typename T>
__global__ void KeepBytesKernel(const T* masks, uint8_t* bytes, int64_t n) {
  TIDE_CUDA_LOOP(i, n) { bytes[i] = masks && masks[i] == T(0) ? 0 : 1; }
}

__global__ void FillInt32Kernel(int32_t* p, int64_t n, int32_t v) {
  TIDE_CUDA_LOOP(i, n) { p[i] = v; }
}

template <typename T>
__global__ void SetEmptyRowsKernel(T* dst, const T* src, int64_t n, int64_t batch, int64_t inner,
                                   const int32_t* lengths) {
  TIDE_CUDA_LOOP(i, n) {
    if (lengths[(i / inner) % batch] == 0) dst[i] = src ? src[i] : T(0);
  }
}

}  // namespace

template <typename T>
void RnnDropoutMasks(const Gpu& g, T* masks, int64_t n, uint64_t seed, float p) {
  // The CPU kernel's keep value, in T.
  const T keep = p < 1.0f ? T(1) / (T(1) - static_cast<T>(p)) : T(0);
  Launch(g, "RnnDropoutMasksKernel", n, MasksKernel<T>, masks, n, seed, p, keep);
}

template <typename T>
void RnnApplyMask(const Gpu& g, const T* x, const T* masks, T* out, int64_t n) {
  Launch(g, "RnnApplyMaskKernel", n, ApplyMaskKernel<T>, x, masks, out, n);
}

template <typename T>
void RnnKeepBytes(const Gpu& g, const T* masks, uint8_t* bytes, int64_t n) {
  Launch(g, "RnnKeepBytesKernel", n, KeepBytesKernel<T>, masks, bytes, n);
}

void FillInt32(const Gpu& g, int32_t* p, int64_t n, int32_t v) {
  Launch(g, "FillInt32Kernel", n, FillInt32Kernel, p, n, v);
}

template <typename T>
void RnnSetEmptyRows(const Gpu& g, T* dst, const T* src, int64_t outer, int64_t batch,
                     int64_t inner, const int32_t* lengths) {
  const int64_t n = outer * batch * inner;
  Launch(g, "RnnSetEmptyRowsKernel", n, SetEmptyRowsKernel<T>, dst, src, n, batch, inner, lengths);
}

uint64_t RnnDropoutSeed(int32_t seed) { return SeedOf(seed); }

#define TIDE_RNN_UTIL_INSTANTIATE(T)                                                    \
  template void RnnDropoutMasks<T>(const Gpu&, T*, int64_t, uint64_t, float);           \
  template void RnnApplyMask<T>(const Gpu&, const T*, const T*, T*, int64_t);           \
  template void RnnKeepBytes<T>(const Gpu&, const T*, uint8_t*, int64_t);               \
  template void RnnSetEmptyRows<T>(const Gpu&, T*, const T*, int64_t, int64_t, int64_t, \
                                   const int32_t*);
TIDE_RNN_UTIL_INSTANTIATE(float)
TIDE_RNN_UTIL_INSTANTIATE(double)
#undef TIDE_RNN_UTIL_INSTANTIATE

}  // namespace tide_cuda
