// server.cc: the pserver's ROUTER socket, ZAP authentication and checked receive.
#include "server.h"

#include <cstring>

#include "wire.h"

namespace tide_zmq {
namespace {

std::string PeerOf(zmq::message_t& m) {
  const char* p = zmq_msg_gets(m.handle(), "Peer-Address");
  return p ? p : "an unknown peer";
}

std::string PortOf(const std::string& endpoint) {
  size_t colon = endpoint.rfind(':');
  TIDE_CHECK(colon != std::string::npos && colon + 1 < endpoint.size(),
             "listen_and_serv: endpoint '", endpoint, "' is not host:port");
  std::string port = endpoint.substr(colon + 1);
  TIDE_CHECK(port.find_first_not_of("0123456789") == std::string::npos,
             "listen_and_serv: endpoint '", endpoint, "' has a bad port");
  return port;
}

}  // namespace

RpcServer::RpcServer(const ServerOptions& opt)
    : opt_(opt), ctx_(1), router_(ctx_, zmq::socket_type::router) {
  SetSocketOptions(router_, opt_.max_message_bytes);
  if (!opt_.curve_secret_key_file.empty()) {
    for (const auto& f : opt_.curve_trainer_key_files) {
      uint8_t raw[32];
      zmq_z85_decode(raw, ReadCurveKey(f, "public-key").c_str());
      admitted_.insert(std::string(reinterpret_cast<char*>(raw), 32));
      trainer_keys_.emplace_back(reinterpret_cast<char*>(raw), 32);
    }
    zap_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::rep);
    zap_->set(zmq::sockopt::linger, 0);
    zap_->bind("inproc://zeromq.zap.01");
    router_.set(zmq::sockopt::curve_server, 1);
    router_.set(zmq::sockopt::curve_secretkey,
                ReadCurveKey(opt_.curve_secret_key_file, "secret-key"));
    router_.set(zmq::sockopt::zap_domain, "tide");
  } else {
    TIDE_CHECK(opt_.curve_trainer_key_files.empty(), "listen_and_serv ", opt_.endpoint,
               ": curve_trainer_keys are set but curve_secret_key_file is not");
  }
  monitor_ = std::make_unique<Monitor>(
      ctx_, router_,
      ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
          ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
  std::string addr = "tcp://" + opt_.bind_address + ":" + PortOf(opt_.endpoint);
  try {
    router_.bind(addr);
  } catch (const zmq::error_t& e) {
    TIDE_THROW(TIDE_UNAVAILABLE, "listen_and_serv ", opt_.endpoint, ": cannot listen on ", addr,
               ": ", e.what());
  }
  LogInfo(
      "pserver ", opt_.endpoint, " listening on ", addr,
      zap_ ? " (CurveZMQ, " + std::to_string(admitted_.size()) + " admitted trainer key(s))" : "");
}

RpcServer::~RpcServer() { zmq_socket_monitor(router_.handle(), nullptr, 0); }

void RpcServer::HandleZap() {
  std::vector<zmq::message_t> f;
  zmq::message_t m;
  do {
    if (!zap_->recv(m, zmq::recv_flags::dontwait)) break;
    f.push_back(std::move(m));
  } while (f.back().more());
  if (f.size() < 6) return;  // not a ZAP request; REP needs no answer to nothing
  std::string mechanism = f[5].to_string();
  std::string key = f.size() > 6 ? f[6].to_string() : "";
  bool ok = mechanism == "CURVE" && key.size() == 32 && (admitted_.empty() || admitted_.count(key));
  if (!ok) {
    char z85[41] = {0};
    if (key.size() == 32) zmq_z85_encode(z85, reinterpret_cast<const uint8_t*>(key.data()), 32);
    LogWarning("pserver ", opt_.endpoint, ": refused a ", mechanism, " client from ",
               f[3].to_string(), " (public key ", z85[0] ? z85 : "none", " is not admitted)");
  }
  std::vector<zmq::message_t> reply;
  reply.emplace_back(std::string("1.0"));
  reply.emplace_back(f[1].to_string());
  reply.emplace_back(std::string(ok ? "200" : "400"));
  reply.emplace_back(std::string(ok ? "OK" : "not an admitted trainer"));
  // The User-Id every message of this connection carries: its public key, in Z85.
  char user[41] = {0};
  if (ok) zmq_z85_encode(user, reinterpret_cast<const uint8_t*>(key.data()), 32);
  reply.emplace_back(std::string(user));
  reply.emplace_back(std::string());
  SendMultipart(*zap_, reply);
}

void RpcServer::DrainEvents() {
  int ev;
  std::string addr;
  while (monitor_->Next(&ev, &addr)) {
    if (ev == ZMQ_EVENT_ACCEPTED || ev == ZMQ_EVENT_DISCONNECTED) {
      LogInfo("pserver ", opt_.endpoint, ": a connection ", EventName(ev));
    } else {
      ++rejected_;
      LogWarning("pserver ", opt_.endpoint, ": rejected a connection: ", EventName(ev));
    }
  }
}

void RpcServer::Reject(const zmq::message_t& identity, const std::string& peer, uint64_t seq,
                       const std::string& why) {
  ++rejected_;
  LogWarning("pserver ", opt_.endpoint, ": rejected a message from ", peer, ": ", why);
  ReplyError(identity, seq, TIDE_INVALID_ARGUMENT, why);
}

bool RpcServer::ReceiveOne(Incoming* in) {
  zmq::message_t first;
  if (!router_.recv(first, zmq::recv_flags::dontwait)) return false;
  Multipart m;
  // Budget: the whole message plus the routing frame; at most one frame per variable + header.
  ReceiveRest(router_, std::move(first), static_cast<size_t>(opt_.max_message_bytes) + 256,
              1u << 20, &m);
  zmq::message_t& identity = m.frames[0];
  std::string peer = m.frames.size() > 1 ? PeerOf(m.frames[1]) : PeerOf(identity);
  if (m.oversized) {
    Reject(identity, peer, 0,
           tide::detail::Concat("message of ", m.total_bytes, " bytes in ",
                                "more frames than allowed or over max_message_size ",
                                opt_.max_message_bytes));
    return false;
  }
  if (m.frames.size() < 2) {
    Reject(identity, peer, 0, "an empty message");
    return false;
  }
  transport::Request& req = in->request;
  const zmq::message_t& head = m.frames[1];
  if (!req.ParseFromArray(head.data(), static_cast<int>(head.size())) || req.magic() != kMagic) {
    Reject(identity, peer, 0,
           tide::detail::Concat("not a Tide transport request (", head.size(),
                                "-byte header frame, ", m.frames.size() - 1, " frame(s))"));
    return false;
  }
  if (req.version() != kProtocolVersion) {
    Reject(identity, peer, req.seq(),
           tide::detail::Concat("transport protocol version ", req.version(),
                                ", this pserver speaks ", kProtocolVersion));
    return false;
  }
  if (req.kind() < transport::SEND_VARS || req.kind() > transport::COMPLETE) {
    Reject(identity, peer, req.seq(), tide::detail::Concat("unknown request kind ", req.kind()));
    return false;
  }
  if (static_cast<size_t>(req.vars_size()) != m.frames.size() - 2) {
    Reject(identity, peer, req.seq(),
           tide::detail::Concat("truncated message: the header lists ", req.vars_size(),
                                " variable(s), ", m.frames.size() - 2, " data frame(s) came"));
    return false;
  }
  for (int i = 0; i < req.vars_size(); ++i) {
    std::string bad = CheckVariableMessage(req.vars(i), m.frames[i + 2].size());
    if (!bad.empty()) {
      Reject(identity, peer, req.seq(), bad);
      return false;
    }
  }
  for (const auto& n : req.names())
    if (n.empty() || n.size() > 4096) {
      Reject(identity, peer, req.seq(), "a GET of a bad variable name");
      return false;
    }
  in->identity = std::move(identity);
  in->peer = peer;
  in->arrived = Clock::now();
  in->curve_key.clear();
  if (zap_) {
    const char* user = zmq_msg_gets(m.frames[1].handle(), "User-Id");
    uint8_t raw[32];
    if (user && std::strlen(user) == 40 && zmq_z85_decode(raw, user))
      in->curve_key.assign(reinterpret_cast<char*>(raw), 32);
  }
  in->data.assign(std::make_move_iterator(m.frames.begin() + 2),
                  std::make_move_iterator(m.frames.end()));
  return true;
}

std::string RpcServer::CheckSender(const Incoming& in, int32_t trainer) const {
  if (!zap_ || trainer_keys_.empty()) return "";
  if (trainer >= 0 && static_cast<size_t>(trainer) < trainer_keys_.size() &&
      in.curve_key == trainer_keys_[trainer])
    return "";
  return tide::detail::Concat("the sender (", in.peer, ") does not hold trainer ", trainer,
                              "'s CurveZMQ key");
}

bool RpcServer::Next(int64_t timeout_ms, Incoming* in) {
  const auto start = Clock::now();
  while (true) {
    if (router_.get(zmq::sockopt::events) & ZMQ_POLLIN)
      if (ReceiveOne(in)) return true;
    int64_t remaining = timeout_ms - MsSince(start);
    if (remaining < 0) return false;
    std::vector<zmq::pollitem_t> items = {{router_.handle(), 0, ZMQ_POLLIN, 0},
                                          {monitor_->socket().handle(), 0, ZMQ_POLLIN, 0}};
    if (zap_) items.push_back({zap_->handle(), 0, ZMQ_POLLIN, 0});
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(remaining));
    if (items[1].revents) DrainEvents();
    if (zap_ && items[2].revents) HandleZap();
    if (items[0].revents && ReceiveOne(in)) return true;
    if (remaining == 0) return false;
  }
}

void RpcServer::Reply(const zmq::message_t& identity, transport::Response resp,
                      std::vector<zmq::message_t> data) {
  resp.set_magic(kMagic);
  resp.set_version(kProtocolVersion);
  resp.set_endpoint(opt_.endpoint);
  std::vector<zmq::message_t> frames;
  frames.reserve(data.size() + 2);
  frames.emplace_back();
  frames.back().copy(const_cast<zmq::message_t&>(identity));
  frames.emplace_back(resp.SerializeAsString());
  for (auto& d : data) frames.push_back(std::move(d));
  SendMultipart(router_, frames);
}

void RpcServer::ReplyError(const zmq::message_t& identity, uint64_t seq, TideCode code,
                           const std::string& message) {
  transport::Response resp;
  resp.set_seq(seq);
  resp.mutable_status()->set_code(code);
  resp.mutable_status()->set_message(message);
  Reply(identity, std::move(resp));
}

}  // namespace tide_zmq
