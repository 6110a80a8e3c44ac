// comm_init_op.cc: c_comm_init, a ring's communicator from a rendezvous: rank 0 of a TCP store
// hosts it (tcp://host:port), or every rank shares a directory (file:///path, Gloo's FileStore).
// Every ring gets Gloo (host tensors, the ranks' checks and failure reports); on a place whose
// device publishes a collective library (tide/collective.h), rank 0's unique id goes through the
// same store and every rank joins the library's communicator too.
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <tide/plugin.hpp>

#include "communicator.h"
#include "gloo_address.h"
#include "tcp_store.h"

namespace tide_collective {
namespace {

// Rank 0 hosts the TCP store of an endpoint once per process (several rings may share it).
void HostStoreOnce(const std::string& host, int port) {
  static std::mutex mu;
  static auto* servers = new std::map<std::string, std::unique_ptr<TcpStoreServer>>;  // kept
  std::lock_guard<std::mutex> lock(mu);
  auto& s = (*servers)[host + ":" + std::to_string(port)];
  if (!s) s = std::make_unique<TcpStoreServer>(host, port);
}

// On a device place: joins the device's collective library, rank 0's unique id passed through
// the ring's store; returns ", NCCL on gpu:0" for the log line. A device without one: its
// tensors will be staged through host memory, which the ring logs now.
std::string JoinDeviceLibrary(tide::OpRunContext& ctx, RingStore& store, Communicator* comm) {
  const tide::Place place = ctx.place();
  if (place.kind_name() == "cpu") return "";
  const TideCollectiveDef* def = FindCollectiveLibrary(ctx.device_context());
  if (!def) {
    comm->NoteStaging(place, place.kind_name() +
                                 " publishes no collective library: no device context extension "
                                 "'" TIDE_COLLECTIVE_EXTENSION "'");
    return "";
  }
  const std::string key = "device_unique_id";
  std::vector<char> id;
  if (comm->rank() == 0) {
    id = DeviceComm::UniqueId(def);
    store.set(key, id);
  } else {
    store.wait({key}, comm->timeout());
    id = store.get(key);
  }
  comm->set_device(std::make_unique<DeviceComm>(ctx.device_context(), def, id, comm->ring_id(),
                                                comm->rank(), comm->nranks(), comm->timeout()));
  return tide::detail::Concat(", ", comm->device()->library(), " on ", place.ToString());
}

// Every rank publishes the world size it was started with; rank 0 compares all of them, the
// others rank 0's, so that ranks started with different sizes all stop naming it (Gloo's own
// failure is an address-size enforce, or a wait for ranks that never come).
void CheckWorldSizes(RingStore& store, int ring_id, int rank, int nranks,
                     std::chrono::milliseconds timeout) {
  auto key = [](int r) { return "world_size/" + std::to_string(r); };
  const std::string mine = std::to_string(nranks);
  store.set(key(rank), std::vector<char>(mine.begin(), mine.end()));
  std::vector<int> others;
  if (rank == 0) {
    for (int r = 1; r < nranks; ++r) others.push_back(r);
  } else {
    others.push_back(0);
  }
  std::vector<std::string> keys;
  for (int r : others) keys.push_back(key(r));
  const auto missing = store.Missing(keys, std::chrono::steady_clock::now() + timeout);
  if (!missing.empty()) {
    std::string ranks;
    for (const auto& k : missing) ranks += " " + k.substr(k.find('/') + 1);
    TIDE_THROW(TIDE_UNAVAILABLE, "ring ", ring_id, ": rank(s)", ranks, " did not join within ",
               timeout.count(), " ms (are they running, with the same world size and master?)");
  }
  for (int r : others) {
    const std::vector<char> v = store.get(key(r));
    const std::string theirs(v.begin(), v.end());
    TIDE_CHECK(theirs == mine, "ring ", ring_id, ": rank ", r, " was started with a world of ",
               theirs, " processes, this rank with ", mine,
               " (every rank's world size must be the same: WORLD_SIZE, PADDLE_TRAINERS_NUM, "
               "or the launcher's --nproc_per_node x --nnodes)");
  }
}

// "b0: mul, relu; b1: ..." as each block's op types.
std::vector<std::vector<std::string>> ParseOpList(const std::string& s) {
  std::vector<std::vector<std::string>> blocks;
  std::stringstream all(s);
  for (std::string block; std::getline(all, block, ';');) {
    blocks.emplace_back();
    std::stringstream ops(block.substr(block.find(':') + 1));
    for (std::string op; std::getline(ops, op, ',');) {
      op.erase(0, op.find_first_not_of(' '));
      blocks.back().push_back(op);
    }
  }
  return blocks;
}

// The ranks' main programs, as the transpiler lists their op types: rank 0 compares every other
// rank's with its own and warns at the first difference (a rank may build another program on
// purpose, e.g. one that also evaluates; by mistake, the ranks train different models silently).
void CompareProgramOps(RingStore& store, int ring_id, int rank, int nranks, const std::string& ops,
                       std::chrono::milliseconds timeout) {
  if (ops.empty()) return;  // a c_comm_init not made by the transpiler
  auto key = [](int r) { return "program_ops/" + std::to_string(r); };
  store.set(key(rank), std::vector<char>(ops.begin(), ops.end()));
  if (rank != 0) return;
  const auto mine = ParseOpList(ops);
  for (int r = 1; r < nranks; ++r) {
    if (!store.Missing({key(r)}, std::chrono::steady_clock::now() + timeout).empty()) continue;
    const std::vector<char> v = store.get(key(r));
    const auto theirs = ParseOpList(std::string(v.begin(), v.end()));
    if (theirs == mine) continue;
    for (size_t b = 0; b < std::max(mine.size(), theirs.size()); ++b) {
      static const std::vector<std::string> none;
      const auto& m = b < mine.size() ? mine[b] : none;
      const auto& t = b < theirs.size() ? theirs[b] : none;
      if (m == t) continue;
      size_t i = 0;
      while (i < m.size() && i < t.size() && m[i] == t[i]) ++i;
      auto at = [i](const std::vector<std::string>& ops) {
        return i < ops.size() ? "'" + ops[i] + "'" : std::string("no op");
      };
      tide::Log(TIDE_LOG_WARNING, kPlugin,
                tide::detail::Concat(
                    "ring ", ring_id, ": rank ", r, "'s main program differs from rank 0's at op ",
                    i, " of block ", b, ": ", at(t), " there, ", at(m),
                    " here. Unless the ranks build different programs on purpose, they train "
                    "different models (a layer chosen by rank?)"));
      break;
    }
  }
}

void CommInitRun(tide::OpRunContext& ctx) {
  const int ring_id = ctx.Attr<int32_t>("ring_id");
  const int rank = ctx.Attr<int32_t>("rank");
  const int nranks = ctx.Attr<int32_t>("nranks");
  const std::string store_uri = ctx.Attr<std::string>("store");
  const std::string endpoint = ctx.Attr<std::string>("endpoint");
  const std::string where = "op 'c_comm_init' (ring " + std::to_string(ring_id) + ", rank " +
                            std::to_string(rank) + " of " + std::to_string(nranks) + ")";
  TIDE_CHECK(nranks >= 1, where, ": nranks must be >= 1 (a world size of 0 or less is no world)");
  TIDE_CHECK(rank >= 0 && rank < nranks, where, ": rank ", rank, " is outside the world [0, ",
             nranks, ")");
  const auto timeout = CollectiveTimeout();

  std::shared_ptr<gloo::rendezvous::Store> base;
  std::string store_host;  // tcp:// only
  std::string listen_on;   // which address Gloo listens on, and why
  try {
    if (store_uri.rfind("tcp://", 0) == 0) {
      std::string host;
      int port = 0;
      SplitEndpoint(store_uri.substr(6), "attribute store", &host, &port);
      if (rank == 0) HostStoreOnce(host, port);
      base = std::make_shared<TcpStore>(host, port, timeout);
      store_host = host;
    } else if (store_uri.rfind("file://", 0) == 0) {
      const std::string dir = store_uri.substr(7);
      struct stat st {};
      TIDE_CHECK(stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode), "store ", store_uri, ": ", dir,
                 " is not a directory (make it, on a file system every rank sees)");
      base = std::make_shared<gloo::rendezvous::FileStore>(dir);
    } else {
      TIDE_THROW(TIDE_INVALID_ARGUMENT,
                 "attribute store must be tcp://host:port or "
                 "file:///shared/dir, got '",
                 store_uri, "'");
    }
    const std::string prefix =
        "ring_" + std::to_string(ring_id) + "/" + std::to_string(NextGeneration(ring_id)) + "/";
    auto store = std::make_shared<RingStore>(base, prefix, ring_id);

    std::shared_ptr<gloo::transport::Device> device;
    try {
      device = gloo::transport::tcp::CreateDevice(GlooListenAttr(endpoint, store_host, &listen_on));
    } catch (const std::exception& e) {
      TIDE_THROW(TIDE_UNAVAILABLE, "Gloo cannot listen on ", listen_on, ": ", e.what(),
                 " (set GLOO_SOCKET_IFNAME to an interface the other ranks reach, or the "
                 "endpoint attribute; PADDLE_CURRENT_ENDPOINT under fleet)");
    }
    CheckWorldSizes(*store, ring_id, rank, nranks, timeout);
    CompareProgramOps(*store, ring_id, rank, nranks, ctx.Attr<std::string>("program_ops"), timeout);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    context->setTimeout(timeout);
    context->connectFullMesh(*store, device);
    auto comm = std::make_unique<Communicator>(ring_id, rank, nranks, context, store, timeout);
    const std::string on_device = JoinDeviceLibrary(ctx, *store, comm.get());
    tide::Log(TIDE_LOG_INFO, kPlugin,
              tide::detail::Concat("ring ", ring_id, ": rank ", rank, " of ", nranks,
                                   " connected (", store_uri, ", Gloo on ", device->str(), ", ",
                                   listen_on, on_device, ")"));
    SetCommunicator(ring_id, std::move(comm));
  } catch (const tide::Error& e) {
    // Rank 0 hosts the store on every address; not reaching it means the master address is not
    // one of this host's, not that rank 0 died (what the store's client says).
    if (rank == 0 && !store_host.empty() &&
        std::string(e.what()).find("hosted by rank 0") != std::string::npos)
      TIDE_THROW(e.code(), where, ": this rank hosts the rendezvous store (", store_uri,
                 ") but cannot reach it at ", store_host,
                 ": is the master address (MASTER_ADDR, TIDE_MASTER, the launcher's --master) "
                 "an address of this host? (",
                 e.what(), ")");
    TIDE_THROW(e.code(), where, ": ", e.what());
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (store_uri.rfind("file://", 0) == 0 && what.find("File already exists") != std::string::npos)
      TIDE_THROW(TIDE_FAILED_PRECONDITION, where, ": store ", store_uri,
                 " holds an earlier job's keys (Gloo's file store takes each key once): give "
                 "every job, and every restart, an empty directory");
    TIDE_THROW(TIDE_UNAVAILABLE, where, ": ", what);
  }
}

}  // namespace
}  // namespace tide_collective

