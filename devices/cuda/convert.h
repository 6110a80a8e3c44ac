// convert.h: float32 scratch results rounded to the 16-bit types (fill_cast_ops.cu), for host code
// (blas_ops.cc, conv_ops.cc) that accumulates a float16 / bfloat16 result in float32 first.
#pragma once

#include <cstdint>

#include "gpu.h"

namespace tide_cuda {

// out[i] = in[i] rounded to T (nearest even), queued on g's stream; T is __half or __nv_bfloat16.
template <typename T>
void FloatToLow(const Gpu& g, const float* in, T* out, int64_t n);

}  // namespace tide_cuda
