// plugin.cc: the ZeroMQ transport plugin's entry points. The ops register themselves from their
// files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("transport_zmq", "0.1.0",
            "ZeroMQ parameter-server transport: send, recv, send_barrier, fetch_barrier, "
            "send_complete, listen_and_serv, split_byref, merge_sparse_grads");
