// pir_control_flow.h: the last step of reading a PIR program with control flow (pd_op.if,
// pd_op.while, translated by pir_translate_control.cc into Fluid's conditional_block / while ops
// with sub-blocks): what each control-flow op's sub-block reads and writes of the enclosing blocks
// becomes the op's inputs and outputs, as Fluid lists them, and the ops whose results nothing
// reads are dropped from every block.
#pragma once

#include "framework.pb.h"

namespace tide::core {

// Fills the inputs ("Input" of conditional_block, "X" of while) and the outputs ("Out") of every
// op with a sub_block attribute with the variables of enclosing blocks that its sub-block (and
// the blocks nested in it) reads and writes, innermost first; drops, in every block, the ops none
// of whose outputs is read later, or is a variable of an enclosing block, or is fetched (block 0
// keeps its feed and fetch ops), and then the variables no op names (parameters stay).
void FinishPirBlocks(proto::ProgramDesc* program);

}  // namespace tide::core
