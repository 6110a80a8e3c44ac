// grad_op_maker.h: the gradient ops of one forward op, from its registered grad maker (a plugin
// callback) or Fluid's default rule.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ir/op_desc.h"
#include "core/ir/var_names.h"

namespace tide::core {

// Grad ops for `fwd`. Gradients of variables in `no_grad` (sorted) are named "@EMPTY@". Empty
// when the op has no gradient.
// `grad_blocks`: for a control-flow op, its block attributes' gradient blocks (GradBlock).
std::vector<OpDesc> MakeGradOps(const OpDesc& fwd, const std::vector<std::string>& no_grad,
                                const std::map<std::string, int32_t>& grad_blocks = {});

// Fluid's default rule: one op `grad_type` taking the forward inputs, outputs and output grads
// and producing the input grads, with the forward attributes.
OpDesc DefaultGradOp(const OpDesc& fwd, const std::string& grad_type,
                     const std::vector<std::string>& no_grad);

}  // namespace tide::core
