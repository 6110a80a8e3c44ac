// scope.h: the hierarchical name -> Variable map of Fluid's Scope. FindVar walks up to the
// parents; kids are owned by their parent. Lookups may run concurrently with each other and with
// creation.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/framework/variable.h"

namespace tide::core {

class Scope {
 public:
  Scope() = default;
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // Finds `name` in this scope only, creating it when absent.
  Variable* Var(const std::string& name);
  // Finds `name` here or in an ancestor; nullptr when absent.
  Variable* FindVar(const std::string& name) const;
  Variable* FindLocalVar(const std::string& name) const;
  // The scope (this or an ancestor) that holds `var`; nullptr when none.
  const Scope* FindScope(const Variable* var) const;
  // Removes local variables by name (absent names are ignored). Bumps the erase epoch.
  void EraseVars(const std::vector<std::string>& names);
  // Counts EraseVars calls in the process: bindings to variables (the executor's) made before
  // a change of it may point at erased ones and must be made again.
  static uint64_t EraseEpoch();

  // A child scope owned by this one.
  Scope& NewScope() const;
  void DeleteScope(Scope* kid) const;
  void DropKids();
  size_t NumKids() const;
  const Scope* parent() const { return parent_; }

  std::vector<std::string> LocalVarNames() const;
  // Unique for the process (never reused, unlike an address): what bindings to a scope are keyed
  // by.
  uint64_t serial() const { return serial_; }
  // A standalone scope whose lookups fall through to `parent` but that `parent` does not own
  // (the executor's per-program local scope).
  static std::unique_ptr<Scope> NewDetached(const Scope* parent);

 private:
  explicit Scope(const Scope* parent) : parent_(parent) {}

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Variable>> vars_;
  mutable std::list<std::unique_ptr<Scope>> kids_;
  const Scope* parent_ = nullptr;
  const uint64_t serial_ = NextSerial();
  static uint64_t NextSerial();
};

}  // namespace tide::core
