// attr_convert.cc: attribute conversions between Python and the core.
#include "attr_convert.h"

#include <pybind11/stl.h>

#include <climits>

#include "core/ir/block_desc.h"
#include "core/platform/enforce.h"

namespace tide::python {
namespace {

bool IsBool(py::handle v) { return PyBool_Check(v.ptr()); }
bool IsInt(py::handle v) { return !IsBool(v) && (PyLong_Check(v.ptr()) || PyIndex_Check(v.ptr())); }
bool IsFloat(py::handle v) {
  return PyFloat_Check(v.ptr()) ||
         (!IsInt(v) && !IsBool(v) && PyNumber_Check(v.ptr()) && py::hasattr(v, "__float__"));
}
bool IsStr(py::handle v) { return py::isinstance<py::str>(v); }
bool IsBlock(py::handle v) { return py::isinstance<core::BlockDesc>(v); }

int64_t ToInt(py::handle v) {
  return py::cast<int64_t>(py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr())));
}

}  // namespace

core::Attribute PyToAttr(py::handle v) {
  if (IsBool(v)) return v.cast<bool>();
  if (IsInt(v)) {
    int64_t x = ToInt(v);
    if (x >= INT32_MIN && x <= INT32_MAX) return static_cast<int32_t>(x);
    return x;
  }
  if (IsStr(v)) return v.cast<std::string>();
  if (IsBlock(v)) return core::BlockIndex{v.cast<core::BlockDesc*>()->idx()};
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(v);
    std::vector<py::handle> items(seq.begin(), seq.end());
    auto all = [&](auto pred) { return std::all_of(items.begin(), items.end(), pred); };
    if (items.empty()) return std::vector<int32_t>{};
    if (all(IsBool)) {
      std::vector<bool> out;
      for (auto h : items) out.push_back(h.cast<bool>());
      return out;
    }
    if (all(IsInt)) {
      std::vector<int64_t> longs;
      bool fits = true;
      for (auto h : items) {
        longs.push_back(ToInt(h));
        fits = fits && longs.back() >= INT32_MIN && longs.back() <= INT32_MAX;
      }
      if (!fits) return longs;
      return std::vector<int32_t>(longs.begin(), longs.end());
    }
    if (all([](py::handle h) { return IsInt(h) || IsFloat(h); })) {  // exact: float64
      std::vector<double> out;
      for (auto h : items)
        out.push_back(py::cast<double>(py::float_(py::reinterpret_borrow<py::object>(h))));
      return out;
    }
    if (all(IsStr)) {
      std::vector<std::string> out;
      for (auto h : items) out.push_back(h.cast<std::string>());
      return out;
    }
    if (all(IsBlock)) {
      std::vector<core::BlockIndex> out;
      for (auto h : items) out.push_back(core::BlockIndex{h.cast<core::BlockDesc*>()->idx()});
      return out;
    }
    TIDE_FAIL(TIDE_INVALID_ARGUMENT,
              "an attribute list must hold only bools, numbers, strings or blocks: ",
              py::str(v).cast<std::string>());
  }
  // Python floats are doubles: kept exact, rounded only for an attribute declared float.
  if (IsFloat(v)) return py::cast<double>(py::float_(py::reinterpret_borrow<py::object>(v)));
  TIDE_FAIL(TIDE_INVALID_ARGUMENT, "cannot use a ",
            py::str(v.get_type().attr("__name__")).cast<std::string>(),
            " as an op attribute: ", py::repr(v).cast<std::string>());
}

py::object AttrToPy(const core::Attribute& a) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, core::BlockIndex>) {
          return py::int_(x.idx);
        } else if constexpr (std::is_same_v<T, std::vector<core::BlockIndex>>) {
          py::list l;
          for (const auto& b : x) l.append(b.idx);
          return l;
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          py::list l;
          for (bool b : x) l.append(py::bool_(b));
          return l;
        } else {
          return py::cast(x);
        }
      },
      a);
}

}  // namespace tide::python
