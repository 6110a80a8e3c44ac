// aliased_inputs.cc: an op's inputs that share a variable with one of its outputs.
#include "core/executor/aliased_inputs.h"

#include <iostream>

#include "core/framework/tensor_util.h"
#include "core/platform/flags.h"

namespace tide::core {

void FindAliasedInputs(OpInstance& op) {
  op.aliased_.clear();
  if (op.info().run) return;  // control flow, feed, fetch: they read and write variables by name
  for (size_t b = 0; b < op.inputs_.size(); ++b)
    for (size_t i = 0; i < op.inputs_[b].vars.size(); ++i) {
      Variable* v = op.inputs_[b].vars[i];
      AliasedInput a;
      bool found = false;
      for (size_t ob = 0; v && ob < op.outputs_.size(); ++ob)
        for (size_t oi = 0; oi < op.outputs_[ob].vars.size(); ++oi) {
          if (op.outputs_[ob].vars[oi] != v) continue;
          // In place only if every output writing the variable is declared so with this input.
          const bool pair = op.info().InPlace(op.inputs_[b].param, op.outputs_[ob].param);
          a.in_place = found ? a.in_place && pair : pair;
          if (!found) a.out_binding = ob, a.out_index = oi;
          found = true;
        }
      if (!found) continue;
      a.binding = b;
      a.index = i;
      a.shared = v;
      a.view = std::make_unique<Variable>();
      op.aliased_.push_back(std::move(a));
    }
}

void ViewAliasedInputs(OpInstance& op) {
  for (AliasedInput& a : op.aliased_) {
    Variable*& bound = op.inputs_[a.binding].vars[a.index];
    a.separate = false;
    if (!a.shared->IsType<LoDTensor>()) {  // arrays, SelectedRows: ops read and write them whole
      bound = a.shared;
      continue;
    }
    const LoDTensor& src = a.shared->Get<LoDTensor>();
    LoDTensor* view = a.view->GetMutable<LoDTensor>();
    view->ShareDataWith(src);
    view->set_lod(src.lod());
    bound = a.view.get();
  }
}

void SeparateAliasedInputs(OpInstance& op) {
  for (AliasedInput& a : op.aliased_) {
    // Separate already: a kernel declined, and the next one runs on the same copy.
    if (a.separate || op.inputs_[a.binding].vars[a.index] != a.view.get()) continue;
    LoDTensor* view = a.view->GetMutable<LoDTensor>();
    if (!view->initialized()) continue;  // nothing to read (an empty tensor)
    const LoDTensor& out = a.shared->Get<LoDTensor>();
    if (a.in_place && out.dims() == view->dims()) continue;
    if (!a.copy) a.copy = std::make_unique<LoDTensor>();
    TensorCopySync(*view, view->place(), a.copy.get(), op.kernel_dctx());
    view->ShareDataWith(*a.copy);
    a.separate = true;
    if (FLAGS_log_kernels)
      std::cerr << "tide: " << op.label() << " input '" << op.inputs_[a.binding].param << "' ('"
                << op.inputs_[a.binding].names[a.index] << "') is also its output '"
                << op.outputs_[a.out_binding].param << "': its kernel reads a copy\n";
  }
}

void ReleaseAliasedInputs(OpInstance& op) {
  // The views stay bound (the shape cache watches them), holding dims and LoD but no data.
  for (AliasedInput& a : op.aliased_)
    if (op.inputs_[a.binding].vars[a.index] == a.view.get())
      a.view->GetMutable<LoDTensor>()->Clear();
}

}  // namespace tide::core
