// tide/ops/host_device.hpp: TIDE_OPS_HOST_DEVICE marks the semantics functions a CUDA kernel
// calls too (__host__ __device__ under nvcc, nothing elsewhere).
#ifndef TIDE_OPS_HOST_DEVICE_HPP_
#define TIDE_OPS_HOST_DEVICE_HPP_

#ifdef __CUDACC__
#define TIDE_OPS_HOST_DEVICE __host__ __device__
#else
#define TIDE_OPS_HOST_DEVICE
#endif

#endif  // TIDE_OPS_HOST_DEVICE_HPP_
