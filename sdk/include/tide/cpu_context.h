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
  /* Runs fn(arg, begin, end) over [0, n) cut into at most max_threads contiguous ranges (and at
   * most num_threads), one per thread, the calling thread taking one, and returns when all have
   * run. This is the pool oneDNN and the GEMM run on too where the device can arrange it (the
   * OpenMP runtime of Debian's oneDNN), so a kernel's threads never compete with a library's.
   * fn must not throw or longjmp; a call from inside a range runs inline. Thread-safe.
   * Optional (check struct_size): NULL or absent means use schedule. */
  void (*parallel_for)(void* pool, int64_t n, int32_t max_threads,
                       void (*fn)(void* arg, int64_t begin, int64_t end), void* arg);
} TideCpuContext;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDE_CPU_CONTEXT_H_ */
