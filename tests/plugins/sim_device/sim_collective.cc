// sim_collective.cc: the sim device's collective library over Gloo (see sim_collective.h).
#include "sim_collective.h"

#include <tide/plugin.hpp>
#include <tide/plugin/data_type_visit.hpp>

#ifndef TIDE_SIM_WITH_GLOO

std::unique_ptr<tide::CollectiveLibrary> CreateSimCollective(SimStream*) { return nullptr; }

#else

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <stdlib.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr size_t kIdBytes = 256;  // the meeting directory's path, NUL-padded
constexpr const char* kLibrary = "SimGloo";

// One rank's end of a ring: a Gloo context on loopback. Tags number the collectives in the order
// the host issued them, which every rank shares.
struct Comm {
  std::shared_ptr<gloo::Context> context;
  int rank = 0, nranks = 1;
  std::chrono::milliseconds timeout{180000};
  std::atomic<uint32_t> next_tag{1};
};

Comm* AsComm(TideCollectiveComm* c) { return reinterpret_cast<Comm*>(c); }

// Calls fn(tide::TypeTag<T>{}) with T the C++ type of `dtype`: the types Gloo moves here.
template <typename Fn>
void Dispatch(TideDataType dtype, Fn&& fn) {
  tide::VisitDataType<float, double, int32_t, int64_t, uint8_t, int8_t>(dtype, kLibrary,
                                                                        std::forward<Fn>(fn));
}

template <typename T>
void (*Reduction(TideReduceOp op))(void*, const void*, const void*, size_t) {
  switch (op) {
    case TIDE_REDUCE_MAX:
      return &gloo::max<T>;
    case TIDE_REDUCE_MIN:
      return &gloo::min<T>;
    case TIDE_REDUCE_PROD:
      return &gloo::product<T>;
    default:
      return &gloo::sum<T>;
  }
}

template <typename T>
std::vector<T> Staged(const void* p, size_t count) {
  const T* from = static_cast<const T*>(p);
  return std::vector<T>(from, from + count);
}

class SimGloo : public tide::CollectiveLibrary {
 public:
  explicit SimGloo(SimStream* stream) : CollectiveLibrary(kLibrary, kIdBytes), stream_(stream) {}

  // A fresh directory for the ranks to meet in.
  void UniqueId(void* id) override {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/tide-sim-collective-XXXXXX";
    TIDE_CHECK(tmpl.size() < kIdBytes, kLibrary, ": TMPDIR is too long for a unique id");
    std::vector<char> path(tmpl.begin(), tmpl.end());
    path.push_back('\0');
    TIDE_CHECK(mkdtemp(path.data()) != nullptr, kLibrary, ": mkdtemp(", tmpl,
               ") failed: ", std::strerror(errno));
    std::memset(id, 0, kIdBytes);
    std::memcpy(id, path.data(), path.size());
  }

  TideCollectiveComm* CommInit(const void* id, int32_t nranks, int32_t rank) override {
    const char* p = static_cast<const char*>(id);
    const std::string dir(p, strnlen(p, kIdBytes));
    auto c = std::make_unique<Comm>();
    c->rank = rank;
    c->nranks = nranks;
    c->timeout = std::chrono::milliseconds(
        std::atoll(tide::Flag("collective_timeout_ms", "180000").c_str()));
    gloo::rendezvous::FileStore store(dir);
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    context->setTimeout(c->timeout);
    context->connectFullMesh(store, device);
    c->context = context;
    // Every rank has read the directory once all have connected: rank 0 removes it.
    gloo::BarrierOptions o(c->context);
    o.setTag(0);
    o.setTimeout(c->timeout);
    gloo::barrier(o);
    if (rank == 0) std::filesystem::remove_all(dir);
    return reinterpret_cast<TideCollectiveComm*>(c.release());
  }

  void CommDestroy(TideCollectiveComm* comm) override {
    Comm* c = AsComm(comm);
    stream_->Enqueue([c] { delete c; });  // after the collectives queued before
  }

