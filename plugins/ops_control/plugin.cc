// plugin.cc: the ops_control op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("ops_control", "0.1.0",
            "control flow: while, conditional_block, tensor arrays, IfElse's split/merge, "
            "comparisons, logical ops, increment, is_empty, fill_constant_batch_size_like, print");
