// tide/plugin/collective.hpp: for device vendors: tide::CollectiveLibrary, a device's collective
// communication library (NCCL, HCCL, ...) adapted to the C table TideCollectiveDef of
// tide/collective.h, which a device publishes from Device::Extension for the name
// TIDE_COLLECTIVE_EXTENSION (one library object per context: its stream is the one collectives
// are queued on). Errors thrown by the overrides become statuses. Include it apart (with
// tide/plugin.hpp), as the device extensions tide/cpu_context.h and tide/cuda_context.h.
#ifndef TIDE_PLUGIN_COLLECTIVE_HPP_
#define TIDE_PLUGIN_COLLECTIVE_HPP_

#include <tide/collective.h>

#include <cstddef>
#include <cstdint>
#include <tide/plugin/host.hpp>

namespace tide {

class CollectiveLibrary {
 public:
  // `library`: its name in log lines and errors (a static string); `unique_id_size`: the bytes
  // of its unique id; `has_watchdog`: the library overrides the watchdog's functions below (the
  // table publishes them).
  CollectiveLibrary(const char* library, size_t unique_id_size, bool has_watchdog = false) {
    def_.struct_size = TIDE_STRUCT_SIZE(TideCollectiveDef, calc_wait_comm);
    def_.self = this;
    def_.library = library;
    def_.unique_id_size = unique_id_size;
    def_.get_unique_id = [](void* s, void* id) {
      return detail::Guard([&] { Self(s)->UniqueId(id); });
    };
    def_.comm_init = [](void* s, const void* id, int32_t nranks, int32_t rank,
                        TideCollectiveComm** comm) {
      return detail::Guard([&] { *comm = Self(s)->CommInit(id, nranks, rank); });
    };
    def_.comm_destroy = [](void* s, TideCollectiveComm* comm) {
      return detail::Guard([&] { Self(s)->CommDestroy(comm); });
    };
    def_.all_reduce = [](void* s, TideCollectiveComm* comm, const void* send, void* recv,
                         size_t count, TideDataType dtype, TideReduceOp op) {
      return detail::Guard([&] { Self(s)->AllReduce(comm, send, recv, count, dtype, op); });
    };
    def_.broadcast = [](void* s, TideCollectiveComm* comm, const void* send, void* recv,
                        size_t count, TideDataType dtype, int32_t root) {
      return detail::Guard([&] { Self(s)->Broadcast(comm, send, recv, count, dtype, root); });
    };
    def_.all_gather = [](void* s, TideCollectiveComm* comm, const void* send, void* recv,
                         size_t send_count, TideDataType dtype) {
      return detail::Guard([&] { Self(s)->AllGather(comm, send, recv, send_count, dtype); });
    };
    def_.reduce_scatter = [](void* s, TideCollectiveComm* comm, const void* send, void* recv,
                             size_t recv_count, TideDataType dtype, TideReduceOp op) {
      return detail::Guard(
          [&] { Self(s)->ReduceScatter(comm, send, recv, recv_count, dtype, op); });
    };
    def_.group_start = [](void* s) { return detail::Guard([&] { Self(s)->GroupStart(); }); };
    def_.group_end = [](void* s) { return detail::Guard([&] { Self(s)->GroupEnd(); }); };
    if (!has_watchdog) return;
    def_.marker_record = [](void* s, void** marker) {
      return detail::Guard([&] { *marker = Self(s)->MarkerRecord(); });
    };
    def_.marker_query = [](void* s, void* marker, int32_t* done) {
      return detail::Guard([&] { *done = Self(s)->MarkerQuery(marker) ? 1 : 0; });
    };
    def_.marker_destroy = [](void* s, void* marker) { Self(s)->MarkerDestroy(marker); };
    def_.comm_get_async_error = [](void* s, TideCollectiveComm* comm) {
      return detail::Guard([&] { Self(s)->CommAsyncError(comm); });
    };
    def_.comm_abort = [](void* s, TideCollectiveComm* comm, const char* reason) {
      return detail::Guard([&] { Self(s)->CommAbort(comm, reason); });
    };
  }
  virtual ~CollectiveLibrary() = default;
  CollectiveLibrary(const CollectiveLibrary&) = delete;
  CollectiveLibrary& operator=(const CollectiveLibrary&) = delete;

  // The functions of TideCollectiveDef (tide/collective.h says what each does); throw
  // tide::Error naming the library's error.
  virtual void UniqueId(void* id) = 0;
  virtual TideCollectiveComm* CommInit(const void* id, int32_t nranks, int32_t rank) = 0;
  virtual void CommDestroy(TideCollectiveComm* comm) = 0;
  virtual void AllReduce(TideCollectiveComm* comm, const void* send, void* recv, size_t count,
                         TideDataType dtype, TideReduceOp op) = 0;
  virtual void Broadcast(TideCollectiveComm* comm, const void* send, void* recv, size_t count,
                         TideDataType dtype, int32_t root) = 0;
  virtual void AllGather(TideCollectiveComm* comm, const void* send, void* recv, size_t send_count,
                         TideDataType dtype) = 0;
  virtual void ReduceScatter(TideCollectiveComm* comm, const void* send, void* recv,
                             size_t recv_count, TideDataType dtype, TideReduceOp op) = 0;
  // A library whose collectives need no grouping leaves these empty.
  virtual void GroupStart() {}
  virtual void GroupEnd() {}
  // The watchdog's (published with has_watchdog): a marker of the stream's work so far, whether
  // that work is done, its release; CommAsyncError throws the communicator's asynchronous error
  // (returns while there is none); CommAbort ends the communicator's work now and makes the
  // context's next synchronize fail with `reason`.
  virtual void* MarkerRecord() { TIDE_THROW(TIDE_UNIMPLEMENTED, "MarkerRecord"); }
  virtual bool MarkerQuery(void*) { return true; }
  virtual void MarkerDestroy(void*) {}
  virtual void CommAsyncError(TideCollectiveComm*) {}
  virtual void CommAbort(TideCollectiveComm*, const char*) {}

  // A communication stream: `comm` is a library of the same kind whose collectives and markers
  // queue on the context's second stream (it must outlive this one); CommWaitCalc and
  // CalcWaitComm order the two streams (tide/collective.h). Call once, before publishing def().
  void SetCommStream(const CollectiveLibrary* comm) {
    def_.comm_stream = comm->def();
    def_.comm_wait_calc = [](void* s) { return detail::Guard([&] { Self(s)->CommWaitCalc(); }); };
    def_.calc_wait_comm = [](void* s) { return detail::Guard([&] { Self(s)->CalcWaitComm(); }); };
  }
  virtual void CommWaitCalc() { TIDE_THROW(TIDE_UNIMPLEMENTED, "CommWaitCalc"); }
  virtual void CalcWaitComm() { TIDE_THROW(TIDE_UNIMPLEMENTED, "CalcWaitComm"); }

  // The C table to return from Device::Extension; lives as long as this object.
  const TideCollectiveDef* def() const { return &def_; }

 private:
  static CollectiveLibrary* Self(void* s) { return static_cast<CollectiveLibrary*>(s); }
  TideCollectiveDef def_{};
};

}  // namespace tide

#endif  // TIDE_PLUGIN_COLLECTIVE_HPP_
