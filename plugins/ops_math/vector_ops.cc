// vector_ops.cc: Paddle's small linear-algebra ops: eye (num_rows, num_columns, dtype),
// diag_v2 (a vector -> a matrix with it on the offset diagonal, padding_value elsewhere; a
// matrix -> its offset diagonal), dot (over the last dim: 1-D -> 0-D, [B, N] -> [B]), mv
// (matrix times vector), cross (the 3-vector cross product along `dim`; Paddle's default 9: the
// first dim of size 3), lerp (X + Weight * (Y - X), the three broadcast numpy-style) and addmm
// (Beta * Input + Alpha * X Y, Input broadcast to [M, N]); each with its grad but eye.
#include <algorithm>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetNumpyBroadcast;
using tide::ops::NumpyBroadcast;

bool Known(const Dims& d) {
  return std::none_of(d.begin(), d.end(), [](int64_t v) { return v < 0; });
}

// A grad output named by its forward input, zero-filled with that input's dims; null when not
// asked for.
template <typename T>
T* ZeroGrad(KernelContext& ctx, const char* input, const Dims& dims) {
  const std::string n = GradVarName(input);
  if (!ctx.HasOutput(n.c_str())) return nullptr;
  T* p = ctx.Output(n.c_str()).mutable_data<T>(dims, ctx.place());
  std::fill(p, p + tide::ops::DimsProduct(dims), T(0));
  return p;
}

void CheckSameType(tide::InferShapeContext& ctx, const char* a, const char* b) {
  TIDE_CHECK(ctx.InputDataType(a) == ctx.InputDataType(b), "op '", ctx.op_type(), "': ", a, " is ",
             tide::DataTypeName(ctx.InputDataType(a)), " but ", b, " is ",
             tide::DataTypeName(ctx.InputDataType(b)));
}

// ---- eye
void EyeShape(tide::InferShapeContext& ctx) {
  const int64_t rows = ctx.Attr<int64_t>("num_rows"), cols = ctx.Attr<int64_t>("num_columns");
  TIDE_CHECK(rows >= 0, "op '", ctx.op_type(), "': num_rows must be >= 0, but is ", rows);
  ctx.SetOutputDims("Out", {rows, cols < 0 ? rows : cols});
  ctx.SetOutputDataType("Out", tide::ops::DataTypeAttr(ctx, "dtype"));
}

template <typename T>
void EyeKernel(KernelContext& ctx) {
  const int64_t rows = ctx.Attr<int64_t>("num_rows");
  const int64_t cols =
      ctx.Attr<int64_t>("num_columns") < 0 ? rows : ctx.Attr<int64_t>("num_columns");
  T* o = ctx.Output("Out").mutable_data<T>({rows, cols}, ctx.place());
  std::fill(o, o + rows * cols, T(0));
  for (int64_t i = 0; i < std::min(rows, cols); ++i) o[i * cols + i] = T(1);
}

// ---- diag_v2
void DiagShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const int64_t k = ctx.Attr<int32_t>("offset");
  TIDE_CHECK(x.size() <= 2, "op '", ctx.op_type(), "': X must be 0-D, 1-D or 2-D, but is ",
             tide::ToString(x));
  if (x.size() <= 1) {
    const int64_t n = x.empty() ? 1 : x[0];
    const int64_t m = n < 0 ? -1 : n + (k < 0 ? -k : k);
    ctx.SetOutputDims("Out", {m, m});
  } else if (Known(x)) {
    const int64_t len = k >= 0 ? std::min(x[0], x[1] - k) : std::min(x[0] + k, x[1]);
    TIDE_CHECK(len > 0, "op '", ctx.op_type(), "': offset ", k, " is outside X ",
               tide::ToString(x));
    ctx.SetOutputDims("Out", {len});
  } else {
    ctx.SetOutputDims("Out", {-1});
  }
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// The (row, col) of diagonal element i for offset k.
inline int64_t DiagRow(int64_t i, int64_t k) { return k >= 0 ? i : i - k; }
inline int64_t DiagCol(int64_t i, int64_t k) { return k >= 0 ? i + k : i; }

