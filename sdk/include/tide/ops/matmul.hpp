// tide/ops/matmul.hpp: the shape rules of mul (Fluid's flatten-to-2D product) and matmul
// (batched, transposes, 1-D operands), with their errors, and mul, matmul and their grads as every
// kernel reads their inputs (checked; outputs allocated on the kernel's place, a grad only where
// the grad op has it).
#ifndef TIDE_OPS_MATMUL_HPP_
#define TIDE_OPS_MATMUL_HPP_

#include <algorithm>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// mul: Out = X flattened at x_num_col_dims (xc) times Y flattened at y_num_col_dims (yc), shaped
// X.dims[:xc] + Y.dims[yc:]. At compile time an unknown (-1) width or height passes.
inline Dims MulOutDims(const char* op, const Dims& x, const Dims& y, int xc, int yc) {
  TIDE_CHECK(xc >= 1 && xc <= static_cast<int>(x.size()), "op '", op, "': x_num_col_dims ", xc,
             " must be in [1, ", x.size(), "] for X ", ToString(x));
  TIDE_CHECK(yc >= 1 && yc <= static_cast<int>(y.size()), "op '", op, "': y_num_col_dims ", yc,
             " must be in [1, ", y.size(), "] for Y ", ToString(y));
  const int64_t xk = DimsProduct(x, xc, x.size()), yk = DimsProduct(y, 0, yc);
  const bool known =
      xk >= 0 && yk >= 0 && std::none_of(x.begin() + xc, x.end(), [](int64_t d) { return d < 0; });
  TIDE_CHECK(!known || xk == yk, "op '", op, "': X ", ToString(x), " flattened at ", xc,
             " has width ", xk, " but Y ", ToString(y), " flattened at ", yc, " has height ", yk);
  Dims out(x.begin(), x.begin() + xc);
  out.insert(out.end(), y.begin() + yc, y.end());
  return out;
}

// matmul: the operands as [batch, rows, cols]; a rank-2 side is shared by every batch. As in
// Fluid, a 1-D X is the row [1, K] and a 1-D Y the column [K, 1] before transpose_X/transpose_Y
// apply (a transposed 1-D X is the column [K, 1]); Out drops the vector's unit dim (the row of an
// untransposed X, the column of an untransposed Y). Unknown (-1) batch dims pass at compile time
// and are checked at run time.
struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool x_batched = false, y_batched = false;
  Dims out;
};

inline MatmulShape GetMatmulShape(const Dims& x_in, const Dims& y_in, bool tx, bool ty) {
  TIDE_CHECK(!x_in.empty() && !y_in.empty(), "op 'matmul': X and Y need rank >= 1");
  Dims x = x_in, y = y_in;
  const bool x_vec = x.size() == 1, y_vec = y.size() == 1;
  if (x_vec) x = Dims{1, x[0]};
  if (y_vec) y = Dims{y[0], 1};
  MatmulShape s;
  const size_t xr = x.size(), yr = y.size();
  s.m = tx ? x[xr - 1] : x[xr - 2];
  const int64_t kx = tx ? x[xr - 2] : x[xr - 1];
  const int64_t ky = ty ? y[yr - 1] : y[yr - 2];
  s.n = ty ? y[yr - 2] : y[yr - 1];
  TIDE_CHECK(DimsCompatible(kx, ky), "op 'matmul': X ", ToString(x_in), (tx ? " (transposed)" : ""),
             " and Y ", ToString(y_in), (ty ? " (transposed)" : ""), " have inner dims ", kx,
             " and ", ky);
  s.k = kx < 0 ? ky : kx;
  const Dims xb(x.begin(), x.end() - 2), yb(y.begin(), y.end() - 2);
  s.x_batched = !xb.empty();
  s.y_batched = !yb.empty();
  bool batch_ok = xb.empty() || yb.empty() || xb.size() == yb.size();
  for (size_t i = 0; batch_ok && !xb.empty() && i < yb.size(); ++i)
    batch_ok = DimsCompatible(xb[i], yb[i]);
  TIDE_CHECK(batch_ok, "op 'matmul': batch dims of X ", ToString(x_in), " and Y ", ToString(y_in),
             " differ");
  Dims batch = xb.empty() ? yb : xb;
  for (size_t i = 0; !yb.empty() && i < batch.size(); ++i)
    if (batch[i] < 0) batch[i] = yb[i];  // the known one of the two
  s.batch = DimsProductOrUnknown(batch);
  s.out = batch;
  if (!x_vec || tx) s.out.push_back(s.m);
  if (!y_vec || ty) s.out.push_back(s.n);
  if (s.out.empty()) s.out.push_back(1);
  return s;
}

