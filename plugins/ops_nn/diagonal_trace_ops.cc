// diagonal_trace_ops.cc: Paddle's diagonal (paddle.diagonal: the diagonal of Input's (axis1,
// axis2) planes, `offset` above the main one (negative: below), as Out's last dim) and trace
// (paddle.trace: the sum of that diagonal; Out 0-D for a 2-D Input, as Paddle 2.5+), with grads
// that put Out@GRAD back on the diagonal and zeros elsewhere.
#include <string>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

struct Diag {
  int a1, a2;   // the plane's dims of Input
  int64_t len;  // the diagonal's length
  Dims batch;   // Input's dims without a1, a2
};

template <typename Ctx>
Diag DiagOf(const Ctx& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  TIDE_CHECK(x.size() >= 2, "op '", op, "': Input must have rank >= 2, got ", tide::ToString(x));
  const int64_t offset = ctx.template Attr<int32_t>("offset");
  Diag d;
  d.a1 = NormAxis(op, ctx.template Attr<int32_t>("axis1"), x.size());
  d.a2 = NormAxis(op, ctx.template Attr<int32_t>("axis2"), x.size());
  TIDE_CHECK(d.a1 != d.a2, "op '", op, "': axis1 and axis2 must name different dims of Input ",
             tide::ToString(x), ", both are ", d.a1);
  for (size_t k = 0; k < x.size(); ++k)
    if (static_cast<int>(k) != d.a1 && static_cast<int>(k) != d.a2) d.batch.push_back(x[k]);
  const int64_t n1 = x[d.a1], n2 = x[d.a2];
  if (n1 < 0 || n2 < 0) {
    d.len = -1;
  } else {
    d.len = offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2);
    d.len = std::max<int64_t>(d.len, 0);
  }
  return d;
}

// fn(b, k, off): Input's element `off` is the k-th diagonal element of batch index b.
template <typename F>
void ForEachDiagonal(const Dims& x, const Diag& d, int64_t offset, F&& fn) {
  const std::vector<int64_t> st = Strides(x);
  std::vector<int64_t> batch_st;
  for (size_t k = 0; k < x.size(); ++k)
    if (static_cast<int>(k) != d.a1 && static_cast<int>(k) != d.a2) batch_st.push_back(st[k]);
  const int64_t start = (offset >= 0 ? offset * st[d.a2] : -offset * st[d.a1]);
  const int64_t step = st[d.a1] + st[d.a2];
  ForEachIndex(d.batch, [&](const std::vector<int64_t>& idx, int64_t b) {
    int64_t base = start;
    for (size_t k = 0; k < idx.size(); ++k) base += idx[k] * batch_st[k];
    for (int64_t k = 0; k < d.len; ++k) fn(b, k, base + k * step);
  });
}

Dims DiagonalOutDims(const Diag& d) {
  Dims out = d.batch;
  out.push_back(d.len);
  return out;
}

void DiagonalInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", DiagonalOutDims(DiagOf(ctx, ctx.InputDims("Input"))));
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
}

void TraceInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", DiagOf(ctx, ctx.InputDims("Input")).batch);
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
}

template <typename T>
void DiagonalKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input");
  const Diag d = DiagOf(ctx, x.dims());
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(DiagonalOutDims(d), ctx.place());
  ForEachDiagonal(x.dims(), d, ctx.Attr<int32_t>("offset"),
                  [&](int64_t b, int64_t k, int64_t off) { o[b * d.len + k] = xd[off]; });
}

template <typename T>
void TraceKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input");
  const Diag d = DiagOf(ctx, x.dims());
  const T* xd = x.data<T>();
  Tensor out = ctx.Output("Out");
  T* o = out.mutable_data<T>(d.batch, ctx.place());
  std::fill(o, o + out.numel(), T(0));
  ForEachDiagonal(x.dims(), d, ctx.Attr<int32_t>("offset"),
                  [&](int64_t b, int64_t, int64_t off) { o[b] += xd[off]; });
}

// Input@GRAD: zeros, with Out@GRAD's elements on the diagonal (each one for trace's batch).
template <typename T, bool kTrace>
void DiagGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input");
  const Diag d = DiagOf(ctx, x.dims());
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  Tensor dx = ctx.Output(GradVarName("Input").c_str());
  T* dxd = dx.mutable_data<T>(x.dims(), ctx.place());
  std::fill(dxd, dxd + dx.numel(), T(0));
  ForEachDiagonal(x.dims(), d, ctx.Attr<int32_t>("offset"), [&](int64_t b, int64_t k, int64_t off) {
    dxd[off] = kTrace ? g[b] : g[b * d.len + k];
  });
}

template <typename T>
void DiagonalGradKernel(KernelContext& c) {
  DiagGradKernel<T, false>(c);
}
template <typename T>
void TraceGradKernel(KernelContext& c) {
  DiagGradKernel<T, true>(c);
}

tide::OpSchema DiagAttrs(tide::OpSchema s) {
  return s.Attr("offset", int32_t{0}, "the diagonal: above the main one when > 0, below when < 0")
      .Attr("axis1", int32_t{0}, "the plane's first dim (negative: from the end)")
      .Attr("axis2", int32_t{1}, "the plane's second dim");
}

tide::OpSchema DiagSchema(const std::string& type, const std::string& what,
                          tide::InferShapeFn infer) {
  return DiagAttrs(tide::OpSchema(type)
                       .Comment(what)
                       .Input("Input", "the input, rank >= 2")
                       .Output("Out", "the diagonal")
                       .InferShape(std::move(infer)))
      .Grad([type](tide::GradMaker& g) {
        g.NewOp(type + "_grad")
            .Input("Input", g.Input("Input"))
            .Input(GradVarName("Out"), g.OutputGrad("Out"))
            .Output(GradVarName("Input"), g.InputGrad("Input"))
            .CopyAttrs();
      });
}

tide::OpSchema DiagGradSchema(const std::string& type) {
  return DiagAttrs(tide::OpSchema(type)
                       .Input("Input")
                       .Input(GradVarName("Out"))
                       .Output(GradVarName("Input"))
                       .InferShape(GradLike({"Input"})));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(DiagSchema("diagonal",
                            "Out = the diagonal of Input's (axis1, axis2) planes, `offset` from "
                            "the main one, as Out's last dim (paddle.diagonal).",
                            DiagonalInferShape));
TIDE_REGISTER_OP(DiagSchema("trace",
                            "Out = the sum of the diagonal of Input's (axis1, axis2) planes, "
                            "`offset` from the main one (paddle.trace).",
                            TraceInferShape));
TIDE_REGISTER_OP(DiagGradSchema("diagonal_grad"));
TIDE_REGISTER_OP(DiagGradSchema("trace_grad"));
TIDE_REGISTER_KERNEL("diagonal", "cpu", DiagonalKernel, OPS_NN_MOVE_TYPES, bool);
TIDE_REGISTER_KERNEL("trace", "cpu", TraceKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("diagonal_grad", "cpu", DiagonalGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("trace_grad", "cpu", TraceGradKernel, OPS_NN_FLOAT_TYPES);
