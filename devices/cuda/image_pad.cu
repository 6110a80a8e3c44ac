// image_pad.cu: PadImages / CropImages (image_pad.h): one thread per element of the larger
// (padded) or the smaller (cropped) batch, reading the other where the box overlaps it.
#include "image_pad.h"

namespace tide_cuda {
namespace {

// The offset of element (b, ch, y, x) of [n, c, h, w] images in their layout.
__device__ __forceinline__ int64_t ImageOffset(int64_t b, int64_t ch, int64_t y, int64_t x,
                                               int64_t c, int64_t h, int64_t w, bool nhwc) {
  return nhwc ? ((b * h + y) * w + x) * c + ch : ((b * c + ch) * h + y) * w + x;
}

// Element i of [n, c, h, w] images in their layout, as (b, ch, y, x).
struct ImageIndex {
  int64_t b, ch, y, x;
};
__device__ __forceinline__ ImageIndex IndexOf(int64_t i, int64_t c, int64_t h, int64_t w,
                                              bool nhwc) {
  ImageIndex k;
  if (nhwc) {
    k.ch = i % c;
    k.x = (i / c) % w;
    k.y = (i / (c * w)) % h;
    k.b = i / (c * w * h);
  } else {
    k.x = i % w;
    k.y = (i / w) % h;
    k.ch = (i / (w * h)) % c;
    k.b = i / (w * h * c);
  }
  return k;
}

template <typename T>
__global__ void PadImagesKernel(const T* src, ImageDims d, ImagePads p, T* dst, int64_t total) {
  const int64_t ph = d.h + p.top + p.bottom, pw = d.w + p.left + p.right;
  TIDE_CUDA_LOOP(i, total) {
    const ImageIndex k = IndexOf(i, d.c, ph, pw, d.nhwc);
    const int64_t y = k.y - p.top, x = k.x - p.left;
    dst[i] = (y >= 0 && y < d.h && x >= 0 && x < d.w)
                 ? src[ImageOffset(k.b, k.ch, y, x, d.c, d.h, d.w, d.nhwc)]
                 : T(0);
  }
}

template <typename T>
__global__ void CropImagesKernel(const T* src, ImageDims d, ImagePads p, T* dst, int64_t total) {
  const int64_t ph = d.h + p.top + p.bottom, pw = d.w + p.left + p.right;
  TIDE_CUDA_LOOP(i, total) {
    const ImageIndex k = IndexOf(i, d.c, d.h, d.w, d.nhwc);
    dst[i] = src[ImageOffset(k.b, k.ch, k.y + p.top, k.x + p.left, d.c, ph, pw, d.nhwc)];
  }
}

}  // namespace

template <typename T>
void PadImages(const Gpu& g, const T* src, const ImageDims& d, const ImagePads& p, T* dst) {
  const int64_t total = d.n * d.c * (d.h + p.top + p.bottom) * (d.w + p.left + p.right);
  Launch(g, "PadImagesKernel", total, PadImagesKernel<T>, src, d, p, dst, total);
}

template <typename T>
void CropImages(const Gpu& g, const T* src, const ImageDims& d, const ImagePads& p, T* dst) {
  const int64_t total = d.n * d.c * d.h * d.w;
  Launch(g, "CropImagesKernel", total, CropImagesKernel<T>, src, d, p, dst, total);
}

template void PadImages<float>(const Gpu&, const float*, const ImageDims&, const ImagePads&,
                               float*);
template void PadImages<double>(const Gpu&, const double*, const ImageDims&, const ImagePads&,
                                double*);
template void CropImages<float>(const Gpu&, const float*, const ImageDims&, const ImagePads&,
                                float*);
template void CropImages<double>(const Gpu&, const double*, const ImageDims&, const ImagePads&,
                                 double*);
template void PadImages<__half>(const Gpu&, const __half*, const ImageDims&, const ImagePads&,
                                __half*);
template void CropImages<__half>(const Gpu&, const __half*, const ImageDims&, const ImagePads&,
                                 __half*);
template void PadImages<__nv_bfloat16>(const Gpu&, const __nv_bfloat16*, const ImageDims&,
                                       const ImagePads&, __nv_bfloat16*);
template void CropImages<__nv_bfloat16>(const Gpu&, const __nv_bfloat16*, const ImageDims&,
                                        const ImagePads&, __nv_bfloat16*);

}  // namespace tide_cuda
