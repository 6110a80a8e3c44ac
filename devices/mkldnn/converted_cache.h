// converted_cache.h: copies of kernel inputs in the format a primitive wants (conv filters in
// oneDNN's blocked weights format), kept while the source bytes stay the same. Inference reorders
// each filter once instead of on every run; training, whose optimizer rewrites the filters every
// step, reorders them once per step and shares the copy between the forward and backward convs.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <tide/plugin.hpp>
#include <unordered_map>
#include <utility>

namespace tide_mkldnn {

// One converted copy: the source's content version it was made from and its bytes (memory from
// the core's allocator, so memory statistics count it).
struct ConvertedCopy {
  uint64_t content_version = 0;
  tide::OwnedTensor storage;
  void* data = nullptr;  // 64-byte aligned, inside storage
};

// A bounded, thread-safe LRU map from (source pointer, source and wanted formats) to the latest
// copy. A changed source replaces its entry rather than adding one, so a training loop holds one
// copy per filter; copies being read by another thread stay alive through their shared_ptr.
class ConvertedCache {
 public:
  explicit ConvertedCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // The copy under `key` if it was made from `content_version`, else null.
  std::shared_ptr<ConvertedCopy> Find(const std::string& key, uint64_t content_version);
  // Stores `copy` under `key`, replacing what was there.
  void Put(const std::string& key, std::shared_ptr<ConvertedCopy> copy);

  size_t size() const;
  uint64_t hits() const;
  uint64_t misses() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<ConvertedCopy>>;
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;
  std::unordered_map<std::string, std::list<Entry>::iterator> map_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace tide_mkldnn
