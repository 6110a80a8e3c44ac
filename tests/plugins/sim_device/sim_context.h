// sim_context.h: what the test-only "sim" device publishes (extension "tide.sim", and the C
// function tide_sim_counters() for tests that load the plugin with ctypes): counters of its
// copies, allocations and lifecycle, so tests can check every transfer the core inserts and that
// nothing is leaked, corrupted or left running.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define TIDE_SIM_CONTEXT_EXTENSION "tide.sim"

typedef struct TideSimCounters {
  size_t struct_size;
  uint64_t host_to_device, device_to_host, device_to_device;
  uint64_t allocs, frees;
  /* Bytes moved each way (the copies above, by size). */
  uint64_t host_to_device_bytes, device_to_host_bytes;
  uint64_t contexts_created, contexts_destroyed, finalized;
  /* Frees of unknown pointers, double frees and writes past a block's end seen by the checked
   * allocator. */
  uint64_t allocator_errors;
  uint64_t live_blocks;
  uint64_t peer; /* copies from the other sim device (copy_peer) */
  /* Pinned host memory (host_alloc / host_free) and events. */
  uint64_t pinned_allocs, pinned_frees, memsets, event_records, event_waits;
  /* Copies whose kind does not say where their pointers are (a DEVICE_TO_DEVICE copy from
   * memory that is not a sim block, ...): what the core got wrong about TideCopyKind. */
  uint64_t wrong_kind_copies;
  /* Waits the core asked for (issue 33: the profiler no longer waits after every op): context
   * synchronize calls, and event_synchronize calls. */
  uint64_t synchronizes, event_synchronizes;
  /* Subgraph compilation (issue 33, sim_compiler.h): kernels queued (every kernel's task, a
   * fused kernel's included), groups compiled, compiles declined, fused kernels queued. */
  uint64_t kernel_launches, compiles, compile_declines, fused_launches;
  /* Compiled functions the core gave back (release_compiled). */
  uint64_t compiled_releases;
  /* Streams with roles (issue 33): role contexts made (context_create_role), and the priority the
   * last one was asked for. */
  uint64_t role_contexts;
  int64_t role_priority;
  /* Capture and replay (issue 34, TideDeviceGraphs): captures begun, graphs launched. */
  uint64_t captures, graph_launches;
  /* Host functions (issue 33, launch_host_func): queued, and run. */
  uint64_t host_funcs, host_funcs_run;
  /* Kernels the streams ran (of kernel_launches, those done; a failed one is not counted). */
  uint64_t kernels_run;
} TideSimCounters;

#ifdef __cplusplus
extern "C" {
#endif
/* The counters now (copied; safe to call from any thread). */
TideSimCounters tide_sim_counters(void);
#ifdef __cplusplus
}
#endif
