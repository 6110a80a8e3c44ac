// cpu_threading.cc: the threading environment of the CPU runtimes plugins bring. A plugin's
// kernel library may run on OpenMP (Debian's deep-learning libraries do), whose runtime reads its
// settings from the environment once, when it is loaded with the plugin; so the core sets them
// here, before any plugin loads, from Tide's own flags. What the user set is never overridden.
#include "core/platform/cpu_threading.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/platform/flags.h"

DEFINE_bool(
    cpu_spin_wait, false,
    "CPU worker threads spin while they wait for work, as their runtimes do by default: the "
    "fastest hand-off on an idle machine, a collapse on a busy one (threads spinning for "
    "cores another process needs). Off: they spin briefly, then sleep (GOMP_SPINCOUNT=5000, "
    "about 50 us, for OpenMP; a non-spinning Eigen pool). Read when the CPU device starts "
    "and when plugins load");

namespace tide::core {

// libgomp's default spin (300,000 iterations, about 3 ms) collapses a busy machine; sleeping at
// once (OMP_WAIT_POLICY=PASSIVE) costs an idle one a third of a small training step's speed
// (benchmarks/busy_machine.py and mlp_train_step.py); ~50 us of spinning keeps both.
constexpr const char* kBriefSpin = "5000";

void ExportCpuThreadingEnvironment() {
  // setenv(..., 0) keeps a value the user set; a wait policy of theirs decides the spin too.
  if (!FLAGS_cpu_spin_wait && !std::getenv("OMP_WAIT_POLICY"))
    setenv("GOMP_SPINCOUNT", kBriefSpin, 0);
  if (FLAGS_cpu_threads > 0)
    setenv("OMP_NUM_THREADS", std::to_string(FLAGS_cpu_threads).c_str(), 0);
}

int MaxCpuThreads() {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(kMinCpuThreadsBound, kCpuThreadsPerCore * cores);
}

}  // namespace tide::core
