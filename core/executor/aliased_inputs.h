// aliased_inputs.h: an op whose output is bound to the variable one of its inputs reads
// (sgd's ParamOut = Param, batch_norm's MeanOut = Mean, or concat(X = [a, b], Out = a) in a
// hand-written or transpiled program). Sizing the output resizes, or reallocates, the input
// before its kernel reads it, so the kernel reads the input through a view of its own: the
// variable's data as the op found it, copied where the op is not declared in place
// (OpInfo::in_place) or where its output ends up with other dims than the input.
#pragma once

#include "core/executor/op_instance.h"

namespace tide::core {

// Finds the op's inputs bound to a variable one of its outputs writes (after Bind; the op's
// aliased inputs start again). Ops without kernels manage their own variables and have none.
void FindAliasedInputs(OpInstance& op);

// Before the op's checks and shape inference: binds each aliased input to its view, which
// shares the variable's data, dims and LoD as they are now.
void ViewAliasedInputs(OpInstance& op);

// After shape inference, before the kernel: gives a view memory of its own (a copy made on the
// kernel's device context) unless the op is declared in place and the output kept the input's
// dims.
void SeparateAliasedInputs(OpInstance& op);

// After the kernel (or its failure): the views let go of the variables' data.
void ReleaseAliasedInputs(OpInstance& op);

// The three calls around one run of an op with aliased inputs (no cost for the others).
class AliasedInputsGuard {
 public:
  explicit AliasedInputsGuard(OpInstance& op) : op_(op.aliased_inputs().empty() ? nullptr : &op) {
    if (op_) ViewAliasedInputs(*op_);
  }
  AliasedInputsGuard(const AliasedInputsGuard&) = delete;
  AliasedInputsGuard& operator=(const AliasedInputsGuard&) = delete;
  ~AliasedInputsGuard() {
    if (op_) ReleaseAliasedInputs(*op_);
  }
  void Separate() {
    if (op_) SeparateAliasedInputs(*op_);
  }

 private:
  OpInstance* op_;
};

}  // namespace tide::core
