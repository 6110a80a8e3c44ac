// run_checks.h: what the run loop checks around a kernel, so that a fault is reported at the op
// that made it (naming the op, the variable, the kernel and its plugin), not by whatever reads its
// result later.
#pragma once

#include "core/executor/op_instance.h"
#include "core/executor/profiler.h"
#include "core/platform/flags.h"

namespace tide::core {

// Before the kernel: every input holds data (it was fed, set by the startup program, or written
// by an earlier op).
void CheckInputsReady(const OpInstance& op);
// After the kernel: it wrote every output it declares (dispensable and intermediate ones aside).
// Checked on its first run after Bind; the test for that is inline, as the loop asks every op.
void CheckOutputsWritten(OpInstance& op);
inline void CheckOutputsWrittenOnce(OpInstance& op) {
  if (!op.outputs_checked()) CheckOutputsWritten(op);
}
// With --sync_ops or --check_nan_inf, and with --profile_ops where the device cannot time the op
// with events (profiler.h): waits for the kernel's device, so that an asynchronous fault and the
// device time are charged to the op that launched them, not to whichever synchronises next (and
// check_nan_inf reads finished outputs).
void WaitForKernel(const OpInstance& op);
inline void WaitForKernelIfDebugging(const OpInstance& op) {
  if (FLAGS_sync_ops || FLAGS_check_nan_inf ||
      (FLAGS_profile_ops && !TimesWithEvents(op.kernel_dctx())))
    WaitForKernel(op);
}
// --check_nan_inf: the first output of a float type that holds a NaN or an Inf stops the run,
// naming the op, the kernel, the variable and the element (device data is read back).
void CheckOutputsFinite(const OpInstance& op);

}  // namespace tide::core
