// tide/plugin/attr_type.hpp: each TideAttrType's name ("int", "floats", "block"...), as errors
// about attributes print it. Plugins and the core read this one function; it includes nothing but
// the C ABI.
#ifndef TIDE_PLUGIN_ATTR_TYPE_HPP_
#define TIDE_PLUGIN_ATTR_TYPE_HPP_

#include <tide/plugin_api.h>

namespace tide {

constexpr const char* AttrTypeName(TideAttrType t) {
  switch (t) {
    case TIDE_ATTR_INT:
      return "int";
    case TIDE_ATTR_FLOAT:
      return "float";
    case TIDE_ATTR_STRING:
      return "string";
    case TIDE_ATTR_INTS:
      return "ints";
    case TIDE_ATTR_FLOATS:
      return "floats";
    case TIDE_ATTR_STRINGS:
      return "strings";
    case TIDE_ATTR_BOOLEAN:
      return "bool";
    case TIDE_ATTR_BOOLEANS:
      return "bools";
    case TIDE_ATTR_BLOCK:
      return "block";
    case TIDE_ATTR_LONG:
      return "long";
    case TIDE_ATTR_BLOCKS:
      return "blocks";
    case TIDE_ATTR_LONGS:
      return "longs";
    case TIDE_ATTR_FLOAT64:
      return "float64";
    case TIDE_ATTR_FLOAT64S:
      return "float64s";
  }
  return "?";  // a value outside the enum
}

}  // namespace tide

#endif  // TIDE_PLUGIN_ATTR_TYPE_HPP_
