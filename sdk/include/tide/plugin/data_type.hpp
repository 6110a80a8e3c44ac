// tide/plugin/data_type.hpp: the one table of element types: each TideDataType's name and size,
// and the C++ type of each that has one. Plugins, the core (its dtype names, sizes and parsing)
// and the Python package (tide._C.data_types(), behind tide.core's dtype names) all read it, so
// it needs no host table and includes nothing but the C ABI.
#ifndef TIDE_PLUGIN_DATA_TYPE_HPP_
#define TIDE_PLUGIN_DATA_TYPE_HPP_

#include <tide/plugin_api.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tide {

struct DataTypeInfo {
  TideDataType type;
  const char* name;  // the canonical name; numpy's where numpy has the type
  size_t size;       // bytes per element
};

// Every data type of the ABI, in the enum's order.
inline constexpr DataTypeInfo kDataTypes[] = {
    {TIDE_BOOL, "bool", 1},           {TIDE_INT16, "int16", 2},
    {TIDE_INT32, "int32", 4},         {TIDE_INT64, "int64", 8},
    {TIDE_FP16, "float16", 2},        {TIDE_FP32, "float32", 4},
    {TIDE_FP64, "float64", 8},        {TIDE_UINT8, "uint8", 1},
    {TIDE_INT8, "int8", 1},           {TIDE_BF16, "bfloat16", 2},
    {TIDE_COMPLEX64, "complex64", 8}, {TIDE_COMPLEX128, "complex128", 16},
};

// Other spellings ParseDataTypeName accepts (C's and the short ones); never printed.
struct DataTypeAlias {
  const char* name;
  TideDataType type;
};
inline constexpr DataTypeAlias kDataTypeAliases[] = {
    {"fp16", TIDE_FP16}, {"bf16", TIDE_BF16},   {"fp32", TIDE_FP32}, {"float", TIDE_FP32},
    {"fp64", TIDE_FP64}, {"double", TIDE_FP64}, {"int", TIDE_INT32}, {"long", TIDE_INT64},
};

namespace detail {
// kDataTypes' index by enum value, so that a lookup (every allocation asks for a size) is one
// load, not a search.
constexpr int DataTypeCodeLimit() {
  int limit = 0;
  for (const DataTypeInfo& d : kDataTypes)
    if (static_cast<int>(d.type) + 1 > limit) limit = static_cast<int>(d.type) + 1;
  return limit;
}
struct DataTypeIndex {
  signed char entry[DataTypeCodeLimit()];
};
constexpr DataTypeIndex MakeDataTypeIndex() {
  DataTypeIndex index{};
  for (signed char& e : index.entry) e = -1;
  for (size_t i = 0; i < sizeof(kDataTypes) / sizeof(kDataTypes[0]); ++i)
    index.entry[static_cast<int>(kDataTypes[i].type)] = static_cast<signed char>(i);
  return index;
}
inline constexpr DataTypeIndex kDataTypeIndex = MakeDataTypeIndex();
}  // namespace detail

// kDataTypes' index of the data type whose enum value is `code`; -1 for TIDE_UNDEFINED and for
// values that are no data type. (Name and size read the table by index, not through a pointer
// tested against null, so they stay constant expressions under -fsanitize=null.)
constexpr int DataTypeSlot(int code) {
  return code >= 0 && code < detail::DataTypeCodeLimit() ? detail::kDataTypeIndex.entry[code] : -1;
}

// The entry of the data type whose enum value is `code`; nullptr for TIDE_UNDEFINED and for
// values that are no data type.
constexpr const DataTypeInfo* FindDataType(int code) {
  const int slot = DataTypeSlot(code);
  return slot >= 0 ? &kDataTypes[slot] : nullptr;
}

// "float32"; "undefined" for TIDE_UNDEFINED and unknown values.
constexpr const char* DataTypeName(TideDataType t) {
  const int slot = DataTypeSlot(static_cast<int>(t));
  return slot >= 0 ? kDataTypes[slot].name : "undefined";
}

// Bytes per element; 0 for TIDE_UNDEFINED and unknown values.
constexpr size_t DataTypeSize(TideDataType t) {
  const int slot = DataTypeSlot(static_cast<int>(t));
  return slot >= 0 ? kDataTypes[slot].size : 0;
}

// The data type called `name` (a canonical name, or an alias unless `canonical_only`); false
// when there is none.
inline bool ParseDataTypeName(const char* name, TideDataType* out, bool canonical_only = false) {
  if (!name) return false;
  for (const DataTypeInfo& d : kDataTypes) {
    if (std::strcmp(name, d.name) == 0) {
      *out = d.type;
      return true;
    }
  }
  if (canonical_only) return false;
  for (const DataTypeAlias& a : kDataTypeAliases) {
    if (std::strcmp(name, a.name) == 0) {
      *out = a.type;
      return true;
    }
  }
  return false;
}

// The C++ element type's data type: DataTypeOf<float>() == TIDE_FP32. (float16 and bfloat16
// have no standard C++ type: tide/low_precision.hpp adds Eigen's.)
template <typename T>
struct DataTypeTrait;
#define TIDE_DATATYPE_TRAIT(T, V)            \
  template <>                                \
  struct DataTypeTrait<T> {                  \
    static constexpr TideDataType value = V; \
  };
TIDE_DATATYPE_TRAIT(bool, TIDE_BOOL)
TIDE_DATATYPE_TRAIT(int8_t, TIDE_INT8)
TIDE_DATATYPE_TRAIT(uint8_t, TIDE_UINT8)
TIDE_DATATYPE_TRAIT(int16_t, TIDE_INT16)
TIDE_DATATYPE_TRAIT(int32_t, TIDE_INT32)
TIDE_DATATYPE_TRAIT(int64_t, TIDE_INT64)
TIDE_DATATYPE_TRAIT(float, TIDE_FP32)
TIDE_DATATYPE_TRAIT(double, TIDE_FP64)
TIDE_DATATYPE_TRAIT(std::complex<float>, TIDE_COMPLEX64)
TIDE_DATATYPE_TRAIT(std::complex<double>, TIDE_COMPLEX128)
#undef TIDE_DATATYPE_TRAIT

template <typename T>
constexpr TideDataType DataTypeOf() {
  return DataTypeTrait<T>::value;
}

}  // namespace tide

#endif  // TIDE_PLUGIN_DATA_TYPE_HPP_
