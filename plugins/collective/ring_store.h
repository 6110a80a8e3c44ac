// ring_store.h: one ring's view of the rendezvous store (TCP or Gloo's FileStore): its keys live
// under "ring_<id>/<generation>/", and a wait that runs out of time names the ranks whose keys are
// missing (Gloo's full-mesh connect keys each rank's address by its number).
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace tide_collective {

class RingStore : public gloo::rendezvous::Store {
 public:
  RingStore(std::shared_ptr<gloo::rendezvous::Store> store, std::string prefix, int ring_id);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  // The keys of `keys` still missing after waiting for them all until `deadline`, without
  // throwing; a store that cannot be reached is an exception.
  std::vector<std::string> Missing(const std::vector<std::string>& keys,
                                   std::chrono::steady_clock::time_point deadline);

 private:
  std::string Full(const std::string& key) const { return prefix_ + key; }

  std::shared_ptr<gloo::rendezvous::Store> store_;
  const std::string prefix_;
  const int ring_id_;
};

}  // namespace tide_collective
