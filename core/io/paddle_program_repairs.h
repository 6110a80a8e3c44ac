// paddle_program_repairs.h: the repairs the loader makes to a Paddle program once it is built and
// checked (paddle_op_repairs.h has those to each op as read), where what Paddle writes would make
// Tide compute something else or refuse the program.
#pragma once

#include "core/ir/program_desc.h"

namespace tide::core {

// A legacy ProgramDesc (Paddle 2.x, Fluid), in this order: each while's X keeps what its body
// reads before writing it (inner loops first); a plain tensor written twice in a block with no
// read between has its first write renamed "<name>.overwritten_<n>"; an output declared 0-D that
// Tide's inference of its op gives a rank is declared with it.
void RepairLegacyPaddleProgram(ProgramDesc* program);

// A program translated from Paddle 3.x's PIR: a conv2d_transpose size Paddle computed from an
// unknown one is redeclared unknown, and the shapes of the ops after it inferred again.
void RepairPirProgram(ProgramDesc* program);

}  // namespace tide::core
