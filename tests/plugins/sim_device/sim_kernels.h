// sim_kernels.h: what every sim kernel needs: its device's stream (kernels read their inputs'
// pointers when called and compute later, on the stream) and a check that the core handed it
// sim data.
#pragma once

#include <functional>
#include <tide/plugin.hpp>

#include "sim_stream.h"

// Kernels queued on the sim streams, and those of them the streams ran
// (TideSimCounters.kernel_launches, kernels_run; sim_device.cc).
void CountSimKernelLaunch();
void CountSimKernelRun();

// The kernel's stream; what it queues is tagged with the op, which a fault of it then names.
struct KernelStream {
  SimStream& stream;
  const char* op;  // owned by the op; the stream copies it
  void Enqueue(std::function<void()> task) {
    CountSimKernelLaunch();
    stream.Enqueue(
        [task = std::move(task)] {
          task();
          CountSimKernelRun();
        },
        op);
  }
};

inline KernelStream StreamOf(const tide::KernelContext& ctx) {
  const void* s = tide::Host().DeviceContext_Extension(ctx.device_context(), "tide.sim.stream");
  TIDE_CHECK(s != nullptr, "sim kernel of '", ctx.op_type(), "' runs on no sim context");
  return {*const_cast<SimStream*>(static_cast<const SimStream*>(s)), ctx.op_type()};
}

inline void CheckOnSim(const tide::KernelContext& ctx, const tide::Tensor& t, const char* what) {
  TIDE_CHECK(t.place() == ctx.place(), "sim kernel of '", ctx.op_type(), "': ", what, " is on ",
             t.place().ToString(), ", not ", ctx.place().ToString(),
             " (the core should have copied it)");
}

// For a host input (TIDE_REGISTER_KERNEL_HOST_INPUTS): the core hands it over in host memory.
inline void CheckOnHost(const tide::KernelContext& ctx, const tide::Tensor& t, const char* what) {
  TIDE_CHECK(t.place().c().kind == tide::Place("cpu", 0).c().kind, "sim kernel of '", ctx.op_type(),
             "': host input ", what, " is on ", t.place().ToString(),
             ", not the host (the core should have copied it there)");
}
