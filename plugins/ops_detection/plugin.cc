// plugin.cc: the ops_detection op pack's entry points. The ops register themselves from their
// files.
#include <tide/plugin.hpp>

TIDE_PLUGIN("ops_detection", "0.1.0",
            "object-detection ops (Paddle's detection operators, CPU kernels): yolo_box, nms, "
            "multiclass_nms3");