template <typename T>
void DiagKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const int64_t k = ctx.Attr<int32_t>("offset");
  const T* a = x.data<T>();
  if (x.dims().size() <= 1) {
    const int64_t n = x.numel(), m = n + (k < 0 ? -k : k);
    T* o = ctx.Output("Out").mutable_data<T>({m, m}, ctx.place());
    std::fill(o, o + m * m, T(ctx.Attr<float>("padding_value")));
    for (int64_t i = 0; i < n; ++i) o[DiagRow(i, k) * m + DiagCol(i, k)] = a[i];
    return;
  }
  const int64_t r = x.dims()[0], c = x.dims()[1];
  const int64_t len = k >= 0 ? std::min(r, c - k) : std::min(r + k, c);
  TIDE_CHECK(len > 0, "op '", ctx.op_type(), "': offset ", k, " is outside X ",
             tide::ToString(x.dims()));
  T* o = ctx.Output("Out").mutable_data<T>({len}, ctx.place());
  for (int64_t i = 0; i < len; ++i) o[i] = a[DiagRow(i, k) * c + DiagCol(i, k)];
}

template <typename T>
void DiagGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const int64_t k = ctx.Attr<int32_t>("offset");
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ZeroGrad<T>(ctx, "X", x.dims());
  if (!dx) return;
  if (x.dims().size() <= 1) {
    const int64_t n = x.numel(), m = n + (k < 0 ? -k : k);
    for (int64_t i = 0; i < n; ++i) dx[i] = g[DiagRow(i, k) * m + DiagCol(i, k)];
    return;
  }
  const int64_t r = x.dims()[0], c = x.dims()[1];
  const int64_t len = k >= 0 ? std::min(r, c - k) : std::min(r + k, c);
  for (int64_t i = 0; i < len; ++i) dx[DiagRow(i, k) * c + DiagCol(i, k)] = g[i];
}

// ---- dot: over the last dim.
void DotShape(tide::InferShapeContext& ctx) {
  CheckSameType(ctx, "X", "Y");
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  TIDE_CHECK(x.size() == y.size() && (x.size() == 1 || x.size() == 2), "op '", ctx.op_type(),
             "': X and Y must be both 1-D or both 2-D, but are ", tide::ToString(x), " and ",
             tide::ToString(y));
  if (Known(x) && Known(y))
    TIDE_CHECK(x == y, "op '", ctx.op_type(), "': X ", tide::ToString(x), " and Y ",
               tide::ToString(y), " must have the same dims");
  ctx.SetOutputDims("Out", x.size() == 1 ? Dims{} : Dims{x[0]});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void DotKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  TIDE_CHECK(x.dims() == y.dims(), "op '", ctx.op_type(), "': X ", tide::ToString(x.dims()),
             " and Y ", tide::ToString(y.dims()), " must have the same dims");
  const int64_t n = x.dims().back(), b = x.numel() / std::max<int64_t>(n, 1);
  const Dims od = x.dims().size() == 1 ? Dims{} : Dims{x.dims()[0]};
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  const T *a = x.data<T>(), *c = y.data<T>();
  for (int64_t i = 0; i < b; ++i) {
    T s = T(0);
    for (int64_t j = 0; j < n; ++j) s += a[i * n + j] * c[i * n + j];
    o[i] = s;
  }
}

template <typename T>
void DotGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const int64_t n = x.dims().back(), b = x.numel() / std::max<int64_t>(n, 1);
  const T *a = x.data<T>(), *c = y.data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ZeroGrad<T>(ctx, "X", x.dims());
  T* dy = ZeroGrad<T>(ctx, "Y", y.dims());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (dx) dx[i * n + j] = g[i] * c[i * n + j];
      if (dy) dy[i * n + j] = g[i] * a[i * n + j];
    }
}

// ---- mv: X [M, N] times Vec [N].
void MvShape(tide::InferShapeContext& ctx) {
  CheckSameType(ctx, "X", "Vec");
  const Dims x = ctx.InputDims("X"), v = ctx.InputDims("Vec");
  TIDE_CHECK(x.size() == 2 && v.size() == 1, "op '", ctx.op_type(),
             "': X must be 2-D and Vec 1-D, but are ", tide::ToString(x), " and ",
             tide::ToString(v));
  if (x[1] >= 0 && v[0] >= 0)
    TIDE_CHECK(x[1] == v[0], "op '", ctx.op_type(), "': X ", tide::ToString(x),
               "'s columns and Vec ", tide::ToString(v), " differ");
  ctx.SetOutputDims("Out", {x[0]});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void MvKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), v = ctx.Input("Vec");
  const int64_t m = x.dims()[0], n = x.dims()[1];
  TIDE_CHECK(v.dims().size() == 1 && v.dims()[0] == n, "op '", ctx.op_type(), "': X ",
             tide::ToString(x.dims()), "'s columns and Vec ", tide::ToString(v.dims()), " differ");
  const T *a = x.data<T>(), *b = v.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>({m}, ctx.place());
  for (int64_t i = 0; i < m; ++i) {
    T s = T(0);
    for (int64_t j = 0; j < n; ++j) s += a[i * n + j] * b[j];
    o[i] = s;
  }
}

