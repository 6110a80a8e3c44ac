// flags.cc: definitions of the core's flags and their set-up from the environment.
#include "core/platform/flags.h"

#include <glog/logging.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/platform/cpu_threading.h"
#include "core/platform/enforce.h"

DEFINE_string(plugin_path, "",
              "':'-separated plugin directories or files, the only ones searched; empty: "
              "$TIDE_PLUGIN_PATH's, then the install's lib/tide/plugins (docs/packaging.md)");
DEFINE_double(fraction_of_cpu_memory_to_use, 1.0,
              "the share of host memory the CPU allocator may take (0, 1]");
DEFINE_uint64(initial_cpu_memory_in_mb, 64, "size of the CPU allocator's first arena chunk");
DEFINE_bool(use_system_allocator, false,
            "bypass the buddy allocator (every tensor is a separate system allocation): for "
            "sanitizer and leak-checker runs");
DEFINE_bool(use_pinned_memory, true, "device plugins may use pinned host memory for copies");
DEFINE_int32(cpu_threads, 0, "intra-op threads of the CPU device; 0: the number of cores");
DEFINE_bool(log_kernels, false, "log each op's chosen kernel and inserted transforms at Prepare");
DEFINE_bool(sync_ops, false,
            "debug: synchronise the device after every kernel, so an asynchronous fault names its "
            "op (TIDE_SYNC_OPS=1)");
DEFINE_bool(check_nan_inf, false,
            "debug: after every kernel, check its float outputs for NaN or Inf and fail naming the "
            "first op and variable that holds one (Fluid's flag)");
DEFINE_bool(profile_ops, false, "time every op run (tide.profiler / OpProfileReport)");
DEFINE_bool(
    free_temporaries, true,
    "a run lets go of each temporary's memory after the op that last uses it (fetch targets "
    "and what control flow reads are kept), so later tensors reuse it, and a view op "
    "(reshape, squeeze, flatten) whose input dies there moves the input's memory into its "
    "output instead of copying it; off: every temporary keeps its own memory between runs and "
    "view ops copy");
DEFINE_bool(fuse_weight_updates, true,
            "the Python Executor computes each fully connected weight's gradient straight into "
            "its SGD / momentum update on CPU places, where nothing else reads the gradient and "
            "it is not fetched (with --free_temporaries only: the gradient is let go of anyway); "
            "off: every gradient is stored (docs/memory.md)");
DEFINE_bool(fuse_conv_bias_act, true,
            "the Python Executor runs a convolution, its bias add and its activation as one "
            "fused_conv2d on CPU places, training programs included, where the values it no "
            "longer computes are temporaries nothing else reads or fetches (with "
            "--free_temporaries only); off: the three ops as the program has them "
            "(transpiler/fuse_conv_bias_act.py)");
DEFINE_bool(fuse_fc_bias_act, true,
            "the Python Executor runs a fully connected layer's mul, bias add and activation as "
            "one fc on CPU places, training programs included, under the same conditions as "
            "--fuse_conv_bias_act; off: the three ops as the program has them "
            "(transpiler/fuse_conv_bias_act.py)");
DEFINE_bool(copy_stream, true,
            "host-to-device copies of tensors (feeds, a DataLoader's batches) and the downloads "
            "of fetched values go on copy streams of their own where the device has them "
            "(TideDeviceDef.context_create_role), so they overlap the compute stream's kernels "
            "and a run returns once its fetches are down; off: on the compute stream "
            "(TIDE_COPY_STREAM=0)");
DEFINE_bool(disable_device_compile, false,
            "run every op through its kernels: devices with a compiler (TideDeviceCompiler) are "
            "not asked for groups of ops at Prepare (TIDE_DISABLE_DEVICE_COMPILE=1)");
DEFINE_uint64(device_compile_cache_capacity, 256,
              "the most functions devices compiled for groups of ops (one per group and input "
              "shapes) kept at once; past it the least recently used goes back to its device "
              "once no run holds it (TIDE_DEVICE_COMPILE_CACHE_CAPACITY=...)");
DEFINE_string(disable_program_passes, "",
              "comma-separated names of program passes (TideProgramPassDef) not to run, e.g. "
              "'sim.drop_identity_scale' (TIDE_DISABLE_PROGRAM_PASSES=...); '*': none runs");
DEFINE_int64(max_while_iterations, 100000,
             "the most iterations one run of a while op may take; past it the run fails naming the "
             "op (a loop whose body never changes its condition otherwise grows memory until it "
             "runs out, or hangs with is_test); 0: no limit");
DEFINE_bool(strict_kernel_placement, false,
            "an op with no kernel on the run's place is an error instead of a fallback");