// mul: X as [m, k] (flattened at x_num_col_dims), Y as [k, n]; Out allocated.
template <typename T>
struct MulArgs {
  int64_t m, k, n;
  const T* x;
  const T* y;
  T* out;
};

// mul_grad: the same, Out@GRAD holding m x n values, X@GRAD / Y@GRAD where wanted.
template <typename T>
struct MulGradArgs : BinaryGradData<T> {
  int64_t m, k, n;
};

// The product's m, k, n and Out's dims.
template <typename Args>
Dims ReadMulShape(const KernelContext& ctx, const Tensor& x, const Tensor& y, Args* a) {
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  const Dims od = MulOutDims(ctx.op_type(), x.dims(), y.dims(), xc, yc);
  const auto mk = Flatten2D(x.dims(), xc);
  a->m = mk.first;
  a->k = mk.second;
  a->n = DimsProduct(y.dims(), yc, y.dims().size());
  return od;
}

template <typename T>
MulArgs<T> GetMulArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  MulArgs<T> a;
  const Dims od = ReadMulShape(ctx, x, y, &a);
  a.x = x.data<T>();
  a.y = y.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  return a;
}

template <typename T>
MulGradArgs<T> GetMulGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  MulGradArgs<T> a;
  ReadMulShape(ctx, x, y, &a);
  TIDE_CHECK(dout.numel() == a.m * a.n, "op '", ctx.op_type(), "': Out@GRAD ",
             ToString(dout.dims()), " does not hold ", a.m, " x ", a.n, " values");
  static_cast<BinaryGradData<T>&>(a) = GetBinaryGradData<T>(ctx, x, y, dout);
  return a;
}

// matmul: the operands' shape, alpha; Out allocated.
template <typename T>
struct MatmulArgs {
  MatmulShape s;
  bool tx, ty;
  T alpha;
  const T* x;
  const T* y;
  T* out;
};

// matmul_grad: the same, Out@GRAD holding Out's values, X@GRAD / Y@GRAD where wanted.
template <typename T>
struct MatmulGradArgs : BinaryGradData<T> {
  MatmulShape s;
  bool tx, ty;
  T alpha;
};

template <typename Args>
void ReadMatmulShape(const KernelContext& ctx, const Tensor& x, const Tensor& y, Args* a) {
  a->tx = ctx.Attr<bool>("transpose_X");
  a->ty = ctx.Attr<bool>("transpose_Y");
  a->alpha = static_cast<decltype(a->alpha)>(ctx.Attr<float>("alpha"));
  a->s = GetMatmulShape(x.dims(), y.dims(), a->tx, a->ty);
}

template <typename T>
MatmulArgs<T> GetMatmulArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  MatmulArgs<T> a;
  ReadMatmulShape(ctx, x, y, &a);
  a.x = x.data<T>();
  a.y = y.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(a.s.out, ctx.place());
  return a;
}

template <typename T>
MatmulGradArgs<T> GetMatmulGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  MatmulGradArgs<T> a;
  ReadMatmulShape(ctx, x, y, &a);
  TIDE_CHECK(dout.numel() == a.s.batch * a.s.m * a.s.n, "op '", ctx.op_type(), "': Out@GRAD ",
             ToString(dout.dims()), " does not match Out ", ToString(a.s.out));
  static_cast<BinaryGradData<T>&>(a) = GetBinaryGradData<T>(ctx, x, y, dout);
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_MATMUL_HPP_
