// pir_op_table.h: how each operation of a PaddlePaddle 3.x PIR program becomes a Tide (Fluid) op:
// its op type, which Fluid parameter or attribute each PIR operand and result becomes, and the
// attribute renames. One entry per PIR operation (pir_op_table.cc); pir_translate_ops.cc applies
// them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ir/attribute.h"

namespace tide::core {

// One PIR operand. A plain operand becomes the Fluid input `slot`. An operand that Paddle 3.x
// made a tensor where Fluid has an attribute (an IntArray or a Scalar: a reshape's shape, a
// scale's factor) becomes the attribute `attr` when a constant op (pd_op.full, full_int_array,
// or a builtin.combine of them) made it; else the input `slot`, or `list_slot` when a
// builtin.combine made it. Nothing set: the operand is dropped.
struct PirOperand {
  std::string slot, attr, list_slot;
};

// One PIR result: the Fluid output parameter it becomes ("": dropped). `same_as` >= 0: the
// output shares the variable of that operand (Fluid's in-place outputs, batch_norm's MeanOut).
struct PirResult {
  std::string slot;
  int same_as = -1;
};

struct PirOpRule {
  std::string fluid_type;
  std::vector<PirOperand> operands;  // in the PIR operation's operand order
  std::vector<PirResult> results;    // in its result order
  // PIR attribute -> Fluid attribute ("": dropped). An attribute not listed keeps its name.
  std::map<std::string, std::string> renames;
  AttributeMap fixed;          // attributes the Fluid op takes from the PIR op's kind (tril: lower)
  std::string dtype_of_input;  // a Fluid attribute set to operand 0's data type (cast: in_dtype)
  // The Fluid op computes another data type than PIR's result declares, cast to it after:
  // kSameType none, kFirstOperandType the first operand's (range: its Start's), else that type
  // (shape: int32).
  int cast_result_from = kSameType;
  static constexpr int kSameType = -2, kFirstOperandType = -1;
};

// The rule of a PIR operation ("pd_op.conv2d"), or nullptr. An in-place variant ("pd_op.relu_")
// takes the rule of its plain name.
const PirOpRule* FindPirOpRule(const std::string& pir_name);

// Every PIR operation of the table, sorted (for docs and tests).
std::vector<std::string> PirOpNames();

}  // namespace tide::core