DEFINE_int32(collective_timeout_ms, 180000,
             "ms a collective op (the collective plugin: c_comm_init, c_allreduce_sum, ...) may "
             "wait for the other ranks before it fails naming the ones that did not come");
DEFINE_bool(collective_check, true,
            "before every collective op the ranks compare what they are about to run (op, data "
            "type, shape: one small allgather) and fail naming the ranks that differ, instead of "
            "exchanging mismatched data (which makes Gloo abort the receiving process)");

namespace tide::core {
namespace {

std::mutex g_consumed_mu;
std::atomic<uint64_t> g_prepare_flags_version{0};
struct ConsumedBy {
  std::string by, instead;  // what read the flag; what to do instead of changing it
};
std::map<std::string, ConsumedBy>& Consumed() {  // flag -> what read it
  static auto* m = new std::map<std::string, ConsumedBy>;
  return *m;
}

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool EndsWith(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// The flags a program's preparation reads: which kernel library an op asks for (use_<library>),
// the Python Executor's rewrites (fuse_*, free_temporaries), device compilation and program
// passes, kernel placement.
bool ReadWhenPreparing(const std::string& name) {
  static const char* const kNames[] = {"free_temporaries",       "fuse_weight_updates",
                                       "fuse_conv_bias_act",     "fuse_fc_bias_act",
                                       "disable_device_compile", "disable_program_passes",
                                       "strict_kernel_placement"};
  if (StartsWith(name, "use_")) return true;
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

std::string Upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// TIDE_<NAME> (e.g. TIDE_PROFILE_OPS) and FLAGS_<name> set the flag of that name, unless the
// command line already did.
void ApplyEnvironment() {
  std::vector<gflags::CommandLineFlagInfo> all;
  gflags::GetAllFlags(&all);
  for (const auto& f : all) {
    if (!f.is_default) continue;  // set on the command line (or by SetFlag): that wins
    for (const std::string& var : {"FLAGS_" + f.name, "TIDE_" + Upper(f.name)}) {
      if (var == "TIDE_PLUGIN_PATH") continue;  // the loader reads it: it adds to the default path
      const char* v = std::getenv(var.c_str());
      if (!v) continue;
      std::string bad = CheckFlagValue(f.name, v);
      if (!bad.empty()) {
        LOG(WARNING) << "ignoring " << var << "='" << v << "': " << bad;
        continue;
      }
      if (gflags::SetCommandLineOption(f.name.c_str(), v).empty())
        LOG(WARNING) << "ignoring " << var << "='" << v << "': not a valid " << f.type;
    }
  }
}

std::once_flag g_once;

void InitImpl() {
  if (!google::IsGoogleLoggingInitialized()) {
    FLAGS_logtostderr = true;
    if (!std::getenv("GLOG_minloglevel") && !std::getenv("FLAGS_minloglevel"))
      FLAGS_minloglevel = google::GLOG_WARNING;
    google::InitGoogleLogging("tide");
  }
  ApplyEnvironment();
  ExportCpuThreadingEnvironment();  // before any plugin (and its OpenMP runtime) loads
}

}  // namespace

void InitOnce() { std::call_once(g_once, InitImpl); }

void InitFromArgs(int* argc, char*** argv) {
  gflags::ParseCommandLineFlags(argc, argv, /*remove_flags=*/true);
  InitOnce();
}

bool GetFlag(const std::string& name, std::string* value) {
  return gflags::GetCommandLineOption(name.c_str(), value);
}

std::string CheckFlagValue(const std::string& name, const std::string& value) {
  // gflags reads C strings: the value would be cut at the NUL, and the cut one set.
  if (const size_t nul = value.find('\0'); nul != std::string::npos)
    return StrCat("it holds a NUL byte (at byte ", nul, "), where the value would be cut");
  const char* s = value.c_str();
  char* end = nullptr;
  errno = 0;
  if (name == "cpu_threads") {
    long long v = std::strtoll(s, &end, 10);
    if (end == s || *end || errno) return "not an integer";
    const int max = MaxCpuThreads();
    if (v < 0 || v > max)
      return StrCat(v, " is outside [0, ", max, "] (0: the number of cores; at most ",
                    kCpuThreadsPerCore, " per hardware thread, and never less than ",
                    kMinCpuThreadsBound, ")");
  } else if (name == "max_while_iterations") {
    long long v = std::strtoll(s, &end, 10);
    if (end == s || *end || errno) return "not an integer";
    if (v < 0) return StrCat(v, " is negative (0: no limit)");
  } else if (name == "collective_timeout_ms") {
    long long v = std::strtoll(s, &end, 10);
    if (end == s || *end || errno) return "not an integer";
    if (v <= 0 || v > INT32_MAX) return StrCat(v, " is outside [1, 2^31) ms");
  } else if (StartsWith(name, "fraction_of_") && EndsWith(name, "_memory_to_use")) {
    double v = std::strtod(s, &end);
    if (end == s || *end || errno) return "not a number";
    if (!(v > 0 && v <= 1)) return StrCat(value, " is outside (0, 1]");
  } else if (StartsWith(name, "initial_") && EndsWith(name, "_memory_in_mb")) {
    if (value.find('-') != std::string::npos) return "negative";
    unsigned long long v = std::strtoull(s, &end, 10);
    if (end == s || *end || errno) return "not a non-negative integer";
    // In bytes it must fit a size_t (and not wrap to a tiny arena).
    if (v > (static_cast<unsigned long long>(SIZE_MAX) >> 20))
      return StrCat(v, " MB does not fit in the address space");
  }
  return "";
}

void MarkFlagConsumed(const std::string& name, const std::string& by, const std::string& instead) {
  std::lock_guard<std::mutex> lock(g_consumed_mu);
  Consumed().emplace(name, ConsumedBy{by, instead});
}

void SetFlag(const std::string& name, const std::string& value) {
  if (name.find('\0') != std::string::npos)
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "flag name '", name.substr(0, name.find('\0')),
              "\\0...' holds a NUL byte: no flag has one");
  std::string current;
  if (!gflags::GetCommandLineOption(name.c_str(), &current))
    TIDE_FAIL(TIDE_NOT_FOUND, "no flag named '", name, "'",
              StartsWith(name, "use_") ? " (a kernel library's flag exists once the plugin that "
                                         "registers the library is loaded)"
                                       : "");
  std::string bad = CheckFlagValue(name, value);
  if (!bad.empty()) {
    std::string shown;  // a NUL would cut the message
    for (char c : value) shown += c ? std::string(1, c) : std::string("\\0");
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "flag '", name, "': invalid value '", shown, "': ", bad);
  }
  {
    std::lock_guard<std::mutex> lock(g_consumed_mu);
    auto it = Consumed().find(name);
    if (it != Consumed().end() && value != current)
      TIDE_FAIL(TIDE_FAILED_PRECONDITION, "flag '", name, "' was already read by ", it->second.by,
                " and can no longer change (",
                it->second.instead.empty() ? StrCat("set it before that, e.g. as TIDE_",
                                                    Upper(name), " in the environment")
                                           : it->second.instead,
                ")");
  }
  if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty())
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "flag '", name, "': invalid value '", value, "'");
  std::string now;
  if (ReadWhenPreparing(name) && gflags::GetCommandLineOption(name.c_str(), &now) && now != current)
    ++g_prepare_flags_version;
}

