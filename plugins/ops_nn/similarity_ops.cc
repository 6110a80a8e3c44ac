// similarity_ops.cc: cos_sim (rows of X against rows of Y, or one Y row for all), norm (X / its
// L2 norm along axis), label_smooth and maxout (Fluid 1.x), with grads.
#include <cmath>

#include <tide/ops/maxout.hpp>
#include <tide/ops/similarity.hpp>

#include "common.h"

namespace ops_nn {
namespace {

// ---------------------------------------------------------------------------------------------
// cos_sim: X [N, ...], Y [N, ...] or [1, ...]; Out [N, 1] = <x, y> / (|x| |y|); XNorm [N, 1],
// YNorm [N or 1, 1] (tide/ops/similarity.hpp).
using tide::ops::CosSimGeom;
using tide::ops::CosSimGrad;
using tide::ops::GetCosSimGeom;

template <typename T>
void CosSimKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  const CosSimGeom g = GetCosSimGeom(ctx.op_type(), x.dims(), y.dims());
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>({g.n, 1}, ctx.place());
  T* xn = ctx.Output("XNorm").mutable_data<T>({g.n, 1}, ctx.place());
  T* yn = ctx.Output("YNorm").mutable_data<T>({g.y_shared ? 1 : g.n, 1}, ctx.place());
  for (int64_t i = 0; i < (g.y_shared ? 1 : g.n); ++i) {
    T s = 0;
    for (int64_t k = 0; k < g.d; ++k) s += yd[i * g.d + k] * yd[i * g.d + k];
    yn[i] = std::sqrt(s);
  }
  for (int64_t i = 0; i < g.n; ++i) {
    const T* xr = xd + i * g.d;
    const T* yr = yd + (g.y_shared ? 0 : i * g.d);
    T s = 0, dot = 0;
    for (int64_t k = 0; k < g.d; ++k) {
      s += xr[k] * xr[k];
      dot += xr[k] * yr[k];
    }
    xn[i] = std::sqrt(s);
    o[i] = dot / (xn[i] * yn[g.y_shared ? 0 : i]);
  }
}

// dX = dOut * (y / (|x||y|) - out * x / |x|^2); dY likewise (summed over rows when shared).
template <typename T>
void CosSimGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  Tensor out = ctx.Input("Out"), xnt = ctx.Input("XNorm"), ynt = ctx.Input("YNorm");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const CosSimGeom g = GetCosSimGeom(ctx.op_type(), x.dims(), y.dims());
  tide::ops::CheckCosSimGradInputs(ctx.op_type(), g, out.dims(), xnt.dims(), ynt.dims(),
                                   dout.dims());
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  const T* o = out.data<T>();
  const T* xn = xnt.data<T>();
  const T* yn = ynt.data<T>();
  const T* gd = dout.data<T>();
  Tensor dxt = ctx.OptionalOutput(GradVarName("X").c_str());
  Tensor dyt = ctx.OptionalOutput(GradVarName("Y").c_str());
  T* dx = dxt ? dxt.mutable_data<T>(x.dims(), ctx.place()) : nullptr;
  T* dy = dyt ? dyt.mutable_data<T>(y.dims(), ctx.place()) : nullptr;
  if (dy) std::fill(dy, dy + y.numel(), T(0));
  for (int64_t i = 0; i < g.n; ++i) {
    const int64_t yi = g.y_shared ? 0 : i;
    const T* xr = xd + i * g.d;
    const T* yr = yd + yi * g.d;
    const T xy = xn[i] * yn[yi];
    for (int64_t k = 0; k < g.d; ++k) {
      if (dx) dx[i * g.d + k] = CosSimGrad(gd[i], xr[k], yr[k], o[i], xy, xn[i]);
      if (dy) dy[yi * g.d + k] += CosSimGrad(gd[i], yr[k], xr[k], o[i], xy, yn[yi]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// norm: Out = X / sqrt(sum(X^2 along axis) + epsilon); Norm holds that divisor (axis kept as 1).
template <typename T>
void NormKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const auto s = tide::ops::SplitAt(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis"));
  const T eps = static_cast<T>(ctx.Attr<float>("epsilon"));
  const Dims nd = tide::ops::L2NormDims(ctx.op_type(), x.dims(), s.axis);
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  T* nm = ctx.Output("Norm").mutable_data<T>(nd, ctx.place());
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      T sq = 0;
      for (int64_t j = 0; j < s.n; ++j) sq += xd[(i * s.n + j) * s.post + k] * xd[(i * s.n + j) * s.post + k];
      const T n = std::sqrt(sq + eps);
      nm[i * s.post + k] = n;
      for (int64_t j = 0; j < s.n; ++j) o[(i * s.n + j) * s.post + k] = xd[(i * s.n + j) * s.post + k] / n;
    }
}

// dX = (dOut - out * sum(dOut * out)) / norm along axis (tide/ops/similarity.hpp).
template <typename T>
void NormGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), norm = ctx.Input("Norm"), dout = ctx.Input(GradVarName("Out").c_str());
  const auto s = tide::ops::SplitAt(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis"));
  tide::ops::CheckGradDims(ctx.op_type(), "Norm", norm.dims(),
                           tide::ops::L2NormDims(ctx.op_type(), x.dims(), s.axis));
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), x.dims());
  const T* xd = x.data<T>();
  const T* nm = norm.data<T>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      const T n = nm[i * s.post + k];
      T dot = 0;
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t e = (i * s.n + j) * s.post + k;
        dot += tide::ops::L2NormalizeDotTerm(gd[e], xd[e], n);
      }
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t e = (i * s.n + j) * s.post + k;
        dx[e] = tide::ops::L2NormalizeGrad(gd[e], xd[e], n, dot);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// label_smooth: Out = (1 - epsilon) X + epsilon * PriorDist (or epsilon / K, K = X's last dim).
