// name_table.h: interns names (place kinds, kernel libraries) to dense ids, stable for the
// process and safe to use from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tide::core {

class NameTable {
 public:
  int32_t Intern(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    int32_t id = static_cast<int32_t>(names_.size());
    names_.push_back(name);
    ids_.emplace(name, id);
    return id;
  }
  // "?" for an id never handed out.
  const std::string& Name(int32_t id) const {
    static const std::string unknown = "?";
    std::lock_guard<std::mutex> lock(mu_);
    return id >= 0 && id < static_cast<int32_t>(names_.size()) ? names_[id] : unknown;
  }

 private:
  mutable std::mutex mu_;
  std::deque<std::string> names_;  // deque: references stay valid as it grows
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace tide::core
