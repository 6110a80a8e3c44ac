/* tide/cpu_context.h: what the CPU device plugin publishes to op packs (extension "tide.cpu").
 * Get it with TideHostApi.DeviceContext_Extension(ctx, TIDE_CPU_CONTEXT_EXTENSION); in C++,
 * ctx.DeviceExtension<TideCpuContext>(TIDE_CPU_CONTEXT_EXTENSION) in a kernel.
 * tide/eigen.hpp turns it into an Eigen device. */
#ifndef TIDE_CPU_CONTEXT_H_
#define TIDE_CPU_CONTEXT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDE_CPU_CONTEXT_EXTENSION "tide.cpu"

/* Owned by the CPU device plugin; lives as long as the device context it came from. */
typedef struct TideCpuContext {
  size_t struct_size;
  int32_t num_threads; /* threads in the intra-op pool (>= 1) */
  void* pool;          /* the pool, opaque: pass it back to the functions below */
  /* Runs fn(arg) on a pool thread, some time later. Thread-safe. */
  void (*schedule)(void* pool, void (*fn)(void* arg), void* arg);
  /* The calling thread's index in the pool, or -1 when it is not a pool thread. */
  int32_t (*current_thread_id)(void* pool);
} TideCpuContext;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDE_CPU_CONTEXT_H_ */
