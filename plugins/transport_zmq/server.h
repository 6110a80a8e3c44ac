// server.h: the pserver's socket: a ROUTER bound to the endpoint's port, optional CurveZMQ with a
// ZAP handler admitting only listed trainer keys, and defensive receive: every message is size-
// checked and parsed before use; a bad one is logged, answered with an error and dropped.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common.h"
#include "transport.pb.h"
#include "zmq_util.h"

namespace tide_zmq {

namespace transport = ::tide::transport;  // the generated wire messages

struct ServerOptions {
  std::string endpoint;                    // host:port, as the trainers know it
  std::string bind_address = "127.0.0.1";  // where to listen ("0.0.0.0": every interface)
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
  std::string curve_secret_key_file;  // the pserver's certificate; empty: no CurveZMQ
  std::vector<std::string> curve_trainer_key_files;  // admitted trainers; empty: any curve client
};

// A well-formed request and who sent it.
struct Incoming {
  zmq::message_t identity;
  transport::Request request;
  std::vector<zmq::message_t> data;  // one checked frame per request.vars
  std::string peer;                  // the sender's address, for logs
  std::string curve_key;             // CurveZMQ: the sender's raw public key; empty without
  Clock::time_point arrived;
};

class RpcServer {
 public:
  explicit RpcServer(const ServerOptions& opt);
  ~RpcServer();

  // Waits up to timeout_ms for a well-formed request; false when none came.
  bool Next(int64_t timeout_ms, Incoming* in);
  void Reply(const zmq::message_t& identity, transport::Response resp,
             std::vector<zmq::message_t> data = {});
  void ReplyError(const zmq::message_t& identity, uint64_t seq, TideCode code,
                  const std::string& message);

  const std::string& endpoint() const { return opt_.endpoint; }
  // Empty when the sender of `in` may speak for `trainer`: always without CurveZMQ or without a
  // list of trainer keys (no identities to check); else its key must be that trainer's
  // (curve_trainer_key_files[trainer]). Else why not.
  std::string CheckSender(const Incoming& in, int32_t trainer) const;
  int64_t rejected() const { return rejected_; }

 private:
  bool ReceiveOne(Incoming* in);
  void Reject(const zmq::message_t& identity, const std::string& peer, uint64_t seq,
              const std::string& why);
  void HandleZap();
  void DrainEvents();

  ServerOptions opt_;
  zmq::context_t ctx_;
  std::unique_ptr<zmq::socket_t> zap_;
  zmq::socket_t router_;
  std::unique_ptr<Monitor> monitor_;
  std::set<std::string> admitted_;         // raw 32-byte public keys
  std::vector<std::string> trainer_keys_;  // raw public key of trainer i, when listed
  int64_t rejected_ = 0;
};

}  // namespace tide_zmq