template <typename T>
void MvGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), v = ctx.Input("Vec");
  const int64_t m = x.dims()[0], n = x.dims()[1];
  const T *a = x.data<T>(), *b = v.data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ZeroGrad<T>(ctx, "X", x.dims());
  T* dv = ZeroGrad<T>(ctx, "Vec", v.dims());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (dx) dx[i * n + j] = g[i] * b[j];
      if (dv) dv[j] += g[i] * a[i * n + j];
    }
}

// ---- cross along `dim` (9, Paddle's default: the first dim of size 3).
constexpr int kCrossDefaultDim = 9;

int CrossDim(const char* op, const Dims& x, int dim) {
  const int r = static_cast<int>(x.size());
  if (dim == kCrossDefaultDim) {
    for (int d = 0; d < r; ++d)
      if (x[d] == 3) return d;
    TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "': X ", tide::ToString(x),
               " has no dim of size 3 (dim not given)");
  }
  TIDE_CHECK(dim >= -r && dim < r, "op '", op, "': dim ", dim, " is out of range for X ",
             tide::ToString(x));
  const int d = dim < 0 ? dim + r : dim;
  TIDE_CHECK(x[d] == 3 || x[d] < 0, "op '", op, "': X ", tide::ToString(x), "'s dim ", d,
             " must have size 3, but has ", x[d]);
  return d;
}

void CrossShape(tide::InferShapeContext& ctx) {
  CheckSameType(ctx, "X", "Y");
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  TIDE_CHECK(x.size() == y.size(), "op '", ctx.op_type(), "': X ", tide::ToString(x), " and Y ",
             tide::ToString(y), " must have the same dims");
  if (Known(x) && Known(y)) {
    TIDE_CHECK(x == y, "op '", ctx.op_type(), "': X ", tide::ToString(x), " and Y ",
               tide::ToString(y), " must have the same dims");
    CrossDim(ctx.op_type(), x, ctx.Attr<int32_t>("dim"));
  }
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// Calls f(i0, stride) for each 3-vector along the cross dim: its first element and the stride.
template <typename F>
void ForEachTriple(const Dims& x, int d, F f) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= x[i];
  for (size_t i = d + 1; i < x.size(); ++i) inner *= x[i];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) f(o * 3 * inner + in, inner);
}

template <typename T>
void Cross3(const T* a, const T* b, T* o, int64_t i, int64_t s, T sign) {
  const T a0 = a[i], a1 = a[i + s], a2 = a[i + 2 * s];
  const T b0 = b[i], b1 = b[i + s], b2 = b[i + 2 * s];
  o[i] = sign * (a1 * b2 - a2 * b1);
  o[i + s] = sign * (a2 * b0 - a0 * b2);
  o[i + 2 * s] = sign * (a0 * b1 - a1 * b0);
}

template <typename T>
void CrossKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  TIDE_CHECK(x.dims() == y.dims(), "op '", ctx.op_type(), "': X ", tide::ToString(x.dims()),
             " and Y ", tide::ToString(y.dims()), " must have the same dims");
  const int d = CrossDim(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("dim"));
  const T *a = x.data<T>(), *b = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  ForEachTriple(x.dims(), d, [&](int64_t i, int64_t s) { Cross3(a, b, o, i, s, T(1)); });
}

// dX = Y x dOut, dY = dOut x X.
template <typename T>
void CrossGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const int d = CrossDim(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("dim"));
  const T *a = x.data<T>(), *b = y.data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ZeroGrad<T>(ctx, "X", x.dims());
  T* dy = ZeroGrad<T>(ctx, "Y", y.dims());
  ForEachTriple(x.dims(), d, [&](int64_t i, int64_t s) {
    if (dx) Cross3(b, g, dx, i, s, T(1));
    if (dy) Cross3(g, a, dy, i, s, T(1));
  });
}

