// shape_cache.h: when an op's shapes must be inferred again at run time: only when a tensor it
// reads or writes changed dims or LoD (LoDTensor::version()) since its last run, so a steady run
// infers no shape at all.
#pragma once

#include <cstdint>
#include <vector>

#include "core/framework/tensor.h"

namespace tide::core {

struct ArgBinding;

class ShapeCache {
 public:
  // True when no tensor of `inputs` and `outputs` changed since Remember(): inference can be
  // skipped. The first call after Reset() watches them (and says false); an op bound to anything
  // but tensors is never cached. Inline: the run loop asks for every op.
  bool Unchanged(const std::vector<ArgBinding>& inputs, const std::vector<ArgBinding>& outputs) {
    if (!cacheable_) return false;
    if (watched_.empty()) {
      Watch(inputs, outputs);
      return false;
    }
    for (size_t i = 0; i < watched_.size(); ++i)
      if (watched_[i]->version() != versions_[i]) return false;
    return true;
  }
  // After the op ran: the versions its shapes now hold for.
  void Remember() {
    for (size_t i = 0; i < watched_.size(); ++i) versions_[i] = watched_[i]->version();
  }
  // Forgets everything (a new binding, a new kernel): the next run infers shapes again.
  void Reset() {
    watched_.clear();
    versions_.clear();
    cacheable_ = true;
  }

 private:
  void Watch(const std::vector<ArgBinding>& inputs, const std::vector<ArgBinding>& outputs);

  bool cacheable_ = true;  // false when an input/output is not a LoDTensor
  std::vector<const LoDTensor*> watched_;
  std::vector<uint64_t> versions_;
};

}  // namespace tide::core
