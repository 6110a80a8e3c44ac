// ring_store.cc: prefixed keys and waits that name the missing ranks.
#include "ring_store.h"

#include <algorithm>
#include <cctype>
#include <tide/plugin.hpp>

namespace tide_collective {
namespace {

// Gloo's full-mesh keys: "<rank>" (or "<rank>/<peer>" in older Gloo) hold a rank's addresses.
// Returns the rank a key belongs to, or "" for another key.
std::string RankOfKey(const std::string& key) {
  const std::string head = key.substr(0, key.find('/'));
  const bool digits = !head.empty() && std::all_of(head.begin(), head.end(),
                                                   [](unsigned char c) { return std::isdigit(c); });
  const std::string tail = key.find('/') == std::string::npos ? "0" : key.substr(key.find('/') + 1);
  const bool tail_digits =
      !tail.empty() &&
      std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return std::isdigit(c); });
  return digits && tail_digits ? head : "";
}

}  // namespace

RingStore::RingStore(std::shared_ptr<gloo::rendezvous::Store> store, std::string prefix,
                     int ring_id)
    : store_(std::move(store)), prefix_(std::move(prefix)), ring_id_(ring_id) {}

void RingStore::set(const std::string& key, const std::vector<char>& data) {
  store_->set(Full(key), data);
}

std::vector<char> RingStore::get(const std::string& key) { return store_->get(Full(key)); }

void RingStore::wait(const std::vector<std::string>& keys) {
  wait(keys, gloo::rendezvous::Store::kDefaultTimeout);
}

std::vector<std::string> RingStore::Missing(const std::vector<std::string>& keys,
                                            std::chrono::steady_clock::time_point deadline) {
  std::vector<std::string> missing;
  for (const auto& key : keys) {
    const auto left = std::max(std::chrono::milliseconds(1),
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   deadline - std::chrono::steady_clock::now()));
    try {
      store_->wait({Full(key)}, left);
    } catch (const tide::Error& e) {
      if (e.code() != TIDE_UNAVAILABLE ||
          std::string(e.what()).find("not set within") == std::string::npos)
        throw;  // the store itself failed
      missing.push_back(key);
    } catch (const std::exception&) {  // Gloo's FileStore: a timeout is its only failure
      missing.push_back(key);
    }
  }
  return missing;
}

void RingStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
  const auto missing = Missing(keys, std::chrono::steady_clock::now() + timeout);
  if (missing.empty()) return;
  std::string ranks, others;
  for (const auto& k : missing) {
    const std::string r = RankOfKey(k);
    if (r.empty())
      others += " '" + k + "'";
    else if ((ranks + " ").find(" " + r + " ") == std::string::npos)
      ranks += " " + r;
  }
  if (!ranks.empty())
    TIDE_THROW(TIDE_UNAVAILABLE, "ring ", ring_id_, ": rank(s)", ranks, " did not join within ",
               timeout.count(),
               " ms (their addresses never reached the rendezvous store; are "
               "they running, with the same world size and master?)");
  TIDE_THROW(TIDE_UNAVAILABLE, "ring ", ring_id_, ": key(s)", others, " not set within ",
             timeout.count(), " ms");
}

}  // namespace tide_collective
