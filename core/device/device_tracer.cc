// device_tracer.cc: starting, stopping and collecting the device plugins' tracers, and mapping
// their clocks onto the core's.
#include "core/device/device_tracer.h"

#include <glog/logging.h>

#include <chrono>
#include <mutex>

#include "core/device/device_context.h"
#include "core/platform/status.h"
#include "core/registry/registry.h"

namespace tide::core {

int64_t CoreClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

// A tracer's clock against the core's: the offset from the narrowest of a few brackets.
struct Alignment {
  int64_t offset_ns = 0;
  int64_t bracket_ns = -1;  // -1: not measured
};

struct Session {
  const DeviceInfo* device;
  Alignment at_start;
};

std::mutex g_mu;
std::vector<Session> g_sessions;  // the tracers started, under g_mu

Alignment Align(const DeviceInfo& dev) {
  const TideDeviceTracer& t = *dev.def.tracer;
  Alignment best;
  for (int i = 0; i < 5; ++i) {
    uint64_t device_ns = 0;
    const int64_t before = CoreClockNs();
    CallPlugin([&] { return t.now_ns(dev.def.self, &device_ns); },
               [&] { return "reading the tracer clock of device '" + dev.kind_name + "'"; },
               dev.plugin_file);
    const int64_t after = CoreClockNs();
    if (best.bracket_ns < 0 || after - before < best.bracket_ns) {
      best.bracket_ns = after - before;
      best.offset_ns = before + (after - before) / 2 - static_cast<int64_t>(device_ns);
    }
  }
  return best;
}

// collect's sink: each record copied at once (its name is borrowed for the call only), its times
// still on the tracer's clock.
struct Sink {
  int32_t kind;
  std::vector<DeviceTraceRecord> records;
};

void Emit(void* sink, const TideTraceRecord* r) {
  auto* s = static_cast<Sink*>(sink);
  auto has = [r](size_t end) { return r->struct_size >= end; };
  DeviceTraceRecord rec;
  rec.name = has(TIDE_STRUCT_SIZE(TideTraceRecord, name)) && r->name ? r->name : "";
  rec.place = Place(s->kind, has(TIDE_STRUCT_SIZE(TideTraceRecord, device)) ? r->device : 0);
  rec.stream = has(TIDE_STRUCT_SIZE(TideTraceRecord, stream)) ? r->stream : 0;
  if (has(TIDE_STRUCT_SIZE(TideTraceRecord, end_ns))) {
    rec.begin_ns = static_cast<int64_t>(r->begin_ns);
    rec.end_ns = static_cast<int64_t>(r->end_ns);
  }
  rec.bytes = has(TIDE_STRUCT_SIZE(TideTraceRecord, bytes)) ? r->bytes : 0;
  rec.kind = has(TIDE_STRUCT_SIZE(TideTraceRecord, kind)) ? r->kind : TIDE_TRACE_OTHER;
  s->records.push_back(std::move(rec));
}

}  // namespace

void StartDeviceTracers() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_sessions.empty()) return;  // already tracing
  for (const DeviceInfo* d : Registry::Global().AllDevices()) {
    if (!d->def.tracer) continue;
    try {
      Session s{d, Align(*d)};
      CallPlugin([&] { return d->def.tracer->start(d->def.self); },
                 [&] { return "starting the tracer of device '" + d->kind_name + "'"; },
                 d->plugin_file);
      g_sessions.push_back(s);
    } catch (const std::exception& e) {
      LOG(WARNING) << "profiling without device '" << d->kind_name
                   << "''s own records: " << e.what();
    }
  }
}

std::vector<DeviceTraceRecord> StopDeviceTracers(std::vector<DeviceTraceClock>* clocks) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<DeviceTraceRecord> out;
  for (const Session& s : g_sessions) {
    const DeviceInfo& dev = *s.device;
    const TideDeviceDef& d = dev.def;
    try {
      for (int32_t i = 0, n = d.device_count(d.self); i < n; ++i)
        if (DeviceContext* ctx = DeviceContextPool::Global().Find(Place(dev.kind, i)))
          ctx->Synchronize();
      CallPlugin([&] { return d.tracer->stop(d.self); },
                 [&] { return "stopping the tracer of device '" + dev.kind_name + "'"; },
                 dev.plugin_file);
      Sink sink{dev.kind, {}};
      CallPlugin([&] { return d.tracer->collect(d.self, &Emit, &sink); },
                 [&] { return "collecting the records of device '" + dev.kind_name + "'"; },
                 dev.plugin_file);
      Alignment a = Align(dev);
      if (s.at_start.bracket_ns >= 0 && s.at_start.bracket_ns < a.bracket_ns) a = s.at_start;
      if (clocks) clocks->push_back({dev.kind_name, a.offset_ns, (a.bracket_ns + 1) / 2});
      for (DeviceTraceRecord& rec : sink.records) {
        rec.begin_ns += a.offset_ns;
        rec.end_ns += a.offset_ns;
        out.push_back(std::move(rec));
      }
    } catch (const std::exception& e) {
      LOG(WARNING) << "the records of device '" << dev.kind_name << "' are lost: " << e.what();
    }
  }
  g_sessions.clear();
  return out;
}

}  // namespace tide::core
