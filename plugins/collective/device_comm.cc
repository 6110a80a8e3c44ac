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

// The communication stream's table of `def`, or null where it publishes none.
const TideCollectiveDef* CommStreamOf(const TideCollectiveDef* def) {
  if (!TIDE_HAS_FIELD(def, TideCollectiveDef, calc_wait_comm) || !def->comm_stream ||
      !def->comm_wait_calc || !def->calc_wait_comm)
    return nullptr;
  const TideCollectiveDef* comm = def->comm_stream;
  return TIDE_HAS_FIELD(comm, TideCollectiveDef, group_end) ? comm : nullptr;
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
    : ctx_(ctx),
      def_(def),
      comm_table_(CommStreamOf(def)),
      place_(tide::Host().DeviceContext_Place(ctx)) {
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
  if (watchdog_ && last_table_) watchdog_->Watch(where, last_table_);
}

const TideCollectiveDef* DeviceComm::Stream(bool comm_stream) {
  if (comm_stream && comm_table_) {
    Check(def_->comm_wait_calc(def_->self), "comm_wait_calc");
    comm_unwaited_ = true;
    return last_table_ = comm_table_;
  }
  CalcWaitComm();
  return last_table_ = def_;
}

void DeviceComm::CalcWaitComm() {
  if (!comm_unwaited_) return;
  Check(def_->calc_wait_comm(def_->self), "calc_wait_comm");
  comm_unwaited_ = false;
}

std::string DeviceComm::Aborted() const { return watchdog_ ? watchdog_->Aborted() : ""; }

void DeviceComm::Check(TideStatus* status, const char* what) const {
  ThrowIf(status, std::string(library()) + " on " + place_.ToString(), what);
}

void DeviceComm::AllReduce(const std::vector<Buffer>& buffers, TideDataType dtype, TideReduceOp op,
                           bool comm_stream) {
  Call([&] {
    const TideCollectiveDef* t = Stream(comm_stream);
    if (buffers.size() == 1) {
      const Buffer& b = buffers[0];
      return Check(t->all_reduce(t->self, comm_, b.send, b.recv, b.count, dtype, op), "all_reduce");
    }
    Check(t->group_start(t->self), "group_start");
    TideStatus* failed = nullptr;
    for (const Buffer& b : buffers) {
      failed = t->all_reduce(t->self, comm_, b.send, b.recv, b.count, dtype, op);
      if (failed) break;
    }
    // The group is closed even after a failure, so the library's state stays consistent.
    TideStatus* ended = t->group_end(t->self);
    if (failed) tide::Host().Status_Free(ended);
    Check(failed, "all_reduce (in a group)");
    Check(ended, "group_end");
  });
}

void DeviceComm::Broadcast(const void* send, void* recv, size_t count, TideDataType dtype, int root,
                           bool comm_stream) {
  Call([&] {
    const TideCollectiveDef* t = Stream(comm_stream);
    Check(t->broadcast(t->self, comm_, send, recv, count, dtype, root), "broadcast");
  });
}

void DeviceComm::AllGather(const void* send, void* recv, size_t send_count, TideDataType dtype,
                           bool comm_stream) {
  Call([&] {
    const TideCollectiveDef* t = Stream(comm_stream);
    Check(t->all_gather(t->self, comm_, send, recv, send_count, dtype), "all_gather");
  });
}

void DeviceComm::ReduceScatter(const void* send, void* recv, size_t recv_count, TideDataType dtype,
                               TideReduceOp op, bool comm_stream) {
  Call([&] {
    const TideCollectiveDef* t = Stream(comm_stream);
    Check(t->reduce_scatter(t->self, comm_, send, recv, recv_count, dtype, op), "reduce_scatter");
  });
}

}  // namespace tide_collective
