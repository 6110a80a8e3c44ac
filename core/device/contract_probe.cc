// contract_probe.cc: the device-contract checks (copy, free), then those of the optional entries
// a device has (event timing, memory statistics, the tracer, the copy stream, graphs, host
// functions). The
// contract checks each keep the device's stream busy with large device-to-device copies, then do
// what the contract lets the core do at once (change a host buffer right after `copy` returns;
// free a block a queued copy still reads), then read back what the device got. Through the core's
// own paths (DeviceContext::Copy, FreeDeviceMemory), so a device declaring contract 1 is checked
// with the synchronisation the core adds for it.
#include "core/device/contract_probe.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/device/device_context.h"
#include "core/device/device_tracer.h"
#include "core/platform/status.h"

namespace tide::core {
namespace {

constexpr size_t kBusyBytes = size_t(32) << 20;  // per busy copy: milliseconds on any device
constexpr int kBusyCopies = 4;
constexpr size_t kProbeBytes = size_t(1) << 20;

// A block of the place's device memory, given back (through the core's free path) when dropped.
class DeviceBlock {
 public:
  DeviceBlock(const DeviceInfo& dev, const Place& place, size_t size)
      : dev_(dev), place_(place), size_(size) {
    CallPlugin([&] { return dev.def.alloc(dev.def.self, place.device, size, &ptr_); },
               [&] { return StrCat("allocating ", size, " bytes on ", place.ToString()); },
               dev.plugin_file);
    TIDE_ENFORCE(ptr_, "device plugin ", dev.plugin_file, " returned no memory for ", size,
                 " bytes");
  }
  ~DeviceBlock() { Free(); }
  void Free() {
    if (ptr_) FreeDeviceMemory(dev_, place_, ptr_, size_);
    ptr_ = nullptr;
  }
  void* get() const { return ptr_; }

 private:
  const DeviceInfo& dev_;
  Place place_;
  size_t size_;
  void* ptr_ = nullptr;
};

std::vector<unsigned char> Pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed) % 251);
  return v;
}

// Large copies between two blocks, queued so that what is queued next waits behind them.
class BusyStream {
 public:
  BusyStream(const DeviceInfo& dev, const Place& place)
      : a_(dev, place, kBusyBytes), b_(dev, place, kBusyBytes) {}
  void Queue(DeviceContext* ctx) {
    for (int i = 0; i < kBusyCopies; ++i)
      ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, b_.get(), a_.get(), kBusyBytes);
  }

 private:
  DeviceBlock a_, b_;
};

std::string FirstMismatch(const std::vector<unsigned char>& got,
                          const std::vector<unsigned char>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return StrCat("byte ", i, " of ", want.size(), " is ", int(got[i]), ", want ", int(want[i]));
  return "";
}

// Reads `block` back once the queued work is done and compares it with `want`: empty when equal.
std::string Compare(DeviceContext* ctx, const DeviceBlock& block,
                    const std::vector<unsigned char>& want) {
  std::vector<unsigned char> got(want.size());
  ctx->Synchronize();
  ctx->Copy(TIDE_COPY_DEVICE_TO_HOST, got.data(), block.get(), want.size());
  ctx->Synchronize();
  return FirstMismatch(got, want);
}

constexpr const char* kCopyRule =
    "a host-to-device copy from ordinary host memory has taken the source's bytes when copy "
    "returns "
    "(the core may change or free them right after)";
constexpr const char* kFreeRule =
    "free releases a block in stream order: work queued before the free still reads the block's "
    "bytes";

// What the copy check sees: empty, or what arrived wrong.
std::string CheckCopy(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  BusyStream busy(dev, place);
  DeviceBlock block(dev, place, kProbeBytes);
  const std::vector<unsigned char> want = Pattern(kProbeBytes, 1);
  auto host = std::make_unique<std::vector<unsigned char>>(want);  // ordinary (pageable) memory
  busy.Queue(ctx);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, block.get(), host->data(), kProbeBytes);
  std::memset(host->data(), 0xEE, kProbeBytes);  // the core reuses the buffer at once
  const std::string bad = Compare(ctx, block, want);
  if (bad.empty()) return "";
  return StrCat(
      "a host buffer changed right after copy (HOST_TO_DEVICE) returned changed what arrived on ",
      place.ToString(), ": ", bad, " (the copy read the host bytes later)");
}

