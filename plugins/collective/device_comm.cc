// device_comm.cc: calls into a device's collective library (see device_comm.h).
#include "device_comm.h"

namespace tide_collective {
namespace {

// A status from the library as an error naming the library, the place and the call; takes
// ownership of the status.
void ThrowIf(TideStatus* status, const std::string& where, const char* what) {
  if (!status) return;
  const TideCode code = tide::Host().Status_Code(status);
  const std::string msg = tide::Host().Status_Message(status);
  tide::Host().Status_Free(status);
  TIDE_THROW(code, where, ": ", what, " failed: ", msg);
}

}  // namespace

const TideCollectiveDef* FindCollectiveLibrary(TideDeviceContext* ctx) {
  if (!ctx) return nullptr;
  const auto* def = static_cast<const TideCollectiveDef*>(
      tide::Host().DeviceContext_Extension(ctx, TIDE_COLLECTIVE_EXTENSION));
  if (!def || !TIDE_HAS_FIELD(def, TideCollectiveDef, group_end)) return nullptr;
  return def;
}

std::vector<char> DeviceComm::UniqueId(const TideCollectiveDef* def) {
  const char* lib = def->library ? def->library : "the device's collective library";
  TIDE_CHECK(def->unique_id_size > 0 && def->unique_id_size <= TIDE_COLLECTIVE_MAX_UNIQUE_ID_BYTES,
             lib, ": a unique id of ", def->unique_id_size, " bytes (1 to ",
             TIDE_COLLECTIVE_MAX_UNIQUE_ID_BYTES, " are carried)");
  std::vector<char> id(def->unique_id_size);
  ThrowIf(def->get_unique_id(def->self, id.data()), lib, "get_unique_id");
  return id;
}

DeviceComm::DeviceComm(TideDeviceContext* ctx, const TideCollectiveDef* def,
                       const std::vector<char>& id, int ring_id, int rank, int nranks,
                       std::chrono::milliseconds timeout)
    : ctx_(ctx), def_(def), place_(tide::Host().DeviceContext_Place(ctx)) {
  TIDE_CHECK(id.size() == def->unique_id_size, library(), ": the unique id from the store has ",
             id.size(), " bytes, the library's have ", def->unique_id_size);
  Check(def_->comm_init(def_->self, id.data(), nranks, rank, &comm_), "comm_init");
  if (Watchdog::Supported(def_))
    watchdog_ = std::make_unique<Watchdog>(
        def_, comm_, place_.ToString(),
        tide::detail::Concat(ring_id, ", rank ", rank, " of ", nranks), timeout);
}

DeviceComm::~DeviceComm() {
  if (!comm_) return;
  // Work queued on the communicator finishes first (the watchdog still guards it); a failure
  // here has no one to report to. An aborted communicator is the library's to release.
  tide::Host().Status_Free(tide::Host().DeviceContext_Synchronize(ctx_));
  const bool aborted = !Aborted().empty();
  watchdog_.reset();
  if (!aborted) tide::Host().Status_Free(def_->comm_destroy(def_->self, comm_));
}

void DeviceComm::Watch(const std::string& where) {
  if (watchdog_) watchdog_->Watch(where);
}

std::string DeviceComm::Aborted() const { return watchdog_ ? watchdog_->Aborted() : ""; }

void DeviceComm::Check(TideStatus* status, const char* what) const {
  ThrowIf(status, std::string(library()) + " on " + place_.ToString(), what);
}

void DeviceComm::AllReduce(const std::vector<Buffer>& buffers, TideDataType dtype,
                           TideReduceOp op) {
  Call([&] {
    if (buffers.size() == 1) {
      const Buffer& b = buffers[0];
      return Check(def_->all_reduce(def_->self, comm_, b.send, b.recv, b.count, dtype, op),
                   "all_reduce");
    }
    Check(def_->group_start(def_->self), "group_start");
    TideStatus* failed = nullptr;
    for (const Buffer& b : buffers) {
      failed = def_->all_reduce(def_->self, comm_, b.send, b.recv, b.count, dtype, op);
      if (failed) break;
    }
    // The group is closed even after a failure, so the library's state stays consistent.
    TideStatus* ended = def_->group_end(def_->self);
    if (failed) tide::Host().Status_Free(ended);
    Check(failed, "all_reduce (in a group)");
    Check(ended, "group_end");
  });
}

void DeviceComm::Broadcast(const void* send, void* recv, size_t count, TideDataType dtype,
                           int root) {
  Call([&] {
    Check(def_->broadcast(def_->self, comm_, send, recv, count, dtype, root), "broadcast");
  });
}

void DeviceComm::AllGather(const void* send, void* recv, size_t send_count, TideDataType dtype) {
  Call([&] {
    Check(def_->all_gather(def_->self, comm_, send, recv, send_count, dtype), "all_gather");
  });
}

void DeviceComm::ReduceScatter(const void* send, void* recv, size_t recv_count, TideDataType dtype,
                               TideReduceOp op) {
  Call([&] {
    Check(def_->reduce_scatter(def_->self, comm_, send, recv, recv_count, dtype, op),
          "reduce_scatter");
  });
}

}  // namespace tide_collective
