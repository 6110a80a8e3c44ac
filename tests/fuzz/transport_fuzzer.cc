// transport_fuzzer.cc: the pserver's decoding of a received request. The input is split into
// frames (a header frame, then data frames); the header is parsed as a transport Request, each
// variable checked against its data frame (CheckVariableMessage) and, when accepted, decoded into
// a scope (DecodeVariable) exactly as the pserver does. A crash or sanitizer report is a finding:
// whatever CheckVariableMessage accepts must decode safely.
#include <cstdint>
#include <string>
#include <vector>

#include "core/framework/scope.h"
#include "core/plugin/c_handles.h"
#include "fuzz_util.h"
#include "wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tide::fuzz::InitCoreOnce();
  tide::fuzz::Bytes in(data, size);
  // Frames: [u8 count] then per frame [u16 length][bytes]; the last frame takes what is left.
  const int count = 1 + in.Take<uint8_t>() % 8;
  std::vector<std::string> frames;
  for (int i = 0; i < count && in.left(); ++i)
    frames.push_back(i + 1 == count ? in.Rest() : in.TakeString(1 << 16));
  if (frames.empty()) return 0;
  tide_zmq::transport::Request req;
  if (!req.ParseFromArray(frames[0].data(), static_cast<int>(frames[0].size()))) return 0;
  if (static_cast<size_t>(req.vars_size()) != frames.size() - 1) return 0;  // the server drops it
  tide::core::Scope scope;
  tide::Scope sdk_scope(tide::core::Wrap(&scope));
  for (int i = 0; i < req.vars_size(); ++i) {
    const std::string& frame = frames[i + 1];
    if (!tide_zmq::CheckVariableMessage(req.vars(i), frame.size()).empty()) continue;
    zmq::message_t msg(frame.data(), frame.size());
    try {
      tide_zmq::DecodeVariable(req.vars(i), &msg, sdk_scope.Var(req.vars(i).name()),
                               tide::Place("cpu", 0));
    } catch (const tide::Error&) {
    } catch (const tide::core::Error&) {
    }
  }
  return 0;
}
