// watchdog.cc: see watchdog.h.
#include "watchdog.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <tide/plugin.hpp>

namespace tide_collective {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kPluginName = "collective";

long long MillisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// The text of a status from the library (freed here); empty for none.
std::string TakeMessage(TideStatus* status) {
  if (!status) return "";
  std::string msg = tide::Host().Status_Message(status);
  tide::Host().Status_Free(status);
  return msg.empty() ? "(no message)" : msg;
}

// The live watchdogs, stopped at exit before the devices' contexts (and their libraries) go: the
// handler is registered after the first device context was made (a watchdog needs one), and
// atexit runs the handlers last-registered first.
std::mutex g_live_mu;
std::set<Watchdog*>& Live() {
  static auto* live = new std::set<Watchdog*>;
  return *live;
}
void StopAllAtExit() {
  std::lock_guard<std::mutex> lock(g_live_mu);
  for (Watchdog* w : Live()) w->Stop();
}

}  // namespace

bool Watchdog::Supported(const TideCollectiveDef* def) {
  return def && TIDE_HAS_FIELD(def, TideCollectiveDef, comm_abort) && def->marker_record &&
         def->marker_query && def->marker_destroy && def->comm_get_async_error && def->comm_abort;
}

Watchdog::Watchdog(const TideCollectiveDef* def, TideCollectiveComm* comm, std::string place,
                   std::string ring, std::chrono::milliseconds timeout)
    : def_(def),
      comm_(comm),
      place_(std::move(place)),
      ring_(std::move(ring)),
      timeout_(timeout),
      thread_([this] { Loop(); }) {
  std::lock_guard<std::mutex> lock(g_live_mu);
  static const bool at_exit = (std::atexit(StopAllAtExit), true);
  (void)at_exit;
  Live().insert(this);
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(g_live_mu);
    Live().erase(this);
  }
  Stop();
  for (const Pending& p : pending_) p.table->marker_destroy(p.table->self, p.marker);
}

void Watchdog::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  std::lock_guard<std::mutex> lock(join_mu_);
  if (thread_.joinable()) thread_.join();
}

std::string Watchdog::Library() const { return def_->library ? def_->library : "the library"; }

void Watchdog::Watch(const std::string& where, const TideCollectiveDef* table) {
  if (!Supported(table)) return;
  void* marker = nullptr;
  const std::string error = TakeMessage(table->marker_record(table->self, &marker));
  if (!error.empty()) {  // unwatched: said, not fatal (the collective itself was queued)
    tide::Log(TIDE_LOG_WARNING, kPluginName,
              where + ": the watchdog cannot mark the stream (" + error + ")");
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  pending_.push_back({where, Clock::now(), table, marker});
}

std::string Watchdog::Aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_;
}

std::string Watchdog::Check() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!pending_.empty()) {  // finished in queue order: the oldest first
    Pending& p = pending_.front();
    int32_t done = 0;
    const std::string error = TakeMessage(p.table->marker_query(p.table->self, p.marker, &done));
    if (!error.empty())
      return p.where + ": " + Library() + " on " + place_ + " failed after " +
             std::to_string(MillisSince(p.start)) + " ms: " + error;
    if (!done) break;
    p.table->marker_destroy(p.table->self, p.marker);
    pending_.pop_front();
  }
  // Idle, nothing is asked of the library: at exit the devices' contexts go while this thread
  // may still run (between the last collective and the exit handler that stops it).
  if (pending_.empty()) return "";
  const Pending& p = pending_.front();
  const long long ms = MillisSince(p.start);
  if (ms >= timeout_.count())
    return p.where + " did not finish within " + std::to_string(timeout_.count()) + " ms on " +
           place_ + " (" + std::to_string(ms) + " ms elapsed; a rank stopped, died or issued " +
           "other collectives)";
  const std::string where = p.where;
  lock.unlock();
  const std::string error = TakeMessage(def_->comm_get_async_error(def_->self, comm_));
  if (error.empty()) return "";
  return where + ": " + Library() + " on " + place_ + " reported an asynchronous error after " +
         std::to_string(ms) + " ms: " + error;
}

std::unique_lock<std::timed_mutex> Watchdog::Enter() {
  std::unique_lock<std::timed_mutex> call(call_mu_);
  const std::string aborted = Aborted();
  if (!aborted.empty())
    TIDE_THROW(TIDE_UNAVAILABLE, "ring ", ring_, ": ", Library(),
               "'s communicator is unusable: ", aborted);
  return call;
}

void Watchdog::Abort(const std::string& why) {
  const std::string reason =
      "collective watchdog: " + why + "; " + Library() + "'s communicator was aborted";
  tide::Log(TIDE_LOG_ERROR, kPluginName, reason);
  // No call starts on the communicator once aborted_ is set; one under way is waited for.
  std::unique_lock<std::timed_mutex> call(call_mu_, std::chrono::seconds(1));
  {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = reason;
  }
  const std::string error = TakeMessage(def_->comm_abort(def_->self, comm_, reason.c_str()));
  if (!error.empty())
    tide::Log(TIDE_LOG_ERROR, kPluginName, "ring " + ring_ + ": aborting failed: " + error);
}

void Watchdog::Loop() {
  // Polls often enough to abort within a few percent of the timeout, at most every 100 ms.
  const auto period =
      std::clamp(timeout_ / 50, std::chrono::milliseconds(5), std::chrono::milliseconds(100));
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, period, [this] { return stop_; })) return;
    }
    const std::string why = Check();
    if (why.empty()) continue;
    Abort(why);
    return;  // the communicator is gone: nothing left to watch
  }
}

}  // namespace tide_collective
