// while_grad_op.cc: the gradient of while. The core built the body's gradient block; this op
// runs it once per iteration, last first, each in that iteration's step scope, where the body's
// temporaries still hold their forward values and the loop-carried variables (read and written
// by the body) are shown as they were when the iteration started. The gradient of a
// loop-carried variable is carried from one iteration to the one before; the gradients of the
// other inputs are summed over the iterations. The step scopes are freed afterwards.
// Tensor arrays: the gradient of an array the body only writes (DynamicRNN's outputs) is shown
// to every iteration, as the iterations after it left it (an element written again later gets
// nothing from the loss); that of an array the body only reads is summed element by element; that
// of an array the body reads and writes (an array carrying the loop's state: read element i, write
// element i + 1) is carried from one iteration to the one before, as a loop-carried tensor's.
// The first two reach a step through views (array_views.h): the step touches the elements it
// reads or writes, so a step costs O(1) in the array's length instead of O(length).
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "array_views.h"
#include "grad_util.h"

namespace ops_control {
namespace {

constexpr const char* kEmpty = "@EMPTY@";

// The tensor arrays among a while op's variables and their gradients.
class ArrayGrads {
 public:
  ArrayGrads(tide::OpRunContext& ctx, const std::vector<std::string>& xs,
             const std::vector<std::string>& outs, const std::vector<std::string>& out_grads,
             const std::vector<std::string>& x_grads)
      : ctx_(ctx) {
    std::set<std::string> carried;  // read and written, with a gradient wanted
    for (size_t j = 0; j < xs.size() && j < x_grads.size(); ++j) {
      if (x_grads[j] == kEmpty || !Lookup(ctx, xs[j]).IsTensorArray()) continue;
      if (std::count(outs.begin(), outs.end(), xs[j]))
        carried.insert(xs[j]);
      else
        summed_[xs[j]];
    }
    for (size_t j = 0; j < outs.size() && j < out_grads.size(); ++j) {
      if (out_grads[j] == kEmpty || !Lookup(ctx, outs[j]).IsTensorArray()) continue;
      tide::Variable og = Lookup(ctx, out_grads[j]);
      if (!og.IsTensorArray()) continue;
      MaterializeView(og);  // an enclosing loop's step's view: this loop reads it whole
      if (!carried.count(outs[j])) {
        shown_.insert_or_assign(outs[j], og.GetTensorArray());
        continue;
      }
      std::vector<tide::OwnedTensor>& g = summed_[outs[j]];  // the gradient after the loop
      tide::TensorArray a = og.GetTensorArray();
      g.resize(a.size());
      for (size_t i = 0; i < a.size(); ++i)
        if (a.at(i).initialized()) g[i].CopyFrom(a.at(i), ctx.place(), ctx.device_context());
      carried_.insert(outs[j]);
    }
    for (const auto& x : carried) summed_[x];  // no gradient after the loop: none yet
    carried_.insert(carried.begin(), carried.end());
  }
  ~ArrayGrads() { views_.clear(); }  // also when the block threw: no view outlives its step
  // Gives the iteration the gradients of the arrays it writes (its ops read their elements): the
  // outer ones through views that leave them unchanged; copies of the carried ones, which its
  // ops update. The gradients of the arrays it only reads start as empty views.
  void ShowTo(tide::Scope step) {
    views_.clear();
    for (auto& [name, og] : shown_)
      views_[name] = std::make_unique<ArrayView>(step.Var(name + "@GRAD"), og, &changed_[name]);
    for (const auto& [name, sum] : summed_)
      if (!carried_.count(name))
        views_[name] = std::make_unique<ArrayView>(step.Var(name + "@GRAD"), std::nullopt);
    for (const auto& name : carried_) {
      const std::vector<tide::OwnedTensor>& g = summed_[name];
      tide::TensorArray local = step.Var(name + "@GRAD").GetTensorArray();
      local.resize(0);
      local.resize(g.size());
      for (size_t i = 0; i < g.size(); ++i)
        if (g[i].initialized()) local.at(i).CopyFrom(g[i], ctx_.place(), ctx_.device_context());
    }
  }
  // Takes the gradients the iteration left for the arrays it reads: added to the sums of the
  // read-only ones; for a carried one, the gradient reaching the iteration's start.
  // Each element the step wrote reaches the sum once: through its view, or (an op that wrote the
  // whole array ended the view) in the variable.
  void Gather(tide::Scope step) {
    for (const auto& [name, og] : shown_) KeepChanges(step, name, og);
    for (auto& [name, sum] : summed_) {
      tide::Variable v = step.FindLocalVar(name + "@GRAD");
      if (!v || !v.IsTensorArray()) continue;
      tide::TensorArray local = v.GetTensorArray();
      if (carried_.count(name)) sum.clear();
      auto view = views_.find(name);
      if (view != views_.end() && view->second->attached()) {
        if (sum.size() < view->second->size()) sum.resize(view->second->size());
        for (const auto& [i, part] : view->second->written())
          if (part.initialized()) Accumulate(ctx_, sum[i], part, name);
      }
      if (sum.size() < local.size()) sum.resize(local.size());
      for (size_t i = 0; i < local.size(); ++i)
        if (local.at(i).initialized()) Accumulate(ctx_, sum[i], local.at(i), name);
    }
    views_.clear();
  }
  // After the last step: the elements the iterations overwrote get no gradient before the loop.
  void Finish() {
    for (auto& [name, og] : shown_)
      for (const auto& [i, t] : changed_[name]) {
        if (i >= og.size()) og.resize(i + 1);
        og.at(i).ShareDataWith(t);  // none when cleared
        if (t.initialized()) og.at(i).set_lod(t.lod());
      }
  }
  // Writes the gradient of array `x` (read by the body) to `grad`; false when x is no such array.
  // Elements no gradient reached get zeros shaped like x's.
  bool Write(const std::string& x, const std::string& grad) {
    auto it = summed_.find(x);
    if (it == summed_.end()) return false;
    tide::TensorArray fwd = Lookup(ctx_, x).GetTensorArray();
    tide::Variable gv = Lookup(ctx_, grad);
    MaterializeView(gv);                          // an enclosing loop's step's view: written whole
    tide::TensorArray out = gv.GetTensorArray();  // a carried one's: the one shown
    out.resize(0);
    out.resize(std::max(fwd.size(), it->second.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      if (i < it->second.size() && it->second[i].initialized())
        out.at(i).CopyFrom(it->second[i], ctx_.place(), ctx_.device_context());
      else if (i < fwd.size() && fwd.at(i).initialized())
        ZerosLike(ctx_, fwd.at(i), out.at(i));
    }
    return true;
  }

 private:
  tide::OpRunContext& ctx_;
  // The elements of a shown array's gradient that a step changes (write_to_array's gradient
  // clears the one written) are changed for the steps still to run: an iteration's write is
  // overwritten by a later one, which the loss then reads instead.
  void KeepChanges(tide::Scope step, const std::string& name, tide::TensorArray og) {
    ArrayView::Changes& changes = changed_[name];
    ArrayView& view = *views_.at(name);
    if (view.attached()) {
      for (auto& [i, t] : view.TakeWritten()) changes[i] = std::move(t);
      return;
    }
    // An op took the whole array (the view ended): the step's variable holds all of it.
    tide::TensorArray local = step.FindLocalVar(name + "@GRAD").GetTensorArray();
    size_t n = std::max(local.size(), og.size());
    if (!changes.empty()) n = std::max(n, changes.rbegin()->first + 1);
    for (size_t i = 0; i < n; ++i) {
      tide::OwnedTensor t;
      if (i < local.size() && local.at(i).initialized()) {
        t.ShareDataWith(local.at(i));
        t.set_lod(local.at(i).lod());
      }
      changes[i] = std::move(t);
    }
  }

  std::map<std::string, tide::TensorArray> shown_;
  std::map<std::string, ArrayView::Changes> changed_;             // by the steps run so far
  std::map<std::string, std::vector<tide::OwnedTensor>> summed_;  // carried ones' too
  std::set<std::string> carried_;
  std::map<std::string, std::unique_ptr<ArrayView>> views_;  // the running step's
};

void WhileGradRun(tide::OpRunContext& ctx) {
  const int32_t grad_block = ctx.Attr<int32_t>("sub_block");
  const std::string steps_name = OnlyInput(ctx, "StepScopes");
  tide::StepScopes steps = Lookup(ctx, steps_name).GetStepScopes();
  TIDE_CHECK(!ctx.Attr<bool>("is_test"),
             "op 'while_grad': the while loop ran with is_test=True, "
             "which keeps no iterations for a backward pass");
  const auto xs = ctx.Inputs("X"), outs = ctx.Inputs("Out");
  const auto out_grads = ctx.Inputs("Out@GRAD"), x_grads = ctx.Outputs("X@GRAD");
  const std::set<std::string> written(outs.begin(), outs.end());

  // The gradient reaching each written variable from after the iterations still to go back over.
  std::map<std::string, tide::OwnedTensor> carried;
  for (size_t j = 0; j < outs.size() && j < out_grads.size(); ++j) {
    if (out_grads[j] == kEmpty) continue;
    tide::Variable og = Lookup(ctx, out_grads[j]);
    if (og.IsTensor() && og.GetTensor().initialized())
      carried[outs[j]].CopyFrom(og.GetTensor(), ctx.place(), ctx.device_context());
  }
  std::map<std::string, tide::OwnedTensor> summed;  // read-only inputs' gradients
  ArrayGrads arrays(ctx, xs, outs, out_grads, x_grads);
  for (size_t k = steps.size(); k-- > 0;) {
    tide::Scope step = steps.at(k);
    arrays.ShowTo(step);
    for (const auto& x : xs) {  // loop-carried variables as the iteration found them
      if (!written.count(x)) continue;
      tide::Variable pre = step.FindLocalVar(x + "@STEP_INPUT");
      if (!pre) continue;
      tide::Tensor shown = step.Var(x).GetTensor();
      shown.ShareDataWith(pre.GetTensor());
      shown.set_lod(pre.GetTensor().lod());
    }
    for (auto& [name, g] : carried)
      step.Var(name + "@GRAD").GetTensor().CopyFrom(g, ctx.place(), ctx.device_context());
    for (const auto& name : written) {  // only written, overwritten later: no gradient, zeros
      if (carried.count(name) || std::count(xs.begin(), xs.end(), name)) continue;
      tide::Variable left = step.FindLocalVar(name + "@STEP_OUTPUT");
      if (left) ZerosLike(ctx, left.GetTensor(), step.Var(name + "@GRAD").GetTensor());
    }
    ctx.RunBlock(grad_block, step);
    arrays.Gather(step);
    for (const auto& name : written)  // overwritten by this iteration: nothing earlier reaches it
      if (!std::count(xs.begin(), xs.end(), name)) carried.erase(name);
    for (size_t j = 0; j < xs.size() && j < x_grads.size(); ++j) {
      tide::Tensor g = LocalGrad(step, xs[j]);
      if (written.count(xs[j])) {
        if (g)
          carried[xs[j]].CopyFrom(g, ctx.place(), ctx.device_context());
        else
          carried.erase(xs[j]);
      } else if (g && x_grads[j] != kEmpty) {
        Accumulate(ctx, summed[xs[j]], g, xs[j]);
      }
    }
  }
  arrays.Finish();
  for (size_t j = 0; j < xs.size() && j < x_grads.size(); ++j) {
    if (x_grads[j] == kEmpty || arrays.Write(xs[j], x_grads[j])) continue;
    tide::Tensor out = Lookup(ctx, x_grads[j]).GetTensor();
    auto& from = written.count(xs[j]) ? carried : summed;
    auto it = from.find(xs[j]);
    if (it != from.end())
      out.CopyFrom(it->second, ctx.place(), ctx.device_context());
    else
      ZerosLike(ctx, InputTensor(ctx, xs[j]), out);
  }
  // Variables only written by the body: their values before the loop reach the loss no more.
  const bool ran = steps.size() > 0;
  for (size_t j = 0; ran && j < outs.size() && j < out_grads.size(); ++j)
    if (out_grads[j] != kEmpty && !std::count(xs.begin(), xs.end(), outs[j]) &&
        Lookup(ctx, outs[j]).IsTensor())
      ZerosLike(ctx, Lookup(ctx, outs[j]).GetTensor(), Lookup(ctx, out_grads[j]).GetTensor());
  steps.Clear();  // the backward pass is done with the iterations
}

}  // namespace
}  // namespace ops_control

TIDE_REGISTER_OP(tide::OpSchema("while_grad")
                     .Comment("The gradient of while: its gradient block run over the iterations, "
                              "last first.")
                     .Input("X", "the forward op's X")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("Out", "the forward op's Out")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("Out@GRAD", "gradients of Out")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("StepScopes", "the iterations' scopes")
                     .Output("X@GRAD", "gradients of X")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out@GRAD", "gradients of Out's values before the loop (in place)")
                     .AsDuplicable()
                     .AsDispensable()
                     .RequiredAttr("sub_block", TIDE_ATTR_BLOCK, "the body's gradient block")
                     .Attr("is_test", false, "the forward loop's is_test")
                     .Run(ops_control::WhileGradRun));