  void AllReduce(TideCollectiveComm* comm, const void* send, void* recv, size_t count,
                 TideDataType dtype, TideReduceOp op) override {
    Queue(comm, dtype, "all_reduce (sim collective)", [=](Comm* c, uint32_t tag, auto t) {
      using T = typename decltype(t)::type;
      std::vector<T> host = Staged<T>(send, count);
      if (c->nranks > 1 && count > 0) Allreduce(*c, tag, host, op);
      std::memcpy(recv, host.data(), count * sizeof(T));
    });
  }

  void Broadcast(TideCollectiveComm* comm, const void* send, void* recv, size_t count,
                 TideDataType dtype, int32_t root) override {
    Queue(comm, dtype, "broadcast (sim collective)", [=](Comm* c, uint32_t tag, auto t) {
      using T = typename decltype(t)::type;
      std::vector<T> host = c->rank == root ? Staged<T>(send, count) : std::vector<T>(count);
      if (c->nranks > 1 && count > 0) {
        gloo::BroadcastOptions o(c->context);
        o.setOutput(host.data(), count);
        o.setRoot(root);
        o.setTag(tag);
        o.setTimeout(c->timeout);
        gloo::broadcast(o);
      }
      std::memcpy(recv, host.data(), count * sizeof(T));
    });
  }

  void AllGather(TideCollectiveComm* comm, const void* send, void* recv, size_t send_count,
                 TideDataType dtype) override {
    Queue(comm, dtype, "all_gather (sim collective)", [=](Comm* c, uint32_t tag, auto t) {
      using T = typename decltype(t)::type;
      std::vector<T> in = Staged<T>(send, send_count);
      std::vector<T> out(send_count * static_cast<size_t>(c->nranks));
      if (c->nranks > 1 && send_count > 0) {
        gloo::AllgatherOptions o(c->context);
        o.setInput(in.data(), in.size());
        o.setOutput(out.data(), out.size());
        o.setTag(tag);
        o.setTimeout(c->timeout);
        gloo::allgather(o);
      } else {
        out = in;
      }
      std::memcpy(recv, out.data(), out.size() * sizeof(T));
    });
  }

  // An allreduce of the whole buffer, of which this rank keeps its part.
  void ReduceScatter(TideCollectiveComm* comm, const void* send, void* recv, size_t recv_count,
                     TideDataType dtype, TideReduceOp op) override {
    Queue(comm, dtype, "reduce_scatter (sim collective)", [=](Comm* c, uint32_t tag, auto t) {
      using T = typename decltype(t)::type;
      const size_t n = recv_count * static_cast<size_t>(c->nranks);
      std::vector<T> host = Staged<T>(send, n);
      if (c->nranks > 1 && n > 0) Allreduce(*c, tag, host, op);
      std::memcpy(recv, host.data() + recv_count * static_cast<size_t>(c->rank),
                  recv_count * sizeof(T));
    });
  }

  // The stream runs a group's collectives in the order every rank issued them: GroupStart and
  // GroupEnd have nothing to do.

 private:
  // Queues `work(comm, tag, T{})` on the stream, where it runs on host copies of the device
  // buffers (the sim's memory is host memory, read and written only by its stream).
  template <typename Work>
  void Queue(TideCollectiveComm* comm, TideDataType dtype, const char* what, Work work) {
    Dispatch(dtype, [](auto) {});  // an unsupported type fails now, not on the stream
    Comm* c = AsComm(comm);
    const uint32_t tag = c->next_tag++;
    stream_->Enqueue([c, tag, dtype, work] { Dispatch(dtype, [&](auto t) { work(c, tag, t); }); },
                     what);
  }

  template <typename T>
  static void Allreduce(Comm& c, uint32_t tag, std::vector<T>& data, TideReduceOp op) {
    gloo::AllreduceOptions o(c.context);
    o.setOutput(data.data(), data.size());
    o.setReduceFunction(Reduction<T>(op));
    o.setTag(tag);
    o.setTimeout(c.timeout);
    gloo::allreduce(o);
  }

  SimStream* stream_;
};

}  // namespace

std::unique_ptr<tide::CollectiveLibrary> CreateSimCollective(SimStream* stream) {
  const char* hide = std::getenv("TIDE_SIM_NO_COLLECTIVE");
  if (hide && std::strcmp(hide, "1") == 0) return nullptr;
  return std::make_unique<SimGloo>(stream);
}

#endif  // TIDE_SIM_WITH_GLOO
