// tide/ops/matmul_v2.hpp: the shape rule of Paddle 2.x's matmul_v2 (numpy's matmul: trans_x /
// trans_y, batch dims broadcast numpy-style, a 1-D operand is a vector whose unit dim Out drops),
// with its errors, and each operand's matrix for every batch of Out, for every implementation.
#ifndef TIDE_OPS_MATMUL_V2_HPP_
#define TIDE_OPS_MATMUL_V2_HPP_

#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tide {
namespace ops {

// The operands as stacks of matrices: X [batch..., m, k] (before trans_x), Y [batch..., k, n],
// with each side's offset (in matrices) for every batch index of Out.
struct MatmulV2Shape {
  int64_t m = 0, n = 0, k = 0;
  bool tx = false, ty = false;  // as applied (false for a 1-D operand, as numpy)
  Dims out;                     // Out's dims
  int64_t batch = 1;            // product of Out's batch dims
  std::vector<int64_t> x_off, y_off;  // per Out batch: X's / Y's matrix index (run time only)
};

// `offsets`: fill x_off / y_off (run time, every dim known).
inline MatmulV2Shape GetMatmulV2Shape(const char* op, const Dims& x_in, const Dims& y_in, bool tx,
                                      bool ty, bool offsets) {
  TIDE_CHECK(!x_in.empty() && !y_in.empty(), "op '", op, "': X ", ToString(x_in), " and Y ",
             ToString(y_in), " need rank >= 1");
  MatmulV2Shape s;
  Dims x = x_in, y = y_in;
  const bool x_vec = x.size() == 1, y_vec = y.size() == 1;
  if (x_vec) x.insert(x.begin(), 1);  // [K] -> [1, K]; numpy ignores a vector's transpose
  if (y_vec) y.push_back(1);          // [K] -> [K, 1]
  s.tx = tx && !x_vec;
  s.ty = ty && !y_vec;
  const size_t xr = x.size(), yr = y.size();
  s.m = s.tx ? x[xr - 1] : x[xr - 2];
  const int64_t kx = s.tx ? x[xr - 2] : x[xr - 1];
  const int64_t ky = s.ty ? y[yr - 1] : y[yr - 2];
  s.n = s.ty ? y[yr - 2] : y[yr - 1];
  TIDE_CHECK(DimsCompatible(kx, ky), "op '", op, "': X ", ToString(x_in),
             (s.tx ? " (trans_x)" : ""), " and Y ", ToString(y_in), (s.ty ? " (trans_y)" : ""),
             " have inner dims ", kx, " and ", ky);
  s.k = kx < 0 ? ky : kx;
  // numpy broadcasting of the batch dims, aligned at the right.
  const Dims xb(x.begin(), x.end() - 2), yb(y.begin(), y.end() - 2);
  const size_t br = std::max(xb.size(), yb.size());
  Dims batch(br, 1);
  for (size_t i = 0; i < br; ++i) {
    const int64_t a = i + xb.size() >= br ? xb[i + xb.size() - br] : 1;
    const int64_t b = i + yb.size() >= br ? yb[i + yb.size() - br] : 1;
    TIDE_CHECK(a == b || a == 1 || b == 1 || a < 0 || b < 0, "op '", op,
               "': the batch dims of X ", ToString(x_in), " and Y ", ToString(y_in),
               " do not broadcast (", a, " vs ", b, ")");
    batch[i] = a == 1 ? b : (b == 1 ? a : std::max(a, b));
  }
  s.batch = DimsProductOrUnknown(batch);
  s.out = batch;
  if (!x_vec) s.out.push_back(s.m);
  if (!y_vec) s.out.push_back(s.n);
  if (s.out.empty()) s.out.push_back(1);  // vector . vector
  if (!offsets) return s;
  // Out batch index -> each side's matrix index (stride 0 along a broadcast dim).
  auto offsets_of = [&](const Dims& side, std::vector<int64_t>* off) {
    std::vector<int64_t> stride(br, 0);
    int64_t st = 1;
    for (size_t i = br; i-- > 0;) {
      if (i + side.size() < br) continue;
      const int64_t d = side[i + side.size() - br];
      stride[i] = d == 1 ? 0 : st;
      st *= d;
    }
    off->assign(static_cast<size_t>(s.batch), 0);
    for (int64_t b = 0; b < s.batch; ++b) {
      int64_t rem = b, o = 0;
      for (size_t i = br; i-- > 0;) {
        o += (rem % batch[i]) * stride[i];
        rem /= batch[i];
      }
      (*off)[b] = o;
    }
  };
  offsets_of(xb, &s.x_off);
  offsets_of(yb, &s.y_off);
  return s;
}

// True when a side's matrix for Out batch b is b * step for one step (0: one shared matrix,
// 1: its own): one strided batched GEMM covers it. `step` gets that step.
inline bool UniformBatchStep(const std::vector<int64_t>& off, int64_t* step) {
  *step = off.size() > 1 ? off[1] - off[0] : 0;
  for (size_t b = 0; b < off.size(); ++b)
    if (off[b] != static_cast<int64_t>(b) * *step) return false;
  return *step == 0 || *step == 1;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_MATMUL_V2_HPP_
