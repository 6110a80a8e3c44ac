// tide/ops/fc.hpp: the shape rule of Paddle's fc (the op its fc_fuse_pass makes of a matmul and a
// bias add): Input flattened at in_num_col_dims to [M, K], W [K, N], Bias N values, Out
// Input's first in_num_col_dims dims then N; with its errors, for every implementation.
#ifndef TIDE_OPS_FC_HPP_
#define TIDE_OPS_FC_HPP_

#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

struct FcShape {
  int64_t m = 0, k = 0, n = 0;  // -1 where unknown (compile time)
  Dims out;
};

inline FcShape GetFcShape(const char* op, const Dims& input, const Dims& w, int in_num_col_dims) {
  TIDE_CHECK(in_num_col_dims >= 1 && in_num_col_dims < static_cast<int>(input.size()), "op '", op,
             "': in_num_col_dims ", in_num_col_dims, " must be in [1, rank) for Input ",
             ToString(input));
  TIDE_CHECK(w.size() == 2, "op '", op, "': W must be [K, N], got ", ToString(w));
  FcShape s;
  s.m = DimsProductOrUnknown(input, 0, in_num_col_dims);
  s.k = DimsProductOrUnknown(input, in_num_col_dims, input.size());
  s.n = w[1];
  TIDE_CHECK(DimsCompatible(s.k, w[0]), "op '", op, "': Input ", ToString(input),
             " flattened at in_num_col_dims ", in_num_col_dims, " has ", s.k, " columns, W ",
             ToString(w), " has ", w[0], " rows");
  if (s.k < 0) s.k = w[0];
  s.out.assign(input.begin(), input.begin() + in_num_col_dims);
  s.out.push_back(s.n);
  return s;
}

// Bias must hold N values ([N] or [1, N], as Paddle's fc takes).
inline void CheckFcBias(const char* op, const Dims& bias, int64_t n) {
  const int64_t count = DimsProductOrUnknown(bias);
  TIDE_CHECK(count < 0 || n < 0 || (count == n && bias.back() == n), "op '", op,
             "': Bias must hold N = ", n, " values ([N] or [1, N]), got ", ToString(bias));
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_FC_HPP_
