// flags.h: the core's gflags, and the one-time set-up of flags and logging.
#pragma once

#include <gflags/gflags.h>

#include <cstdint>
#include <string>

DECLARE_string(plugin_path);
DECLARE_double(fraction_of_cpu_memory_to_use);
DECLARE_uint64(initial_cpu_memory_in_mb);
DECLARE_bool(use_system_allocator);
DECLARE_bool(use_pinned_memory);
DECLARE_int32(cpu_threads);
DECLARE_bool(log_kernels);
DECLARE_bool(strict_kernel_placement);
DECLARE_bool(profile_ops);
DECLARE_bool(free_temporaries);
DECLARE_bool(fuse_weight_updates);
DECLARE_bool(fuse_conv_bias_act);
DECLARE_bool(fuse_fc_bias_act);
DECLARE_bool(copy_stream);
DECLARE_bool(disable_device_compile);
DECLARE_uint64(device_compile_cache_capacity);
DECLARE_string(disable_program_passes);
DECLARE_bool(sync_ops);
DECLARE_bool(check_nan_inf);
DECLARE_int64(max_while_iterations);

namespace tide::core {

// Sets up glog (to stderr, warnings and up unless GLOG_/FLAGS_minloglevel says otherwise) and
// applies FLAGS_<name> and TIDE_<NAME> environment variables to the core's flags not already set
// on the command line. Idempotent, thread-safe; every entry point of the core calls it.
void InitOnce();

// Parses command-line flags (removing the ones it knows), then InitOnce().
void InitFromArgs(int* argc, char*** argv);

// The current value of a flag as text; false when no such flag exists.
bool GetFlag(const std::string& name, std::string* value);
// Sets a flag from text; an error names the flag and the reason (a value out of the flag's
// range, or a flag read once at start-up after it was read).
void SetFlag(const std::string& name, const std::string& value);
// Counts the changes (by SetFlag) of the flags a program's preparation reads: kernel libraries'
// use_<library>, the Python Executor's rewrites (fuse_*, free_temporaries),
// disable_device_compile, disable_program_passes, strict_kernel_placement. A cache of prepared
// programs keyed by it prepares again after one changes (a PreparedBlock keeps what it read).
uint64_t PrepareFlagsVersion();
// Empty when `value` is valid for flag `name`; else why not.
std::string CheckFlagValue(const std::string& name, const std::string& value);
// Records that `name` has been read for good (e.g. an allocator's size when the allocator is
// made): later changes to it are refused, not silently ignored. `by` says what read it,
// `instead` what to do instead (default: set it earlier, as TIDE_<NAME> in the environment).
void MarkFlagConsumed(const std::string& name, const std::string& by,
                      const std::string& instead = "");

// Defines fraction_of_<kind>_memory_to_use and initial_<kind>_memory_in_mb for a device kind
// (registered by its plugin at run time; defaults from the plugin, 0: 1.0 and 64), set from the
// environment like the built-in ones. Defining an existing flag keeps it.
void DefineDeviceKindFlags(const std::string& kind, double fraction = 0, uint64_t initial_mb = 0);
// Defines a bool flag (default false) at run time, e.g. a kernel library's use_<library>.
void DefineBoolFlag(const std::string& name, const std::string& help);
// A double flag by name (for per-kind flags such as fraction_of_<kind>_memory_to_use), or
// `fallback` when the flag does not exist.
double DoubleFlagOr(const std::string& name, double fallback);
uint64_t Uint64FlagOr(const std::string& name, uint64_t fallback);

}  // namespace tide::core
