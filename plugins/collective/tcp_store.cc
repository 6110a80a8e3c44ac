// tcp_store.cc: the rendezvous store over TCP. Wire format, both ways little-endian:
//   request: cmd (1 byte: 'S'et, 'G'et, 'C'heck), key length (u32), key, value length (u32), value
//   reply:   status (1 byte: 1 found/done, 0 missing), value length (u32), value
#include "tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <tide/plugin.hpp>

namespace tide_collective {
namespace {

using Clock = std::chrono::steady_clock;

bool WriteAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n) {
    ssize_t r = ::recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteBlob(int fd, const char* p, uint32_t n) {
  return WriteAll(fd, &n, sizeof(n)) && (n == 0 || WriteAll(fd, p, n));
}

bool ReadBlob(int fd, std::vector<char>* out) {
  uint32_t n = 0;
  if (!ReadAll(fd, &n, sizeof(n))) return false;
  out->resize(n);
  return n == 0 || ReadAll(fd, out->data(), n);
}

}  // namespace

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

void SplitEndpoint(const std::string& endpoint, const std::string& what, std::string* host,
                   int* port) {
  const size_t colon = endpoint.rfind(':');
  char* end = nullptr;
  long p = colon == std::string::npos ? 0 : std::strtol(endpoint.c_str() + colon + 1, &end, 10);
  TIDE_CHECK(colon != std::string::npos && colon > 0 && end && *end == '\0' && p > 0 && p < 65536,
             what, ": '", endpoint, "' is not host:port");
  *host = endpoint.substr(0, colon);
  *port = static_cast<int>(p);
}

// --- server ---
TcpStoreServer::TcpStoreServer(const std::string& host, int port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  TIDE_CHECK(listen_fd_ >= 0, "rendezvous store: socket(): ", std::strerror(errno));
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(IsLoopback(host) ? INADDR_LOOPBACK : INADDR_ANY);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 128) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    TIDE_THROW(TIDE_UNAVAILABLE, "rendezvous store: cannot listen on ", host, ":", port, ": ",
               std::strerror(err), " (is another job using the port?)");
  }
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpStoreServer::~TcpStoreServer() {
  stop_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

void TcpStoreServer::AcceptLoop() {
  while (!stop_) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::lock_guard<std::mutex> lock(mu_);
    client_fds_.push_back(fd);
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TcpStoreServer::Serve(int fd) {
  for (;;) {
    char cmd = 0;
    std::vector<char> key, value;
    if (!ReadAll(fd, &cmd, 1) || !ReadBlob(fd, &key) || !ReadBlob(fd, &value)) break;
    const std::string k(key.begin(), key.end());
    char status = 1;
    std::vector<char> reply;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = data_.find(k);
      if (cmd == 'S') {
        data_[k] = std::move(value);
      } else if (it == data_.end()) {
        status = 0;
      } else if (cmd == 'G') {
        reply = it->second;
      }
    }
    if (!WriteAll(fd, &status, 1) ||
        !WriteBlob(fd, reply.data(), static_cast<uint32_t>(reply.size())))
      break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : client_fds_)
    if (c == fd) c = -1;
  ::close(fd);
}

// --- client ---
TcpStore::TcpStore(std::string host, int port, std::chrono::milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  Connect();
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpStore::Connect() {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &res);
  TIDE_CHECK(rc == 0 && res, "rendezvous store ", endpoint(), ": cannot resolve '", host_,
             "': ", ::gai_strerror(rc));
  const auto deadline = Clock::now() + timeout_;
  std::string last = "no attempt";
  for (;;) {
    int fd = ::socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      // Every reply comes within the timeout or the store is reported as not answering.
      timeval tv{};
      tv.tv_sec = static_cast<time_t>(timeout_.count() / 1000);
      tv.tv_usec = static_cast<suseconds_t>((timeout_.count() % 1000) * 1000);
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
      fd_ = fd;
      ::freeaddrinfo(res);
      return;
    }
    last = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::freeaddrinfo(res);
  TIDE_THROW(TIDE_UNAVAILABLE, "rendezvous store ", endpoint(),
             " (hosted by rank 0) is unreachable "
             "after ",
             timeout_.count(), " ms: ", last,
             " (is the master address right and rank 0 "
             "running?)");
}

char TcpStore::Request(char cmd, const std::string& key, const std::vector<char>& value,
                       std::vector<char>* reply) {
  std::lock_guard<std::mutex> lock(mu_);
  TIDE_CHECK(fd_ >= 0, "rendezvous store ", endpoint(),
             ": no connection (an earlier request failed)");
  char status = 0;
  std::vector<char> body;
  const bool ok = WriteAll(fd_, &cmd, 1) &&
                  WriteBlob(fd_, key.data(), static_cast<uint32_t>(key.size())) &&
                  WriteBlob(fd_, value.data(), static_cast<uint32_t>(value.size())) &&
                  ReadAll(fd_, &status, 1) && ReadBlob(fd_, &body);
  if (!ok) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    TIDE_THROW(TIDE_UNAVAILABLE, "rendezvous store ", endpoint(), " (hosted by rank 0) ",
               err == EAGAIN || err == EWOULDBLOCK
                   ? "did not answer within " + std::to_string(timeout_.count()) + " ms"
                   : "closed the connection",
               " (key '", key, "'): rank 0 stopped or died");
  }
  if (reply) *reply = std::move(body);
  return status;
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  Request('S', key, data, nullptr);
}

std::vector<char> TcpStore::get(const std::string& key) {
  std::vector<char> v;
  if (Request('G', key, {}, &v) != 1) {
    // Gloo calls get after wait; a key still missing then is waited for like wait() does.
    wait({key}, timeout_);
    Request('G', key, {}, &v);
  }
  return v;
}

bool TcpStore::check(const std::string& key) { return Request('C', key, {}, nullptr) == 1; }

void TcpStore::wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (const auto& key : keys) {
    while (!check(key)) {
      if (Clock::now() >= deadline) {
        std::string missing;
        for (const auto& k : keys)
          if (!check(k)) missing += (missing.empty() ? "'" : ", '") + k + "'";
        TIDE_THROW(TIDE_UNAVAILABLE, "rendezvous store ", endpoint(), ": key(s) ", missing,
                   " not set within ", timeout.count(), " ms");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
  }
}

}  // namespace tide_collective
