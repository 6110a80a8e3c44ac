// status.cc: turning plugin statuses into core errors.
#include "core/platform/status.h"

#include <memory>
#include <string_view>

namespace tide::core {

namespace {

// The op a message opens with ("op 'X'" followed by `end`), or "" if none.
std::string LeadingOp(const std::string& s, std::string_view end) {
  static constexpr std::string_view kOpen = "op '";
  if (s.compare(0, kOpen.size(), kOpen) != 0) return "";
  const size_t close = s.find('\'', kOpen.size());
  if (close == std::string::npos || s.compare(close + 1, end.size(), end) != 0) return "";
  return s.substr(kOpen.size(), close - kOpen.size());
}

// What a context says after its op: " (block 0, #2) shape inference" -> "block 0, #2, shape
// inference".
std::string Where(std::string rest) {
  auto trim = [](std::string s) {
    const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  rest = trim(std::move(rest));
  if (rest.empty() || rest[0] != '(') return rest;
  const size_t close = rest.find(')');
  if (close == std::string::npos) return rest;
  std::string where = rest.substr(1, close - 1);
  const std::string after = trim(rest.substr(close + 1));
  if (!after.empty()) where += ", " + after;
  return where;
}

}  // namespace

void ThrowIfStatus(TideStatus* status, const std::string& context, const std::string& plugin_file) {
  if (!status) return;
  std::unique_ptr<TideStatus> owned(status);
  std::string msg;
  const std::string op = LeadingOp(context, "");
  if (!op.empty() && LeadingOp(owned->message, ": ") == op) {
    // Op plugins name their op ("op 'X': ..."); when the core's context names it too ("op 'X'
    // (block 0, #2) shape inference"), the message keeps the plugin's words and adds only what
    // the core knows: "op 'X': ... (block 0, #2, shape inference; plugin <file>)".
    const std::string where = Where(context.substr(std::string_view("op ''").size() + op.size()));
    msg = owned->message;
    if (!where.empty() || !plugin_file.empty()) {
      msg += " (" + where;
      if (!plugin_file.empty()) msg += (where.empty() ? "plugin " : "; plugin ") + plugin_file;
      msg += ")";
    }
  } else {
    msg = context.empty() ? owned->message : context + ": " + owned->message;
    if (!plugin_file.empty()) msg += " (plugin " + plugin_file + ")";
  }
  throw Error(owned->code == TIDE_OK ? TIDE_INTERNAL : owned->code, msg);
}

}  // namespace tide::core
