// plugin.cc: the ops_graph op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("ops_graph", "0.1.0",
            "paddle.geometric's message passing: segment_pool, send_u_recv, send_ue_recv, "
            "send_uv, graph_reindex");
