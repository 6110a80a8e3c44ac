// cupti_tracer.cc: the CUDA device's tracer on CUPTI's activity API (see cupti_tracer.h).
// CUPTI asks for buffers (BufferRequested) and hands them back full, or at a flush
// (BufferCompleted, on a thread of its own): each completed buffer's kernel, copy and memset
// records are copied out under a mutex, and collect hands them to the core.
#include "cupti_tracer.h"

#ifdef TIDE_CUDA_WITH_CUPTI

#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#ifndef TIDE_CUPTI_LIBRARY_DIRS
#define TIDE_CUPTI_LIBRARY_DIRS ""
#endif

namespace tide_cuda {
namespace {

constexpr const char* kPluginName = "device_cuda";

// The activity record structs of the cupti_activity.h this plugin is built with: the one place
// that names their versions (CUDA 13's latest; CUDA 12's Kernel9, the others as of 12.0). libcupti
// writes the records of its own release, so the library opened must be of the header's
// (SameRelease). The fields read here lie at the same offsets in both releases' structs.
#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
#endif
using PeerCopyRecord = CUpti_ActivityMemcpyPtoP4;
using MemsetRecord = CUpti_ActivityMemset4;

// Whether a libcupti of API version `lib` writes the header's record structs: from CUDA 13 on the
// version is major * 10000 + minor, and the majors must match; before, it counted up from 1.
bool SameRelease(uint32_t lib) {
#if CUPTI_API_VERSION >= 100000
  return lib / 10000 == CUPTI_API_VERSION / 10000;
#else
  return lib >= CUPTI_API_VERSION && lib < 100000;
#endif
}

// The activity kinds recorded: kernels (concurrently, so tracing does not serialise them), copies
// (MEMCPY2: peer copies) and memsets.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                                         CUPTI_ACTIVITY_KIND_MEMSET};

constexpr size_t kBufferBytes = size_t(8) << 20;  // each buffer CUPTI is given
constexpr size_t kBufferAlign = 8;                // ACTIVITY_RECORD_ALIGNMENT

#define TIDE_CUPTI_FUNCTIONS(X)     \
  X(cuptiGetVersion)                \
  X(cuptiGetResultString)           \
  X(cuptiGetTimestamp)              \
  X(cuptiActivityEnable)            \
  X(cuptiActivityDisable)           \
  X(cuptiActivityRegisterCallbacks) \
  X(cuptiActivityFlushAll)          \
  X(cuptiActivityGetNextRecord)     \
  X(cuptiActivityGetNumDroppedRecords)

#define TIDE_CUPTI_MEMBER(name) decltype(&::name) name = nullptr;
struct CuptiApi {
  TIDE_CUPTI_FUNCTIONS(TIDE_CUPTI_MEMBER)
};
#undef TIDE_CUPTI_MEMBER

// The names tried: the unversioned soname first (LD_LIBRARY_PATH, the ld.so cache), then the
// header's release's; each as given, then in the directories the plugin was built against.
std::vector<std::string> Candidates() {
  const std::string major = "libcupti.so." + std::to_string(CUDA_VERSION / 1000);
  const std::string names[] = {"libcupti.so", major,
                               major + "." + std::to_string(CUDA_VERSION % 1000 / 10)};
  std::vector<std::string> out;
  const std::string dirs = TIDE_CUPTI_LIBRARY_DIRS;
  for (const std::string& name : names) {
    out.push_back(name);
    size_t pos = 0;
    while (pos <= dirs.size()) {
      size_t end = dirs.find(':', pos);
      if (end == std::string::npos) end = dirs.size();
      const std::string dir = dirs.substr(pos, end - pos);
      pos = end + 1;
      if (!dir.empty()) out.push_back(dir + "/" + name);
    }
  }
  return out;
}

struct Library {
  CuptiApi api;
  bool ok = false;
  std::string error;  // why not, when !ok
};

// Opens libcupti once: the first candidate that has every function and is of the header's release.
const Library& Cupti() {
  static const Library lib = [] {
    Library l;
    std::string tried;
    for (const std::string& name : Candidates()) {
      void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* e = dlerror();
        tried += "; " + name + " (" + (e ? e : "not found") + ")";
        continue;
      }
      CuptiApi api;
      std::string missing;
#define TIDE_CUPTI_LOAD(name)                                       \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(h, #name)); \
  if (!api.name) missing += " " #name;
      TIDE_CUPTI_FUNCTIONS(TIDE_CUPTI_LOAD)
#undef TIDE_CUPTI_LOAD
      uint32_t version = 0;
      if (missing.empty() && api.cuptiGetVersion(&version) == CUPTI_SUCCESS &&
          SameRelease(version)) {
        l.api = api;
        l.ok = true;
        return l;
      }
      tried += "; " + name +
               (missing.empty() ? " (CUPTI API version " + std::to_string(version) +
                                      ", not the release of the headers' " +
                                      std::to_string(CUPTI_API_VERSION) + ")"
                                : " (lacks" + missing + ")");
      dlclose(h);
    }
    l.error = "libcupti could not be loaded (tried" + tried.substr(1) +
              "): the gpu device has no tracer; add CUPTI's directory to LD_LIBRARY_PATH";
    return l;
  }();
  return lib;
}

const CuptiApi& Api() {
  const Library& lib = Cupti();
  if (!lib.ok) TIDE_THROW(TIDE_UNAVAILABLE, lib.error);
  return lib.api;
}

void Check(CUptiResult r, const std::string& what) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  if (Api().cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
  TIDE_THROW(TIDE_INTERNAL, what, ": ", text, " (", int(r), ")");
}

struct Record {
  std::string name;
  int32_t device, stream;
  uint64_t begin_ns, end_ns, bytes;
  TideTraceKind kind;
};

// What CUPTI's thread and the core's share, under mu.
struct State {
  std::mutex mu;
  std::vector<Record> records;
  std::unordered_map<std::string, std::string> demangled;  // a kernel's raw name: its shown name
  std::string error;       // the first error met on CUPTI's thread, logged by collect
  uint64_t dropped = 0;    // records CUPTI dropped (its buffers were full)
  std::mutex control;      // start and stop (never held with mu: a flush calls BufferCompleted)
  bool callbacks = false;  // registered (once per process), under control
  bool on = false;         // the kinds are enabled, under control
};

State& S() {
  static State* s = new State;  // never destroyed: CUPTI may call back while the process exits
  return *s;
}

const char* CopyName(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

// Under mu: the demangled kernel name (abi::__cxa_demangle), or the raw one.
const std::string& KernelName(State& s, const char* raw) {
  if (!raw) raw = "";
  auto it = s.demangled.find(raw);
  if (it != s.demangled.end()) return it->second;
  int status = 0;
  char* d = abi::__cxa_demangle(raw, nullptr, nullptr, &status);
  std::string shown = (status == 0 && d) ? d : raw;
  std::free(d);
  return s.demangled.emplace(raw, std::move(shown)).first->second;
}

// CUPTI's numbers as the record's: stream ids are small, but kept >= 0 as the ABI asks.
int32_t Id(uint32_t id) { return static_cast<int32_t>(id & 0x7fffffffu); }

// Under mu: one record kept, if it is one of ours and timed (CUPTI leaves 0 when it could not).
void Keep(State& s, const CUpti_Activity* a) {
  auto keep = [&](std::string name, uint32_t device, uint32_t stream, uint64_t begin, uint64_t end,
                  uint64_t bytes, TideTraceKind kind) {
    if (begin == 0 || end < begin) return;
    s.records.push_back({std::move(name), Id(device), Id(stream), begin, end, bytes, kind});
  };
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const KernelRecord*>(a);
      keep(KernelName(s, k->name), k->deviceId, k->streamId, k->start, k->end, 0,
           TIDE_TRACE_KERNEL);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const MemcpyRecord*>(a);
      keep(CopyName(m->copyKind), m->deviceId, m->streamId, m->start, m->end, m->bytes,
           TIDE_TRACE_COPY);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const PeerCopyRecord*>(a);
      keep(CopyName(m->copyKind), m->deviceId, m->streamId, m->start, m->end, m->bytes,
           TIDE_TRACE_COPY);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const MemsetRecord*>(a);
      keep("memset", m->deviceId, m->streamId, m->start, m->end, m->bytes, TIDE_TRACE_OTHER);
      break;
    }
    default:
      break;  // a kind not enabled here (another CUPTI client's)
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;  // none: CUPTI drops the records (counted at completion)
}

// On CUPTI's thread (or the one flushing): copies the buffer's records out and frees it. Never
// throws into CUPTI: an error is kept for collect to log.
void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                              size_t valid) {
  State& s = S();
  try {
    const CuptiApi& api = Api();
    std::lock_guard<std::mutex> lock(s.mu);
    CUpti_Activity* a = nullptr;
    for (;;) {
      const CUptiResult r = api.cuptiActivityGetNextRecord(buffer, valid, &a);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (r != CUPTI_SUCCESS) {
        const char* text = nullptr;
        if (api.cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown";
        if (s.error.empty())
          s.error = std::string("cuptiActivityGetNextRecord: ") + text + " (" +
                    std::to_string(int(r)) + "): the rest of a buffer of records was lost";
        break;
      }
      Keep(s, a);
    }
    size_t dropped = 0;
    if (api.cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS)
      s.dropped += dropped;
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.error.empty()) s.error = e.what();
  } catch (...) {
  }
  std::free(buffer);
}

}  // namespace

