// shape_cache.cc: see shape_cache.h.
#include "core/executor/shape_cache.h"

#include "core/executor/op_instance.h"

namespace tide::core {

void ShapeCache::Watch(const std::vector<ArgBinding>& inputs,
                       const std::vector<ArgBinding>& outputs) {
  for (const auto* list : {&inputs, &outputs})
    for (const auto& b : *list)
      for (const Variable* v : b.vars) {
        if (!v) continue;
        if (!v->IsType<LoDTensor>()) {
          cacheable_ = false;
          watched_.clear();
          return;
        }
        watched_.push_back(&v->Get<LoDTensor>());
      }
  versions_.assign(watched_.size(), UINT64_MAX);
}

}  // namespace tide::core
