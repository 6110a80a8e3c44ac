// zmq_util.cc: socket options, key files, monitors and budgeted multipart receive.
#include "zmq_util.h"

#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tide_zmq {

zmq::context_t& SharedContext() {
  static zmq::context_t* ctx = new zmq::context_t(1);
  return *ctx;
}

void SetSocketOptions(zmq::socket_t& s, int64_t max_message_bytes) {
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::sndhwm, 0);
  s.set(zmq::sockopt::rcvhwm, 0);
  s.set(zmq::sockopt::reconnect_ivl, 100);
  s.set(zmq::sockopt::reconnect_ivl_max, 1000);
  s.set(zmq::sockopt::maxmsgsize, max_message_bytes);
  s.set(zmq::sockopt::sndbuf, 4 << 20);
  s.set(zmq::sockopt::rcvbuf, 4 << 20);
}

std::string ReadCurveKey(const std::string& path, const std::string& which) {
  std::ifstream f(path);
  TIDE_CHECK(f.good(), "CurveZMQ key file '", path, "' cannot be read");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  std::string key;
  size_t at = text.find(which);
  if (at != std::string::npos) {  // a ZeroMQ certificate
    size_t q1 = text.find('"', at);
    size_t q2 = q1 == std::string::npos ? q1 : text.find('"', q1 + 1);
    if (q2 != std::string::npos) key = text.substr(q1 + 1, q2 - q1 - 1);
  } else {  // a bare key: the first non-comment line
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      size_t b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos || line[b] == '#') continue;
      key = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
      break;
    }
  }
  TIDE_CHECK(key.size() == 40, "CurveZMQ key file '", path, "' holds no 40-character Z85 ", which,
             " (a ZeroMQ certificate, or a file with the key alone)");
  uint8_t raw[32];
  TIDE_CHECK(zmq_z85_decode(raw, key.c_str()) != nullptr, "CurveZMQ key file '", path, "': the ",
             which, " is not valid Z85");
  return key;
}

Monitor::Monitor(zmq::context_t& ctx, zmq::socket_t& watched, int events)
    : pair_(ctx, zmq::socket_type::pair) {
  static std::atomic<uint64_t> counter{0};
  std::string addr = "inproc://tide-zmq-monitor-" + std::to_string(counter.fetch_add(1));
  if (zmq_socket_monitor(watched.handle(), addr.c_str(), events) != 0)
    TIDE_THROW(TIDE_INTERNAL, "zmq_socket_monitor failed: ", zmq_strerror(zmq_errno()));
  pair_.set(zmq::sockopt::linger, 0);
  pair_.connect(addr);
}

bool Monitor::Next(int* event, std::string* address) {
  zmq::message_t head, addr;
  if (!pair_.recv(head, zmq::recv_flags::dontwait)) return false;
  if (head.more()) (void)pair_.recv(addr);
  uint16_t ev = 0;
  if (head.size() >= 2) std::memcpy(&ev, head.data(), 2);
  *event = ev;
  *address = addr.to_string();
  return true;
}

std::string EventName(int event) {
  switch (event) {
    case ZMQ_EVENT_CONNECTED:
      return "connected";
    case ZMQ_EVENT_DISCONNECTED:
      return "disconnected";
    case ZMQ_EVENT_ACCEPTED:
      return "accepted";
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      return "handshake failed";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      return "handshake failed (protocol error: not a ZeroMQ peer, or no/another security "
             "mechanism)";
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      return "handshake failed (authentication refused)";
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
      return "handshake succeeded";
    default:
      return "event " + std::to_string(event);
  }
}

void ReceiveRest(zmq::socket_t& s, zmq::message_t first, size_t budget, size_t max_frames,
                 Multipart* out) {
  out->frames.clear();
  out->total_bytes = 0;
  out->oversized = false;
  bool more = first.more();
  out->total_bytes += first.size();
  out->frames.push_back(std::move(first));
  while (more) {
    zmq::message_t f;
    (void)s.recv(f);  // the rest of a multipart message is already here
    more = f.more();
    out->total_bytes += f.size();
    if (out->total_bytes > budget || out->frames.size() >= max_frames) {
      out->oversized = true;  // keep counting, drop the data
      continue;
    }
    out->frames.push_back(std::move(f));
  }
  if (out->total_bytes > budget) out->oversized = true;
}

void SendMultipart(zmq::socket_t& s, std::vector<zmq::message_t>& frames) {
  for (size_t i = 0; i < frames.size(); ++i)
    s.send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

}  // namespace tide_zmq
