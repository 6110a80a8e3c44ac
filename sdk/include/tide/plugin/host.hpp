// tide/plugin/host.hpp: the host table (tide::Host()), errors (tide::Error, TIDE_THROW,
// TIDE_CHECK) turned into statuses at the boundary and statuses back into errors, and the core's
// flags and log. Every other part of the SDK builds on it.
#ifndef TIDE_PLUGIN_HOST_HPP_
#define TIDE_PLUGIN_HOST_HPP_

#include <tide/plugin_api.h>

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tide {

// The host table, set once when the plugin is registered (it lives as long as the process).
namespace detail {
inline const TideHostApi*& HostSlot() {
  static const TideHostApi* host = nullptr;
  return host;
}
}  // namespace detail
inline const TideHostApi& Host() { return *detail::HostSlot(); }

// Errors: throw tide::Error (or any std::exception) anywhere in plugin code; the boundary turns
// it into a TideStatus the core reports with the op, kernel key and plugin file.
class Error : public std::runtime_error {
 public:
  Error(TideCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  TideCode code() const { return code_; }

 private:
  TideCode code_;
};

namespace detail {
template <typename... Args>
std::string Concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

#define TIDE_THROW(code, ...) throw ::tide::Error(code, ::tide::detail::Concat(__VA_ARGS__))
// TIDE_CHECK(cond, "message parts", ...): an InvalidArgument error when cond is false.
#define TIDE_CHECK(cond, ...)                                    \
  do {                                                           \
    if (!(cond)) TIDE_THROW(TIDE_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)

// TIDE_HOST_FN(Scope_FindLocalVar)(scope, name): a host function newer than the oldest host the
// plugin accepts (TIDE_PLUGIN_MIN_ABI_MINOR), called only when the host that loaded the plugin
// has it; an UNIMPLEMENTED error naming it and both versions otherwise (never a call through a
// pointer the host does not have).
#define TIDE_HOST_FN(field)                                                                 \
  ::tide::detail::CheckedHostFn(                                                            \
      TIDE_HAS_FIELD(&::tide::Host(), TideHostApi, field) ? ::tide::Host().field : nullptr, \
      #field)
namespace detail {
template <typename F>
F CheckedHostFn(F fn, const char* name) {
  if (!fn)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "host function ", name,
               " is missing: this Tide speaks plugin ABI ", Host().abi_major, ".", Host().abi_minor,
               ", older than the plugin's SDK (", TIDE_ABI_MAJOR, ".", TIDE_ABI_MINOR, ")");
  return fn;
}
}  // namespace detail

// Turns a returned TideStatus into an exception; takes ownership of the status.
inline void ThrowIfError(TideStatus* status) {
  if (!status) return;
  TideCode code = Host().Status_Code(status);
  std::string msg = Host().Status_Message(status);
  Host().Status_Free(status);
  throw Error(code, msg);
}

namespace detail {
// Runs `fn`, turning any exception into a status: the only way errors leave a plugin.
template <typename F>
TideStatus* Guard(F&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const Error& e) {
    return Host().Status_Create(e.code(), e.what());
  } catch (const std::exception& e) {
    return Host().Status_Create(TIDE_INTERNAL, e.what());
  } catch (...) {
    return Host().Status_Create(TIDE_INTERNAL, "unknown C++ exception");
  }
}
}  // namespace detail

// The core's flag `name` as text (e.g. "cpu_threads"), or `fallback` when there is none.
inline std::string Flag(const char* name, const std::string& fallback = "") {
  char buf[256];
  int64_t n = Host().Flag_Get(name, buf, sizeof(buf));
  if (n < 0) return fallback;
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  Host().Flag_Get(name, &big[0], big.size());
  big.resize(static_cast<size_t>(n));
  return big;
}

// Logs through the core (glog): tide::Log(TIDE_LOG_WARNING, "my_plugin", "message").
inline void Log(TideLogSeverity severity, const char* plugin, const std::string& message) {
  Host().Log(severity, plugin, message.c_str());
}

}  // namespace tide

#endif  // TIDE_PLUGIN_HOST_HPP_
