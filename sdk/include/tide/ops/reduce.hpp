// tide/ops/reduce.hpp: the shape rule of Fluid's reduce_* ops (attributes dim, keep_dim,
// reduce_all), with its errors; the reduce_* ops, mean and squared_l2_norm and their grads as
// every kernel reads their inputs (checked; outputs allocated on the kernel's place).
#ifndef TIDE_OPS_REDUCE_HPP_
#define TIDE_OPS_REDUCE_HPP_

#include <cstddef>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

struct ReduceShape {
  std::vector<bool> reduced;  // per dim of X
  Dims keep;                  // X's dims with 1 on each reduced dim (keep_dim's Out)
  Dims out;                   // Out's dims: keep, or without the reduced dims ([1] when none left)
};

// dims: the reduced dims (negative ones count from the end; repeats allowed); reduce_all, or
// an empty dims, reduces every dim. Unknown (-1) dims of X pass through to Out.
inline ReduceShape GetReduceShape(const char* op, const Dims& x, const std::vector<int32_t>& dims,
                                  bool keep_dim, bool reduce_all) {
  const int rank = static_cast<int>(x.size());
  ReduceShape s;
  reduce_all = reduce_all || dims.empty();
  s.reduced.assign(x.size(), reduce_all);
  if (!reduce_all) {
    for (int32_t d : dims) {
      TIDE_CHECK(d >= -rank && d < rank, "op '", op, "': dim ", d, " is out of range for X ",
                 ToString(x), " (rank ", rank, ")");
      s.reduced[d < 0 ? d + rank : d] = true;
    }
  }
  for (int i = 0; i < rank; ++i) {
    s.keep.push_back(s.reduced[i] ? 1 : x[i]);
    if (!s.reduced[i]) s.out.push_back(x[i]);
  }
  if (keep_dim) s.out = s.keep;
  if (s.out.empty()) s.out.push_back(1);
  return s;
}

// The op's reduction from its attributes, `ctx` a kernel or shape-inference context.
template <typename Ctx>
ReduceShape ReduceShapeOf(const Ctx& ctx, const Dims& x) {
  return GetReduceShape(ctx.op_type(), x, ctx.template Attr<std::vector<int32_t>>("dim"),
                        ctx.template Attr<bool>("keep_dim"), ctx.template Attr<bool>("reduce_all"));
}

// Paddle 2.x's in_dtype / out_dtype (-1: X's type; absent in Fluid 1.x programs): Tide reduces
// in X's type and gives Out X's type, so another one is refused, naming it.
template <typename Ctx>
void CheckReduceDtypes(const Ctx& ctx, TideDataType x) {
  for (const char* attr : {"in_dtype", "out_dtype"}) {
    if (!ctx.HasAttr(attr) || ctx.template Attr<int32_t>(attr) == -1) continue;
    const TideDataType t = DataTypeAttr(ctx, attr);
    TIDE_CHECK(t == x, "op '", ctx.op_type(), "': ", attr, " ", DataTypeName(t),
               " differs from X's ", DataTypeName(x),
               "; Tide reduces in X's type (cast X or Out instead)");
  }
}

// reduce_*: X reduced to n_out values of `count` elements each; Out allocated. An X empty along a
// reduced dim with kept elements reduces nothing: `empty_ok` reductions (those with an identity:
// sum, prod, any, all; mean's 0/0 is NaN, as in NumPy and Paddle) give it, the others an error.
template <typename T>
struct ReduceArgs {
  ReduceShape s;
  Dims x_dims;
  int64_t total, n_out;
  const T* x;
  T* out;
  int64_t count() const { return n_out ? total / n_out : 0; }
};

template <typename T>
ReduceArgs<T> GetReduceArgs(const KernelContext& ctx, bool empty_ok = false) {
  Tensor x = ctx.Input("X");
  ReduceArgs<T> a;
  a.x_dims = x.dims();
  a.s = ReduceShapeOf(ctx, a.x_dims);
  a.n_out = DimsProduct(a.s.keep);
  a.total = x.numel();
  TIDE_CHECK(a.total > 0 || a.n_out == 0 || empty_ok, "op '", ctx.op_type(), "': X ('",
             ctx.InputName("X"), "') ", ToString(a.x_dims),
             " is empty along a reduced dim, which has no ", ctx.op_type());
  a.out = ctx.Output("Out").mutable_data<T>(a.s.out, ctx.place());
  a.x = a.total ? x.data<T>() : nullptr;
  return a;
}

// reduce_*_grad: X, Out@GRAD (Out's dims), and X@GRAD allocated with X's dims. `with_out`: the
// grad reads Out too (reduce_max / reduce_min: the elements equal to it), checked; else `out` is
// null.
template <typename T>
struct ReduceGradArgs {
  ReduceShape s;
  Dims x_dims;
  int64_t total, n_out;
  const T* x;
  const T* out;
  const T* dout;
  T* dx;
  int64_t count() const { return n_out ? total / n_out : 0; }
};

template <typename T>
ReduceGradArgs<T> GetReduceGradArgs(const KernelContext& ctx, bool with_out) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  ReduceGradArgs<T> a;
  a.x_dims = x.dims();
  a.s = ReduceShapeOf(ctx, a.x_dims);
  CheckGradDims(op, "Out@GRAD", dout.dims(), a.s.out);
  a.out = nullptr;
  if (with_out) {
    Tensor out = ctx.Input("Out");
    CheckGradDims(op, "Out", out.dims(), a.s.out);
    a.out = out.data<T>();
  }
  a.total = x.numel();
  a.n_out = DimsProduct(a.s.keep);
  a.x = a.total ? x.data<T>() : nullptr;
  a.dout = a.n_out ? dout.data<T>() : nullptr;
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(a.x_dims, ctx.place());
  return a;
}

// A reduction to one value (mean, squared_l2_norm): X, and Out [1].
template <typename T>
struct ScalarReduceArgs {
  int64_t n;
  const T* x;
  T* out;
};

template <typename T>
ScalarReduceArgs<T> GetScalarReduceArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  ScalarReduceArgs<T> a;
  a.n = x.numel();
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>({1}, ctx.place());
  return a;
}

// mean: the same; X must not be empty.
template <typename T>
ScalarReduceArgs<T> GetMeanArgs(const KernelContext& ctx) {
  TIDE_CHECK(ctx.Input("X").numel() > 0, "op '", ctx.op_type(), "': X ('", ctx.InputName("X"),
             "') is empty");
  return GetScalarReduceArgs<T>(ctx);
}

// The grad of a reduction to one value (mean, squared_l2_norm): X, Out@GRAD (its first value is
// the gradient), and X@GRAD allocated with X's dims.
template <typename T>
struct ScalarReduceGradArgs {
  int64_t n;
  const T* x;
  const T* dout;
  T* dx;
};

template <typename T>
ScalarReduceGradArgs<T> GetScalarReduceGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  TIDE_CHECK(dout.numel() >= 1, "op '", ctx.op_type(), "': Out@GRAD is empty");
  ScalarReduceGradArgs<T> a;
  a.n = x.numel();
  a.x = x.data<T>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_REDUCE_HPP_
