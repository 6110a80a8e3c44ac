// common.h: what every file of the ZeroMQ transport shares: its name, its options and logging.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <tide/plugin.hpp>
#include <vector>

namespace tide_zmq {

constexpr const char* kPlugin = "transport_zmq";
constexpr uint32_t kMagic = 0x45444954;  // "TIDE" as a little-endian fixed32
constexpr uint32_t kProtocolVersion = 1;
constexpr int64_t kDefaultDeadlineMs = 180000;                 // Fluid's rpc_deadline
constexpr int64_t kDefaultMaxMessageBytes = int64_t(2) << 30;  // 2 GiB

using Clock = std::chrono::steady_clock;

inline int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

template <typename... Args>
void LogInfo(Args&&... args) {
  tide::Log(TIDE_LOG_INFO, kPlugin, tide::detail::Concat(std::forward<Args>(args)...));
}
template <typename... Args>
void LogWarning(Args&&... args) {
  tide::Log(TIDE_LOG_WARNING, kPlugin, tide::detail::Concat(std::forward<Args>(args)...));
}
template <typename... Args>
void LogError(Args&&... args) {
  tide::Log(TIDE_LOG_ERROR, kPlugin, tide::detail::Concat(std::forward<Args>(args)...));
}

// Settings of one trainer-side connection, from the RPC ops' attributes.
struct ClientOptions {
  int64_t deadline_ms = kDefaultDeadlineMs;
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
  std::string curve_server_key_file;  // the pserver's public key; empty: no CurveZMQ
  std::string curve_key_file;         // this trainer's certificate (public + secret key)
};

// Reads the attributes every RPC op has (see RpcAttrs in rpc_ops.cc).
inline ClientOptions ReadClientOptions(const tide::OpRunContext& ctx) {
  ClientOptions o;
  o.deadline_ms = ctx.Attr<int32_t>("rpc_deadline");
  o.max_message_bytes = ctx.Attr<int64_t>("max_message_size");
  o.curve_server_key_file = ctx.Attr<std::string>("curve_server_key_file");
  o.curve_key_file = ctx.Attr<std::string>("curve_key_file");
  TIDE_CHECK(o.deadline_ms > 0, "op '", ctx.op_type(), "': rpc_deadline must be > 0 ms, got ",
             o.deadline_ms);
  TIDE_CHECK(o.max_message_bytes > 0, "op '", ctx.op_type(), "': max_message_size must be > 0");
  return o;
}

inline bool IsHostPlace(const tide::Place& p) { return p.kind_name() == "cpu"; }

}  // namespace tide_zmq
