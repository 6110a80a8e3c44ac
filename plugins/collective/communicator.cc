// communicator.cc: the rings of this process and the failure report of a collective.
#include "communicator.h"

#include <gloo/allgather.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <tide/plugin.hpp>
#include <vector>

namespace tide_collective {
namespace {

using Clock = std::chrono::steady_clock;

std::mutex g_mu;
// Kept for the process's life: Gloo's device threads must not be joined during static
// destruction (plugins are never unloaded).
std::map<int, std::unique_ptr<Communicator>>& Rings() {
  static auto* m = new std::map<int, std::unique_ptr<Communicator>>;
  return *m;
}
std::map<int, int>& Generations() {
  static auto* m = new std::map<int, int>;
  return *m;
}

std::string AliveKey(uint64_t seq, int rank) {
  return "alive/" + std::to_string(seq) + "/" + std::to_string(rank);
}

constexpr size_t kSignatureBytes = 96;  // what collective_check exchanges per rank

}  // namespace

std::chrono::milliseconds CollectiveTimeout() {
  const long long ms = std::atoll(tide::Flag("collective_timeout_ms", "180000").c_str());
  TIDE_CHECK(ms > 0, "flag collective_timeout_ms must be > 0, got ", ms);
  return std::chrono::milliseconds(ms);
}

std::string Describe(TideDataType dtype, const std::vector<int64_t>& dims) {
  std::string s = std::string(tide::DataTypeName(dtype)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Communicator::Communicator(int ring_id, int rank, int nranks,
                           std::shared_ptr<gloo::Context> context, std::shared_ptr<RingStore> store,
                           std::chrono::milliseconds timeout)
    : ring_id_(ring_id),
      rank_(rank),
      nranks_(nranks),
      context_(std::move(context)),
      store_(std::move(store)),
      timeout_(timeout),
      check_(tide::Flag("collective_check", "true") == "true") {}

std::string Communicator::Where(const std::string& op, uint64_t seq) const {
  return "op '" + op + "' (collective #" + std::to_string(seq) + " on ring " +
         std::to_string(ring_id_) + ", rank " + std::to_string(rank_) + " of " +
         std::to_string(nranks_) + ")";
}

void Communicator::NoteStaging(const tide::Place& place, const std::string& why) {
  std::call_once(staging_noted_, [&] {
    tide::Log(TIDE_LOG_WARNING, kPlugin,
              tide::detail::Concat("ring ", ring_id_, ": the collectives on ", place.ToString(),
                                   " tensors are staged through host memory and run on Gloo (", why,
                                   ")"));
  });
}

void Communicator::Run(const std::string& op, const std::string& what,
                       const std::function<void(uint32_t)>& fn, const std::string& engine) {
  TIDE_CHECK(broken_.empty(), "op '", op, "': ring ", ring_id_,
             " is unusable after an earlier "
             "failure: ",
             broken_);
  const uint64_t seq = ++seq_;
  const auto start = Clock::now();
  const std::string signature = op + " " + what;
  if (check_ && nranks_ > 1) Check(op, seq, start, signature);
  try {
    fn(static_cast<uint32_t>(seq));
  } catch (const std::exception& e) {
    Fail(op, seq, start, signature, engine + ": " + e.what());
  }
}

// collective_check: every rank's signature of collective #seq, gathered before any data moves.
void Communicator::Check(const std::string& op, uint64_t seq, Clock::time_point start,
                         const std::string& signature) {
  std::vector<char> mine(kSignatureBytes, '\0');
  std::memcpy(mine.data(), signature.data(), std::min(signature.size(), kSignatureBytes - 1));
  std::vector<char> all(kSignatureBytes * static_cast<size_t>(nranks_));
  try {
    gloo::AllgatherOptions o(context_);
    o.setInput(mine.data(), mine.size());
    o.setOutput(all.data(), all.size());
    o.setTag(static_cast<uint32_t>(seq) | 0x80000000u);  // apart from the collectives' own tags
    o.setTimeout(timeout_);
    gloo::allgather(o);
  } catch (const std::exception& e) {
    Fail(op, seq, start, signature, std::string("Gloo: ") + e.what());
  }
  std::string differ;
  for (int r = 0; r < nranks_; ++r) {
    const std::string theirs(all.data() + static_cast<size_t>(r) * kSignatureBytes);
    if (theirs != mine.data())
      differ += (differ.empty() ? "" : ", ") + ("rank " + std::to_string(r) + ": '" + theirs + "'");
  }
  if (differ.empty()) return;
  broken_ = Where(op, seq) +
            ": the ranks issued different collectives (collective_check): this "
            "rank '" +
            signature + "', " + differ;
  tide::Log(TIDE_LOG_ERROR, kPlugin, broken_);
  TIDE_THROW(TIDE_FAILED_PRECONDITION, broken_);
}

void Communicator::Fail(const std::string& op, uint64_t seq, Clock::time_point start,
                        const std::string& signature, const std::string& why) {
  // Each surviving rank marks that it reached collective #seq, then waits (until the collective's
  // own deadline plus a grace period, so ranks that fail late are seen) for the others' marks.
  // The ranks without one stopped, died, or issued different collectives.
  const auto grace = std::max(std::chrono::milliseconds(2000), timeout_ / 4);
  // The mark holds the rank's signature: ranks that reached collective #seq with another op or
  // other data are named with what they issued.
  std::string who, differ;
  try {
    store_->set(AliveKey(seq, rank_), std::vector<char>(signature.begin(), signature.end()));
    std::vector<std::string> keys;
    for (int r = 0; r < nranks_; ++r)
      if (r != rank_) keys.push_back(AliveKey(seq, r));
    const auto missing = store_->Missing(keys, std::max(start + timeout_, Clock::now()) + grace);
    std::vector<std::string> present;
    for (const auto& k : keys) {
      const std::string r = k.substr(k.rfind('/') + 1);
      if (std::find(missing.begin(), missing.end(), k) != missing.end()) {
        who += (who.empty() ? "" : ", ") + r;
        continue;
      }
      present.push_back("done/" + std::to_string(seq) + "/" + r);
      const std::vector<char> v = store_->get(k);
      const std::string theirs(v.begin(), v.end());
      if (theirs != signature) differ += "; rank " + r + " issued '" + theirs + "' instead";
    }
    // Rank 0 hosts the store: it leaves last, once the others have read what they need.
    store_->set("done/" + std::to_string(seq) + "/" + std::to_string(rank_), {'1'});
    if (rank_ == 0) store_->Missing(present, Clock::now() + grace);
    who = who.empty()
              ? "every rank reached it" + std::string(differ.empty() ? " (a transport error)" : "")
              : "rank(s) " + who + " did not reach it within " + std::to_string(timeout_.count()) +
                    " ms (stopped, died or issued "
                    "other collectives)";
  } catch (const std::exception& e) {
    who = std::string("rank 0 is gone: ") + e.what();
  }
  broken_ = Where(op, seq) + " failed: " + who +
            (differ.empty() ? "" : differ + " of '" + signature + "'") + "; " + why;
  tide::Log(TIDE_LOG_ERROR, kPlugin, broken_);
  TIDE_THROW(TIDE_UNAVAILABLE, broken_);
}

void Communicator::Async(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(queue_mu_);
  if (!worker_started_) {  // one thread per ring, kept for the process's life (see Rings())
    std::thread([this] { WorkerLoop(); }).detach();
    worker_started_ = true;
  }
  queue_.push_back(std::move(task));
  ++pending_;
  queue_cv_.notify_all();
}

void Communicator::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait(lock, [this] { return !queue_.empty(); });
      task = std::move(queue_.front());
      queue_.pop_front();
      if (!async_error_.empty()) task = nullptr;  // the ring failed: later tasks are dropped
    }
    TideCode code = TIDE_OK;
    std::string error;
    if (task) {
      try {
        task();
      } catch (const tide::Error& e) {
        code = e.code();
        error = e.what();
      } catch (const std::exception& e) {
        code = TIDE_INTERNAL;
        error = e.what();
      }
    }
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (!error.empty() && async_error_.empty()) {
      async_error_ = error;
      async_code_ = code;
    }
    --pending_;
    queue_cv_.notify_all();
  }
}

