// tide/ops/tril_triu.hpp: tril_triu (Paddle 2.x's paddle.tril / paddle.triu) and its grad as
// every implementation reads them: X of rank >= 2 seen as a batch of [rows, cols] matrices, the
// element (i, j) kept where j - i <= diagonal (lower) or j - i >= diagonal (upper), else 0; the
// grad masks Out@GRAD the same way.
#ifndef TIDE_OPS_TRIL_TRIU_HPP_
#define TIDE_OPS_TRIL_TRIU_HPP_

#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// Checks X's rank (unknown dims pass).
inline void CheckTrilTriuDims(const char* op, const Dims& x) {
  TIDE_CHECK(x.size() >= 2, "op '", op, "': X must have rank >= 2 (a batch of matrices), got ",
             ToString(x));
}

struct TrilTriuShape {
  int64_t rows, cols;  // X's last two dims
  int64_t diagonal;
  bool lower;

  // Whether flat element e (of a contiguous X) keeps its value.
  TIDE_OPS_HOST_DEVICE bool Keeps(int64_t e) const {
    const int64_t j = e % cols, i = (e / cols) % rows;
    return lower ? j - i <= diagonal : j - i >= diagonal;
  }
};

// `dims`: X's (forward) or Out@GRAD's (grad).
inline TrilTriuShape GetTrilTriuShape(const KernelContext& ctx, const Dims& dims) {
  CheckTrilTriuDims(ctx.op_type(), dims);
  return {dims[dims.size() - 2], dims.back(), static_cast<int64_t>(ctx.Attr<int32_t>("diagonal")),
          ctx.Attr<bool>("lower")};
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_TRIL_TRIU_HPP_
