// status.h: TideStatus (the C ABI's error object) and its conversions to and from the core's
// Error, so failures cross the plugin boundary in both directions with their message.
#pragma once

#include <tide/plugin_api.h>

#include <string>
#include <type_traits>

#include "core/platform/enforce.h"

struct TideStatus {
  TideCode code;
  std::string message;
};

namespace tide::core {

inline TideStatus* NewStatus(TideCode code, std::string message) {
  return new TideStatus{code, std::move(message)};
}

// Takes ownership of `status`; when it is an error, throws it as an Error whose message reads
// "<context>: <plugin's message> (plugin <file>)".
void ThrowIfStatus(TideStatus* status, const std::string& context, const std::string& plugin_file);

// Runs `fn` (core code called by a plugin) and turns any exception into a status: nothing
// thrown by the core may unwind into plugin code.
template <typename F>
TideStatus* StatusGuard(F&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const Error& e) {
    return NewStatus(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return NewStatus(TIDE_RESOURCE_EXHAUSTED, "out of host memory");
  } catch (const std::exception& e) {
    return NewStatus(TIDE_INTERNAL, e.what());
  } catch (...) {
    return NewStatus(TIDE_INTERNAL, "unknown exception in the core");
  }
}

// Calls a plugin callback, turning both a returned error status and an exception that escaped
// the plugin (one not using plugin.hpp's guard) into an Error. `context` (a string, or a callable
// returning one) names what was being done; a callable is only evaluated on failure, which keeps
// the hot path free of string building.
template <typename F, typename C>
void CallPlugin(F&& fn, C&& context, const std::string& plugin_file) {
  TideStatus* status = nullptr;
  try {
    status = fn();
  } catch (const std::exception& e) {
    status = NewStatus(TIDE_INTERNAL, StrCat("C++ exception escaped the plugin: ", e.what()));
  } catch (...) {
    status = NewStatus(TIDE_INTERNAL, "an unknown C++ exception escaped the plugin");
  }
  if (!status) return;
  if constexpr (std::is_invocable_v<C>)
    ThrowIfStatus(status, context(), plugin_file);
  else
    ThrowIfStatus(status, context, plugin_file);
}

}  // namespace tide::core
