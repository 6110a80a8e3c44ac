// enforce.h: the core's error type and the macros that raise it with a message naming the op,
// variable, kernel key or plugin at fault.
#pragma once

#include <tide/plugin_api.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tide::core {

// Every error the core raises. `code` follows the C ABI (TideCode) so it crosses to plugins and
// Python unchanged.
class Error : public std::runtime_error {
 public:
  Error(TideCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  TideCode code() const { return code_; }

 private:
  TideCode code_;
};

template <typename... Args>
std::string StrCat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

const char* CodeName(TideCode code);

}  // namespace tide::core

// TIDE_FAIL(code, parts...): throw an Error built from the message parts.
#define TIDE_FAIL(code, ...) throw ::tide::core::Error(code, ::tide::core::StrCat(__VA_ARGS__))
// TIDE_ENFORCE(cond, parts...): an INVALID_ARGUMENT error unless cond holds.
#define TIDE_ENFORCE(cond, ...)                                 \
  do {                                                          \
    if (!(cond)) TIDE_FAIL(TIDE_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)