bool CuptiTracerBuilt() { return true; }
std::string CuptiUnavailableReason() { return Cupti().ok ? std::string() : Cupti().error; }

bool CuptiTracerAvailable() {
  static const bool ok = [] {
    const Library& lib = Cupti();
    if (!lib.ok) tide::Log(TIDE_LOG_INFO, kPluginName, lib.error);
    return lib.ok;
  }();
  return ok;
}

void CuptiTraceStart() {
  const CuptiApi& api = Api();
  State& s = S();
  std::lock_guard<std::mutex> control(s.control);
  if (s.on) return;
  if (!s.callbacks) {
    Check(api.cuptiActivityRegisterCallbacks(&BufferRequested, &BufferCompleted),
          "cuptiActivityRegisterCallbacks");
    s.callbacks = true;
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);  // what an earlier session left
    s.records.clear();
    s.error.clear();
    s.dropped = 0;
  }
  for (size_t i = 0; i < sizeof(kKinds) / sizeof(kKinds[0]); ++i) {
    const CUptiResult r = api.cuptiActivityEnable(kKinds[i]);
    if (r != CUPTI_SUCCESS) {
      for (size_t j = 0; j < i; ++j) api.cuptiActivityDisable(kKinds[j]);
      Check(r, "cuptiActivityEnable(" + std::to_string(int(kKinds[i])) + ")");
    }
  }
  s.on = true;
}

