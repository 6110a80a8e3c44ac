/* tide/collective.h: a device's own collective communication library (NCCL, RCCL, HCCL, ...),
 * published to the collective op pack (c_comm_init, c_allreduce_*, ...) as the device context
 * extension "tide.collective", the way PaddlePaddle's custom devices fill their "xccl" table.
 *
 * A device plugin returns a TideCollectiveDef from its context_extension for the name
 * TIDE_COLLECTIVE_EXTENSION (tide::Device::Extension in C++), one per context: its collectives
 * run on that context's stream, in stream order with the kernels and copies queued there. The
 * op pack then
 *  - at c_comm_init: rank 0 calls get_unique_id and publishes the id in the ring's rendezvous
 *    store; every rank reads it and calls comm_init(id, nranks, rank) on the context of the
 *    place the ring runs on;
 *  - at each collective on tensors of that place: calls all_reduce / broadcast / all_gather /
 *    reduce_scatter with the tensors' device pointers (several tensors at once, a fused bucket
 *    of gradients, between group_start and group_end);
 *  - never synchronises after a collective: its result is read by work queued later on the
 *    stream, or by the host after the core synchronises the context, as for a kernel.
 * A device without the extension still trains data-parallel: the op pack copies its tensors to
 * the host, runs Gloo there and copies the result back (and logs once per ring that it does).
 *
 * Rules:
 *  - Every function may be called from any thread, and the data functions from several threads
 *    at once on different communicators. Calls between group_start and group_end come from one
 *    thread (NCCL's rule) and are issued by every rank in the same order.
 *  - Functions that can fail return a TideStatus* (NULL = success; make one with
 *    TideHostApi.Status_Create, or tide::detail::Guard in C++) whose message names the library
 *    and its error. A failure of work already queued (a peer that died mid-collective) is
 *    reported like a kernel's, by the context's synchronize.
 *  - send and recv may be the same pointer (in place) for all_reduce and broadcast; for
 *    all_gather recv holds nranks * send_count elements in rank order, for reduce_scatter send
 *    holds nranks * recv_count and rank r receives part r.
 *  - A device that cannot move a data type returns TIDE_UNIMPLEMENTED naming it.
 *
 * Versioning: struct_size first, set to TIDE_STRUCT_SIZE(TideCollectiveDef, <last field>) of the
 * header the plugin was built with; fields are only appended, and the op pack checks
 * TIDE_HAS_FIELD before using a newer one (a table too short for the fields below is treated
 * as absent: host staging). */
#ifndef TIDE_COLLECTIVE_H_
#define TIDE_COLLECTIVE_H_

#include <stddef.h>
#include <stdint.h>
#include <tide/plugin_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDE_COLLECTIVE_EXTENSION "tide.collective"

/* The largest unique id the op pack carries through its rendezvous store (HCCL's is 2060
 * bytes, NCCL's 128). */
#define TIDE_COLLECTIVE_MAX_UNIQUE_ID_BYTES 4096

typedef enum TideReduceOp {
  TIDE_REDUCE_SUM = 0,
  TIDE_REDUCE_PROD = 1,
  TIDE_REDUCE_MAX = 2,
  TIDE_REDUCE_MIN = 3,
} TideReduceOp;

/* The library's communicator (ncclComm_t, ...): one rank's end of a ring. Opaque to Tide. */
typedef struct TideCollectiveComm TideCollectiveComm;

