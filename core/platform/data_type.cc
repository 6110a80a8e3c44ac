// data_type.cc: names and sizes of data types, layouts and variable types.
#include "core/platform/data_type.h"

#include <unordered_map>

#include "core/platform/enforce.h"

namespace tide::core {

const char* DataTypeName(DataType t) {
  switch (t) {
    case TIDE_BOOL: return "bool";
    case TIDE_INT8: return "int8";
    case TIDE_UINT8: return "uint8";
    case TIDE_INT16: return "int16";
    case TIDE_INT32: return "int32";
    case TIDE_INT64: return "int64";
    case TIDE_FP16: return "float16";
    case TIDE_BF16: return "bfloat16";
    case TIDE_FP32: return "float32";
    case TIDE_FP64: return "float64";
    default: return "undefined";
  }
}

DataType ParseDataType(const std::string& name) {
  static const std::unordered_map<std::string, DataType> names = {
      {"bool", TIDE_BOOL},     {"int8", TIDE_INT8},       {"uint8", TIDE_UINT8},
      {"int16", TIDE_INT16},   {"int32", TIDE_INT32},     {"int64", TIDE_INT64},
      {"float16", TIDE_FP16},  {"fp16", TIDE_FP16},       {"bfloat16", TIDE_BF16},
      {"bf16", TIDE_BF16},     {"float32", TIDE_FP32},    {"fp32", TIDE_FP32},
      {"float", TIDE_FP32},    {"float64", TIDE_FP64},    {"fp64", TIDE_FP64},
      {"double", TIDE_FP64},   {"int", TIDE_INT32},       {"long", TIDE_INT64}};
  auto it = names.find(name);
  if (it == names.end()) TIDE_FAIL(TIDE_INVALID_ARGUMENT, "unknown data type '", name, "'");
  return it->second;
}

bool IsValidDataType(int v) {
  return (v >= TIDE_BOOL && v <= TIDE_FP64) || v == TIDE_UINT8 || v == TIDE_INT8 ||
         v == TIDE_BF16;
}

const char* LayoutName(TideLayout l) {
  switch (l) {
    case TIDE_LAYOUT_ANY: return "ANY";
    case TIDE_LAYOUT_NCHW: return "NCHW";
    case TIDE_LAYOUT_NHWC: return "NHWC";
    case TIDE_LAYOUT_OPAQUE: return "OPAQUE";
  }
  return "?";
}

const char* VarTypeName(TideVarType t) {
  switch (t) {
    case TIDE_VAR_UNINITIALIZED: return "UNINITIALIZED";
    case TIDE_VAR_LOD_TENSOR: return "LOD_TENSOR";
    case TIDE_VAR_SELECTED_ROWS: return "SELECTED_ROWS";
    case TIDE_VAR_FEED_MINIBATCH: return "FEED_MINIBATCH";
    case TIDE_VAR_FETCH_LIST: return "FETCH_LIST";
    case TIDE_VAR_STEP_SCOPES: return "STEP_SCOPES";
    case TIDE_VAR_LOD_RANK_TABLE: return "LOD_RANK_TABLE";
    case TIDE_VAR_LOD_TENSOR_ARRAY: return "LOD_TENSOR_ARRAY";
    case TIDE_VAR_RAW: return "RAW";
  }
  return "?";
}

}  // namespace tide::core
