// dnn.h: what the cuDNN kernels share (conv_ops.cc, rnn_ops.cc): cuDNN errors naming the op and
// the place, the context's cuDNN handle, T's cuDNN data type, the TF32 opt-in, and dims as
// cuDNN's ints.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "cuda_libs.h"
#include "gpu.h"

namespace tide_cuda {

inline void CheckDnn(const Gpu& g, cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS)
    TIDE_THROW(s == CUDNN_STATUS_ALLOC_FAILED ? TIDE_RESOURCE_EXHAUSTED : TIDE_INTERNAL, "op '",
               g.op(), "' on ", g.place().ToString(), ": ", call, ": ", CudnnStatusText(s));
}

// The kernel's cuDNN handle (bound to the context's stream when the context was made).
inline cudnnHandle_t DnnHandle(const Gpu& g) {
  Cudnn();  // throws with the loader's reason when cuDNN is missing
  if (!g.ext().cudnn)
    TIDE_THROW(TIDE_UNAVAILABLE, "op '", g.op(), "': cuDNN could not be set up on ",
               g.place().ToString(), " (the reason is in the log of its context's creation)");
  return static_cast<cudnnHandle_t>(g.ext().cudnn);
}

// The cuDNN data type of T's tensors and filters.
template <typename T>
constexpr cudnnDataType_t DnnType() {
  if constexpr (std::is_same_v<T, float>)
    return CUDNN_DATA_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return CUDNN_DATA_DOUBLE;
  else if constexpr (std::is_same_v<T, __half>)
    return CUDNN_DATA_HALF;
  else
    return CUDNN_DATA_BFLOAT16;
}

// TIDE_CUDA_ALLOW_TF32=1: float32 may be rounded to TF32 on tensor cores (README).
inline bool AllowTf32() {
  const char* v = std::getenv("TIDE_CUDA_ALLOW_TF32");
  return v && std::strcmp(v, "1") == 0;
}

inline int AsInt(const KernelContext& ctx, int64_t v) {
  TIDE_CHECK(v >= 0 && v <= INT32_MAX, "op '", ctx.op_type(), "': dim ", v,
             " exceeds cuDNN's int range");
  return static_cast<int>(v);
}

}  // namespace tide_cuda
