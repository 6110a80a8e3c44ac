// image_pad.h: explicit zero padding of an image batch (NCHW or NHWC) into scratch memory, and the
// crop back, so that a cuDNN convolution, which pads both sides alike, can run Fluid's asymmetric
// (4-value, or SAME with an odd total) paddings: conv2d pads Input and runs unpadded; its grad
// crops the padded Input@GRAD. Host functions (callable from .cc files), float and double, __half
// and __nv_bfloat16.
#pragma once

#include <cstdint>

#include "gpu.h"

namespace tide_cuda {

// [n, c, h, w] images, laid out NCHW or (nhwc) NHWC.
struct ImageDims {
  int64_t n, c, h, w;
  bool nhwc;
};

// The rows and columns added around each image: top, bottom, left, right.
struct ImagePads {
  int64_t top, bottom, left, right;
};

// dst (h + top + bottom, w + left + right; the same layout) = src with zeros around it.
template <typename T>
void PadImages(const Gpu& g, const T* src, const ImageDims& d, const ImagePads& p, T* dst);

// dst (d's dims) = the box of src (the padded dims) at (top, left): PadImages' inverse.
template <typename T>
void CropImages(const Gpu& g, const T* src, const ImageDims& d, const ImagePads& p, T* dst);

}  // namespace tide_cuda
