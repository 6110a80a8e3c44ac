// tide/ops/similarity.hpp: cos_sim's shapes and grad inputs (with their errors) and gradient,
// norm's (the l2_normalize op's) Norm dims and gradient, for every implementation of them; the
// formulas also in CUDA device code, so every device rounds them alike; cos_sim, norm and their
// grads as every kernel reads their inputs (outputs allocated on the kernel's place).
#ifndef TIDE_OPS_SIMILARITY_HPP_
#define TIDE_OPS_SIMILARITY_HPP_

#include <cstdint>
#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// cos_sim: X [N, ...] against Y [N, ...] or [1, ...] (y_shared: one Y row for every X row), rows
// of d elements; Out, XNorm [N, 1], YNorm [N or 1, 1].
struct CosSimGeom {
  int64_t n, d;
  bool y_shared;
};
inline CosSimGeom GetCosSimGeom(const char* op, const Dims& x, const Dims& y) {
  TIDE_CHECK(x.size() >= 2 && x.size() == y.size(), "op '", op, "': X ", ToString(x), " and Y ",
             ToString(y), " must have one rank >= 2");
  const int64_t dx = DimsProductOrUnknown(x, 1, x.size());
  const int64_t dy = DimsProductOrUnknown(y, 1, y.size());
  TIDE_CHECK(DimsCompatible(dx, dy), "op '", op, "': X ", ToString(x), " and Y ", ToString(y),
             " differ in a row's size");
  TIDE_CHECK(DimsCompatible(x[0], y[0]) || y[0] == 1, "op '", op, "': Y ", ToString(y),
             " must have X's rows or 1 row (X ", ToString(x), ")");
  return {x[0], dx, y[0] == 1 && x[0] != 1};
}

// cos_sim_grad's inputs from the forward fit X and Y: Out, XNorm and Out@GRAD hold one value per
// row of X, YNorm one per row of Y that is used.
inline void CheckCosSimGradInputs(const char* op, const CosSimGeom& g, const Dims& out,
                                  const Dims& x_norm, const Dims& y_norm, const Dims& dout) {
  const int64_t y_rows = g.y_shared ? 1 : g.n;
  TIDE_CHECK(DimsProduct(out) == g.n && DimsProduct(x_norm) == g.n && DimsProduct(dout) == g.n &&
                 DimsProduct(y_norm) == y_rows,
             "op '", op, "': Out ", ToString(out), ", XNorm ", ToString(x_norm), " and Out@GRAD ",
             ToString(dout), " must hold one value per row of X (", g.n, "), YNorm ",
             ToString(y_norm), " one per row of Y (", y_rows, ")");
}

// d out / d a for out = <a, b> / (|a| |b|), times dout: dout * (b / (|a| |b|) - out * a / |a|^2).
// `norms` is |a| |b|, `a_norm` |a| (for X@GRAD a is X's element; for Y@GRAD, Y's).
template <typename T>
TIDE_OPS_HOST_DEVICE T CosSimGrad(T dout, T a, T b, T out, T norms, T a_norm) {
  return dout * (b / norms - out * a / (a_norm * a_norm));
}

// norm: Norm has X's dims with 1 on the (normalised) axis.
inline Dims L2NormDims(const char* op, Dims x, int axis) {
  x[NormAxis(op, axis, x.size())] = 1;
  return x;
}

// norm's grad along a line of the axis, Out = X / norm: X@GRAD = (dOut - X / norm * dot) / norm,
// dot = the line's sum of L2NormalizeDotTerm.
template <typename T>
TIDE_OPS_HOST_DEVICE T L2NormalizeDotTerm(T dout, T x, T norm) {
  return dout * x / norm;
}
template <typename T>
TIDE_OPS_HOST_DEVICE T L2NormalizeGrad(T dout, T x, T norm, T dot) {
  return (dout - x / norm * dot) / norm;
}

// cos_sim: X, Y; Out and XNorm [N, 1], YNorm [N or 1, 1] allocated.
template <typename T>
struct CosSimArgs {
  CosSimGeom g;
  const T* x;
  const T* y;
  T* out;
  T* x_norm;
  T* y_norm;
};

template <typename T>
CosSimArgs<T> GetCosSimArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  CosSimArgs<T> a;
  a.g = GetCosSimGeom(ctx.op_type(), x.dims(), y.dims());
  a.x = x.data<T>();
  a.y = y.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>({a.g.n, 1}, ctx.place());
  a.x_norm = ctx.Output("XNorm").mutable_data<T>({a.g.n, 1}, ctx.place());
  a.y_norm = ctx.Output("YNorm").mutable_data<T>({a.g.y_shared ? 1 : a.g.n, 1}, ctx.place());
  return a;
}

// cos_sim_grad: X, Y, Out, XNorm, YNorm and Out@GRAD (checked); X@GRAD / Y@GRAD where wanted.
template <typename T>
struct CosSimGradArgs : BinaryGradData<T> {
  CosSimGeom g;
  const T* out;
  const T* x_norm;
  const T* y_norm;
};

template <typename T>
CosSimGradArgs<T> GetCosSimGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  Tensor out = ctx.Input("Out"), xn = ctx.Input("XNorm"), yn = ctx.Input("YNorm");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  CosSimGradArgs<T> a;
  a.g = GetCosSimGeom(ctx.op_type(), x.dims(), y.dims());
  CheckCosSimGradInputs(ctx.op_type(), a.g, out.dims(), xn.dims(), yn.dims(), dout.dims());
  a.out = out.data<T>();
  a.x_norm = xn.data<T>();
  a.y_norm = yn.data<T>();
  static_cast<BinaryGradData<T>&>(a) = GetBinaryGradData<T>(ctx, x, y, dout);
  return a;
}

// norm: X around the axis, epsilon; Out (X's dims) and Norm allocated.
template <typename T>
struct L2NormArgs {
  AxisSplit s;
  T eps;
  const T* x;
  T* out;
  T* norm;
};

template <typename T>
L2NormArgs<T> GetL2NormArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  L2NormArgs<T> a;
  a.s = SplitAt(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis"));
  a.eps = static_cast<T>(ctx.Attr<float>("epsilon"));
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  a.norm = ctx.Output("Norm").mutable_data<T>(L2NormDims(ctx.op_type(), x.dims(), a.s.axis),
                                              ctx.place());
  return a;
}

// norm_grad: X, Norm and Out@GRAD (checked); X@GRAD allocated.
template <typename T>
struct L2NormGradArgs {
  AxisSplit s;
  const T* x;
  const T* norm;
  const T* dout;
  T* dx;
};

template <typename T>
L2NormGradArgs<T> GetL2NormGradArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X"), norm = ctx.Input("Norm");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  L2NormGradArgs<T> a;
  a.s = SplitAt(op, x.dims(), ctx.Attr<int32_t>("axis"));
  CheckGradDims(op, "Norm", norm.dims(), L2NormDims(op, x.dims(), a.s.axis));
  CheckGradDims(op, "Out@GRAD", dout.dims(), x.dims());
  a.x = x.data<T>();
  a.norm = norm.data<T>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SIMILARITY_HPP_
