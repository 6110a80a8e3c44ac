// contract_probe.h: checks that a device keeps the device contract it declares (TideDeviceDef:
// contract, copy, free), by doing what the contract allows the core to do while the device's
// stream is busy and reading back what arrived. The conformance kit runs it
// (tide.testing.conformance); a broken contract shows as a failure naming the rule.
#pragma once

#include <string>
#include <vector>

#include "core/platform/place.h"

namespace tide::core {

struct ContractCheck {
  std::string name;  // "copy", "free"; or an optional entry's (CheckOptionalDeviceEntries)
  std::string rule;  // the rule checked, as the header states it
  bool passed = false;
  std::string message;   // what went wrong (empty when it passed)
  bool skipped = false;  // an optional entry the device does not have (passed, not checked)
};

// Runs each check on `place` (its context is made if need be); the device's memory is given
// back before it returns. Throws only when the place cannot be used at all.
std::vector<ContractCheck> CheckDeviceContracts(const Place& place);
// The checks of the optional entries ("event_timing", "memory_stats", "tracer", "copy_stream",
// "graphs", "host_func"), each skipped where the device does not have the entry. The tracer's check
// starts and stops every device kind's tracer: not while a profile runs.
std::vector<ContractCheck> CheckOptionalDeviceEntries(const Place& place);

}  // namespace tide::core
