// profiler.cc: the per-op time table and timeline, the run loop's timer that fills them, and the
// device tracers' records of a profile.
//
// Event-timed ops (see profiler.h) are placed on the host's clock through an anchor per context:
// an event recorded on the idle stream at the first timed op of a profile. The anchor's host time
// A is unknown but bounded: the stream reached it between the host's readings before its record
// and after its synchronisation (lo, hi); later, each op's begin marker cannot be reached before
// the host recorded it (A + elapsed >= recorded, raising lo), and the run's last end marker was
// reached before the host saw it done (A + elapsed <= seen, lowering hi). A is taken as the middle
// of [lo, hi], and OpTimings gives (hi - lo) / 2 as the alignment's uncertainty.
#include "core/executor/profiler.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>

#include "core/device/device_context.h"
#include "core/executor/op_instance.h"
#include "core/platform/flags.h"

namespace tide::core {
namespace {
std::mutex g_mu;
std::map<std::string, OpProfile>& Table() {
  static auto* t = new std::map<std::string, OpProfile>;
  return *t;
}
std::vector<OpEvent>& Events() {
  static auto* e = new std::vector<OpEvent>;
  return *e;
}
std::chrono::steady_clock::time_point g_origin = std::chrono::steady_clock::now();
uint64_t g_dropped = 0;
uint64_t ThreadNumber() {
  static std::atomic<uint64_t> next{1};
  thread_local uint64_t mine = next++;
  return mine;
}
int64_t OriginNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(g_origin.time_since_epoch()).count();
}

// The anchor of a context's event times (see the top of this file), for the current profile.
struct Anchor {
  void* event = nullptr;
  int64_t lo = 0, hi = 0;
};
// Under g_mu: the anchors, the places timed by synchronising, the device tracers' records.
std::map<DeviceContext*, Anchor>& Anchors() {
  static auto* a = new std::map<DeviceContext*, Anchor>;
  return *a;
}
std::map<std::string, bool>& SyncedPlaces() {
  static auto* s = new std::map<std::string, bool>;
  return *s;
}
std::vector<DeviceTrace>& Traces() {
  static auto* t = new std::vector<DeviceTrace>;
  return *t;
}
std::vector<DeviceTraceClock>& TraceClocks() {
  static auto* c = new std::vector<DeviceTraceClock>;
  return *c;
}

// The anchor of `ctx`, made at its first timed op of the profile (one wait for the device).
Anchor AnchorOf(DeviceContext* ctx) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = Anchors().find(ctx);
    if (it != Anchors().end()) return it->second;
  }
  ctx->Synchronize();  // idle: the anchor's marker is reached as soon as it is recorded
  Anchor a;
  a.lo = CoreClockNs();
  a.event = ctx->RecordTimingEvent();
  ctx->SynchronizeEvent(a.event);
  a.hi = CoreClockNs();
  std::lock_guard<std::mutex> lock(g_mu);
  auto [it, added] = Anchors().emplace(ctx, a);
  if (!added) ctx->ReturnTimingEvent(a.event);  // another thread made one first
  return it->second;
}

// An op timed with events, waiting for its run to end.
struct PendingOp {
  std::string table_name, type, kernel;
  std::chrono::steady_clock::time_point host_start;
  double host_ms;
  uint64_t thread;
  DeviceContext* ctx;
  void* begin;
  void* end;
  int64_t begin_recorded_ns;
};
thread_local int t_profiled_runs = 0;  // nesting of profiled runs on this thread
// Past this many ops waiting to be timed, a run's end waits for them (events are held meanwhile).
constexpr size_t kMaxDeferredOps = 4096;

void ReturnEvents(const std::vector<PendingOp>& ops) {
  for (const PendingOp& p : ops) {
    p.ctx->ReturnTimingEvent(p.begin);
    p.ctx->ReturnTimingEvent(p.end);
  }
}

