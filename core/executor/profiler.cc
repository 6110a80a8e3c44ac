// profiler.cc: the per-op time table and timeline, and the run loop's timer that fills them.
#include "core/executor/profiler.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>

#include "core/executor/op_instance.h"

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
}  // namespace

void RecordOpEvent(const std::string& type, const std::string& kernel,
                   std::chrono::steady_clock::time_point start, double ms) {
  const uint64_t thread = ThreadNumber();
  std::lock_guard<std::mutex> lock(g_mu);
  if (Events().size() >= kMaxOpEvents) {
    ++g_dropped;
    return;
  }
  double start_us = std::chrono::duration<double, std::micro>(start - g_origin).count();
  Events().push_back({type, kernel, start_us, ms * 1000.0, thread});
}

std::vector<OpEvent> OpEvents() {
  std::lock_guard<std::mutex> lock(g_mu);
  return Events();
}

uint64_t DroppedOpEvents() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_dropped;
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
  g_dropped = 0;
  g_origin = std::chrono::steady_clock::now();
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

void OpTimer::Stop(const OpInstance& op, uint64_t transforms) {
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  std::string kernel = op.kernel() ? op.kernel()->key.ToString() : std::string();
  std::string name = op.type() + (kernel.empty() ? "" : " " + kernel);
  if (transforms != transforms_) name += " +transforms";
  RecordOpTime(name, ms);
  RecordOpEvent(op.type(), kernel, start_, ms);
}

}  // namespace tide::core
