// p_norm_op.cc: Paddle 2.x's p_norm (paddle.norm / paddle.linalg.vector_norm with a number p):
// Out = (sum |X|^porder)^(1 / porder) along `axis` (or over all of X with `asvector`), max |X|
// for porder inf, min |X| for -inf, the count of nonzeros for 0; and its grad
// (sign(X) |X|^(p-1) dOut / (Out^(p-1) + epsilon), Paddle's rule; for +-inf dOut goes to the
// entries where |X| equals Out).
#include <cmath>
#include <limits>
#include <tide/ops/axis.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

// X as [pre, n, post] around the reduced axis (one line of all X with asvector), and Out's dims.
struct PNormGeom {
  int64_t pre, n, post;
  Dims out;
};

PNormGeom GetPNormGeom(const char* op, const Dims& x, int axis, bool keepdim, bool asvector) {
  PNormGeom g;
  if (asvector || x.empty()) {
    g.pre = g.post = 1;
    g.n = tide::ops::DimsProductOrUnknown(x);
    g.out = keepdim ? Dims(x.size(), 1) : Dims{};
    return g;
  }
  const int a = tide::ops::NormAxis(op, axis, x.size());
  g.pre = tide::ops::DimsProductOrUnknown(x, 0, a);
  g.n = x[a];
  g.post = tide::ops::DimsProductOrUnknown(x, a + 1, x.size());
  g.out = x;
  if (keepdim)
    g.out[a] = 1;
  else
    g.out.erase(g.out.begin() + a);
  return g;
}

PNormGeom PNormGeomOf(const tide::InferShapeContext& c, const Dims& x) {
  return GetPNormGeom(c.op_type(), x, c.Attr<int32_t>("axis"), c.Attr<bool>("keepdim"),
                      c.Attr<bool>("asvector"));
}
PNormGeom PNormGeomOf(const KernelContext& c, const Dims& x) {
  return GetPNormGeom(c.op_type(), x, c.Attr<int32_t>("axis"), c.Attr<bool>("keepdim"),
                      c.Attr<bool>("asvector"));
}

template <typename T>
void PNormKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const PNormGeom g = PNormGeomOf(ctx, x.dims());
  const T p = static_cast<T>(ctx.Attr<float>("porder"));
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(g.out, ctx.place());
  for (int64_t i = 0; i < g.pre; ++i)
    for (int64_t k = 0; k < g.post; ++k) {
      const T* line = xd + i * g.n * g.post + k;
      T r;
      if (std::isinf(p)) {
        r = g.n ? std::abs(line[0]) : T(0);
        for (int64_t j = 1; j < g.n; ++j) {
          const T v = std::abs(line[j * g.post]);
          r = p > 0 ? std::max(r, v) : std::min(r, v);
        }
      } else if (p == T(0)) {
        r = 0;
        for (int64_t j = 0; j < g.n; ++j) r += line[j * g.post] != T(0) ? T(1) : T(0);
      } else {
        T s = 0;
        for (int64_t j = 0; j < g.n; ++j) s += std::pow(std::abs(line[j * g.post]), p);
        r = std::pow(s, T(1) / p);
      }
      o[i * g.post + k] = r;
    }
}

template <typename T>
T Sign(T v) {
  return v > T(0) ? T(1) : (v < T(0) ? T(-1) : T(0));
}

template <typename T>
void PNormGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const PNormGeom g = PNormGeomOf(ctx, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.out);
  const T p = static_cast<T>(ctx.Attr<float>("porder"));
  const T eps = static_cast<T>(ctx.Attr<float>("epsilon"));
  const T* xd = x.data<T>();
  const T* od = out.data<T>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < g.pre; ++i)
    for (int64_t k = 0; k < g.post; ++k) {
      const T nrm = od[i * g.post + k], dy = gd[i * g.post + k];
      for (int64_t j = 0; j < g.n; ++j) {
        const int64_t e = i * g.n * g.post + j * g.post + k;
        const T v = xd[e];
        if (p == T(0))
          dx[e] = 0;
        else if (std::isinf(p))
          dx[e] = std::abs(v) == nrm ? Sign(v) * dy : T(0);
        else
          dx[e] = v == T(0) ? T(0)
                            : Sign(v) * std::pow(std::abs(v), p - T(1)) * dy /
                                  (std::pow(nrm, p - T(1)) + eps);
      }
    }
}

void PNormInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", PNormGeomOf(ctx, ctx.InputDims("X")).out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

tide::OpSchema PNormAttrs(tide::OpSchema s) {
  return s.Attr("porder", 2.0f, "the p of the norm (inf, -inf and 0 too)")
      .Attr("axis", int32_t(-1), "the reduced axis (negative: from the end)")
      .Attr("epsilon", 1e-12f, "keeps the grad's divisor from 0")
      .Attr("keepdim", false, "keep the reduced axis as a dim of 1")
      .Attr("asvector", false, "the norm of all of X as one vector (axis ignored)");
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(PNormAttrs(tide::OpSchema("p_norm")
                                .Comment("Out = (sum |X|^porder)^(1/porder) along axis (max |X| "
                                         "for inf, min for -inf, the nonzero count for 0).")
                                .Input("X", "the input")
                                .Output("Out", "X's dims without the axis (a 1 with keepdim)"))
                     .InferShape(PNormInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("p_norm_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(PNormAttrs(tide::OpSchema("p_norm_grad")
                                .Input("X")
                                .Input("Out")
                                .Input(GradVarName("Out"))
                                .Output(GradVarName("X")))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("p_norm", "cpu", PNormKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("p_norm_grad", "cpu", PNormGradKernel, OPS_MATH_FLOAT_TYPES);
