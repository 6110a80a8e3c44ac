// zmq_util.h: ZeroMQ plumbing shared by client and server: socket options, CurveZMQ key files,
// socket monitors (connection events), multipart receive with a size budget.
#pragma once

#include <string>
#include <vector>
#include <zmq.hpp>

#include "common.h"

namespace tide_zmq {

// The process-wide context of the trainer side (never destroyed: plugins are never unloaded, and
// terminating a context at exit would wait on its sockets).
zmq::context_t& SharedContext();

// Linger 0, no high-water marks, reconnect every 100 ms (up to 1 s), a per-frame size limit.
void SetSocketOptions(zmq::socket_t& s, int64_t max_message_bytes);

// A Z85 CurveZMQ key (40 characters) from a key file: a plain file holding the key, or a ZeroMQ
// certificate (pyzmq's zmq.auth.create_certificates) with `public-key = "..."` /
// `secret-key = "..."` lines. `which` is "public-key" or "secret-key".
std::string ReadCurveKey(const std::string& path, const std::string& which);

// Connection events of one socket (ZMQ_EVENT_*), read from an inproc PAIR socket.
class Monitor {
 public:
  Monitor(zmq::context_t& ctx, zmq::socket_t& watched, int events);
  zmq::socket_t& socket() { return pair_; }
  // The next event without waiting; false when there is none.
  bool Next(int* event, std::string* address);

 private:
  zmq::socket_t pair_;
};

std::string EventName(int event);

// One multipart message, received frame by frame. Frames past `budget` bytes in all are received
// and dropped (the message is then `oversized`), so one message can never hold more than that.
struct Multipart {
  std::vector<zmq::message_t> frames;
  size_t total_bytes = 0;
  bool oversized = false;
};
// Receives the rest of a message whose first frame is already in `first`.
void ReceiveRest(zmq::socket_t& s, zmq::message_t first, size_t budget, size_t max_frames,
                 Multipart* out);

// Sends frames as one multipart message (moved from; the sent messages are left empty).
void SendMultipart(zmq::socket_t& s, std::vector<zmq::message_t>& frames);

}  // namespace tide_zmq
