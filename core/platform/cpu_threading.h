// cpu_threading.h: the environment of the threading runtimes a plugin's kernels may use.
#pragma once

#include <gflags/gflags.h>

DECLARE_bool(cpu_spin_wait);

namespace tide::core {

// From --cpu_threads and --cpu_spin_wait: OMP_NUM_THREADS and a brief spin (GOMP_SPINCOUNT), each
// only where the user has not set it (nor OMP_WAIT_POLICY), so an OpenMP runtime that a plugin
// loads obeys Tide's flags. Called
// before any plugin loads; an OpenMP runtime already loaded (e.g. by another framework imported
// first) keeps what it read.
void ExportCpuThreadingEnvironment();

// The most --cpu_threads may ask for: kCpuThreadsPerCore per hardware thread of this machine, and
// never below kMinCpuThreadsBound. More threads than that only wait for cores; far more and the
// OpenMP runtime cannot create them and exits the process from inside a kernel.
constexpr int kCpuThreadsPerCore = 4;
constexpr int kMinCpuThreadsBound = 64;
int MaxCpuThreads();

}  // namespace tide::core
