// tide/ops/data_layout.hpp: Fluid's data_format / data_layout attribute (lrn, the interps,
// group_norm, ...): whether the channels are the last dim, with the error every implementation
// gives for a value it does not know.
#ifndef TIDE_OPS_DATA_LAYOUT_HPP_
#define TIDE_OPS_DATA_LAYOUT_HPP_

#include <string>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// "NHWC": channels last; "NCHW" and "AnyLayout" (Fluid's default of lrn): channels second.
inline bool ChannelsLast(const char* op, const char* attr, const std::string& value) {
  TIDE_CHECK(value == "NHWC" || value == "NCHW" || value == "AnyLayout", "op '", op,
             "': attribute '", attr, "' must be NCHW or NHWC, got '", value, "'");
  return value == "NHWC";
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_DATA_LAYOUT_HPP_
