// sim_context.h: what the test-only "sim" device publishes (extension "tide.sim"): counters of
// its copies, so tests can check every transfer the core inserts.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define TIDE_SIM_CONTEXT_EXTENSION "tide.sim"

typedef struct TideSimCounters {
  size_t struct_size;
  uint64_t host_to_device, device_to_host, device_to_device;
  uint64_t allocs, frees;
} TideSimCounters;
