// reduce_dim_ops.cc: Fluid's reduce_sum/mean/max/min/prod (and Paddle's reduce_amax/amin, whose
// grad splits among tied extremes) over `dim` (keep_dim, reduce_all;
// tide/ops/reduce.hpp), with grads, and the logical reduce_all/reduce_any over bools. Out seen
// with keep_dim's dims is a Y broadcast over X, so each element of X finds its Out element
// through the broadcast index of tide/ops/broadcast.hpp.
#include <limits>
#include <tide/ops/reduce.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::BroadcastIndex;
using tide::ops::GetReduceShape;
using tide::ops::ReduceShape;

// Element e of X adds to Out element index(e).
BroadcastIndex OutIndex(const char* op, const Dims& x, const ReduceShape& s) {
  return tide::ops::MakeBroadcastIndex(op, x, s.keep, 0);
}

// Each reducer: an initial value, a combine, a finish (given the count reduced), and whether an
// empty group has a value (the initial one, finished).
struct SumR {
  static constexpr bool kEmptyOk = true;
  template <typename T>
  static T Init() {
    return T(0);
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a + b;
  }
  template <typename T>
  static T Finish(T a, int64_t) {
    return a;
  }
};
struct MeanR : SumR {
  template <typename T>
  static T Finish(T a, int64_t n) {
    return a / static_cast<T>(n);
  }
};
struct MaxR {
  static constexpr bool kEmptyOk = false;
  template <typename T>
  static T Init() {
    return std::numeric_limits<T>::lowest();
  }
  template <typename T>
  static T Combine(T a, T b) {
    return b > a ? b : a;
  }
  template <typename T>
  static T Finish(T a, int64_t) {
    return a;
  }
};
struct MinR {
  static constexpr bool kEmptyOk = false;
  template <typename T>
  static T Init() {
    return std::numeric_limits<T>::max();
  }
  template <typename T>
  static T Combine(T a, T b) {
    return b < a ? b : a;
  }
  template <typename T>
  static T Finish(T a, int64_t) {
    return a;
  }
};
struct ProdR {
  static constexpr bool kEmptyOk = true;
  template <typename T>
  static T Init() {
    return T(1);
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a * b;
  }
  template <typename T>
  static T Finish(T a, int64_t) {
    return a;
  }
};
struct AllR {
  static constexpr bool kEmptyOk = true;
  template <typename T>
  static T Init() {
    return true;
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a && b;
  }
  template <typename T>
  static T Finish(T a, int64_t) {
    return a;
  }
};
struct AnyR {
  static constexpr bool kEmptyOk = true;
  template <typename T>
  static T Init() {
    return false;
  }
  template <typename T>
  static T Combine(T a, T b) {
    return a || b;
  }
  template <typename T>
  static T Finish(T a, int64_t) {
    return a;
  }
};

// An X element as O: a complex one to a real O keeps its real part (Paddle's cast).
template <typename O, typename T>
O ToOut(const T& v) {
  if constexpr (kIsComplex<T> && !kIsComplex<O>)
    return static_cast<O>(v.real());
  else
    return static_cast<O>(v);
}

