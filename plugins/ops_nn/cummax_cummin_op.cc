// cummax_cummin_op.cc: Paddle's cummax / cummin (paddle.cummax, paddle.cummin): out = the running
// maximum (minimum) of x along `axis`, indices = where along the axis each came from, as Paddle's
// kernel picks it: a tie takes the later element, and a NaN, once met, stays (with its index).
// The grad adds out@GRAD into x@GRAD at indices.
#include <cmath>
#include <tide/ops/dtype_attr.hpp>

#include "common.h"

namespace ops_nn {
namespace {

// x's lines along `axis`: `outer` blocks of `n` elements `inner` apart (a 0-D x is one line).
struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
};

template <typename Ctx>
Lines LinesOf(const Ctx& ctx, const Dims& x) {
  const int32_t axis = ctx.template Attr<int32_t>("axis");
  const int rank = static_cast<int>(x.size());
  if (rank == 0) {
    TIDE_CHECK(axis == 0 || axis == -1, "op '", ctx.op_type(), "': axis ", axis,
               " is out of range for a 0-D x");
    return {};
  }
  const int a = NormAxis(ctx.op_type(), axis, x.size());
  Lines l;
  l.n = x[a];
  for (int k = 0; k < a; ++k) l.outer *= x[k];
  for (int k = a + 1; k < rank; ++k) l.inner *= x[k];
  return l;
}

template <typename Ctx>
TideDataType IndicesType(const Ctx& ctx) {
  const TideDataType t = tide::ops::DataTypeAttr(ctx, "dtype");
  TIDE_CHECK(t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
             "': attribute 'dtype' (indices' type) must be int32 or int64, got ",
             tide::DataTypeName(t));
  return t;
}

void CumExtremeInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("x");
  LinesOf(ctx, x);  // checks axis
  ctx.SetOutputDims("out", x);
  ctx.SetOutputDataType("out", ctx.InputDataType("x"));
  ctx.SetOutputDims("indices", x);
  ctx.SetOutputDataType("indices", IndicesType(ctx));
}

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

// Better(v, best): v replaces the running extreme (ties included: the later one wins).
struct MaxBetter {
  template <typename T>
  static bool Better(T v, T best) {
    return v >= best;
  }
};
struct MinBetter {
  template <typename T>
  static bool Better(T v, T best) {
    return v <= best;
  }
};

template <typename T, typename I, typename B>
void Scan(const Lines& l, const T* x, T* out, I* idx) {
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t in = 0; in < l.inner; ++in) {
      const int64_t base = o * l.n * l.inner + in;
      T best = x[base];
      int64_t at = 0;
      for (int64_t j = 0; j < l.n; ++j) {
        const T v = x[base + j * l.inner];
        if (!IsNan(best) && (IsNan(v) || B::Better(v, best))) {
          best = v;
          at = j;
        }
        out[base + j * l.inner] = best;
        idx[base + j * l.inner] = static_cast<I>(at);
      }
    }
}

template <typename B>
struct CumExtreme {
  template <typename T>
  static void Kernel(KernelContext& ctx) {
    Tensor x = ctx.Input("x");
    const Lines l = LinesOf(ctx, x.dims());
    T* out = ctx.Output("out").mutable_data<T>(x.dims(), ctx.place());
    Tensor indices = ctx.Output("indices");
    if (IndicesType(ctx) == TIDE_INT32)
      Scan<T, int32_t, B>(l, x.data<T>(), out,
                          indices.mutable_data<int32_t>(x.dims(), ctx.place()));
    else
      Scan<T, int64_t, B>(l, x.data<T>(), out,
                          indices.mutable_data<int64_t>(x.dims(), ctx.place()));
  }
};

template <typename T>
void CummaxKernel(KernelContext& ctx) {
  CumExtreme<MaxBetter>::Kernel<T>(ctx);
}
template <typename T>
void CumminKernel(KernelContext& ctx) {
  CumExtreme<MinBetter>::Kernel<T>(ctx);
}

// x@GRAD[line, indices[j]] += out@GRAD[line, j].
template <typename T>
void CumExtremeGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("x");
  const Lines l = LinesOf(ctx, x.dims());
  Tensor dout = ctx.Input(GradVarName("out").c_str());
  TIDE_CHECK(dout.dims() == x.dims(), "op '", ctx.op_type(), "': out@GRAD ",
             tide::ToString(dout.dims()), " differs from x ", tide::ToString(x.dims()));
  const std::vector<int64_t> idx = IntValues(ctx, "indices");
  TIDE_CHECK(static_cast<int64_t>(idx.size()) == x.numel(), "op '", ctx.op_type(), "': indices ",
             tide::ToString(ctx.Input("indices").dims()), " differs from x ",
             tide::ToString(x.dims()));
  const T* g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("x").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t in = 0; in < l.inner; ++in) {
      const int64_t base = o * l.n * l.inner + in;
      for (int64_t j = 0; j < l.n; ++j) {
        const int64_t at = idx[base + j * l.inner];
        TIDE_CHECK(at >= 0 && at <= j, "op '", ctx.op_type(), "': indices ('",
                   ctx.InputName("indices"), "') holds ", at, " at position ", j,
                   " of its line; expected [0, ", j, "]");
        dx[base + at * l.inner] += g[base + j * l.inner];
      }
    }
}

tide::OpSchema CumExtremeSchema(const std::string& type, const std::string& what) {
  return tide::OpSchema(type)
      .Comment("out = the running " + what + " of x along axis, indices its position (paddle." +
               type + ").")
      .Input("x", "the input")
      .Output("out", "x's dims and type")
      .Output("indices", "x's dims, `dtype`: where along axis each out element came from")
      .Attr("axis", int32_t{-1}, "the axis of the scan (negative: from the end)")
      .Attr("dtype", int32_t{TIDE_INT64}, "indices' type: int32 or int64")
      .KernelDataTypeFrom("x")
      .InferShape(CumExtremeInferShape)
      .Grad([type](tide::GradMaker& g) {
        g.NewOp(type + "_grad")
            .Input("x", g.Input("x"))
            .Input("indices", g.Output("indices"))
            .Input(GradVarName("out"), g.OutputGrad("out"))
            .Output(GradVarName("x"), g.InputGrad("x"))
            .CopyAttrs();
      });
}

tide::OpSchema CumExtremeGradSchema(const std::string& type) {
  return tide::OpSchema(type)
      .Comment("x@GRAD: out@GRAD added up at indices along axis.")
      .Input("x")
      .Input("indices")
      .Input(GradVarName("out"))
      .Output(GradVarName("x"))
      .Attr("axis", int32_t{-1})
      .Attr("dtype", int32_t{TIDE_INT64})
      .KernelDataTypeFrom("x")
      .InferShape(GradLike({"x"}));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(CumExtremeSchema("cummax", "maximum"));
TIDE_REGISTER_OP(CumExtremeSchema("cummin", "minimum"));
TIDE_REGISTER_OP(CumExtremeGradSchema("cummax_grad"));
TIDE_REGISTER_OP(CumExtremeGradSchema("cummin_grad"));
TIDE_REGISTER_KERNEL("cummax", "cpu", CummaxKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("cummin", "cpu", CumminKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("cummax_grad", "cpu", CumExtremeGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cummin_grad", "cpu", CumExtremeGradKernel, OPS_NN_FLOAT_TYPES);