void CuptiTraceStop() {
  const CuptiApi& api = Api();
  State& s = S();
  std::lock_guard<std::mutex> control(s.control);
  if (!s.on) return;
  s.on = false;
  CUptiResult first = CUPTI_SUCCESS;
  std::string what;
  for (CUpti_ActivityKind kind : kKinds) {
    const CUptiResult r = api.cuptiActivityDisable(kind);
    if (r != CUPTI_SUCCESS && first == CUPTI_SUCCESS)
      first = r, what = "cuptiActivityDisable(" + std::to_string(int(kind)) + ")";
  }
  // Forced: the buffers still being filled come back too (BufferCompleted, on this thread).
  Check(api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
        "cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)");
  Check(first, what);
}

void CuptiTraceCollect(const tide::Device::TraceEmitter& emit) {
  State& s = S();
  std::vector<Record> records;
  std::string error;
  uint64_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    records.swap(s.records);
    error.swap(s.error);
    std::swap(dropped, s.dropped);
  }
  // What went wrong on CUPTI's thread cannot be thrown there; it is told here, and the records
  // that were kept still go to the trace.
  if (!error.empty()) tide::Log(TIDE_LOG_WARNING, kPluginName, "the gpu tracer: " + error);
  if (dropped > 0)
    tide::Log(TIDE_LOG_WARNING, kPluginName,
              "CUPTI dropped " + std::to_string(dropped) +
                  " activity record(s): the gpu rows of this trace miss some kernels or copies");
  for (const Record& r : records)
    emit(r.name.c_str(), r.device, r.stream, r.begin_ns, r.end_ns, r.bytes, r.kind);
}

uint64_t CuptiTraceNowNs() {
  uint64_t ns = 0;
  Check(Api().cuptiGetTimestamp(&ns), "cuptiGetTimestamp");
  return ns;
}

}  // namespace tide_cuda

#else  // !TIDE_CUDA_WITH_CUPTI: built without cupti.h, no tracer

namespace tide_cuda {

bool CuptiTracerBuilt() { return false; }
bool CuptiTracerAvailable() { return false; }
std::string CuptiUnavailableReason() { return "the CUDA plugin was built without cupti.h"; }
void CuptiTraceStart() { TIDE_THROW(TIDE_UNAVAILABLE, "the CUDA plugin was built without CUPTI"); }
void CuptiTraceStop() {}
void CuptiTraceCollect(const tide::Device::TraceEmitter&) {}
uint64_t CuptiTraceNowNs() { return 0; }

}  // namespace tide_cuda

#endif  // TIDE_CUDA_WITH_CUPTI