// Reduces X (elements T) into Out (elements O, each X element converted to O first: a bool sum
// counts, an any / all over numbers tests for non-zero).
template <typename T, typename O, typename R>
void ReduceInto(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims x_dims = x.dims();
  const ReduceShape s = tide::ops::ReduceShapeOf(ctx, x_dims);
  const int64_t n_out = tide::ops::DimsProduct(s.keep), total = x.numel();
  TIDE_CHECK(total > 0 || n_out == 0 || R::kEmptyOk, "op '", ctx.op_type(), "': X ('",
             ctx.InputName("X"), "') ", tide::ToString(x_dims),
             " is empty along a reduced dim, which has no ", ctx.op_type());
  O* o = ctx.Output("Out").mutable_data<O>(s.out, ctx.place());
  const T* xd = total ? x.data<T>() : nullptr;
  std::fill(o, o + n_out, R::template Init<O>());
  const BroadcastIndex index = OutIndex(ctx.op_type(), x_dims, s);
  const int64_t inner = index.InnerSize(), stride = index.InnerStride();
  for (int64_t row = 0; row < total; row += inner) {
    O* orow = o + index(row);
    if (stride == 0) {  // the innermost run is reduced: one accumulator
      O acc = *orow;
      for (int64_t k = 0; k < inner; ++k) acc = R::Combine(acc, ToOut<O>(xd[row + k]));
      *orow = acc;
    } else {
      for (int64_t k = 0; k < inner; ++k)
        orow[k * stride] = R::Combine(orow[k * stride], ToOut<O>(xd[row + k]));
    }
  }
  const int64_t count = n_out ? total / n_out : 0;
  for (int64_t i = 0; i < n_out; ++i) o[i] = R::Finish(o[i], count);
}

template <typename T, typename R>
void ReduceKernel(KernelContext& ctx) {
  ReduceInto<T, T, R>(ctx);
}

// reduce_sum's Out type, Paddle's rule: out_dtype when given, else X's, but a bool X sums to
// int64 (its count).
template <typename Ctx>
TideDataType SumOutType(const Ctx& ctx, TideDataType x) {
  if (ctx.HasAttr("out_dtype") && ctx.template Attr<int32_t>("out_dtype") != -1)
    return tide::ops::DataTypeAttr(ctx, "out_dtype");
  return x == TIDE_BOOL ? TIDE_INT64 : x;
}

// Grads: dX[e] = G(x, out, dout, count) for e's Out element.
struct SumG {
  static constexpr bool kReadsOut = false;
  template <typename T>
  static T D(T, T, T g, int64_t) {
    return g;
  }
};
struct MeanG {
  static constexpr bool kReadsOut = false;
  template <typename T>
  static T D(T, T, T g, int64_t n) {
    return g / static_cast<T>(n);
  }
};
// Every element equal to the max (min) gets the gradient, as in Fluid.
struct ExtremeG {
  static constexpr bool kReadsOut = true;
  template <typename T>
  static T D(T x, T out, T g, int64_t) {
    return x == out ? g : T(0);
  }
};

// Only the extremes' grads read Out.
template <typename T, typename G>
void ReduceGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetReduceGradArgs<T>(ctx, G::kReadsOut);
  const int64_t count = a.count();
  const BroadcastIndex index = OutIndex(ctx.op_type(), a.x_dims, a.s);
  const int64_t inner = index.InnerSize(), stride = index.InnerStride();
  for (int64_t row = 0; row < a.total; row += inner) {
    const int64_t base = index(row);
    for (int64_t k = 0; k < inner; ++k) {
      const int64_t j = base + k * stride;
      a.dx[row + k] = G::D(a.x[row + k], a.out ? a.out[j] : T(0), a.dout[j], count);
    }
  }
}

// Paddle's amax / amin: Out@GRAD split evenly among the elements equal to the max (min).
template <typename T>
void ReduceAmaxGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetReduceGradArgs<T>(ctx, true);
  const BroadcastIndex index = OutIndex(ctx.op_type(), a.x_dims, a.s);
  std::vector<int64_t> ties(static_cast<size_t>(a.n_out), 0);
  for (int64_t e = 0; e < a.total; ++e) {
    const int64_t j = index(e);
    if (a.x[e] == a.out[j]) ++ties[j];
  }
  for (int64_t e = 0; e < a.total; ++e) {
    const int64_t j = index(e);
    a.dx[e] = a.x[e] == a.out[j] ? a.dout[j] / static_cast<T>(ties[j]) : T(0);
  }
}

