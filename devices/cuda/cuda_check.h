// cuda_check.h: what the device's host code shares: CUDA errors as Tide errors naming the call,
// and a scope that makes a device current (cuda_device.cc, cuda_collective.cc).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <tide/plugin.hpp>

namespace tide_cuda {

inline void CudaCheck(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call does not see it
  TIDE_THROW(e == cudaErrorMemoryAllocation ? TIDE_RESOURCE_EXHAUSTED : TIDE_INTERNAL, what, ": ",
             cudaGetErrorName(e), ": ", cudaGetErrorString(e));
}

// Makes `device` current for the scope and restores the caller's device after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&prev_) != cudaSuccess) {
      cudaGetLastError();
      prev_ = -1;
    }
    if (prev_ != device) {
      CudaCheck(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
      switched_ = true;
    }
  }
  ~DeviceGuard() {
    if (switched_ && prev_ >= 0) cudaSetDevice(prev_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
  bool switched_ = false;
};

}  // namespace tide_cuda