std::string CheckFree(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  BusyStream busy(dev, place);
  DeviceBlock dst(dev, place, kProbeBytes);
  auto src = std::make_unique<DeviceBlock>(dev, place, kProbeBytes);
  const std::vector<unsigned char> want = Pattern(kProbeBytes, 2);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, src->get(), want.data(), kProbeBytes);
  ctx->Synchronize();
  busy.Queue(ctx);
  ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, dst.get(), src->get(), kProbeBytes);  // runs late
  src->Free();  // while that copy still waits to read it
  // The next user of the memory writes it at once, as another allocation would.
  DeviceBlock next(dev, place, kProbeBytes);
  const std::vector<unsigned char> other = Pattern(kProbeBytes, 3);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, next.get(), other.data(), kProbeBytes);
  const std::string bad = Compare(ctx, dst, want);
  if (bad.empty()) return "";
  return StrCat("a block freed while the stream of ", place.ToString(),
                " was busy was released before the "
                "copy queued to read it ran: ",
                bad, " of the copy's result");
}

// --- The optional entries of issue 33: event timing, memory statistics, the tracer ---

constexpr const char* kElapsedRule =
    "event_elapsed_ms gives the finite, non-negative time between two done events, no longer than "
    "the host waited for the work between them";
constexpr const char* kMemoryStatsRule =
    "memory_stats counts a block alloc returned in bytes_in_use, with bytes_in_use <= "
    "peak_bytes_in_use and, where given, bytes_in_use <= bytes_reserved <= bytes_limit";
constexpr const char* kTracerRule =
    "the tracer records the copies queued while it runs (kind COPY, their bytes), each with "
    "begin <= end, inside the host's time around them once its clock is mapped";

constexpr const char* kCopyStreamRule =
    "a role context (context_create_role) orders against the compute context by events: work the "
    "compute context queues after waiting for an event recorded on the copy stream sees the copy "
    "stream's writes";

// The copy stream kept busy, then an upload on it; the compute context waits for it (as
// TensorUpload does) and copies the block: what it copied must be what was uploaded.
std::string CheckCopyStream(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  DeviceContext* copy = ctx->ForRole(TIDE_STREAM_COPY_IN);
  if (copy == ctx) return "";  // --copy_stream off: nothing to order
  BusyStream busy(dev, place);
  DeviceBlock up(dev, place, kProbeBytes), seen(dev, place, kProbeBytes);
  const std::vector<unsigned char> want = Pattern(kProbeBytes, 4);
  busy.Queue(copy);
  copy->Copy(TIDE_COPY_HOST_TO_DEVICE, up.get(), want.data(), kProbeBytes);
  ctx->WaitFor(*copy);
  ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, seen.get(), up.get(), kProbeBytes);
  const std::string bad = Compare(ctx, seen, want);
  copy->Synchronize();  // before the blocks go: the copy stream may still use them
  if (bad.empty()) return "";
  return StrCat("a copy on the compute context of ", place.ToString(),
                " queued after waiting for an event recorded on its copy stream read the block "
                "before the copy stream's upload landed: ",
                bad);
}

constexpr const char* kGraphsRule =
    "a captured graph (TideDeviceGraphs) runs none of its work while capturing and all of it at "
    "every launch, reading the captured addresses' bytes as they are at that launch";

// A graph of a device-to-device copy (src -> dst), launched twice with new bytes uploaded into
// src before each launch: dst must follow src each time, and the capture itself (src already
// holding bytes then) must leave dst alone.
std::string CheckGraphs(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  DeviceBlock src(dev, place, kProbeBytes), dst(dev, place, kProbeBytes);
  const std::vector<unsigned char> zeros(kProbeBytes, 0), before = Pattern(kProbeBytes, 9);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, dst.get(), zeros.data(), kProbeBytes);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, src.get(), before.data(), kProbeBytes);
  ctx->Synchronize();
  ctx->BeginCapture();
  try {
    ctx->Copy(TIDE_COPY_DEVICE_TO_DEVICE, dst.get(), src.get(), kProbeBytes);
  } catch (...) {
    try {
      ctx->DestroyGraph(ctx->EndCapture());
    } catch (...) {  // the capture failed as well: the copy's error says why
    }
    throw;
  }
  std::unique_ptr<void, std::function<void(void*)>> graph(
      ctx->EndCapture(), [ctx](void* g) { ctx->Synchronize(), ctx->DestroyGraph(g); });
  std::string bad = Compare(ctx, dst, zeros);
  if (!bad.empty())
    return StrCat("a copy queued on ", place.ToString(),
                  " while capturing ran before any launch: ", bad);
  for (unsigned round = 0; round < 2; ++round) {
    const std::vector<unsigned char> want = Pattern(kProbeBytes, 10 + round);
    ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, src.get(), want.data(), kProbeBytes);
    ctx->LaunchGraph(graph.get());
    bad = Compare(ctx, dst, want);
    if (!bad.empty())
      return StrCat("launch ", round + 1, " of a captured copy on ", place.ToString(),
                    " did not copy the bytes there at that launch: ", bad);
  }
  return "";
}

