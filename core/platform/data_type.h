// data_type.h: element types (the C ABI's TideDataType) and layouts: sizes and names. The data
// types' names and sizes are the SDK's one table (tide/plugin/data_type.hpp), read here.
#pragma once

#include <tide/plugin_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tide/plugin/data_type.hpp>

namespace tide::core {

using DataType = TideDataType;

// Bytes per element; 0 for TIDE_UNDEFINED. Inline: every allocation asks.
inline size_t SizeOf(DataType t) { return ::tide::DataTypeSize(t); }
using ::tide::DataTypeName;  // "float32"; "undefined" for TIDE_UNDEFINED
// Accepts "float32", "fp32", "float", "int64", ...; throws on an unknown name.
DataType ParseDataType(const std::string& name);
bool IsValidDataType(int value);
// float16 and bfloat16: the types that run a float32 kernel when they have none of their own.
inline bool IsLowPrecision(DataType t) { return t == TIDE_FP16 || t == TIDE_BF16; }
// The floating-point types: float32, float64, float16, bfloat16.
inline bool IsFloatType(DataType t) {
  return t == TIDE_FP32 || t == TIDE_FP64 || IsLowPrecision(t);
}

// complex64 and complex128.
inline bool IsComplexType(DataType t) { return t == TIDE_COMPLEX64 || t == TIDE_COMPLEX128; }

const char* LayoutName(TideLayout l);    // "NCHW"
const char* VarTypeName(TideVarType t);  // "LOD_TENSOR"

using ::tide::DataTypeOf;  // DataTypeOf<float>() == TIDE_FP32

}  // namespace tide::core
