// tide/ops/metric.hpp: top_k's output dims and the run-time checks of top_k_grad and accuracy,
// shared by every device.
#ifndef TIDE_OPS_METRIC_HPP_
#define TIDE_OPS_METRIC_HPP_

#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <cstdint>
#include <utility>

namespace tide {
namespace ops {

// top_k: Out and Indices are X's dims with the last one k, which must be in [1, D]; k null:
// unknown until run time (the K input), the last dim -1.
inline Dims TopKOutDims(const char* op, const Dims& x, const int64_t* k) {
  TIDE_CHECK(!x.empty(), "op '", op, "': X must have rank >= 1");
  if (k)
    TIDE_CHECK(*k >= 1 && (x.back() < 0 || *k <= x.back()), "op '", op, "': k = ", *k,
               " must be in [1, the last dim of X ", ToString(x), "]");
  Dims out = x;
  out.back() = k ? *k : -1;
  return out;
}

// top_k_grad: X seen as `rows` rows of `d`; Indices and Out@GRAD hold k values per row.
struct TopKGradView {
  int64_t rows, d, k;
};
inline TopKGradView GetTopKGradView(const char* op, const Dims& x, const Dims& indices,
                                    const Dims& dout) {
  TIDE_CHECK(!x.empty() && !indices.empty(), "op '", op, "': X ", ToString(x), " and Indices ",
             ToString(indices), " must have rank >= 1");
  const int64_t d = x.back(), k = indices.back();
  const int64_t rows = d ? DimsProduct(x) / d : 0;
  TIDE_CHECK(DimsProduct(dout) == rows * k && DimsProduct(indices) == rows * k, "op '", op,
             "': Out@GRAD ", ToString(dout), " and Indices ", ToString(indices), " must hold ", k,
             " values per row of X ", ToString(x));
  return {rows, d, k};
}

// accuracy: Indices [N, k] and Label [N, 1]; returns {N, k}.
inline std::pair<int64_t, int64_t> CheckAccuracyInputs(const char* op, const Dims& indices,
                                                       const Dims& label) {
  TIDE_CHECK(indices.size() == 2 && DimsProduct(label) == indices[0], "op '", op, "': Indices ",
             ToString(indices), " and Label ", ToString(label), " must be [N, k] and [N, 1]");
  return {indices[0], indices[1]};
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_METRIC_HPP_
