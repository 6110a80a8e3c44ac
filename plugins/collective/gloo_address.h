// gloo_address.h: where this rank's Gloo listens, the address the other ranks connect to.
#pragma once

#include <gloo/transport/tcp/attr.h>

#include <string>

namespace tide_collective {

// In this order: GLOO_SOCKET_IFNAME (an interface name, as PyTorch and Gloo's users set it);
// `endpoint` (host or host:port, c_comm_init's attribute); for a tcp:// store, this host's
// address on the route to `store_host`; otherwise this host's name where it resolves (Gloo's own
// choice), else the interface of the default route, else loopback (one host, no network).
// `chosen` says which, for the log and for errors.
gloo::transport::tcp::attr GlooListenAttr(const std::string& endpoint,
                                          const std::string& store_host, std::string* chosen);

}  // namespace tide_collective
