// array_views.h: how a while_grad step sees the gradient of an outer tensor array without paying
// for every element. The step's gradient block declares `<array>@GRAD`, so each step scope holds
// a fresh array of that name; filling it with the outer gradient's N elements (or growing it to
// index t for one write) made each of a loop's N backward steps O(N): quadratic in the steps. A
// view stands in for that variable while the step runs:
//  - shown: the gradient of an array the body only writes (DynamicRNN's outputs); element i reads
//    as the step left it, else as the iterations after it (run before it) left it, else as the
//    outer gradient's; the outer array is not changed while the steps run;
//  - collected: the gradient of an array the body reads (DynamicRNN's inputs); it starts empty
//    and keeps the elements the step writes, which while_grad then adds up.
// read_from_array, write_to_array, clear_array_element (in place) and array_length use the view
// directly: O(1) per element touched. Every other op of this pack that takes an array calls
// MaterializeView first, which fills the variable as before (O(N)) and ends the view: slower,
// never different. Views are keyed by the step's variable and live only while while_grad runs
// that step.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "control_util.h"

namespace ops_control {

class ArrayView;

namespace detail {
inline std::mutex& ViewsMutex() {
  static std::mutex m;
  return m;
}
inline std::unordered_map<TideVariable*, ArrayView*>& Views() {
  static std::unordered_map<TideVariable*, ArrayView*> views;
  return views;
}
}  // namespace detail

class ArrayView {
 public:
  // Elements changed (written, or cleared: holding nothing), by index.
  using Changes = std::map<size_t, tide::OwnedTensor>;

  // `var` is the step's own array variable (left empty while the view lives); `base` the outer
  // array shown through it, none for a collected view; `later` what the iterations after this
  // one changed in it, shown over `base`.
  ArrayView(tide::Variable var, std::optional<tide::TensorArray> base,
            const Changes* later = nullptr)
      : var_(var), base_(base), later_(later), size_(base ? base->size() : 0) {
    if (later_ && !later_->empty()) size_ = std::max(size_, later_->rbegin()->first + 1);
    var_.GetTensorArray().resize(0);
    std::lock_guard<std::mutex> lock(detail::ViewsMutex());
    detail::Views()[var_.c()] = this;
  }
  ~ArrayView() { Detach(); }
  ArrayView(const ArrayView&) = delete;
  ArrayView& operator=(const ArrayView&) = delete;

  bool attached() const { return attached_; }
  size_t size() const { return size_; }
  // Element i as the step sees it; a null Tensor when it holds nothing.
  tide::Tensor Get(size_t i) const {
    auto it = own_.find(i);
    if (it != own_.end() || (later_ && (it = later_->find(i)) != later_->end()))
      return it->second.initialized() ? tide::Tensor(it->second.c()) : tide::Tensor();
    if (base_ && i < base_->size()) {
      tide::Tensor t = base_->at(i);
      if (t.initialized()) return t;
    }
    return tide::Tensor();
  }
  // The element to write at i (the view grows to hold it).
  tide::Tensor Set(size_t i) {
    size_ = std::max(size_, i + 1);
    own_.erase(i);
    return tide::Tensor(own_[i].c());
  }
  // Element i holds nothing from now on (the outer array keeps its own).
  void Clear(size_t i) {
    if (i >= size_) return;
    own_.erase(i);
    own_[i];  // an empty tensor: cleared
  }
  // The elements the step wrote (and cleared: those hold nothing), by index.
  const Changes& written() const { return own_; }
  Changes TakeWritten() { return std::move(own_); }

  // Fills the variable with the elements the view shows, shared, and ends the view.
  void Materialize() {
    if (!attached_) return;
    Detach();
    tide::TensorArray local = var_.GetTensorArray();
    local.resize(0);
    local.resize(size_);
    for (size_t i = 0; i < size_; ++i) {
      tide::Tensor t = Get(i);
      if (!t) continue;
      local.at(i).ShareDataWith(t);
      local.at(i).set_lod(t.lod());
    }
    own_.clear();
  }

 private:
  void Detach() {
    if (!attached_) return;
    std::lock_guard<std::mutex> lock(detail::ViewsMutex());
    detail::Views().erase(var_.c());
    attached_ = false;
  }

  tide::Variable var_;
  std::optional<tide::TensorArray> base_;
  const Changes* later_;
  size_t size_;
  Changes own_;  // written or cleared by the step
  bool attached_ = true;
};

// The view standing in for `var`, or nullptr.
inline ArrayView* FindView(const tide::Variable& var) {
  std::lock_guard<std::mutex> lock(detail::ViewsMutex());
  auto it = detail::Views().find(var.c());
  return it == detail::Views().end() ? nullptr : it->second;
}

// For an op that takes the whole array: the variable filled as the view shows it, view ended.
inline void MaterializeView(const tide::Variable& var) {
  if (ArrayView* v = FindView(var)) v->Materialize();
}

}  // namespace ops_control