void Communicator::Wait(const std::string& op) {
  std::unique_lock<std::mutex> lock(queue_mu_);
  queue_cv_.wait(lock, [this] { return pending_ == 0; });
  if (!async_error_.empty())
    TIDE_THROW(async_code_, "op '", op, "' waited for ring ", ring_id_,
               "'s asynchronous "
               "collectives, and one failed: ",
               async_error_);
}

Communicator& GetCommunicator(int ring_id, const std::string& op) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = Rings().find(ring_id);
  TIDE_CHECK(it != Rings().end(), "op '", op, "': ring ", ring_id,
             " has no communicator (run "
             "c_comm_init for ring_id ",
             ring_id,
             " first, e.g. the startup program of "
             "fleet.distributed_optimizer)");
  return *it->second;
}

void SetCommunicator(int ring_id, std::unique_ptr<Communicator> comm) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& slot = Rings()[ring_id];
  if (slot) {
    // The old ring's device communicator goes (after its queued work); its Gloo context may
    // still be referenced by Gloo threads and is kept.
    slot->TakeDevice();
    slot.release();
  }
  slot = std::move(comm);
}

int NextGeneration(int ring_id) {
  std::lock_guard<std::mutex> lock(g_mu);
  return Generations()[ring_id]++;
}

}  // namespace tide_collective
