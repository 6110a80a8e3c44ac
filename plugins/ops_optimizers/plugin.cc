// plugin.cc: the ops_optimizers op pack's entry points; the ops register themselves in their files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("ops_optimizers", "0.1.0",
            "optimizer update ops (Fluid 1.x semantics): sgd, momentum, adam, adagrad, rmsprop, "
            "lars_momentum; dynamic loss scaling for mixed precision");
