// fuzz_util.h: what every fuzz target shares: a core started once with the build's plugins, small
// memory limits (a fuzzed shape must fail as out of memory, not exhaust the machine), and a
// reader that takes typed values from the fuzzer's bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <tide/plugin.hpp>

#include "core/host/host_api.h"
#include "core/host/initialize.h"
#include "core/platform/flags.h"

namespace tide::fuzz {

// Starts the core once: plugins from TIDE_PLUGIN_PATH (scripts/fuzz.sh sets it), one CPU thread,
// a 256 MiB CPU memory budget, and the SDK's host table for code built against the SDK.
inline void InitCoreOnce() {
  static bool done = [] {
    core::SetFlag("cpu_threads", "1");
    core::SetFlag("initial_cpu_memory_in_mb", "16");
    core::SetFlag("fraction_of_cpu_memory_to_use", "0.002");
    core::Initialize();
    tide::detail::HostSlot() = core::GetHostApi();
    return true;
  }();
  (void)done;
}

// Typed values from the front of the input; zeros once it runs out.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  template <typename T>
  T Take() {
    T v{};
    size_t n = std::min(sizeof(T), left_);
    std::memcpy(&v, p_, n);
    p_ += n;
    left_ -= n;
    return v;
  }
  // Up to `max` bytes, as a string.
  std::string TakeString(size_t max) {
    size_t n = std::min<size_t>(Take<uint16_t>(), std::min(max, left_));
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return s;
  }
  std::string Rest() {
    std::string s(reinterpret_cast<const char*>(p_), left_);
    p_ += left_;
    left_ = 0;
    return s;
  }
  size_t left() const { return left_; }

 private:
  const uint8_t* p_;
  size_t left_;
};

}  // namespace tide::fuzz