template <typename T>
void LabelSmoothKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const T eps = static_cast<T>(ctx.Attr<float>("epsilon"));
  const int64_t k = x.dims().back();
  const T* prior = nullptr;
  if (ctx.HasInput("PriorDist")) {
    Tensor p = ctx.Input("PriorDist");
    TIDE_CHECK(p.numel() == k, "op 'label_smooth': PriorDist ('", ctx.InputName("PriorDist"),
               "') has ", p.numel(), " elements, X's last dim is ", k);
    prior = p.data<T>();
  }
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i)
    o[i] = (T(1) - eps) * xd[i] + eps * (prior ? prior[i % k] : T(1) / static_cast<T>(k));
}

// ---------------------------------------------------------------------------------------------
// maxout: X [N, C, H, W] (axis 1) or [N, H, W, C] (axis 3 / -1) -> C / groups channels, each
// the max of `groups` consecutive ones (tide/ops/maxout.hpp).
template <typename Ctx>
tide::ops::MaxoutGeom GetMaxout(const Ctx& ctx, const Dims& x) {
  return tide::ops::GetMaxoutGeom(ctx.op_type(), x, ctx.template Attr<int32_t>("groups"),
                                  ctx.template Attr<int32_t>("axis"));
}

template <typename T>
void MaxoutKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const tide::ops::MaxoutGeom g = GetMaxout(ctx, x.dims());
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(tide::ops::MaxoutOutDims(g, x.dims()), ctx.place());
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.out_channels(); ++c)
      for (int64_t p = 0; p < g.hw; ++p) {
        T m = xd[g.XAt(n, c, 0, p)];
        for (int64_t k = 1; k < g.groups; ++k) m = std::max(m, xd[g.XAt(n, c, k, p)]);
        o[g.OutAt(n, c, p)] = m;
      }
}

// The gradient goes to the first channel of each group holding the max (Fluid's rule).
template <typename T>
void MaxoutGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Input("Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const tide::ops::MaxoutGeom g = GetMaxout(ctx, x.dims());
  const Dims od = tide::ops::MaxoutOutDims(g, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out", out.dims(), od);
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const T* xd = x.data<T>();
  const T* o = out.data<T>();
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.out_channels(); ++c)
      for (int64_t p = 0; p < g.hw; ++p) {
        const int64_t oi = g.OutAt(n, c, p);
        for (int64_t k = 0; k < g.groups; ++k) {
          const int64_t xi = g.XAt(n, c, k, p);
          if (xd[xi] == o[oi]) {
            dx[xi] = gd[oi];
            break;
          }
        }
      }
}