// X@GRAD = Out@GRAD * the product of the other elements of X's group.
template <typename T>
void ReduceProdGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetReduceGradArgs<T>(ctx, false);
  const BroadcastIndex index = OutIndex(ctx.op_type(), a.x_dims, a.s);
  // Per group: the product of its non-zero elements and how many zeros it holds.
  std::vector<T> nonzero(static_cast<size_t>(a.n_out), T(1));
  std::vector<int64_t> zeros(static_cast<size_t>(a.n_out), 0);
  for (int64_t e = 0; e < a.total; ++e) {
    const int64_t j = index(e);
    if (a.x[e] == T(0))
      ++zeros[j];
    else
      nonzero[j] *= a.x[e];
  }
  for (int64_t e = 0; e < a.total; ++e) {
    const int64_t j = index(e);
    T others;
    if (a.x[e] != T(0))
      others = zeros[j] ? T(0) : nonzero[j] / a.x[e];
    else
      others = zeros[j] == 1 ? nonzero[j] : T(0);
    a.dx[e] = a.dout[j] * others;
  }
}

template <typename T>
void SumKernel(KernelContext& c) {
  const TideDataType x = c.Input("X").dtype(), out = SumOutType(c, x);
  if (out == x) return ReduceKernel<T, SumR>(c);
  switch (out) {
    case TIDE_INT32:
      return ReduceInto<T, int32_t, SumR>(c);
    case TIDE_INT64:
      return ReduceInto<T, int64_t, SumR>(c);
    case TIDE_FP32:
      return ReduceInto<T, float, SumR>(c);
    case TIDE_FP64:
      return ReduceInto<T, double, SumR>(c);
    default:
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", c.op_type(), "': out_dtype ",
                 tide::DataTypeName(out), " is not one reduce_sum gives for X of ",
                 tide::DataTypeName(x), "; expected X's type, int32, int64, float32 or float64");
  }
}
template <typename T>
void MeanKernel(KernelContext& c) {
  ReduceKernel<T, MeanR>(c);
}
template <typename T>
void MaxKernel(KernelContext& c) {
  ReduceKernel<T, MaxR>(c);
}
template <typename T>
void MinKernel(KernelContext& c) {
  ReduceKernel<T, MinR>(c);
}
template <typename T>
void ProdKernel(KernelContext& c) {
  ReduceKernel<T, ProdR>(c);
}
// Over numbers (Paddle's all / any on float and int tensors): whether they are non-zero.
template <typename T>
void AllKernel(KernelContext& c) {
  ReduceInto<T, bool, AllR>(c);
}
template <typename T>
void AnyKernel(KernelContext& c) {
  ReduceInto<T, bool, AnyR>(c);
}
// reduce_sum of a complex X to its real type (out_dtype) sums the real parts: X@GRAD is
// Out@GRAD + 0i (the imaginary parts do not reach Out).
template <typename T>
void RealPartsSumGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const ReduceShape s = tide::ops::ReduceShapeOf(ctx, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), s.out);
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  if (x.numel() == 0) return;
  const RealType<T>* g = dout.data<RealType<T>>();
  const BroadcastIndex index = OutIndex(ctx.op_type(), x.dims(), s);
  for (int64_t e = 0; e < x.numel(); ++e) dx[e] = T(g[index(e)], 0);
}

template <typename T>
void SumGradKernel(KernelContext& c) {
  if constexpr (kIsComplex<T>) {
    if (c.Input(GradVarName("Out").c_str()).dtype() != c.Input("X").dtype())
      return RealPartsSumGradKernel<T>(c);
  }
  ReduceGradKernel<T, SumG>(c);
}
template <typename T>
void MeanGradKernel(KernelContext& c) {
  ReduceGradKernel<T, MeanG>(c);
}
template <typename T>
void ExtremeGradKernel(KernelContext& c) {
  ReduceGradKernel<T, ExtremeG>(c);
}

