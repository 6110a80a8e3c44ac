// paddle_op_repairs.h: what the loader changes in each op of a Paddle program as read (legacy or
// translated from PIR), before the program is built: what Paddle writes that Tide's op takes
// another way (an attribute bound to variables, an int list stored as int64s) or does not take
// (Paddle's framework attributes, precision hints, quantization annotations, empty input slots).
#pragma once

#include "framework.pb.h"

namespace tide::core {

// Each op of every block, in order: its VAR / VARS attributes that the op takes as inputs moved
// to them; int64 lists read as the op's ints; Paddle-only attributes dropped; input slots that
// bind no variable and that the op does not declare dropped.
void RepairPaddleOps(proto::ProgramDesc* program);

}  // namespace tide::core
