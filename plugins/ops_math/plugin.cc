// plugin.cc: the ops_math op pack's entry points. The ops register themselves from their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN(
    "ops_math", "0.1.0",
    "math ops: feed/fetch, fills, random, elementwise, mul/matmul, activations, reductions, "
    "softmax, cast");