// ---- lerp: X, Y and Weight broadcast numpy-style.
struct Lerp3 {
  NumpyBroadcast x, y, w;  // each operand against Out's dims
  void Index(int64_t e, int64_t* xi, int64_t* yi, int64_t* wi) const {
    int64_t unused;
    x.Index(e, xi, &unused);
    y.Index(e, yi, &unused);
    w.Index(e, wi, &unused);
  }
  const Dims& out() const { return x.out; }
  int64_t numel() const { return x.numel; }
};

Lerp3 LerpBroadcast(const char* op, const Dims& x, const Dims& y, const Dims& w) {
  const Dims xy = GetNumpyBroadcast(op, x, y).out;  // an error naming X and Y if they do not
  TIDE_CHECK(tide::ops::NumpyFits(xy, w), "op '", op, "': Weight ", tide::ToString(w),
             " does not broadcast with X and Y's ", tide::ToString(xy));
  const Dims out = GetNumpyBroadcast(op, xy, w).out;
  return {GetNumpyBroadcast(op, x, out), GetNumpyBroadcast(op, y, out),
          GetNumpyBroadcast(op, w, out)};
}

void LerpShape(tide::InferShapeContext& ctx) {
  CheckSameType(ctx, "X", "Y");
  CheckSameType(ctx, "X", "Weight");
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y"), w = ctx.InputDims("Weight");
  ctx.SetOutputDims("Out", Known(x) && Known(y) && Known(w)
                               ? LerpBroadcast(ctx.op_type(), x, y, w).out()
                               : (x.size() >= y.size() ? x : y));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T>
void LerpKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), w = ctx.Input("Weight");
  const Lerp3 b = LerpBroadcast(ctx.op_type(), x.dims(), y.dims(), w.dims());
  const T *a = x.data<T>(), *c = y.data<T>(), *wt = w.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(b.out(), ctx.place());
  for (int64_t e = 0, i, j, k; e < b.numel(); ++e) {
    b.Index(e, &i, &j, &k);
    o[e] = a[i] + wt[k] * (c[j] - a[i]);
  }
}

// Paddle's lerp_grad: dX = dOut * (1 - Weight), dY = dOut * Weight (no Weight grad), each summed
// over the dims its operand is repeated along.
template <typename T>
void LerpGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), w = ctx.Input("Weight");
  const Lerp3 b = LerpBroadcast(ctx.op_type(), x.dims(), y.dims(), w.dims());
  const T* wt = w.data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ZeroGrad<T>(ctx, "X", x.dims());
  T* dy = ZeroGrad<T>(ctx, "Y", y.dims());
  for (int64_t e = 0, i, j, k; e < b.numel(); ++e) {
    b.Index(e, &i, &j, &k);
    if (dx) dx[i] += g[e] * (T(1) - wt[k]);
    if (dy) dy[j] += g[e] * wt[k];
  }
}

// ---- addmm: Out = Beta * Input + Alpha * X Y, Input broadcast to [M, N].
void AddmmShape(tide::InferShapeContext& ctx) {
  CheckSameType(ctx, "X", "Y");
  CheckSameType(ctx, "X", "Input");
  const Dims in = ctx.InputDims("Input"), x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  TIDE_CHECK(x.size() == 2 && y.size() == 2 && (in.size() == 1 || in.size() == 2), "op '",
             ctx.op_type(), "': X and Y must be 2-D and Input 1-D or 2-D, but are ",
             tide::ToString(x), ", ", tide::ToString(y), " and ", tide::ToString(in));
  if (x[1] >= 0 && y[0] >= 0)
    TIDE_CHECK(x[1] == y[0], "op '", ctx.op_type(), "': X ", tide::ToString(x), " and Y ",
               tide::ToString(y), " do not multiply");
  ctx.SetOutputDims("Out", {x[0], y[1]});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

NumpyBroadcast AddmmInput(const char* op, const Dims& in, const Dims& out) {
  TIDE_CHECK(tide::ops::NumpyFits(in, out) && GetNumpyBroadcast(op, in, out).out == out, "op '", op,
             "': Input ", tide::ToString(in), " does not broadcast to X Y's ", tide::ToString(out));
  return GetNumpyBroadcast(op, in, out);
}

template <typename T>
void AddmmKernel(KernelContext& ctx) {
  Tensor in = ctx.Input("Input"), x = ctx.Input("X"), y = ctx.Input("Y");
  const int64_t m = x.dims()[0], k = x.dims()[1], n = y.dims()[1];
  TIDE_CHECK(y.dims()[0] == k, "op '", ctx.op_type(), "': X ", tide::ToString(x.dims()), " and Y ",
             tide::ToString(y.dims()), " do not multiply");
  const NumpyBroadcast nb = AddmmInput(ctx.op_type(), in.dims(), {m, n});
  const T alpha = T(ctx.Attr<float>("Alpha")), beta = T(ctx.Attr<float>("Beta"));
  const T *p = in.data<T>(), *a = x.data<T>(), *b = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>({m, n}, ctx.place());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T s = T(0);
      for (int64_t l = 0; l < k; ++l) s += a[i * k + l] * b[l * n + j];
      int64_t ii, unused;
      nb.Index(i * n + j, &ii, &unused);
      o[i * n + j] = beta * p[ii] + alpha * s;
    }
}

