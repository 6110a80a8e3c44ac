// data_type.cc: parsing data-type names (the SDK's table), and the names of layouts and variable
// types.
#include "core/platform/data_type.h"

#include "core/platform/enforce.h"

namespace tide::core {

DataType ParseDataType(const std::string& name) {
  DataType t = TIDE_UNDEFINED;
  if (!ParseDataTypeName(name.c_str(), &t))
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "unknown data type '", name, "'");
  return t;
}

bool IsValidDataType(int v) { return FindDataType(v) != nullptr; }

const char* LayoutName(TideLayout l) {
  switch (l) {
    case TIDE_LAYOUT_ANY:
      return "ANY";
    case TIDE_LAYOUT_NCHW:
      return "NCHW";
    case TIDE_LAYOUT_NHWC:
      return "NHWC";
    case TIDE_LAYOUT_OPAQUE:
      return "OPAQUE";
  }
  return "?";
}

const char* VarTypeName(TideVarType t) {
  switch (t) {
    case TIDE_VAR_UNINITIALIZED:
      return "UNINITIALIZED";
    case TIDE_VAR_LOD_TENSOR:
      return "LOD_TENSOR";
    case TIDE_VAR_SELECTED_ROWS:
      return "SELECTED_ROWS";
    case TIDE_VAR_FEED_MINIBATCH:
      return "FEED_MINIBATCH";
    case TIDE_VAR_FETCH_LIST:
      return "FETCH_LIST";
    case TIDE_VAR_STEP_SCOPES:
      return "STEP_SCOPES";
    case TIDE_VAR_LOD_RANK_TABLE:
      return "LOD_RANK_TABLE";
    case TIDE_VAR_LOD_TENSOR_ARRAY:
      return "LOD_TENSOR_ARRAY";
    case TIDE_VAR_RAW:
      return "RAW";
  }
  return "?";
}

}  // namespace tide::core