/* Owned by the device plugin; lives as long as the device context it came from. */
typedef struct TideCollectiveDef {
  size_t struct_size;
  /* Passed back as the first argument of every function below: the plugin's (its context). */
  void* self;
  /* The library's name for log lines and errors, e.g. "NCCL"; the plugin's static string. */
  const char* library;
  /* Bytes of a unique id (<= TIDE_COLLECTIVE_MAX_UNIQUE_ID_BYTES). */
  size_t unique_id_size;

  /* --- Communicators --- */
  /* Writes a new unique id (unique_id_size bytes) to `id`: called on rank 0 only. */
  TideStatus* (*get_unique_id)(void* self, void* id);
  /* This process's end of the ring named by `id`: rank `rank` of `nranks`, on the context's
   * device. Blocks until every rank has joined (the library's own rendezvous). *comm is the
   * plugin's until comm_destroy. */
  TideStatus* (*comm_init)(void* self, const void* id, int32_t nranks, int32_t rank,
                           TideCollectiveComm** comm);
  /* Releases a communicator after the work queued on it is done. */
  TideStatus* (*comm_destroy)(void* self, TideCollectiveComm* comm);

  /* --- Collectives, queued on the context's stream --- */
  /* recv = the element-wise `op` of every rank's send (`count` elements of `dtype`). */
  TideStatus* (*all_reduce)(void* self, TideCollectiveComm* comm, const void* send, void* recv,
                            size_t count, TideDataType dtype, TideReduceOp op);
  /* recv = rank `root`'s send (send is read on the root only). */
  TideStatus* (*broadcast)(void* self, TideCollectiveComm* comm, const void* send, void* recv,
                           size_t count, TideDataType dtype, int32_t root);
  /* recv = every rank's send (send_count elements each) concatenated in rank order. */
  TideStatus* (*all_gather)(void* self, TideCollectiveComm* comm, const void* send, void* recv,
                            size_t send_count, TideDataType dtype);
  /* recv = part `rank` (recv_count elements) of the element-wise `op` of every rank's send. */
  TideStatus* (*reduce_scatter)(void* self, TideCollectiveComm* comm, const void* send, void* recv,
                                size_t recv_count, TideDataType dtype, TideReduceOp op);
  /* Collectives issued between the two run as one (NCCL's groups): a fused bucket's tensors. */
  TideStatus* (*group_start)(void* self);
  TideStatus* (*group_end)(void* self);

  /* --- The watchdog (appended; optional: all five or none) ---
   * The op pack marks the stream after each collective it queues and, from a thread of its own,
   * polls the markers and the communicator's asynchronous error. A collective not finished
   * within the flag collective_timeout_ms, or an asynchronous error, makes it abort the
   * communicator with a reason naming the op, the ring, the rank and the time elapsed (as
   * PyTorch's ProcessGroupNCCL watchdog does with ncclCommGetAsyncError and ncclCommAbort).
   * Without them a collective that never completes (a peer gone after the host-side check)
   * holds the stream as long as the library waits. */
  /* A marker of the work queued on the context's stream so far (an event recorded now); the
   * plugin's until marker_destroy. */
  TideStatus* (*marker_record)(void* self, void** marker);
  /* *done = 1 once the work before the marker has finished or was aborted, else 0. */
  TideStatus* (*marker_query)(void* self, void* marker, int32_t* done);
  void (*marker_destroy)(void* self, void* marker);
  /* NULL while `comm` is healthy; else a status with the library's asynchronous error (a peer
   * or the network failed: ncclCommGetAsyncError). */
  TideStatus* (*comm_get_async_error)(void* self, TideCollectiveComm* comm);
  /* Aborts `comm`: its collectives queued or running end without their result (ncclCommAbort),
   * so the stream moves on, and the context's next synchronize fails with `reason` (copied).
   * The communicator is gone: no call takes it afterwards, comm_destroy included. The op pack
   * starts no call with it meanwhile, and waits up to a second for one under way (one the
   * library blocks in, waiting for a peer, may still be running). */
  TideStatus* (*comm_abort)(void* self, TideCollectiveComm* comm, const char* reason);

  /* --- A communication stream (appended; optional: all three or none) ---
   * The collectives an op issues with use_calc_stream = false run on a second stream of the
   * context, so they overlap the kernels queued after them (Fluid's communication stream). The
   * op pack orders the two streams by events through comm_wait_calc before such a collective
   * (its inputs are ready) and calc_wait_comm at c_sync_comm_stream and before the ring's next
   * collective on the context's stream (its outputs are ready); the host waits for neither.
   * The context's synchronize waits for both streams. */
  /* The table whose collectives and markers queue on the communication stream, taking the
   * communicators this table's comm_init made (its own get_unique_id / comm_init / comm_destroy
   * / comm_abort are not called); it lives as long as this one. */
  const struct TideCollectiveDef* comm_stream;
  /* Work queued on the communication stream from now on waits for the work queued on the
   * context's stream so far. */
  TideStatus* (*comm_wait_calc)(void* self);
  /* Work queued on the context's stream from now on waits for the communication stream's work
   * queued so far. */
  TideStatus* (*calc_wait_comm)(void* self);
} TideCollectiveDef;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDE_COLLECTIVE_H_ */
