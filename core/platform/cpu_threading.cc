// cpu_threading.cc: the threading environment of the CPU runtimes plugins bring. A plugin's
// kernel library may run on OpenMP (Debian's deep-learning libraries do), whose runtime reads its
// settings from the environment once, when it is loaded with the plugin; so the core sets them
// here, before any plugin loads, from Tide's own flags. What the user set is never overridden.
#include "core/platform/cpu_threading.h"

#include <cstdlib>
#include <string>

#include "core/platform/flags.h"

DEFINE_bool(cpu_spin_wait, false,
            "CPU worker threads spin while they wait for work: a faster hand-off on an idle machine, "
            "a collapse on a busy one (threads spinning for cores another process needs). Off: they "
            "sleep (OMP_WAIT_POLICY=PASSIVE for OpenMP runtimes, a non-spinning Eigen pool). Read "
            "when the CPU device starts and when plugins load");

namespace tide::core {

void ExportCpuThreadingEnvironment() {
  // setenv(..., 0) keeps a value the user set.
  if (!FLAGS_cpu_spin_wait) setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  if (FLAGS_cpu_threads > 0) setenv("OMP_NUM_THREADS", std::to_string(FLAGS_cpu_threads).c_str(), 0);
}

}  // namespace tide::core