tide::GradMakerFn DefaultLikeGrad(const std::string& grad, std::vector<std::string> ins,
                                  std::vector<std::string> outs, std::vector<std::string> grads) {
  return [=](tide::GradMaker& g) {
    auto op = g.NewOp(grad);
    for (const auto& i : ins) op.Input(i, g.Input(i.c_str()));
    for (const auto& o : outs) op.Input(o, g.Output(o.c_str()));
    op.Input(GradVarName("Out"), g.OutputGrad("Out"));
    for (const auto& x : grads) op.Output(GradVarName(x), g.InputGrad(x.c_str()));
    op.CopyAttrs();
  };
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("cos_sim")
                     .Comment("Out = <X, Y> / (|X| |Y|) per row (Y: X's rows, or one row for all).")
                     .Input("X", "[N, ...]").Input("Y", "[N, ...] or [1, ...]")
                     .Output("Out", "[N, 1]").Output("XNorm", "|X| per row").AsIntermediate()
                     .Output("YNorm", "|Y| per row").AsIntermediate()
                     .InferShape([](tide::InferShapeContext& c) {
                       const CosSimGeom g =
                           GetCosSimGeom(c.op_type(), c.InputDims("X"), c.InputDims("Y"));
                       c.SetOutputDims("Out", {g.n, 1});
                       c.SetOutputDims("XNorm", {g.n, 1});
                       c.SetOutputDims("YNorm", {c.InputDims("Y")[0], 1});
                       for (const char* p : {"Out", "XNorm", "YNorm"}) c.SetOutputDataType(p, c.InputDataType("X"));
                       c.ShareLoD("X", "Out");
                     })
                     .Grad(DefaultLikeGrad("cos_sim_grad", {"X", "Y"}, {"Out", "XNorm", "YNorm"}, {"X", "Y"})));
TIDE_REGISTER_OP(tide::OpSchema("cos_sim_grad")
                     .Input("X").Input("Y").Input("Out").Input("XNorm").Input("YNorm")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X")).AsDispensable().Output(GradVarName("Y")).AsDispensable()
                     .InferShape(GradLike({"X", "Y"})));
TIDE_REGISTER_KERNEL("cos_sim", "cpu", CosSimKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cos_sim_grad", "cpu", CosSimGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("norm")
                     .Comment("Out = X / sqrt(sum(X^2 along axis) + epsilon).")
                     .Input("X", "the input").Output("Out", "X normalised")
                     .Output("Norm", "the divisor, X's dims with 1 on axis").AsIntermediate()
                     .Attr("axis", int32_t(1), "the axis").Attr("epsilon", 1e-10f, "added under the root")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims x = c.InputDims("X");
                       c.SetOutputDims("Out", x);
                       c.SetOutputDims("Norm", tide::ops::L2NormDims(c.op_type(), x,
                                                                     c.Attr<int32_t>("axis")));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                       c.SetOutputDataType("Norm", c.InputDataType("X"));
                     })
                     .Grad(DefaultLikeGrad("norm_grad", {"X"}, {"Norm"}, {"X"})));
TIDE_REGISTER_OP(tide::OpSchema("norm_grad")
                     .Input("X").Input("Norm").Input(GradVarName("Out")).Output(GradVarName("X"))
                     .Attr("axis", int32_t(1)).Attr("epsilon", 1e-10f)
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("norm", "cpu", NormKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("norm_grad", "cpu", NormGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("label_smooth")
                     .Comment("Out = (1 - epsilon) X + epsilon * PriorDist (uniform 1 / K without it).")
                     .Input("X", "one-hot labels [..., K]").Input("PriorDist", "[K] (optional)").AsDispensable()
                     .Output("Out", "smoothed labels")
                     .Attr("epsilon", 0.0f, "the smoothing weight")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("scale").Input("X", g.OutputGrad("Out")).Output("Out", g.InputGrad("X"))
                           .Attr("scale", 1.0f - g.Attr<float>("epsilon")).Attr("bias", 0.0f);
                     }));
TIDE_REGISTER_KERNEL("label_smooth", "cpu", LabelSmoothKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("maxout")
                     .Comment("Out channel c = the max of X's channels [c * groups, (c + 1) * "
                              "groups) along axis (1: NCHW; 3 or -1: NHWC).")
                     .Input("X", "[N, C, H, W] (axis 1) or [N, H, W, C] (axis 3)")
                     .Output("Out", "X's dims with C / groups channels")
                     .RequiredAttr("groups", TIDE_ATTR_INT, "channels per output channel")
                     .Attr("axis", int32_t(1), "the channel axis: 1, 3 or -1 (= 3)")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims x = c.InputDims("X");
                       c.SetOutputDims("Out", tide::ops::MaxoutOutDims(GetMaxout(c, x), x));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .Grad(DefaultLikeGrad("maxout_grad", {"X"}, {"Out"}, {"X"})));
TIDE_REGISTER_OP(tide::OpSchema("maxout_grad")
                     .Input("X").Input("Out").Input(GradVarName("Out")).Output(GradVarName("X"))
                     .RequiredAttr("groups", TIDE_ATTR_INT)
                     .Attr("axis", int32_t(1))
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("maxout", "cpu", MaxoutKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("maxout_grad", "cpu", MaxoutGradKernel, OPS_NN_FLOAT_TYPES);
