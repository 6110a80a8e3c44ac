// tcp_store.h: the rendezvous key-value store Gloo lacks over TCP. One process (the ring's rank 0)
// hosts a TcpStoreServer; every rank talks to it through a TcpStore (gloo::rendezvous::Store):
// set, get and wait with a deadline, so a missing peer is an error, never a hang.
#pragma once

#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tide_collective {

// Serves set/get/check on host:port from a thread per connection until destroyed.
class TcpStoreServer {
 public:
  // Binds host:port (the wildcard address unless host is a loopback address); throws on failure.
  TcpStoreServer(const std::string& host, int port);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

 private:
  void AcceptLoop();
  void Serve(int fd);

  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mu_;  // guards data_, client_fds_, workers_
  std::map<std::string, std::vector<char>> data_;
  std::vector<int> client_fds_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

// A client of a TcpStoreServer. Every request waits at most `timeout`; connecting retries until
// then (the server's process may start later). Errors name the store's endpoint.
class TcpStore : public gloo::rendezvous::Store {
 public:
  TcpStore(std::string host, int port, std::chrono::milliseconds timeout);
  ~TcpStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  bool check(const std::string& key);

  std::string endpoint() const { return host_ + ":" + std::to_string(port_); }

 private:
  // Sends one request and reads its reply: status byte + value. Reconnects once on a broken
  // connection is not attempted: a store that went away is reported.
  char Request(char cmd, const std::string& key, const std::vector<char>& value,
               std::vector<char>* reply);
  void Connect();

  const std::string host_;
  const int port_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  int fd_ = -1;
};

// localhost, 127.x.x.x or ::1.
bool IsLoopback(const std::string& host);

// "host:port" -> (host, port); throws naming `what` on a malformed endpoint.
void SplitEndpoint(const std::string& endpoint, const std::string& what, std::string* host,
                   int* port);

}  // namespace tide_collective