// Times one context's ops of a run: waits for the last, then places them on the host's clock.
void ResolveOn(DeviceContext* ctx, const std::vector<PendingOp>& ops) {
  const Anchor anchor = AnchorOf(ctx);
  ctx->SynchronizeEvent(ops.back().end);
  const int64_t seen = CoreClockNs();
  // The first begin against the anchor; the rest against the first begin (float ms keeps about
  // 7 digits, so short spans keep their precision in a long profile).
  const double first_ms = ctx->ElapsedMs(anchor.event, ops.front().begin);
  std::vector<std::pair<double, double>> times;  // (begin, end) ms after the anchor
  int64_t lo = anchor.lo, hi = anchor.hi;
  for (const PendingOp& p : ops) {
    const double b =
        first_ms + (&p == &ops.front() ? 0 : ctx->ElapsedMs(ops.front().begin, p.begin));
    const double e = b + ctx->ElapsedMs(p.begin, p.end);
    times.emplace_back(b, e);
    lo = std::max(lo, p.begin_recorded_ns - static_cast<int64_t>(b * 1e6));
  }
  hi = std::min(hi, seen - static_cast<int64_t>(times.back().second * 1e6));
  if (hi < lo) hi = lo;  // readings a clock tick apart
  const std::string place = ctx->place().ToString();
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = Anchors().find(ctx);
  if (it != Anchors().end()) {
    it->second.lo = std::max(it->second.lo, lo);
    it->second.hi = std::max(it->second.lo, std::min(it->second.hi, hi));
    lo = it->second.lo, hi = it->second.hi;
  }
  const double anchor_us = (double(lo + (hi - lo) / 2) - double(OriginNs())) / 1e3;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PendingOp& p = ops[i];
    const double dev_ms = times[i].second - times[i].first;
    OpProfile& row = Table()[p.table_name];
    row.name = p.table_name;
    ++row.calls;
    row.total_ms += dev_ms;
    if (Events().size() >= kMaxOpEvents) {
      ++g_dropped;
      continue;
    }
    OpEvent ev;
    ev.name = p.type;
    ev.kernel = p.kernel;
    ev.start_us = std::chrono::duration<double, std::micro>(p.host_start - g_origin).count();
    ev.dur_us = p.host_ms * 1000.0;
    ev.thread = p.thread;
    ev.place = place;
    ev.device_start_us = anchor_us + times[i].first * 1000.0;
    ev.device_dur_us = dev_ms * 1000.0;
    Events().push_back(std::move(ev));
  }
}

// Resolves `pending`, context by context in the order they ran.
void Resolve(std::vector<PendingOp> pending) {
  std::map<DeviceContext*, std::vector<PendingOp>> by_ctx;
  for (PendingOp& p : pending) by_ctx[p.ctx].push_back(std::move(p));
  for (auto& [ctx, ops] : by_ctx) {
    try {
      ResolveOn(ctx, ops);
    } catch (const std::exception& e) {
      LOG(WARNING) << "profiler: the device times of " << ops.size() << " op(s) on "
                   << ctx->place().ToString() << " are lost: " << e.what();
    }
    ReturnEvents(ops);
  }
}

// The thread's ops timed with events and not yet resolved; those of a thread that ends are
// resolved then.
struct PendingOps {
  std::vector<PendingOp> ops;
  ~PendingOps() {
    if (ops.empty() || DevicesShutDown()) return;  // at exit: the devices may be gone
    try {
      Resolve(std::move(ops));
    } catch (...) {  // a destructor: nothing to report to
    }
  }
};
thread_local PendingOps t_pending;

void ResolvePending() {
  std::vector<PendingOp> pending;
  pending.swap(t_pending.ops);
  // After tide.shutdown() the contexts (and their events) are gone: those times are lost.
  if (DevicesShutDown()) return;
  Resolve(std::move(pending));
}

// True when each context's last pending op is done: resolving them waits for nothing.
bool PendingDone() {
  std::map<DeviceContext*, void*> last;
  for (const PendingOp& p : t_pending.ops) last[p.ctx] = p.end;
  for (const auto& [ctx, event] : last)
    if (!ctx->QueryEvent(event)) return false;
  return true;
}
}  // namespace

bool TimesWithEvents(const DeviceContext* ctx) {
  return ctx && ctx->has_event_timing() && !FLAGS_sync_ops && !FLAGS_check_nan_inf;
}

void RecordOpEvent(const std::string& type, const std::string& kernel,
                   std::chrono::steady_clock::time_point start, double ms) {
  const uint64_t thread = ThreadNumber();
  std::lock_guard<std::mutex> lock(g_mu);
  if (Events().size() >= kMaxOpEvents) {
    ++g_dropped;
    return;
  }
  double start_us = std::chrono::duration<double, std::micro>(start - g_origin).count();
  OpEvent ev;
  ev.name = type;
  ev.kernel = kernel;
  ev.start_us = start_us;
  ev.dur_us = ms * 1000.0;
  ev.thread = thread;
  Events().push_back(std::move(ev));
}

std::vector<OpEvent> OpEvents() {
  std::lock_guard<std::mutex> lock(g_mu);
  return Events();
}

uint64_t DroppedOpEvents() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_dropped;
}

std::vector<OpTiming> OpTimings() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<OpTiming> out;
  for (const auto& [ctx, a] : Anchors())
    out.push_back({ctx->place().ToString(), "events", double(a.hi - a.lo) / 2e3});
  for (const auto& kv : SyncedPlaces()) out.push_back({kv.first, "synchronised", 0});
  return out;
}

void RecordOpTime(const std::string& name, double ms) {
  std::lock_guard<std::mutex> lock(g_mu);
  OpProfile& p = Table()[name];
  p.name = name;
  ++p.calls;
  p.total_ms += ms;
}

std::vector<OpProfile> OpProfiles() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<OpProfile> out;
  for (const auto& kv : Table()) out.push_back(kv.second);
  std::sort(out.begin(), out.end(),
            [](const OpProfile& a, const OpProfile& b) { return a.total_ms > b.total_ms; });
  return out;
}

