// backward.h: append_backward (as in Fluid, the framework adds the backward pass). Adds to block 0
// the gradient ops of every op that leads to the loss, in reverse order, and returns the
// (parameter, gradient) pairs.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/program_desc.h"

namespace tide::core {

// Op roles, as Fluid's op_role attribute (the transpilers and clone(for_test) read them).
enum OpRole : int32_t {
  kOpRoleForward = 0,
  kOpRoleBackward = 1,
  kOpRoleOptimize = 2,
  kOpRoleLoss = 256,
};

// Appends the backward pass of `loss` to block 0:
//  - loss@GRAD is filled with 1;
//  - ops that do not lead to the loss are pruned; variables in `no_grad_set`, variables marked
//    stop_gradient, non-float variables, and outputs of ops all of whose inputs need no gradient
//    get none;
//  - each op's grad ops come from its registered grad maker; a gradient several ops write is
//    summed; an output gradient nobody produced is filled with zeros.
// `parameters` (empty: every persistable float variable the loss depends on) selects the pairs
// returned. Errors name the loss, the op or the variable at fault.
std::vector<std::pair<std::string, std::string>> AppendBackward(
    ProgramDesc* program, const std::string& loss, const std::vector<std::string>& parameters,
    const std::set<std::string>& no_grad_set);

}  // namespace tide::core