TIDE_REGISTER_OP(
    tide::OpSchema("c_comm_init")
        .Comment("Makes ring ring_id's communicator: rank of nranks, meeting the others through "
                 "the rendezvous store (rank 0 hosts a tcp:// store). Fluid's c_comm_init, with "
                 "the store in place of the NCCL id; on a device with its own collective "
                 "library (NCCL, ...) the ring joins it too, its unique id passed through the "
                 "store.")
        .Input("X", "unused (Fluid's NCCL id variable)")
        .AsDispensable()
        .Attr("ring_id", int32_t(0), "the communicator's id, used by the collective ops")
        .Attr("rank", int32_t(0), "this process's rank in the ring")
        .Attr("nranks", int32_t(1), "the ring's size")
        .Attr("store", std::string(""), "tcp://host:port (hosted by rank 0) or file:///shared/dir")
        .Attr("endpoint", std::string(""),
              "this rank's address for Gloo (host or host:port); empty: the interface that "
              "routes to the store's host")
        .Attr("program_ops", std::string(""),
              "the ranks' main program's op types (the transpiler's list): rank 0 warns where "
              "another rank's differ")
        .Attr("device_id", int32_t(0),
              "unused (Fluid's): the device is the op's place, whose collective library "
              "(tide/collective.h) the ring joins")
        .NoGradient()
        .Run(tide_collective::CommInitRun));
