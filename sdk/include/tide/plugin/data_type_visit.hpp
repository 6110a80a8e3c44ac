// tide/plugin/data_type_visit.hpp: tide::VisitDataType, the one switch from a TideDataType to its
// C++ type, for code written once as a template over the element type (a collective's buffers, a
// fill, a print). Apart from data_type.hpp, which includes nothing but the C ABI: this one throws.
// Include it apart (with tide/plugin.hpp).
#ifndef TIDE_PLUGIN_DATA_TYPE_VISIT_HPP_
#define TIDE_PLUGIN_DATA_TYPE_VISIT_HPP_

#include <cstdint>
#include <string>
#include <tide/plugin/data_type.hpp>
#include <tide/plugin/host.hpp>
#include <tide/plugin/registration.hpp>
#include <utility>

namespace tide {

using detail::TypeTag;  // TypeTag<T>::type is T

namespace detail {
template <typename... Ts>
struct TypeList {};

template <typename... Ts>
[[noreturn]] void ThrowNoCppType(TideDataType dtype, const std::string& what) {
  std::string names;
  ((names += std::string(names.empty() ? "" : ", ") + DataTypeName(DataTypeOf<Ts>())), ...);
  TIDE_THROW(TIDE_UNIMPLEMENTED, what, ": data type ", DataTypeName(dtype), " is not supported (",
             names, ")");
}

template <typename... All, typename Fn, typename T, typename... Rest>
decltype(auto) VisitDataTypeOf(TypeList<All...> all, TideDataType dtype, const std::string& what,
                               Fn&& fn, TypeTag<T> tag, TypeTag<Rest>... rest) {
  if (dtype == DataTypeOf<T>()) return std::forward<Fn>(fn)(tag);
  if constexpr (sizeof...(Rest) > 0)
    return VisitDataTypeOf(all, dtype, what, std::forward<Fn>(fn), rest...);
  else
    ThrowNoCppType<All...>(dtype, what);
}

template <typename... Ts, typename Fn>
decltype(auto) VisitDataTypeIn(TideDataType dtype, const std::string& what, Fn&& fn) {
  return VisitDataTypeOf(TypeList<Ts...>{}, dtype, what, std::forward<Fn>(fn), TypeTag<Ts>{}...);
}
}  // namespace detail

// Calls fn(TypeTag<T>{}) with T the C++ type of `dtype` (DataTypeOf<T>() == dtype) and returns
// what fn returns (every instantiation must return the same type). Ts, when given, are the types
// the caller handles; by default every real and integer type with a standard C++ type (a
// complex type only when listed: code written for the real types may compare or order values).
// Another data type (float16, bfloat16, complex64 / complex128 and undefined by default) throws
// TIDE_UNIMPLEMENTED naming `what` (the op, the library), the data type and those handled.
//   tide::VisitDataType(t.dtype(), "op 'print'", [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     Print(static_cast<const T*>(t.raw_data()), t.numel());
//   });
template <typename... Ts, typename Fn>
decltype(auto) VisitDataType(TideDataType dtype, const std::string& what, Fn&& fn) {
  if constexpr (sizeof...(Ts) == 0)
    return detail::VisitDataTypeIn<float, double, int32_t, int64_t, uint8_t, int8_t, int16_t, bool>(
        dtype, what, std::forward<Fn>(fn));
  else
    return detail::VisitDataTypeIn<Ts...>(dtype, what, std::forward<Fn>(fn));
}

}  // namespace tide

#endif  // TIDE_PLUGIN_DATA_TYPE_VISIT_HPP_
