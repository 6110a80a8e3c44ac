// sim_collective.cc: the sim device's collective library over Gloo (see sim_collective.h).
#include "sim_collective.h"

#include <atomic>
#include <tide/plugin.hpp>
#include <tide/plugin/data_type_visit.hpp>

namespace {
std::atomic<uint64_t> g_comm_stream_collectives{0};
}  // namespace

extern "C" __attribute__((visibility("default"))) uint64_t tide_sim_comm_stream_collectives(void) {
  return g_comm_stream_collectives.load();
}

#ifndef TIDE_SIM_WITH_GLOO

std::unique_ptr<tide::CollectiveLibrary> CreateSimCollective(SimStream*, SimStream*) {
  return nullptr;
}

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
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr size_t kIdBytes = 256;  // the meeting directory's path, NUL-padded
constexpr const char* kLibrary = "SimGloo";

// One rank's end of a ring: a Gloo context on loopback, and the thread that runs its Gloo calls
// (its "engine", as NCCL's kernels run apart from the host). A stream task hands its exchange to
// the engine and waits for it, or for an abort (comm_abort), which releases the stream at once
// while the engine stays in Gloo until Gloo's own timeout: three times the flag, so the op
// pack's watchdog (at the flag) decides. Tags number the collectives in the order the host
// issued them, which every rank shares.
struct Comm {
  std::shared_ptr<gloo::Context> context;
  int rank = 0, nranks = 1;
  std::chrono::milliseconds timeout{180000};  // Gloo's
  std::atomic<uint32_t> next_tag{1};

  std::mutex mu;  // guards the rest
  std::condition_variable cv;
  std::deque<std::function<void()> > jobs;
  std::string aborted;  // the reason comm_abort gave
  std::string error;    // the first failure of a Gloo call: the asynchronous error
  bool stop = false;    // destroyed or aborted: the engine leaves

  // Runs `exchange` (which owns what it touches) on the engine; returns once it has, and throws
  // its failure, or the abort's reason if the communicator is aborted first.
  void Exchange(std::function<void()> exchange) {
    struct Job {
      bool done = false;
      std::string error;
    };
    auto job = std::make_shared<Job>();
    std::unique_lock<std::mutex> lock(mu);
    if (!aborted.empty()) TIDE_THROW(TIDE_UNAVAILABLE, aborted);
    jobs.push_back([this, job, exchange = std::move(exchange)] {
      std::string failed;
      try {
        exchange();
      } catch (const std::exception& e) {
        failed = std::string(kLibrary) + ": " + e.what();
      }
      std::lock_guard<std::mutex> l(mu);
      job->done = true;
      job->error = failed;
      if (!failed.empty() && error.empty()) error = failed;
      cv.notify_all();
    });
    cv.notify_all();
    cv.wait(lock, [&] { return job->done || !aborted.empty(); });
    if (!job->done) TIDE_THROW(TIDE_UNAVAILABLE, aborted);
    if (!job->error.empty()) TIDE_THROW(TIDE_UNAVAILABLE, job->error);
  }

  // Ends the engine after the job it runs (the engine holds the communicator until then).
  void Stop(const std::string& reason) {
    std::lock_guard<std::mutex> lock(mu);
    if (!reason.empty()) aborted = reason;
    stop = true;
    cv.notify_all();
  }

  static void Engine(std::shared_ptr<Comm> c) {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(c->mu);
        c->cv.wait(lock, [&] { return c->stop || !c->jobs.empty(); });
        if (c->stop) return;  // jobs left were waited for by tasks the abort released
        job = std::move(c->jobs.front());
        c->jobs.pop_front();
      }
      job();
    }
  }
};

// What the op pack holds: a reference to the communicator, which the engine and the stream's
// tasks share.
struct Handle {
  std::shared_ptr<Comm> comm;
};

std::shared_ptr<Comm> AsComm(TideCollectiveComm* c) { return reinterpret_cast<Handle*>(c)->comm; }

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

