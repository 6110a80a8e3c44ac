// plugin.cc: the ops_nn op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("ops_nn", "0.1.0",
            "neural-network ops: conv2d, pool2d, batch_norm, dropout, lookup_table, "
            "softmax_with_cross_entropy, cross_entropy, accuracy, top_k, lrn, transpose, split, "
            "concat, reshape, flatten");