void ReduceInferShape(tide::InferShapeContext& ctx) {
  const ReduceShape s = tide::ops::ReduceShapeOf(ctx, ctx.InputDims("X"));
  tide::ops::CheckReduceDtypes(ctx, ctx.InputDataType("X"));
  ctx.SetOutputDims("Out", s.out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  // Rows not reduced stay X's sequences (as Fluid, which shares the LoD when dim[0] is not 0).
  if (!s.reduced.empty() && !s.reduced[0]) ctx.ShareLoD("X", "Out");
}

// reduce_sum: Out's type by SumOutType; in_dtype, when given, must be X's.
void SumInferShape(tide::InferShapeContext& ctx) {
  const ReduceShape s = tide::ops::ReduceShapeOf(ctx, ctx.InputDims("X"));
  const TideDataType x = ctx.InputDataType("X");
  if (ctx.HasAttr("in_dtype") && ctx.Attr<int32_t>("in_dtype") != -1) {
    const TideDataType in = tide::ops::DataTypeAttr(ctx, "in_dtype");
    TIDE_CHECK(in == x, "op '", ctx.op_type(), "': in_dtype ", tide::DataTypeName(in),
               " differs from X's ", tide::DataTypeName(x),
               "; Tide reduces in X's type (cast X instead)");
  }
  ctx.SetOutputDims("Out", s.out);
  ctx.SetOutputDataType("Out", x == TIDE_UNDEFINED ? x : SumOutType(ctx, x));
  if (!s.reduced.empty() && !s.reduced[0]) ctx.ShareLoD("X", "Out");
}

// reduce_all / reduce_any: Out is bool whatever X's type.
void LogicalReduceInferShape(tide::InferShapeContext& ctx) {
  const ReduceShape s = tide::ops::ReduceShapeOf(ctx, ctx.InputDims("X"));
  ctx.SetOutputDims("Out", s.out);
  ctx.SetOutputDataType("Out", TIDE_BOOL);
  if (!s.reduced.empty() && !s.reduced[0]) ctx.ShareLoD("X", "Out");
}

// Paddle's reduce_amax / reduce_amin declare `dim` int64 (`long_dim`), the others int32.
tide::OpSchema ReduceAttrs(tide::OpSchema s, bool long_dim = false) {
  const char* dim_doc = "the dims to reduce (negative: from the end)";
  if (long_dim)
    s.Attr("dim", std::vector<int64_t>{0}, dim_doc);
  else
    s.Attr("dim", std::vector<int32_t>{0}, dim_doc);
  return s.Attr("keep_dim", false, "keep the reduced dims as 1s")
      .Attr("reduce_all", false, "reduce every dim")
      .Attr("in_dtype", int32_t(-1), "Paddle 2.x: X's type to reduce in (-1: X's own)")
      .Attr("out_dtype", int32_t(-1), "Paddle 2.x: Out's type (-1: X's)");
}

// Paddle 2.x's reduce_amax / reduce_amin programs declare AxisTensor / AxisTensorList (the dims
// from tensors), which paddle.amax fills only for an axis given as a tensor: Tide refuses that.
void ReduceAxisTensorInferShape(tide::InferShapeContext& ctx) {
  TIDE_CHECK(!ctx.HasInput("AxisTensor") && !ctx.HasInput("AxisTensorList"), "op '", ctx.op_type(),
             "': dims from AxisTensor / AxisTensorList are not supported; give the `dim` "
             "attribute (an axis of Python ints)");
  ReduceInferShape(ctx);
}

tide::OpSchema ReduceSchema(const std::string& type, const std::string& what, bool grad,
                            bool long_dim = false) {
  tide::OpSchema base = tide::OpSchema(type)
                            .Comment("Out = the " + what +
                                     " of X over `dim` (every dim with "
                                     "reduce_all); keep_dim keeps them as 1s.")
                            .Input("X", "input");
  if (long_dim)
    base.Input("AxisTensor", "Paddle 2.x: the dims as a tensor (refused)")
        .AsDispensable()
        .Input("AxisTensorList", "Paddle 2.x: the dims as tensors (refused)")
        .AsDuplicable()
        .AsDispensable();
  auto s = ReduceAttrs(base.Output("Out", "the reduction")
                           .InferShape(long_dim ? ReduceAxisTensorInferShape : ReduceInferShape),
                       long_dim);
  if (!grad) return s.NoGradient();
  return s.Grad([type](tide::GradMaker& g) {
    g.NewOp(type + "_grad")
        .Input("X", g.Input("X"))
        .Input("Out", g.Output("Out"))
        .Input(GradVarName("Out"), g.OutputGrad("Out"))
        .Output(GradVarName("X"), g.InputGrad("X"))
        .CopyAttrs();
  });
}

tide::OpSchema ReduceGradSchema(const std::string& type, bool long_dim = false) {
  return ReduceAttrs(tide::OpSchema(type)
                         .Input("X")
                         .Input("Out")
                         .Input(GradVarName("Out"))
                         .Output(GradVarName("X"))
                         .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))),
                     long_dim);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ReduceSchema("reduce_sum", "sum", true).InferShape(SumInferShape));
