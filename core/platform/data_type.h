// data_type.h: element types (the C ABI's TideDataType) and layouts: sizes and names.
#pragma once

#include <tide/plugin_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tide::core {

using DataType = TideDataType;

// Bytes per element; 0 for TIDE_UNDEFINED. Inline: every allocation asks.
inline size_t SizeOf(DataType t) {
  switch (t) {
    case TIDE_BOOL: case TIDE_INT8: case TIDE_UINT8: return 1;
    case TIDE_INT16: case TIDE_FP16: case TIDE_BF16: return 2;
    case TIDE_INT32: case TIDE_FP32: return 4;
    case TIDE_INT64: case TIDE_FP64: return 8;
    default: return 0;
  }
}
const char* DataTypeName(DataType t);  // "float32"
// Accepts "float32", "fp32", "float", "int64", ...; throws on an unknown name.
DataType ParseDataType(const std::string& name);
bool IsValidDataType(int value);

const char* LayoutName(TideLayout l);  // "NCHW"
const char* VarTypeName(TideVarType t);  // "LOD_TENSOR"

template <typename T>
constexpr DataType DataTypeOf();
template <> constexpr DataType DataTypeOf<bool>() { return TIDE_BOOL; }
template <> constexpr DataType DataTypeOf<int8_t>() { return TIDE_INT8; }
template <> constexpr DataType DataTypeOf<uint8_t>() { return TIDE_UINT8; }
template <> constexpr DataType DataTypeOf<int16_t>() { return TIDE_INT16; }
template <> constexpr DataType DataTypeOf<int32_t>() { return TIDE_INT32; }
template <> constexpr DataType DataTypeOf<int64_t>() { return TIDE_INT64; }
template <> constexpr DataType DataTypeOf<float>() { return TIDE_FP32; }
template <> constexpr DataType DataTypeOf<double>() { return TIDE_FP64; }

}  // namespace tide::core
