// client.h: the trainer side of the transport: one DEALER connection per pserver, requests to all
// pservers in flight at once, a deadline on every wait, and a replay of the round after a pserver
// restarts (sync mode), so a pserver resumed from its checkpoint picks the round up again.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common.h"
#include "transport.pb.h"
#include "zmq_util.h"

namespace tide_zmq {

namespace transport = ::tide::transport;  // the generated wire messages

class RpcClient {
 public:
  // One request to one pserver and, after Run, its response.
  struct Call {
    std::string endpoint;
    transport::Request request;        // kind, trainer_id, vars or names (Run sets seq and round)
    std::vector<zmq::message_t> data;  // one frame per request.vars, in order
    // Sync-mode SEND_VARS: kept (shared, not copied) until the next send barrier succeeds, and
    // sent again if the pserver restarts before that.
    bool replay_until_barrier = false;
    // Async-mode SEND_VARS: Run does not wait for the answer; it is checked when it comes, during
    // a later Run on the same connection (a refusal then fails that later op, naming this one).
    bool detached = false;
    transport::Response response;
    std::vector<zmq::message_t> reply_data;  // one frame per response.vars, checked
  };

  static RpcClient& Instance();

  // Sends every call at once, then waits until each (but detached ones) has its response or the
  // deadline passes. Throws (naming `op` and the endpoint) on a timeout, an error response or a
  // malformed one.
  void Run(std::vector<Call>& calls, const ClientOptions& opt, const std::string& op);

 private:
  struct Pending {
    uint64_t seq;
    std::vector<zmq::message_t> frames;  // shares of what was sent, for a resend (not detached)
    Call* call;                          // null when detached
    transport::Kind kind;
  };
  struct Connection {
    std::string endpoint;
    std::unique_ptr<zmq::socket_t> socket;
    std::unique_ptr<Monitor> monitor;
    bool ever_connected = false;
    // This pserver acknowledged our COMPLETE: it may stop now, and losing it is no news.
    bool completed = false;
    int64_t round = 0;  // send barriers this pserver acknowledged
    std::vector<std::vector<zmq::message_t>> round_sends;
    std::vector<Pending> pending;
  };

  Connection& Connect(const std::string& endpoint, const ClientOptions& opt);
  void Send(Connection& c, Call* call);
  void Resend(Connection& c);
  // Handles one message from c's socket; true when it completed a pending (attached) call.
  bool Receive(Connection& c, const ClientOptions& opt);
  void DrainEvents(Connection& c);

  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Connection>> conns_;
  uint64_t next_seq_ = 1;
};

const char* KindName(transport::Kind k);

}  // namespace tide_zmq
