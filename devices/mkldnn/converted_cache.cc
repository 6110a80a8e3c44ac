// converted_cache.cc: the LRU map of converted input copies (see converted_cache.h).
#include "converted_cache.h"

namespace tide_mkldnn {

std::shared_ptr<ConvertedCopy> ConvertedCache::Find(const std::string& key,
                                                    uint64_t content_version) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(key);
  if (it == map_.end() || it->second->second->content_version != content_version) {
    ++misses_;
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  ++hits_;
  return it->second->second;
}

void ConvertedCache::Put(const std::string& key, std::shared_ptr<ConvertedCopy> copy) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(key);
  if (it != map_.end()) {
    it->second->second = std::move(copy);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(key, std::move(copy));
  map_[key] = lru_.begin();
  while (map_.size() > capacity_) {
    map_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

size_t ConvertedCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return map_.size();
}
uint64_t ConvertedCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}
uint64_t ConvertedCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

}  // namespace tide_mkldnn
