// status.cc: turning plugin statuses into core errors.
#include "core/platform/status.h"

#include <memory>

namespace tide::core {

void ThrowIfStatus(TideStatus* status, const std::string& context, const std::string& plugin_file) {
  if (!status) return;
  std::unique_ptr<TideStatus> owned(status);
  std::string msg = context.empty() ? owned->message : context + ": " + owned->message;
  if (!plugin_file.empty()) msg += " (plugin " + plugin_file + ")";
  throw Error(owned->code == TIDE_OK ? TIDE_INTERNAL : owned->code, msg);
}

}  // namespace tide::core
