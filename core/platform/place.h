// place.h: where data lives. A place kind is an open set of names ("cpu", a vendor's
// kind) interned to small ids; device plugins register them, the core knows none.
#pragma once

#include <tide/plugin_api.h>

#include <cstdint>
#include <functional>
#include <string>

namespace tide::core {

// The kind name of host memory. Device plugins that provide it mark it host-accessible; the core
// uses the name only to put fed and fetched data on the host.
constexpr const char* kHostPlaceKind = "cpu";

// Interns a kind name; ids are dense, stable for the process, thread-safe.
int32_t PlaceKindId(const std::string& name);
// The name of an id, or "?" for an unknown one.
const std::string& PlaceKindName(int32_t id);

struct Place {
  int32_t kind = -1;
  int32_t device = 0;

  Place() = default;
  Place(int32_t k, int32_t d) : kind(k), device(d) {}
  Place(const std::string& kind_name, int32_t d) : kind(PlaceKindId(kind_name)), device(d) {}
  explicit Place(const TidePlace& p) : kind(p.kind), device(p.device) {}
  TidePlace c() const { return TidePlace{kind, device}; }

  bool valid() const { return kind >= 0; }
  const std::string& kind_name() const { return PlaceKindName(kind); }
  std::string ToString() const;  // "cpu:0"
  bool operator==(const Place& o) const { return kind == o.kind && device == o.device; }
  bool operator!=(const Place& o) const { return !(*this == o); }
  bool operator<(const Place& o) const {
    return kind != o.kind ? kind < o.kind : device < o.device;
  }
};

inline Place HostPlace() { return Place(kHostPlaceKind, 0); }

// Parses "cpu", "cpu:0", "npu:1".
Place ParsePlace(const std::string& text);

struct PlaceHash {
  size_t operator()(const Place& p) const {
    return std::hash<int64_t>()((int64_t(p.kind) << 32) | uint32_t(p.device));
  }
};

}  // namespace tide::core