void ResetOpProfiles() {
  std::lock_guard<std::mutex> lock(g_mu);
  Table().clear();
  Events().clear();
  if (!DevicesShutDown())  // else the contexts, and their events, are gone
    for (auto& [ctx, a] : Anchors()) ctx->ReturnTimingEvent(a.event);
  Anchors().clear();
  SyncedPlaces().clear();
  Traces().clear();
  TraceClocks().clear();
  g_dropped = 0;
  g_origin = std::chrono::steady_clock::now();
}

void StartProfile() {
  // Work queued before the profile (a run that returned once its fetches were down) finishes
  // first: every device record in the trace then belongs to an op the profile saw.
  if (!DevicesShutDown()) DeviceContextPool::Global().SynchronizeAll();
  ResetOpProfiles();
  StartDeviceTracers();
}

void StopProfile() {
  if (!t_pending.ops.empty()) ResolvePending();  // runs that did not wait for their device
  std::vector<DeviceTraceClock> clocks;
  std::vector<DeviceTraceRecord> records = StopDeviceTracers(&clocks);
  std::lock_guard<std::mutex> lock(g_mu);
  const double origin = double(OriginNs());
  for (DeviceTraceRecord& r : records) {
    DeviceTrace t;
    t.start_us = (double(r.begin_ns) - origin) / 1e3;
    t.dur_us = double(std::max<int64_t>(r.end_ns - r.begin_ns, 0)) / 1e3;
    t.record = std::move(r);
    Traces().push_back(std::move(t));
  }
  TraceClocks() = std::move(clocks);
}

std::vector<DeviceTrace> DeviceTraces() {
  std::lock_guard<std::mutex> lock(g_mu);
  return Traces();
}

std::vector<DeviceTraceClock> DeviceTraceClocks() {
  std::lock_guard<std::mutex> lock(g_mu);
  return TraceClocks();
}

std::string OpProfileReport() {
  std::vector<OpProfile> all = OpProfiles();
  double total = 0;
  for (const auto& p : all) total += p.total_ms;
  std::string out =
      "op (kernel)                                                   calls    total ms   share\n";
  char line[256];
  for (const auto& p : all) {
    std::snprintf(line, sizeof(line), "%-60s %7llu %11.3f %6.1f%%\n", p.name.c_str(),
                  static_cast<unsigned long long>(p.calls), p.total_ms,
                  total ? 100 * p.total_ms / total : 0.0);
    out += line;
  }
  return out;
}

void OpTimer::Begin() {
  active_ = true;
  ++t_profiled_runs;
}

void OpTimer::End() {
  active_ = false;
  if (--t_profiled_runs != 0 || t_pending.ops.empty()) return;
  // A run that did not wait for its device (no fetch) stays asynchronous under the profiler:
  // its ops are timed once done (at a later run's end), when the profile stops, or past
  // kMaxDeferredOps.
  if (t_pending.ops.size() > kMaxDeferredOps || PendingDone()) ResolvePending();
}

void OpTimer::Start(const OpInstance& op, uint64_t transforms) {
  transforms_ = transforms;
  begin_ = nullptr;
  begin_ctx_ = nullptr;
  DeviceContext* ctx = op.info().run ? nullptr : op.kernel_dctx();
  if (TimesWithEvents(ctx)) {
    AnchorOf(ctx);  // before the op's first marker
    begin_recorded_ns_ = CoreClockNs();
    begin_ = ctx->RecordTimingEvent();
    begin_ctx_ = ctx;
  }
  start_ = std::chrono::steady_clock::now();
}

void OpTimer::Stop(const OpInstance& op, uint64_t transforms) {
  DeviceContext* ctx = op.info().run ? nullptr : op.kernel_dctx();
  if (begin_ && ctx != begin_ctx_) {  // the op moved to another place (a declined kernel)
    begin_ctx_->ReturnTimingEvent(begin_);
    begin_ = nullptr;
  }
  // Not synchronised after the kernel, and no begin marker (the op's first run chose its
  // place): wait now, so the host's time holds the device's.
  if (!begin_ && TimesWithEvents(ctx)) ctx->Synchronize();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  std::string kernel = op.kernel() ? op.kernel()->key.ToString() : std::string();
  std::string name = op.type() + (kernel.empty() ? "" : " " + kernel);
  if (transforms != transforms_) name += " +transforms";
  if (begin_) {
    void* end = ctx->RecordTimingEvent();
    t_pending.ops.push_back({std::move(name), op.type(), std::move(kernel), start_, ms,
                             ThreadNumber(), ctx, begin_, end, begin_recorded_ns_});
    begin_ = nullptr;
    return;
  }
  if (ctx) {
    std::lock_guard<std::mutex> lock(g_mu);
    SyncedPlaces()[ctx->place().ToString()] = true;
  }
  RecordOpTime(name, ms);
  RecordOpEvent(op.type(), kernel, start_, ms);
}

}  // namespace tide::core
