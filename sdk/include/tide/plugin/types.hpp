// tide/plugin/types.hpp: the value types every part of the SDK uses: tide::Dims (a shape),
// tide::LoD (sequence offsets), tide::Place (a device kind and ordinal), and the data types
// (tide/plugin/data_type.hpp).
#ifndef TIDE_PLUGIN_TYPES_HPP_
#define TIDE_PLUGIN_TYPES_HPP_

#include <cstdint>
#include <string>
#include <tide/plugin/data_type.hpp>
#include <tide/plugin/host.hpp>
#include <vector>

namespace tide {

using Dims = std::vector<int64_t>;
using LoD = std::vector<std::vector<uint64_t>>;

namespace detail {
inline std::string DimsToString(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}
}  // namespace detail

inline std::string ToString(const Dims& d) { return detail::DimsToString(d); }

// A place: a view of the C value, with its kind's name from the host.
class Place {
 public:
  Place() : p_{-1, 0} {}
  Place(TidePlace p) : p_(p) {}  // NOLINT: a view of the C value
  Place(const char* kind, int32_t device) : p_{Host().PlaceKind_Id(kind), device} {}
  const TidePlace& c() const { return p_; }
  int32_t kind() const { return p_.kind; }
  int32_t device() const { return p_.device; }
  std::string kind_name() const {
    const char* n = Host().PlaceKind_Name(p_.kind);
    return n ? n : "?";
  }
  std::string ToString() const { return kind_name() + ":" + std::to_string(p_.device); }
  bool operator==(const Place& o) const { return p_.kind == o.p_.kind && p_.device == o.p_.device; }
  bool operator!=(const Place& o) const { return !(*this == o); }

 private:
  TidePlace p_;
};

}  // namespace tide

#endif  // TIDE_PLUGIN_TYPES_HPP_