std::string CheckElapsed(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  BusyStream busy(dev, place);
  ctx->Synchronize();
  const int64_t before = CoreClockNs();
  void* start = ctx->RecordTimingEvent();
  busy.Queue(ctx);
  void* end = ctx->RecordTimingEvent();
  ctx->SynchronizeEvent(end);
  const double host_ms = double(CoreClockNs() - before) / 1e6;
  const TideDeviceDef& d = dev.def;
  float ms = 0;
  TideStatus* st = d.event_elapsed_ms(d.self, start, end, &ms);
  ctx->ReturnTimingEvent(start);
  ctx->ReturnTimingEvent(end);
  if (st) {
    std::string why = st->message;
    delete st;
    return "event_elapsed_ms failed on two done events of " + place.ToString() + ": " + why;
  }
  const std::string what =
      StrCat("event_elapsed_ms around ", kBusyCopies, " queued copies of ", kBusyBytes >> 20,
             " MiB on ", place.ToString(), " gave ", ms, " ms");
  if (!std::isfinite(ms) || ms < 0) return what + ": not a finite, non-negative time";
  if (ms > host_ms + 1.0)  // 1 ms of slack for the two clocks' resolution
    return StrCat(what, ", longer than the ", host_ms, " ms the host waited for that work");
  return "";
}

std::string CheckMemoryStats(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  // Frees earlier checks queued in stream order (a device may release a block only when its
  // stream reaches the free) land first: else one landing between the two readings hides the
  // probe's block.
  ctx->Synchronize();
  TideMemoryStats before{}, after{};
  GetDeviceMemoryStats(place, &before);
  DeviceBlock block(dev, place, kProbeBytes);
  GetDeviceMemoryStats(place, &after);
  const std::string figures =
      StrCat(" (before: in use ", before.bytes_in_use, "; after: in use ", after.bytes_in_use,
             ", reserved ", after.bytes_reserved, ", peak ", after.peak_bytes_in_use, ", limit ",
             after.bytes_limit, ")");
  if (after.bytes_in_use < before.bytes_in_use + kProbeBytes)
    return StrCat("a block of ", kProbeBytes, " bytes alloc returned on ", place.ToString(),
                  " did not show in bytes_in_use", figures);
  if (after.peak_bytes_in_use < after.bytes_in_use)
    return "peak_bytes_in_use is below bytes_in_use on " + place.ToString() + figures;
  if (after.bytes_reserved && after.bytes_reserved < after.bytes_in_use)
    return "bytes_reserved is below bytes_in_use on " + place.ToString() + figures;
  if (after.bytes_limit && after.bytes_reserved > after.bytes_limit)
    return "bytes_reserved is above bytes_limit on " + place.ToString() + figures;
  return "";
}

std::string CheckTracer(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  DeviceBlock block(dev, place, kProbeBytes);
  const std::vector<unsigned char> bytes = Pattern(kProbeBytes, 4);
  ctx->Synchronize();
  StartDeviceTracers();
  const int64_t before = CoreClockNs();
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, block.get(), bytes.data(), kProbeBytes);
  ctx->Synchronize();
  const int64_t after = CoreClockNs();
  std::vector<DeviceTraceClock> clocks;
  const std::vector<DeviceTraceRecord> records = StopDeviceTracers(&clocks);
  int64_t slack = 1000000;  // 1 ms, and the clock mapping's uncertainty
  for (const DeviceTraceClock& c : clocks)
    if (c.kind == dev.kind_name) slack += c.uncertainty_ns;
  bool copy_seen = false;
  for (const DeviceTraceRecord& r : records) {
    if (r.place.kind != dev.kind) continue;
    const std::string what = StrCat("record '", r.name, "' (kind ", r.kind, ", stream ", r.stream,
                                    ") of ", place.ToString());
    if (r.kind < TIDE_TRACE_KERNEL || r.kind > TIDE_TRACE_OTHER)
      return what + " has no TideTraceKind";
    if (r.stream < 0) return what + " has a negative stream";
    if (r.end_ns < r.begin_ns) return what + " ends before it begins";
    if (r.place.device != place.device) continue;
    if (r.begin_ns < before - slack || r.end_ns > after + slack)
      return StrCat(what, " lies outside the host's time around the work by more than ",
                    slack / 1000, " us (", (r.begin_ns - before) / 1000, " to ",
                    (r.end_ns - after) / 1000, " us past its bounds): its clock is not now_ns's");
    copy_seen = copy_seen || (r.kind == TIDE_TRACE_COPY && r.bytes == kProbeBytes);
  }
  if (!copy_seen)
    return StrCat("the tracer of '", dev.kind_name, "' recorded no copy of ", kProbeBytes,
                  " bytes for a host-to-device copy queued on ", place.ToString(),
                  " while it ran (", records.size(), " record(s))");
  return "";
}