TIDE_REGISTER_OP(ReduceSchema("reduce_mean", "mean", true));
TIDE_REGISTER_OP(ReduceSchema("reduce_max", "maximum", true));
TIDE_REGISTER_OP(ReduceSchema("reduce_min", "minimum", true));
TIDE_REGISTER_OP(ReduceSchema("reduce_prod", "product", true));
// Paddle 2.x's amax / amin: reduce_max / reduce_min whose grad splits among ties.
TIDE_REGISTER_OP(ReduceSchema("reduce_amax", "maximum", true, true));
TIDE_REGISTER_OP(ReduceSchema("reduce_amin", "minimum", true, true));
TIDE_REGISTER_OP(ReduceSchema("reduce_all", "logical and (bool; numbers: non-zero)", false)
                     .InferShape(LogicalReduceInferShape));
TIDE_REGISTER_OP(ReduceSchema("reduce_any", "logical or (bool; numbers: non-zero)", false)
                     .InferShape(LogicalReduceInferShape));
TIDE_REGISTER_OP(ReduceGradSchema("reduce_sum_grad"));
TIDE_REGISTER_OP(ReduceGradSchema("reduce_mean_grad"));
TIDE_REGISTER_OP(ReduceGradSchema("reduce_max_grad"));
TIDE_REGISTER_OP(ReduceGradSchema("reduce_min_grad"));
TIDE_REGISTER_OP(ReduceGradSchema("reduce_prod_grad"));
TIDE_REGISTER_OP(ReduceGradSchema("reduce_amax_grad", true));
TIDE_REGISTER_OP(ReduceGradSchema("reduce_amin_grad", true));
// Paddle's sum also takes bool (counting, to int64) and the byte and int16 types (in their own).
TIDE_REGISTER_KERNEL("reduce_sum", "cpu", SumKernel, OPS_MATH_NUMERIC_TYPES, bool, uint8_t, int8_t,
                     int16_t, OPS_MATH_COMPLEX_TYPES);
// Paddle's mean of integers divides as integers (truncating).
TIDE_REGISTER_KERNEL("reduce_mean", "cpu", MeanKernel, OPS_MATH_NUMERIC_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("reduce_max", "cpu", MaxKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("reduce_min", "cpu", MinKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("reduce_prod", "cpu", ProdKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("reduce_amax", "cpu", MaxKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("reduce_amin", "cpu", MinKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("reduce_all", "cpu", AllKernel, bool, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("reduce_any", "cpu", AnyKernel, bool, OPS_MATH_NUMERIC_TYPES);
// Linear with real factors: of complex values X@GRAD is Out@GRAD broadcast back (/ the count).
TIDE_REGISTER_KERNEL("reduce_sum_grad", "cpu", SumGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("reduce_mean_grad", "cpu", MeanGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("reduce_max_grad", "cpu", ExtremeGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_min_grad", "cpu", ExtremeGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_prod_grad", "cpu", ReduceProdGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_amax_grad", "cpu", ReduceAmaxGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_amin_grad", "cpu", ReduceAmaxGradKernel, OPS_MATH_FLOAT_TYPES);
