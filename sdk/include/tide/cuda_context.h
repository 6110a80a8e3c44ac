/* tide/cuda_context.h: what the CUDA device plugin publishes to op packs (extension "tide.cuda").
 * Get it with TideHostApi.DeviceContext_Extension(ctx, TIDE_CUDA_CONTEXT_EXTENSION); in C++,
 * ctx.DeviceExtension<TideCudaContext>(TIDE_CUDA_CONTEXT_EXTENSION) on a tide::KernelContext.
 *
 * A third-party CUDA op pack runs on Tide's stream with it:
 *
 *   const auto& cu = ctx.DeviceExtension<TideCudaContext>(TIDE_CUDA_CONTEXT_EXTENSION);
 *   cudaSetDevice(cu.device);              // when the calling thread may be on another device
 *   my_kernel<<<grid, block, 0, (cudaStream_t)cu.stream>>>(...);
 *   cublasSgemm((cublasHandle_t)cu.cublas, ...);   // already bound to cu.stream
 *
 * Rules:
 *  - Queue all work on `stream` and return without synchronising: the core synchronises the
 *    context (TideHostApi.DeviceContext_Synchronize) before the host reads device data. Memory a
 *    kernel gets from the core (tensors, KernelContext_TempAlloc) may be reused by the next op on
 *    the same stream as soon as the kernel function returns, which stream order makes safe; work
 *    on any other stream must be joined back to `stream` (an event) before the kernel returns.
 *  - The handles are shared by every op on the place: leave them as found (stream, pointer mode,
 *    math mode, workspace). Do not destroy them.
 *  - Check cudaGetLastError() after each launch and report failures as statuses naming the op.
 *
 * The header needs no CUDA header: the CUDA types are passed as void* (cast them back). */
#ifndef TIDE_CUDA_CONTEXT_H_
#define TIDE_CUDA_CONTEXT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDE_CUDA_CONTEXT_EXTENSION "tide.cuda"

/* Owned by the CUDA device plugin; lives as long as the device context it came from (until
 * the core destroys that context, normally at exit). Read-only for op packs. */
typedef struct TideCudaContext {
  size_t struct_size;
  int32_t device; /* the CUDA device ordinal (cudaSetDevice) of this place, "gpu:<device>" */
  void* stream;   /* cudaStream_t: the place's stream; every kernel and copy of an op goes here */
  void* cublas;   /* cublasHandle_t bound to `stream` (host pointer mode, default math mode);
                     NULL when cuBLAS could not be loaded (the plugin opens it at run time) */
  void* cudnn;    /* cudnnHandle_t bound to `stream`; NULL when cuDNN could not be loaded */
  int32_t compute_capability_major; /* e.g. 9 for sm_90 */
  int32_t compute_capability_minor; /* e.g. 0 for sm_90 */
  int32_t multiprocessor_count;     /* SMs on the device, for sizing grids */
} TideCudaContext;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDE_CUDA_CONTEXT_H_ */