uint64_t PrepareFlagsVersion() { return g_prepare_flags_version.load(); }

double DoubleFlagOr(const std::string& name, double fallback) {
  std::string v;
  if (!GetFlag(name, &v)) return fallback;
  return std::strtod(v.c_str(), nullptr);
}

uint64_t Uint64FlagOr(const std::string& name, uint64_t fallback) {
  std::string v;
  if (!GetFlag(name, &v)) return fallback;
  return std::strtoull(v.c_str(), nullptr, 10);
}

// gflags keeps the name, help and storage of a flag for the process: they are never freed.
template <typename T>
void RegisterFlagOnce(const std::string& name, const std::string& help, T default_value) {
  std::string current;
  if (gflags::GetCommandLineOption(name.c_str(), &current)) return;  // e.g. cpu's, defined above
  static auto* registerers =
      new std::vector<std::unique_ptr<gflags::FlagRegisterer>>;  // kept, as gflags keeps the rest
  registerers->push_back(std::make_unique<gflags::FlagRegisterer>(
      strdup(name.c_str()), strdup(help.c_str()), "tide (device kind)", new T(default_value),
      new T(default_value)));
}

std::mutex g_define_mu;

void DefineDeviceKindFlags(const std::string& kind, double fraction, uint64_t initial_mb) {
  std::lock_guard<std::mutex> lock(g_define_mu);
  RegisterFlagOnce("fraction_of_" + kind + "_memory_to_use",
                   "fraction of each " + kind + " device's memory the allocator may take",
                   fraction > 0 && fraction <= 1 ? fraction : 1.0);
  RegisterFlagOnce("initial_" + kind + "_memory_in_mb",
                   "size of each " + kind + " allocator's first arena chunk",
                   initial_mb ? initial_mb : uint64_t(64));
  ApplyEnvironment();  // FLAGS_... / TIDE_... set before the plugin was loaded
}

void DefineBoolFlag(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lock(g_define_mu);
  RegisterFlagOnce(name, help, false);
  ApplyEnvironment();
}

}  // namespace tide::core
