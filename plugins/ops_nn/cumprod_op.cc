// cumprod_op.cc: Paddle's cumprod (paddle.cumprod: the running product of X along `dim`;
// Paddle 3's exclusive and reverse too) and its grad. The grad never divides by X, so zeros
// in X get their true gradient, as Paddle's kernel gives:
//   dX[i] = prod(X[k], k < i) * S[i],  S[i] = dOut[i] + X[i+1] * S[i+1]   (inclusive),
//   dX[i] = prod(X[k], k < i) * E[i],  E[i] = dOut[i+1] + X[i+1] * E[i+1] (exclusive),
// along the scan's direction (reverse walks the dim backwards).
#include "common.h"

namespace ops_nn {
namespace {

// The lines along `dim`: `outer` blocks of `n` elements `inner` apart.
struct Lines {
  int64_t outer, n, inner;
};

template <typename Ctx>
Lines LinesOf(const Ctx& ctx, const Dims& x) {
  const int rank = static_cast<int>(x.size());
  const int32_t dim = ctx.template Attr<int32_t>("dim");
  // A 0-D X is one element: dim -1 or 0 names it.
  if (rank == 0) {
    TIDE_CHECK(dim == 0 || dim == -1, "op '", ctx.op_type(), "': dim ", dim,
               " is out of range for a 0-D X");
    return {1, 1, 1};
  }
  const int a = NormAxis(ctx.op_type(), dim, x.size());
  Lines l{1, x[a], 1};
  for (int k = 0; k < a; ++k) l.outer *= x[k];
  for (int k = a + 1; k < rank; ++k) l.inner *= x[k];
  return l;
}

// fn(p): p(j) the offset of the line's j-th element in scan order.
template <typename F>
void ForEachLine(const Lines& l, bool reverse, F&& fn) {
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t in = 0; in < l.inner; ++in) {
      const int64_t base = o * l.n * l.inner + in;
      fn([&, base](int64_t j) { return base + (reverse ? l.n - 1 - j : j) * l.inner; });
    }
}

template <typename T>
void CumprodKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Lines l = LinesOf(ctx, x.dims());
  const bool exclusive = ctx.Attr<bool>("exclusive"), reverse = ctx.Attr<bool>("reverse");
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  ForEachLine(l, reverse, [&](auto p) {
    T acc = T(1);
    for (int64_t j = 0; j < l.n; ++j) {
      if (exclusive) {
        o[p(j)] = acc;
        acc *= xd[p(j)];
      } else {
        acc *= xd[p(j)];
        o[p(j)] = acc;
      }
    }
  });
}

template <typename T>
void CumprodGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Lines l = LinesOf(ctx, x.dims());
  const bool exclusive = ctx.Attr<bool>("exclusive"), reverse = ctx.Attr<bool>("reverse");
  const T* xd = x.data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  ForEachLine(l, reverse, [&](auto p) {
    // Backwards: dx[p(j)] holds S[j] (E[j]) first, then is scaled by the prefix product.
    T s = T(0);
    for (int64_t j = l.n - 1; j >= 0; --j) {
      const T next_x = j + 1 < l.n ? xd[p(j + 1)] : T(0);
      if (exclusive)
        s = j + 1 < l.n ? g[p(j + 1)] + next_x * s : T(0);
      else
        s = g[p(j)] + next_x * s;
      dx[p(j)] = s;
    }
    T prefix = T(1);
    for (int64_t j = 0; j < l.n; ++j) {
      dx[p(j)] *= prefix;
      prefix *= xd[p(j)];
    }
  });
}

void CumprodInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  LinesOf(ctx, x);  // checks dim
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

tide::OpSchema CumprodAttrs(tide::OpSchema s) {
  return s.Attr("dim", int32_t{-1}, "the dim of the scan (negative: from the end)")
      .Attr("exclusive", false, "Paddle 3: each Out leaves its own X out of the product")
      .Attr("reverse", false, "Paddle 3: scan from the dim's end");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(CumprodAttrs(tide::OpSchema("cumprod")
                                  .Comment("Out = the running product of X along dim "
                                           "(paddle.cumprod).")
                                  .Input("X", "the input")
                                  .Output("Out", "X's dims")
                                  .InferShape(CumprodInferShape))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("cumprod_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(CumprodAttrs(tide::OpSchema("cumprod_grad")
                                  .Input("X")
                                  .Input("Out")
                                  .Input(GradVarName("Out"))
                                  .Output(GradVarName("X"))
                                  .KernelDataTypeFrom("X")
                                  .InferShape(GradLike({"X"}))));
TIDE_REGISTER_KERNEL("cumprod", "cpu", CumprodKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("cumprod_grad", "cpu", CumprodGradKernel, OPS_NN_FLOAT_TYPES);