// A host copy of `count` elements at p, shared with the engine (which may outlive the task after
// an abort).
template <typename T>
std::shared_ptr<std::vector<T> > Staged(const void* p, size_t count) {
  const T* from = static_cast<const T*>(p);
  return std::make_shared<std::vector<T> >(from, from + count);
}

class SimGloo : public tide::CollectiveLibrary {
 public:
  // On `stream`; `comm_stream`, when given, is the context's communication stream, published
  // through a second SimGloo on it.
  SimGloo(SimStream* stream, SimStream* comm_stream)
      : CollectiveLibrary(kLibrary, kIdBytes, /*has_watchdog=*/true), stream_(stream) {
    if (!comm_stream) return;
    comm_ = std::make_unique<SimGloo>(comm_stream, nullptr);
    comm_->counted_ = true;
    SetCommStream(comm_.get());
  }

  // The two streams ordered by events recorded on one and waited for on the other (kept for the
  // library's life: the context synchronises both streams before it goes).
  void CommWaitCalc() override {
    stream_->Record(&calc_done_);
    comm_->stream_->Wait(&calc_done_);
  }
  void CalcWaitComm() override {
    comm_->stream_->Record(&comm_done_);
    stream_->Wait(&comm_done_);
  }

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
    auto c = std::make_shared<Comm>();
    c->rank = rank;
    c->nranks = nranks;
    c->timeout = 3 * std::chrono::milliseconds(
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
    std::thread(Comm::Engine, c).detach();
    return reinterpret_cast<TideCollectiveComm*>(new Handle{c});
  }

  void CommDestroy(TideCollectiveComm* comm) override {
    auto* h = reinterpret_cast<Handle*>(comm);
    stream_->Enqueue([h] {  // after the collectives queued before
      h->comm->Stop("");
      delete h;
    });
  }

  void AllReduce(TideCollectiveComm* comm, const void* send, void* recv, size_t count,
                 TideDataType dtype, TideReduceOp op) override {
    Queue(comm, dtype, "all_reduce (sim collective)", [=](Comm& c, uint32_t tag, auto t) {
      using T = typename decltype(t)::type;
      auto host = Staged<T>(send, count);
      if (c.nranks > 1 && count > 0) Allreduce(c, tag, host, op);
      std::memcpy(recv, host->data(), count * sizeof(T));
    });
  }

  void Broadcast(TideCollectiveComm* comm, const void* send, void* recv, size_t count,
                 TideDataType dtype, int32_t root) override {
    Queue(comm, dtype, "broadcast (sim collective)", [=](Comm& c, uint32_t tag, auto t) {
      using T = typename decltype(t)::type;
      auto host =
          c.rank == root ? Staged<T>(send, count) : std::make_shared<std::vector<T> >(count);
      if (c.nranks > 1 && count > 0) {
        c.Exchange([&c, tag, host, root] {
          gloo::BroadcastOptions o(c.context);
          o.setOutput(host->data(), host->size());
          o.setRoot(root);
          o.setTag(tag);
          o.setTimeout(c.timeout);
          gloo::broadcast(o);
        });
      }
      std::memcpy(recv, host->data(), count * sizeof(T));
    });
  }

  void AllGather(TideCollectiveComm* comm, const void* send, void* recv, size_t send_count,
                 TideDataType dtype) override {
    Queue(comm, dtype, "all_gather (sim collective)", [=](Comm& c, uint32_t tag, auto t) {
      using T = typename decltype(t)::type;
      auto in = Staged<T>(send, send_count);
      auto out = std::make_shared<std::vector<T> >(send_count * static_cast<size_t>(c.nranks));
      if (c.nranks > 1 && send_count > 0) {
        c.Exchange([&c, tag, in, out] {
          gloo::AllgatherOptions o(c.context);
          o.setInput(in->data(), in->size());
          o.setOutput(out->data(), out->size());
          o.setTag(tag);
          o.setTimeout(c.timeout);
          gloo::allgather(o);
        });
      } else {
        *out = *in;
      }
      std::memcpy(recv, out->data(), out->size() * sizeof(T));
    });
  }

