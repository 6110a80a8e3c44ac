// scope.cc: Scope operations; a shared mutex lets lookups run in parallel.
#include "core/framework/scope.h"

#include <algorithm>
#include <atomic>
#include <mutex>

namespace tide::core {

Scope::~Scope() { DropKids(); }

uint64_t Scope::NextSerial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Variable* Scope::Var(const std::string& name) {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = vars_.find(name);
    if (it != vars_.end()) return it->second.get();
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto& slot = vars_[name];
  if (!slot) slot = std::make_unique<Variable>();
  return slot.get();
}

Variable* Scope::FindLocalVar(const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second.get();
}

Variable* Scope::FindVar(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_)
    if (Variable* v = s->FindLocalVar(name)) return v;
  return nullptr;
}

const Scope* Scope::FindScope(const Variable* var) const {
  for (const Scope* s = this; s; s = s->parent_) {
    std::shared_lock<std::shared_mutex> lock(s->mu_);
    for (const auto& kv : s->vars_)
      if (kv.second.get() == var) return s;
  }
  return nullptr;
}

namespace {
std::atomic<uint64_t> g_erase_epoch{0};
}  // namespace

uint64_t Scope::EraseEpoch() { return g_erase_epoch.load(std::memory_order_acquire); }

void Scope::EraseVars(const std::vector<std::string>& names) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (const auto& n : names) vars_.erase(n);
  g_erase_epoch.fetch_add(1, std::memory_order_acq_rel);
}

Scope& Scope::NewScope() const {
  std::unique_lock<std::shared_mutex> lock(mu_);
  kids_.push_back(std::unique_ptr<Scope>(new Scope(this)));
  return *kids_.back();
}

void Scope::DeleteScope(Scope* kid) const {
  std::unique_lock<std::shared_mutex> lock(mu_);
  // From the back: the kid deleted is usually the newest (a loop's step scopes, last first).
  for (auto it = kids_.end(); it != kids_.begin();) {
    if ((--it)->get() == kid) {
      kids_.erase(it);
      return;
    }
  }
}

void Scope::DropKids() {
  std::list<std::unique_ptr<Scope>> dropped;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    dropped.swap(kids_);
  }
}

size_t Scope::NumKids() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return kids_.size();
}

std::vector<std::string> Scope::LocalVarNames() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& kv : vars_) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  return names;
}

std::unique_ptr<Scope> Scope::NewDetached(const Scope* parent) {
  return std::unique_ptr<Scope>(new Scope(parent));
}

}  // namespace tide::core
