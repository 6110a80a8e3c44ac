// cupti_tracer.h: the CUDA device's tracer (TideDeviceTracer) on CUPTI's activity API: the
// kernels, copies and memsets the GPUs ran while it was on, each on its device and stream, timed
// on CUPTI's clock. libcupti is opened at run time (dlopen, as cuda_libs.cc opens cuBLAS): the
// plugin loads and runs without it, and has no tracer then. Built without cupti.h
// (TIDE_CUDA_WITH_CUPTI undefined, see CMakeLists.txt) the tracer is never available.
#pragma once

#include <cstdint>
#include <string>
#include <tide/plugin.hpp>

namespace tide_cuda {

// Whether the plugin was built with cupti.h (the tracer may then run, where libcupti opens).
bool CuptiTracerBuilt();
// Whether the tracer can run: built with cupti.h and libcupti opened with every function it
// needs, of the major version of the header (opened on the first call, once, thread-safe; the
// reason is logged when not, and kept in CuptiUnavailableReason()).
bool CuptiTracerAvailable();
std::string CuptiUnavailableReason();

// The process's one tracer (CUPTI's activity API is process-wide), under the core's rules for
// TideDeviceTracer: start, stop and collect from one thread at a time, now_ns from any. Each
// throws naming the CUPTI call and cuptiGetResultString's text.
//  - start: drops what an earlier session left and enables the kernel, copy and memset records.
//  - stop: disables them and flushes CUPTI's buffers (every record of the session is then held).
//  - collect: hands each record held to `emit` and forgets it.
//  - now_ns: cuptiGetTimestamp, the clock of the records' begin and end.
void CuptiTraceStart();
void CuptiTraceStop();
void CuptiTraceCollect(const tide::Device::TraceEmitter& emit);
uint64_t CuptiTraceNowNs();

}  // namespace tide_cuda
