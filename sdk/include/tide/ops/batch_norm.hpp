// tide/ops/batch_norm.hpp: batch_norm's view of X: [outer, C, inner], where NCHW is [N, C, H*W] and
// NHWC is [N*H*W, C, 1] (-1 where unknown at compile time).
#ifndef TIDE_OPS_BATCH_NORM_HPP_
#define TIDE_OPS_BATCH_NORM_HPP_

#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <cstdint>
#include <string>

namespace tide {
namespace ops {

struct BnView {
  int64_t outer, c, inner;
};

// X of rank 2 to 5 in `layout` ("NHWC", else channels second) as [outer, C, inner].
inline BnView GetBnView(const char* op, const Dims& x, const std::string& layout) {
  TIDE_CHECK(x.size() >= 2 && x.size() <= 5, "op '", op, "': X must have rank 2 to 5, got ",
             ToString(x));
  if (layout == "NHWC") return {DimsProductOrUnknown(x, 0, x.size() - 1), x.back(), 1};
  return {x[0], x[1], DimsProductOrUnknown(x, 2, x.size())};
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_BATCH_NORM_HPP_