template <typename T>
void AddmmGradKernel(KernelContext& ctx) {
  Tensor in = ctx.Input("Input"), x = ctx.Input("X"), y = ctx.Input("Y");
  const int64_t m = x.dims()[0], k = x.dims()[1], n = y.dims()[1];
  const NumpyBroadcast nb = AddmmInput(ctx.op_type(), in.dims(), {m, n});
  const T alpha = T(ctx.Attr<float>("Alpha")), beta = T(ctx.Attr<float>("Beta"));
  const T *a = x.data<T>(), *b = y.data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* din = ZeroGrad<T>(ctx, "Input", in.dims());
  T* dx = ZeroGrad<T>(ctx, "X", x.dims());
  T* dy = ZeroGrad<T>(ctx, "Y", y.dims());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const T gij = g[i * n + j];
      if (din) {
        int64_t ii, unused;
        nb.Index(i * n + j, &ii, &unused);
        din[ii] += beta * gij;
      }
      for (int64_t l = 0; l < k; ++l) {
        if (dx) dx[i * k + l] += alpha * gij * b[l * n + j];
        if (dy) dy[l * n + j] += alpha * gij * a[i * k + l];
      }
    }
}

// A grad op taking the forward inputs and Out@GRAD, giving each input's grad.
void MakeGrad(tide::GradMaker& g, const char* type, std::initializer_list<const char*> ins,
              std::initializer_list<const char*> grads) {
  auto op = g.NewOp(type);
  for (const char* p : ins) op.Input(p, g.Input(p));
  op.Input(GradVarName("Out"), g.OutputGrad("Out"));
  for (const char* p : grads) op.Output(GradVarName(p), g.InputGrad(p));
  op.CopyAttrs();
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("eye")
                     .NoGradient()
                     .Comment("Out = the [num_rows, num_columns] identity matrix (paddle.eye).")
                     .Output("Out", "[num_rows, num_columns] of dtype")
                     .Attr("num_rows", int64_t(0), "rows")
                     .Attr("num_columns", int64_t(-1), "columns; -1: num_rows")
                     .Attr("dtype", int32_t(TIDE_FP32), "element type (TideDataType)")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape(EyeShape));
TIDE_REGISTER_OP(tide::OpSchema("diag_v2")
                     .Comment("A vector X -> the matrix with X on its offset diagonal, "
                              "padding_value elsewhere; a matrix X -> its offset diagonal "
                              "(paddle.diag).")
                     .Input("X", "0-D, 1-D or 2-D")
                     .Output("Out", "2-D from a vector, 1-D from a matrix")
                     .Attr("offset", int32_t(0), "the diagonal: > 0 above the main one")
                     .Attr("padding_value", 0.0f, "the off-diagonal value (vector X)")
                     .InferShape(DiagShape)
                     .Grad([](tide::GradMaker& g) { MakeGrad(g, "diag_v2_grad", {"X"}, {"X"}); }));
TIDE_REGISTER_OP(tide::OpSchema("diag_v2_grad")
                     .Input("X")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("offset", int32_t(0))
                     .Attr("padding_value", 0.0f)
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) { GradsLikeInputs(c, {"X"}); }));
TIDE_REGISTER_OP(
    tide::OpSchema("dot")
        .Comment("Out = sum(X * Y) over the last dim (paddle.dot): 1-D -> 0-D, [B, N] -> [B].")
        .Input("X", "1-D or 2-D")
        .Input("Y", "X's dims and type")
        .Output("Out", "0-D or [B]")
        .InferShape(DotShape)
        .Grad([](tide::GradMaker& g) {
          MakeGrad(g, "dot_grad", {"X", "Y"}, {"X", "Y"});
        }));
