// gloo_address.cc: picks the address Gloo listens on (gloo_address.h). Gloo's default, this
// host's name, fails where the name does not resolve (a container or a chroot without it in
// /etc/hosts), so it is used only where it does.
#include "gloo_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tcp_store.h"

namespace tide_collective {
namespace {

// The first IPv4 address of `host` (a name or a dotted address); empty where it does not resolve.
std::string ResolveIpv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found) return "";
  char buf[INET_ADDRSTRLEN] = {0};
  const auto* in = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  std::string out = ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf)) ? buf : "";
  ::freeaddrinfo(found);
  return out;
}

// This host's address on the route to `host` (no packet is sent: connect on a UDP socket only
// picks the route); empty where there is no route or `host` does not resolve.
std::string LocalAddressToward(const std::string& host) {
  if (IsLoopback(host)) return "127.0.0.1";
  const std::string ip = ResolveIpv4(host);
  if (ip.empty()) return "";
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return "";
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // any port: nothing is sent
  std::string found;
  if (::inet_pton(AF_INET, ip.c_str(), &to.sin_addr) == 1 &&
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0) {
    sockaddr_in me{};
    socklen_t len = sizeof(me);
    char buf[INET_ADDRSTRLEN] = {0};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0 &&
        ::inet_ntop(AF_INET, &me.sin_addr, buf, sizeof(buf)))
      found = buf;
  }
  ::close(fd);
  return found;
}

// The interface of the IPv4 default route (/proc/net/route: destination 0); empty if none.
std::string DefaultRouteInterface() {
  std::ifstream routes("/proc/net/route");
  std::string line;
  std::getline(routes, line);  // the header
  while (std::getline(routes, line)) {
    std::istringstream fields(line);
    std::string iface, destination;
    if (fields >> iface >> destination && destination == "00000000") return iface;
  }
  return "";
}

}  // namespace

gloo::transport::tcp::attr GlooListenAttr(const std::string& endpoint,
                                          const std::string& store_host, std::string* chosen) {
  gloo::transport::tcp::attr attr;
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    attr.iface = ifname;
    *chosen = "interface " + attr.iface + " (GLOO_SOCKET_IFNAME)";
    return attr;
  }
  if (!endpoint.empty()) {
    const size_t colon = endpoint.rfind(':');
    attr.hostname = endpoint.substr(0, colon == std::string::npos ? endpoint.size() : colon);
    *chosen = attr.hostname + " (the endpoint attribute)";
    return attr;
  }
  if (!store_host.empty()) {
    attr.hostname = LocalAddressToward(store_host);
    if (!attr.hostname.empty()) {
      *chosen = attr.hostname + " (the route to the store's host " + store_host + ")";
      return attr;
    }
  }
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) == 0 && !ResolveIpv4(name).empty()) {
    attr.hostname = name;
    *chosen = attr.hostname + " (this host's name)";
    return attr;
  }
  attr.iface = DefaultRouteInterface();
  if (!attr.iface.empty()) {
    *chosen = "interface " + attr.iface + " (the default route; this host's name '" +
              std::string(name) + "' does not resolve)";
    return attr;
  }
  attr.hostname = "127.0.0.1";
  *chosen = "127.0.0.1 (no default route and this host's name '" + std::string(name) +
            "' does not resolve: ranks on other hosts cannot connect; set GLOO_SOCKET_IFNAME or "
            "the endpoint)";
  return attr;
}

}  // namespace tide_collective
