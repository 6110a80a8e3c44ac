// tide/ops/matmul_v2.hpp: the shape rule of Paddle 2.x's matmul_v2 (numpy's matmul: trans_x /
// trans_y, batch dims broadcast numpy-style, a 1-D operand is a vector whose unit dim Out drops),
// with its errors, and each operand's matrix for every batch of Out, for every implementation;
// matmul_v2 and its grad as every kernel reads their inputs.
#ifndef TIDE_OPS_MATMUL_V2_HPP_
#define TIDE_OPS_MATMUL_V2_HPP_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// The operands as stacks of matrices: X [batch..., m, k] (before trans_x), Y [batch..., k, n],
// with each side's offset (in matrices) for every batch index of Out.
struct MatmulV2Shape {
  int64_t m = 0, n = 0, k = 0;
  bool tx = false, ty = false;        // as applied (false for a 1-D operand, as numpy)
  Dims out;                           // Out's dims
  int64_t batch = 1;                  // product of Out's batch dims
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
    TIDE_CHECK(a == b || a == 1 || b == 1 || a < 0 || b < 0, "op '", op, "': the batch dims of X ",
               ToString(x_in), " and Y ", ToString(y_in), " do not broadcast (", a, " vs ", b, ")");
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

// Out's batches as runs of `len` consecutive batches, over each of which each side's matrix index
// advances by a constant step (x_step, y_step; 0: one shared matrix), so a strided batched GEMM
// covers a run (numpy's broadcasting inside the batch dims, [2, 1] x [3], makes runs shorter than
// the batch). `x_distinct` / `y_distinct`: that side's matrices within a run must differ (a
// gradient written by the run). The longest such run length that divides the batch.
struct MatmulV2Runs {
  int64_t len = 1, x_step = 0, y_step = 0;
};

inline MatmulV2Runs GetMatmulV2Runs(const MatmulV2Shape& s, bool x_distinct, bool y_distinct) {
  auto fits = [](const std::vector<int64_t>& off, int64_t len, bool distinct, int64_t* step) {
    *step = len > 1 ? off[1] - off[0] : 0;
    if (len > 1 && distinct && *step == 0) return false;
    for (size_t b = 0; b < off.size(); ++b) {
      const int64_t in_run = static_cast<int64_t>(b) % len;
      if (off[b] != off[b - in_run] + in_run * *step) return false;
    }
    return true;
  };
  MatmulV2Runs r;
  for (int64_t len = s.batch; len > 1; --len) {
    if (s.batch % len != 0) continue;
    if (fits(s.x_off, len, x_distinct, &r.x_step) && fits(s.y_off, len, y_distinct, &r.y_step)) {
      r.len = len;
      return r;
    }
  }
  r.x_step = r.y_step = 0;
  return r;
}

// matmul_v2: the operands' shape with their matrix offsets per batch; Out allocated.
template <typename T>
struct MatmulV2Args {
  MatmulV2Shape s;
  const T* x;
  const T* y;
  T* out;
};

template <typename T>
MatmulV2Args<T> GetMatmulV2Args(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  MatmulV2Args<T> a;
  a.s = GetMatmulV2Shape(ctx.op_type(), x.dims(), y.dims(), ctx.Attr<bool>("trans_x"),
                         ctx.Attr<bool>("trans_y"), true);
  a.x = x.data<T>();
  a.y = y.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(a.s.out, ctx.place());
  return a;
}

// matmul_v2_grad: the same with Out@GRAD (Out's dims), X@GRAD / Y@GRAD where wanted.
template <typename T>
struct MatmulV2GradArgs : BinaryGradData<T> {
  MatmulV2Shape s;
};

template <typename T>
MatmulV2GradArgs<T> GetMatmulV2GradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  MatmulV2GradArgs<T> a;
  a.s = GetMatmulV2Shape(ctx.op_type(), x.dims(), y.dims(), ctx.Attr<bool>("trans_x"),
                         ctx.Attr<bool>("trans_y"), true);
  CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), a.s.out);
  static_cast<BinaryGradData<T>&>(a) = GetBinaryGradData<T>(ctx, x, y, dout);
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_MATMUL_V2_HPP_