TIDE_REGISTER_OP(tide::OpSchema("dot_grad")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradsLikeInputs(c, {"X", "Y"});
                     }));
TIDE_REGISTER_OP(tide::OpSchema("mv")
                     .Comment("Out = X Vec (paddle.mv): X [M, N], Vec [N], Out [M].")
                     .Input("X", "[M, N]")
                     .Input("Vec", "[N], X's type")
                     .Output("Out", "[M]")
                     .InferShape(MvShape)
                     .Grad([](tide::GradMaker& g) {
                       MakeGrad(g, "mv_grad", {"X", "Vec"}, {"X", "Vec"});
                     }));
TIDE_REGISTER_OP(tide::OpSchema("mv_grad")
                     .Input("X")
                     .Input("Vec")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Vec"))
                     .AsDispensable()
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradsLikeInputs(c, {"X", "Vec"});
                     }));
TIDE_REGISTER_OP(
    tide::OpSchema("cross")
        .Comment("Out = X x Y, the cross product of the 3-vectors along dim (paddle.cross).")
        .Input("X", "a dim of size 3")
        .Input("Y", "X's dims and type")
        .Output("Out", "X's dims")
        .Attr("dim", int32_t(kCrossDefaultDim), "the dim of the vectors; 9: the first of size 3")
        .InferShape(CrossShape)
        .Grad([](tide::GradMaker& g) {
          MakeGrad(g, "cross_grad", {"X", "Y"}, {"X", "Y"});
        }));
TIDE_REGISTER_OP(tide::OpSchema("cross_grad")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .Attr("dim", int32_t(kCrossDefaultDim))
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradsLikeInputs(c, {"X", "Y"});
                     }));
TIDE_REGISTER_OP(tide::OpSchema("lerp")
                     .Comment("Out = X + Weight * (Y - X) (paddle.lerp), broadcast numpy-style.")
                     .Input("X", "start")
                     .Input("Y", "end, X's type")
                     .Input("Weight", "X's type")
                     .Output("Out", "the broadcast dims")
                     .InferShape(LerpShape)
                     .Grad([](tide::GradMaker& g) {
                       MakeGrad(g, "lerp_grad", {"X", "Y", "Weight"}, {"X", "Y"});
                     }));
TIDE_REGISTER_OP(tide::OpSchema("lerp_grad")
                     .Input("X")
                     .Input("Y")
                     .Input("Weight")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradsLikeInputs(c, {"X", "Y"});
                     }));
TIDE_REGISTER_OP(tide::OpSchema("addmm")
                     .Comment("Out = Beta * Input + Alpha * X Y (paddle.addmm), Input broadcast "
                              "to [M, N].")
                     .Input("Input", "broadcasts to [M, N]")
                     .Input("X", "[M, K]")
                     .Input("Y", "[K, N]")
                     .Output("Out", "[M, N]")
                     .Attr("Alpha", 1.0f, "the factor of X Y")
                     .Attr("Beta", 1.0f, "the factor of Input")
                     .InferShape(AddmmShape)
                     .Grad([](tide::GradMaker& g) {
                       MakeGrad(g, "addmm_grad", {"Input", "X", "Y"}, {"Input", "X", "Y"});
                     }));
TIDE_REGISTER_OP(tide::OpSchema("addmm_grad")
                     .Input("Input")
                     .Input("X")
                     .Input("Y")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("Input"))
                     .AsDispensable()
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .Attr("Alpha", 1.0f)
                     .Attr("Beta", 1.0f)
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       GradsLikeInputs(c, {"Input", "X", "Y"});
                     }));
TIDE_REGISTER_KERNEL("eye", "cpu", EyeKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("diag_v2", "cpu", DiagKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("diag_v2_grad", "cpu", DiagGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("dot", "cpu", DotKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("dot_grad", "cpu", DotGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("mv", "cpu", MvKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("mv_grad", "cpu", MvGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cross", "cpu", CrossKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("cross_grad", "cpu", CrossGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lerp", "cpu", LerpKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lerp_grad", "cpu", LerpGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("addmm", "cpu", AddmmKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("addmm_grad", "cpu", AddmmGradKernel, OPS_MATH_FLOAT_TYPES);