  // An allreduce of the whole buffer, of which this rank keeps its part.
  void ReduceScatter(TideCollectiveComm* comm, const void* send, void* recv, size_t recv_count,
                     TideDataType dtype, TideReduceOp op) override {
    Queue(comm, dtype, "reduce_scatter (sim collective)", [=](Comm& c, uint32_t tag, auto t) {
      using T = typename decltype(t)::type;
      const size_t n = recv_count * static_cast<size_t>(c.nranks);
      auto host = Staged<T>(send, n);
      if (c.nranks > 1 && n > 0) Allreduce(c, tag, host, op);
      std::memcpy(recv, host->data() + recv_count * static_cast<size_t>(c.rank),
                  recv_count * sizeof(T));
    });
  }

  // The stream runs a group's collectives in the order every rank issued them: GroupStart and
  // GroupEnd have nothing to do.

  // The watchdog's: markers are events on the stream, released in stream order (after the task
  // that marks them reached).
  void* MarkerRecord() override {
    auto* e = new SimEvent;
    stream_->Record(e);
    return e;
  }
  bool MarkerQuery(void* marker) override {
    auto* e = static_cast<SimEvent*>(marker);
    std::lock_guard<std::mutex> lock(e->mu);
    return e->reached >= e->recorded;
  }
  void MarkerDestroy(void* marker) override {
    stream_->Enqueue([e = static_cast<SimEvent*>(marker)] { delete e; });
  }
  void CommAsyncError(TideCollectiveComm* comm) override {
    auto c = AsComm(comm);
    std::lock_guard<std::mutex> lock(c->mu);
    if (!c->error.empty()) TIDE_THROW(TIDE_UNAVAILABLE, c->error);
  }
  void CommAbort(TideCollectiveComm* comm, const char* reason) override {
    auto* h = reinterpret_cast<Handle*>(comm);
    h->comm->Stop(reason && *reason ? reason : "aborted");
    delete h;  // the stream's tasks and the engine hold their own references
  }

 private:
  // Queues `work(comm, tag, TypeTag<T>{})` on the stream, where it runs on host copies of the
  // device buffers (the sim's memory is host memory, read and written only by its stream).
  template <typename Work>
  void Queue(TideCollectiveComm* comm, TideDataType dtype, const char* what, Work work) {
    Dispatch(dtype, [](auto) {});  // an unsupported type fails now, not on the stream
    if (counted_) ++g_comm_stream_collectives;
    std::shared_ptr<Comm> c = AsComm(comm);
    const uint32_t tag = c->next_tag++;
    stream_->Enqueue(
        [c, tag, dtype, work] {
          {
            std::lock_guard<std::mutex> lock(c->mu);  // an aborted ring's work is skipped
            if (!c->aborted.empty()) TIDE_THROW(TIDE_UNAVAILABLE, c->aborted);
          }
          Dispatch(dtype, [&](auto t) { work(*c, tag, t); });
        },
        what);
  }

  template <typename T>
  static void Allreduce(Comm& c, uint32_t tag, const std::shared_ptr<std::vector<T> >& data,
                        TideReduceOp op) {
    c.Exchange([&c, tag, data, op] {
      gloo::AllreduceOptions o(c.context);
      o.setOutput(data->data(), data->size());
      o.setReduceFunction(Reduction<T>(op));
      o.setTag(tag);
      o.setTimeout(c.timeout);
      gloo::allreduce(o);
    });
  }

  SimStream* stream_;
  std::unique_ptr<SimGloo> comm_;  // the communication stream's, or null
  bool counted_ = false;           // this is a communication stream's
  SimEvent calc_done_, comm_done_;
};

}  // namespace

std::unique_ptr<tide::CollectiveLibrary> CreateSimCollective(SimStream* stream,
                                                             SimStream* comm_stream) {
  const char* hide = std::getenv("TIDE_SIM_NO_COLLECTIVE");
  if (hide && std::strcmp(hide, "1") == 0) return nullptr;
  return std::make_unique<SimGloo>(stream, comm_stream);
}

#endif  // TIDE_SIM_WITH_GLOO
