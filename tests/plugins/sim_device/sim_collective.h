// sim_collective.h: the sim device's collective library (tide/collective.h, "tide.collective"),
// so the device path of the collective op pack is tested without a GPU. Each collective is queued
// on the context's stream like an NCCL kernel; when the stream reaches it, it copies the device
// buffer to host memory, runs Gloo (TCP on loopback) there and copies the result back. It
// publishes the watchdog's functions too (markers on the stream, the asynchronous error, an abort
// that releases the stream at once), so the op pack's watchdog is tested here, and a
// communication stream (a second SimStream of the context, ordered with the first by SimEvents)
// for the collectives issued with use_calc_stream = false. The unique
// id names a fresh directory (Gloo's FileStore) the ranks meet in, removed once they have: the
// sim's ranks must share a machine, as the sim is a test device.
//
// Built where Gloo is (TIDE_SIM_WITH_GLOO); TIDE_SIM_NO_COLLECTIVE=1 hides the extension, so the
// op pack's host staging of a device without one is tested too.
#pragma once

#include <cstdint>
#include <memory>
#include <tide/plugin.hpp>
#include <tide/plugin/collective.hpp>

#include "sim_stream.h"

// The library of a context whose stream is `stream`, with `comm_stream` its communication
// stream (destroy it before the streams), or null where it is not built or is hidden.
std::unique_ptr<tide::CollectiveLibrary> CreateSimCollective(SimStream* stream,
                                                             SimStream* comm_stream);

// How many collectives ran on a communication stream in this process (tests read it with
// ctypes).
extern "C" uint64_t tide_sim_comm_stream_collectives(void);