constexpr const char* kHostFuncRule =
    "a host function (launch_host_func) is called once, after the work queued before it is done, "
    "in the order queued, and before synchronize returns";

// Three host functions queued behind a busy stream and a download: the first must see the
// download's bytes; each must run once, in order, by the time synchronize returns.
std::string CheckHostFunc(DeviceContext* ctx, const DeviceInfo& dev, const Place& place) {
  if (!ctx->has_host_func()) return "";  // a contract-1 device's are not used
  struct Probe {
    std::mutex* mu;
    std::vector<int>* order;
    int id;
    const std::vector<unsigned char>* host;
    std::vector<unsigned char> seen;
  };
  BusyStream busy(dev, place);
  DeviceBlock block(dev, place, kProbeBytes);
  const std::vector<unsigned char> want = Pattern(kProbeBytes, 5);
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, block.get(), want.data(), kProbeBytes);
  ctx->Synchronize();
  std::vector<unsigned char> host(kProbeBytes, 0);
  std::mutex mu;
  std::vector<int> order;
  Probe probes[3] = {
      {&mu, &order, 0, &host, {}}, {&mu, &order, 1, nullptr, {}}, {&mu, &order, 2, nullptr, {}}};
  busy.Queue(ctx);
  ctx->Copy(TIDE_COPY_DEVICE_TO_HOST, host.data(), block.get(), kProbeBytes);
  for (Probe& p : probes)
    ctx->LaunchHostFunc(
        [](void* data) {
          auto* p = static_cast<Probe*>(data);
          if (p->host) p->seen = *p->host;
          std::lock_guard<std::mutex> lock(*p->mu);
          p->order->push_back(p->id);
        },
        &p);
  ctx->Synchronize();
  std::lock_guard<std::mutex> lock(mu);
  std::string calls;
  for (int id : order) calls += StrCat(calls.empty() ? "" : ", ", id);
  if (order != std::vector<int>{0, 1, 2})
    return StrCat("three host functions queued on ", place.ToString(), " ran as [", calls,
                  "] by the time synchronize returned, want [0, 1, 2]");
  const std::string bad = FirstMismatch(probes[0].seen, want);
  if (!bad.empty())
    return StrCat("a host function queued on ", place.ToString(),
                  " after a device-to-host copy ran before the copy landed: ", bad,
                  " of what it saw");
  return "";
}

struct Check {
  const char* name;
  const char* rule;
  std::string (*run)(DeviceContext*, const DeviceInfo&, const Place&);  // null: entry absent
};

std::vector<ContractCheck> RunChecks(const Place& place, std::initializer_list<Check> checks) {
  const DeviceInfo& dev = CheckedDevice(place);
  DeviceContext* ctx = DeviceContextPool::Global().Get(place);
  std::vector<ContractCheck> out;
  for (const Check& check : checks) {
    ContractCheck c{check.name, check.rule, false, ""};
    if (!check.run) {  // an optional entry the device does not have
      c.passed = c.skipped = true;
      out.push_back(c);
      continue;
    }
    try {
      c.message = check.run(ctx, dev, place);
      c.passed = c.message.empty();
    } catch (const std::exception& e) {
      c.message = e.what();
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<ContractCheck> CheckDeviceContracts(const Place& place) {
  return RunChecks(place,
                   {Check{"copy", kCopyRule, &CheckCopy}, Check{"free", kFreeRule, &CheckFree}});
}

std::vector<ContractCheck> CheckOptionalDeviceEntries(const Place& place) {
  const TideDeviceDef& d = CheckedDevice(place).def;
  return RunChecks(
      place,
      {Check{"event_timing", kElapsedRule, d.event_elapsed_ms ? &CheckElapsed : nullptr},
       Check{"memory_stats", kMemoryStatsRule, d.memory_stats ? &CheckMemoryStats : nullptr},
       Check{"tracer", kTracerRule, d.tracer ? &CheckTracer : nullptr},
       Check{"copy_stream", kCopyStreamRule, d.context_create_role ? &CheckCopyStream : nullptr},
       // A contract-1 device's graphs are not used (DeviceContext::has_graphs): not checked.
       Check{"graphs", kGraphsRule, d.graphs && d.contract >= 2 ? &CheckGraphs : nullptr},
       Check{"host_func", kHostFuncRule,
             d.launch_host_func && d.contract >= 2 ? &CheckHostFunc : nullptr}});
}

}  // namespace tide::core
