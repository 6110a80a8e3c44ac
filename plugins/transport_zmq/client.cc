// client.cc: pipelined requests over per-pserver DEALER sockets, deadlines and replay on reconnect.
#include "client.h"

#include <algorithm>

#include "wire.h"
#include "zmq_util.h"

namespace tide_zmq {

using transport::Kind;
using transport::Request;
using transport::Response;

const char* KindName(Kind k) {
  switch (k) {
    case transport::SEND_VARS:
      return "send";
    case transport::GET_VARS:
      return "get";
    case transport::SEND_BARRIER:
      return "send_barrier";
    case transport::FETCH_BARRIER:
      return "fetch_barrier";
    case transport::COMPLETE:
      return "complete";
    default:
      return "unknown";
  }
}

RpcClient& RpcClient::Instance() {
  static RpcClient* client = new RpcClient();  // never destroyed (see SharedContext)
  return *client;
}

RpcClient::Connection& RpcClient::Connect(const std::string& endpoint, const ClientOptions& opt) {
  auto it = conns_.find(endpoint);
  if (it != conns_.end()) return *it->second;
  TIDE_CHECK(endpoint.find(':') != std::string::npos, "pserver endpoint '", endpoint,
             "' is not host:port");
  auto c = std::make_unique<Connection>();
  c->endpoint = endpoint;
  c->socket = std::make_unique<zmq::socket_t>(SharedContext(), zmq::socket_type::dealer);
  SetSocketOptions(*c->socket, opt.max_message_bytes);
  if (!opt.curve_server_key_file.empty()) {
    TIDE_CHECK(!opt.curve_key_file.empty(), "CurveZMQ to pserver ", endpoint,
               ": curve_server_key_file is set but this trainer has no curve_key_file");
    c->socket->set(zmq::sockopt::curve_serverkey,
                   ReadCurveKey(opt.curve_server_key_file, "public-key"));
    c->socket->set(zmq::sockopt::curve_publickey, ReadCurveKey(opt.curve_key_file, "public-key"));
    c->socket->set(zmq::sockopt::curve_secretkey, ReadCurveKey(opt.curve_key_file, "secret-key"));
  }
  c->monitor = std::make_unique<Monitor>(SharedContext(), *c->socket,
                                         ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
                                             ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
  c->socket->connect("tcp://" + endpoint);
  return *(conns_[endpoint] = std::move(c));
}

void RpcClient::Send(Connection& c, Call* call) {
  Request& req = call->request;
  req.set_magic(kMagic);
  req.set_version(kProtocolVersion);
  req.set_seq(next_seq_++);
  req.set_round(c.round);
  c.completed = false;  // talking to it again (a new job on the same endpoint)
  std::vector<zmq::message_t> frames;
  frames.reserve(call->data.size() + 1);
  frames.emplace_back(req.SerializeAsString());
  for (auto& d : call->data) frames.push_back(std::move(d));
  call->data.clear();
  Pending p{req.seq(), {}, call->detached ? nullptr : call, req.kind()};
  if (!call->detached)
    for (auto& f : frames) {
      p.frames.emplace_back();
      p.frames.back().copy(f);  // shares large frames (reference counted), copies small ones
    }
  SendMultipart(*c.socket, frames);
  c.pending.push_back(std::move(p));
}

void RpcClient::Resend(Connection& c) {
  auto resend = [&](std::vector<zmq::message_t>& kept) {
    std::vector<zmq::message_t> frames(kept.size());
    for (size_t i = 0; i < kept.size(); ++i) frames[i].copy(kept[i]);
    SendMultipart(*c.socket, frames);
  };
  for (auto& r : c.round_sends) resend(r);
  for (auto& p : c.pending)
    if (p.call) resend(p.frames);
}

void RpcClient::DrainEvents(Connection& c) {
  int ev;
  std::string addr;
  while (c.monitor->Next(&ev, &addr)) {
    if (ev == ZMQ_EVENT_CONNECTED) {
      if (c.ever_connected && (!c.round_sends.empty() || !c.pending.empty())) {
        LogWarning("reconnected to pserver ", c.endpoint, " (did it restart?): sending again ",
                   c.round_sends.size(), " acknowledged and ", c.pending.size(),
                   " pending request(s) of this round");
        Resend(c);
      }
      c.ever_connected = true;
    } else if (ev == ZMQ_EVENT_DISCONNECTED) {
      if (c.completed)  // it stopped after the last trainer completed: the job's normal end
        LogInfo("pserver ", c.endpoint, " closed the connection after this trainer completed");
      else
        LogWarning("lost the connection to pserver ", c.endpoint, "; reconnecting");
    } else {
      LogError("pserver ", c.endpoint, ": ", EventName(ev));
    }
  }
}

bool RpcClient::Receive(Connection& c, const ClientOptions& opt) {
  zmq::message_t first;
  if (!c.socket->recv(first, zmq::recv_flags::dontwait)) return false;
  Multipart m;
  ReceiveRest(*c.socket, std::move(first), static_cast<size_t>(opt.max_message_bytes), 1u << 20,
              &m);
  const std::string from = "pserver " + c.endpoint;
  if (m.oversized)
    TIDE_THROW(TIDE_RESOURCE_EXHAUSTED, from, " sent a response of ", m.total_bytes,
               " bytes, over max_message_size ", opt.max_message_bytes);
  Response resp;
  if (!resp.ParseFromArray(m.frames[0].data(), static_cast<int>(m.frames[0].size())) ||
      resp.magic() != kMagic)
    TIDE_THROW(TIDE_INTERNAL, from, " sent a response that is not a Tide transport message");
  if (resp.version() != kProtocolVersion)
    TIDE_THROW(TIDE_FAILED_PRECONDITION, from, " speaks transport protocol version ",
               resp.version(), ", this trainer ", kProtocolVersion);
  auto it = std::find_if(c.pending.begin(), c.pending.end(),
                         [&](const Pending& p) { return p.seq == resp.seq(); });
  if (it == c.pending.end()) return false;  // the answer to a request sent twice
  Call* call = it->call;
  const Kind kind = it->kind;
  if (resp.status().code() != TIDE_OK) {
    TideCode code = static_cast<TideCode>(resp.status().code());
    if (!call) {
      c.pending.erase(it);
      TIDE_THROW(code, from, " refused an earlier (asynchronous) ", KindName(kind),
                 " request: ", resp.status().message());
    }
    TIDE_THROW(code, from, " refused the ", KindName(kind), " request: ", resp.status().message());
  }
  if (!call) {  // a detached request went through
    c.pending.erase(it);
    return false;
  }
  if (static_cast<size_t>(resp.vars_size()) + 1 != m.frames.size())
    TIDE_THROW(TIDE_INTERNAL, from, ": response lists ", resp.vars_size(), " variable(s) but has ",
               m.frames.size() - 1, " data frame(s)");
  for (int i = 0; i < resp.vars_size(); ++i) {
    std::string bad = CheckVariableMessage(resp.vars(i), m.frames[i + 1].size());
    if (!bad.empty()) TIDE_THROW(TIDE_INTERNAL, from, " sent a malformed ", bad);
  }
  call->response = std::move(resp);
  call->reply_data.assign(std::make_move_iterator(m.frames.begin() + 1),
                          std::make_move_iterator(m.frames.end()));
  if (kind == transport::SEND_VARS && call->replay_until_barrier) {
    c.round_sends.push_back(std::move(it->frames));
  } else if (kind == transport::SEND_BARRIER) {
    ++c.round;
    c.round_sends.clear();
  } else if (kind == transport::COMPLETE) {
    c.completed = true;
  }
  c.pending.erase(it);
  return true;
}

void RpcClient::Run(std::vector<Call>& calls, const ClientOptions& opt, const std::string& op) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Connection*> used;
  for (auto& call : calls) {
    Connection& c = Connect(call.endpoint, opt);
    if (std::find(used.begin(), used.end(), &c) == used.end()) used.push_back(&c);
    DrainEvents(c);
  }
  for (Connection* c : used)  // answers to earlier detached requests, without waiting
    while (c->socket->get(zmq::sockopt::events) & ZMQ_POLLIN) Receive(*c, opt);
  for (auto& call : calls) Send(*conns_[call.endpoint], &call);
  const auto start = Clock::now();
  size_t left = 0;
  for (const auto& call : calls) left += call.detached ? 0 : 1;
  try {
    while (left > 0) {
      int64_t remaining = opt.deadline_ms - MsSince(start);
      if (remaining <= 0) {
        std::string who;
        for (Connection* c : used)
          for (const auto& p : c->pending)
            if (p.call)
              who += (who.empty() ? "" : "; ") + std::string("pserver ") + c->endpoint + " (" +
                     KindName(p.kind) + ", round " + std::to_string(p.call->request.round()) +
                     (c->ever_connected ? "" : ", never connected") + ")";
        TIDE_THROW(TIDE_UNAVAILABLE, op, " of trainer ", calls[0].request.trainer_id(),
                   ": no answer within rpc_deadline ", opt.deadline_ms, " ms from ", who,
                   ". The pserver or another trainer may have gone away.");
      }
      std::vector<zmq::pollitem_t> items;
      for (Connection* c : used) {
        items.push_back({c->socket->handle(), 0, ZMQ_POLLIN, 0});
        items.push_back({c->monitor->socket().handle(), 0, ZMQ_POLLIN, 0});
      }
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(remaining));
      // Answers before events: a pserver that acknowledged COMPLETE and stopped is then known
      // to have completed when its disconnect is drained.
      for (size_t i = 0; i < used.size(); ++i) {
        if (items[2 * i].revents)
          while (used[i]->socket->get(zmq::sockopt::events) & ZMQ_POLLIN)
            if (Receive(*used[i], opt)) --left;
        if (items[2 * i + 1].revents) DrainEvents(*used[i]);
      }
    }
  } catch (...) {
    // Forget this call's requests: late answers are then ignored as unknown.
    for (Connection* c : used) c->pending.clear();
    throw;
  }
}

}  // namespace tide_zmq
