// tide/plugin/scope.hpp: variables and scopes: tide::Variable (what a variable holds),
// tide::Scope, and tide::StepScopes (the scopes a control-flow op ran its block in).
#ifndef TIDE_PLUGIN_SCOPE_HPP_
#define TIDE_PLUGIN_SCOPE_HPP_

#include <string>
#include <tide/plugin/host.hpp>
#include <tide/plugin/tensor.hpp>

namespace tide {

class Scope;

// The scopes a control-flow op ran its block in, kept in a variable for its gradient op.
class StepScopes {
 public:
  explicit StepScopes(TideStepScopes* s) : s_(s) {}
  size_t size() const { return Host().StepScopes_Size(s_); }
  inline Scope at(size_t i) const;
  // A new child scope of `parent`, appended.
  inline Scope Push(const Scope& parent);
  // Deletes every listed scope from its parent.
  void Clear() { Host().StepScopes_Clear(s_); }

 private:
  TideStepScopes* s_;
};

class Variable {
 public:
  explicit Variable(TideVariable* v) : v_(v) {}
  TideVariable* c() const { return v_; }
  explicit operator bool() const { return v_ != nullptr; }
  TideVarType type() const { return Host().Variable_Type(v_); }
  bool IsTensor() const { return type() == TIDE_VAR_LOD_TENSOR; }
  bool IsSelectedRows() const { return type() == TIDE_VAR_SELECTED_ROWS; }
  Tensor GetTensor() const {
    TideTensor* t = nullptr;
    ThrowIfError(Host().Variable_GetTensor(v_, &t));
    return Tensor(t);
  }
  SelectedRows GetSelectedRows() const {
    TideSelectedRows* s = nullptr;
    ThrowIfError(Host().Variable_GetSelectedRows(v_, &s));
    return SelectedRows(s);
  }
  TensorArray GetTensorArray() const {
    TideTensorArray* a = nullptr;
    ThrowIfError(Host().Variable_GetTensorArray(v_, &a));
    return TensorArray(a);
  }
  bool IsTensorArray() const { return type() == TIDE_VAR_LOD_TENSOR_ARRAY; }
  // A LoDRankTable as an int64 CPU tensor [n, 2] of (sequence index, length) rows, longest
  // first; its LoD is the table's coarse LoD.
  Tensor GetRankTable() const {
    TideTensor* t = nullptr;
    ThrowIfError(Host().Variable_GetRankTable(v_, &t));
    return Tensor(t);
  }
  bool IsRankTable() const { return type() == TIDE_VAR_LOD_RANK_TABLE; }
  StepScopes GetStepScopes() const {
    TideStepScopes* ss = nullptr;
    ThrowIfError(Host().Variable_GetStepScopes(v_, &ss));
    return StepScopes(ss);
  }

 private:
  TideVariable* v_;
};

class Scope {
 public:
  explicit Scope(TideScope* s) : s_(s) {}
  TideScope* c() const { return s_; }
  Variable FindVar(const std::string& name) const {
    return Variable(Host().Scope_FindVar(s_, name.c_str()));
  }
  Variable Var(const std::string& name) { return Variable(Host().Scope_Var(s_, name.c_str())); }
  // `name` in this scope only, not its parents.
  Variable FindLocalVar(const std::string& name) const {
    return Variable(Host().Scope_FindLocalVar(s_, name.c_str()));
  }
  Scope NewScope() { return Scope(Host().Scope_NewScope(s_)); }
  void DropKids() { Host().Scope_DropKids(s_); }

 private:
  TideScope* s_;
};

Scope StepScopes::at(size_t i) const {
  TideScope* sc = Host().StepScopes_At(s_, i);
  if (!sc) TIDE_THROW(TIDE_OUT_OF_RANGE, "step scope ", i, " >= size ", size());
  return Scope(sc);
}
Scope StepScopes::Push(const Scope& parent) {
  return Scope(Host().StepScopes_Push(s_, parent.c()));
}

}  // namespace tide

#endif  // TIDE_PLUGIN_SCOPE_HPP_
