// similarity_ops.cc: cos_sim (rows of X against rows of Y, or one Y row for all), norm (X / its
// L2 norm along axis), label_smooth and maxout (Fluid 1.x), with grads.
#include <cmath>
#include <tide/ops/label_smooth.hpp>
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
  const auto a = tide::ops::GetCosSimArgs<T>(ctx);
  const CosSimGeom& g = a.g;
  for (int64_t i = 0; i < (g.y_shared ? 1 : g.n); ++i) {
    T s = 0;
    for (int64_t k = 0; k < g.d; ++k) s += a.y[i * g.d + k] * a.y[i * g.d + k];
    a.y_norm[i] = std::sqrt(s);
  }
  for (int64_t i = 0; i < g.n; ++i) {
    const T* xr = a.x + i * g.d;
    const T* yr = a.y + (g.y_shared ? 0 : i * g.d);
    T s = 0, dot = 0;
    for (int64_t k = 0; k < g.d; ++k) {
      s += xr[k] * xr[k];
      dot += xr[k] * yr[k];
    }
    a.x_norm[i] = std::sqrt(s);
    a.out[i] = dot / (a.x_norm[i] * a.y_norm[g.y_shared ? 0 : i]);
  }
}

// dX = dOut * (y / (|x||y|) - out * x / |x|^2); dY likewise (summed over rows when shared).
template <typename T>
void CosSimGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetCosSimGradArgs<T>(ctx);
  const CosSimGeom& g = a.g;
  if (a.dy) std::fill(a.dy, a.dy + a.y_numel, T(0));
  for (int64_t i = 0; i < g.n; ++i) {
    const int64_t yi = g.y_shared ? 0 : i;
    const T* xr = a.x + i * g.d;
    const T* yr = a.y + yi * g.d;
    const T xn = a.x_norm[i], yn = a.y_norm[yi], o = a.out[i], gi = a.dout[i];
    for (int64_t k = 0; k < g.d; ++k) {
      if (a.dx) a.dx[i * g.d + k] = CosSimGrad(gi, xr[k], yr[k], o, xn * yn, xn);
      if (a.dy) a.dy[yi * g.d + k] += CosSimGrad(gi, yr[k], xr[k], o, xn * yn, yn);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// norm: Out = X / sqrt(sum(X^2 along axis) + epsilon); Norm holds that divisor (axis kept as 1).
template <typename T>
void NormKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetL2NormArgs<T>(ctx);
  const auto& s = a.s;
  const T* xd = a.x;
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      T sq = 0;
      for (int64_t j = 0; j < s.n; ++j)
        sq += xd[(i * s.n + j) * s.post + k] * xd[(i * s.n + j) * s.post + k];
      const T n = std::sqrt(sq + a.eps);
      a.norm[i * s.post + k] = n;
      for (int64_t j = 0; j < s.n; ++j)
        a.out[(i * s.n + j) * s.post + k] = xd[(i * s.n + j) * s.post + k] / n;
    }
}

// dX = (dOut - out * sum(dOut * out)) / norm along axis (tide/ops/similarity.hpp).
template <typename T>
void NormGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetL2NormGradArgs<T>(ctx);
  const auto& s = a.s;
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      const T n = a.norm[i * s.post + k];
      T dot = 0;
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t e = (i * s.n + j) * s.post + k;
        dot += tide::ops::L2NormalizeDotTerm(a.dout[e], a.x[e], n);
      }
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t e = (i * s.n + j) * s.post + k;
        a.dx[e] = tide::ops::L2NormalizeGrad(a.dout[e], a.x[e], n, dot);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// label_smooth: Out = (1 - epsilon) X + epsilon * PriorDist (or epsilon / K, K = X's last dim).
template <typename T>
void LabelSmoothKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetLabelSmoothArgs<T>(ctx);
  for (int64_t i = 0; i < a.n; ++i)
    a.out[i] =
        (T(1) - a.eps) * a.x[i] + a.eps * (a.prior ? a.prior[i % a.k] : T(1) / static_cast<T>(a.k));
}

// ---------------------------------------------------------------------------------------------
// maxout: X [N, C, H, W] (axis 1) or [N, H, W, C] (axis 3 / -1) -> C / groups channels, each
// the max of `groups` consecutive ones (tide/ops/maxout.hpp).
using tide::ops::MaxoutGeomOf;

template <typename T>
void MaxoutKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetMaxoutArgs<T>(ctx);
  const tide::ops::MaxoutGeom& g = a.g;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.out_channels(); ++c)
      for (int64_t p = 0; p < g.hw; ++p) {
        T m = a.x[g.XAt(n, c, 0, p)];
        for (int64_t k = 1; k < g.groups; ++k) m = std::max(m, a.x[g.XAt(n, c, k, p)]);
        a.out[g.OutAt(n, c, p)] = m;
      }
}

// The gradient goes to the first channel of each group holding the max (Fluid's rule).
template <typename T>
void MaxoutGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetMaxoutGradArgs<T>(ctx);
  const tide::ops::MaxoutGeom& g = a.g;
  std::fill(a.dx, a.dx + a.x_numel, T(0));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.out_channels(); ++c)
      for (int64_t p = 0; p < g.hw; ++p) {
        const int64_t oi = g.OutAt(n, c, p);
        for (int64_t k = 0; k < g.groups; ++k) {
          const int64_t xi = g.XAt(n, c, k, p);
          if (a.x[xi] == a.out[oi]) {
            a.dx[xi] = a.dout[oi];
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
                     .Input("X", "[N, ...]")
                     .Input("Y", "[N, ...] or [1, ...]")
                     .Output("Out", "[N, 1]")
                     .Output("XNorm", "|X| per row")
                     .AsIntermediate()
                     .Output("YNorm", "|Y| per row")
                     .AsIntermediate()
                     .InferShape([](tide::InferShapeContext& c) {
                       const CosSimGeom g =
                           GetCosSimGeom(c.op_type(), c.InputDims("X"), c.InputDims("Y"));
                       c.SetOutputDims("Out", {g.n, 1});
                       c.SetOutputDims("XNorm", {g.n, 1});
                       c.SetOutputDims("YNorm", {c.InputDims("Y")[0], 1});
                       for (const char* p : {"Out", "XNorm", "YNorm"})
                         c.SetOutputDataType(p, c.InputDataType("X"));
                       c.ShareLoD("X", "Out");
                     })
                     .Grad(DefaultLikeGrad("cos_sim_grad", {"X", "Y"}, {"Out", "XNorm", "YNorm"},
                                           {"X", "Y"})));
TIDE_REGISTER_OP(tide::OpSchema("cos_sim_grad")
                     .Input("X")
                     .Input("Y")
                     .Input("Out")
                     .Input("XNorm")
                     .Input("YNorm")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .InferShape(GradLike({"X", "Y"})));
TIDE_REGISTER_KERNEL("cos_sim", "cpu", CosSimKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cos_sim_grad", "cpu", CosSimGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("norm")
                     .Comment("Out = X / sqrt(sum(X^2 along axis) + epsilon).")
                     .Input("X", "the input")
                     .Output("Out", "X normalised")
                     .Output("Norm", "the divisor, X's dims with 1 on axis")
                     .AsIntermediate()
                     .Attr("axis", int32_t(1), "the axis")
                     .Attr("epsilon", 1e-10f, "added under the root")
                     .InferShape([](tide::InferShapeContext& c) {
                       const Dims x = c.InputDims("X");
                       c.SetOutputDims("Out", x);
                       c.SetOutputDims(
                           "Norm", tide::ops::L2NormDims(c.op_type(), x, c.Attr<int32_t>("axis")));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                       c.SetOutputDataType("Norm", c.InputDataType("X"));
                     })
                     .Grad(DefaultLikeGrad("norm_grad", {"X"}, {"Norm"}, {"X"})));
TIDE_REGISTER_OP(tide::OpSchema("norm_grad")
                     .Input("X")
                     .Input("Norm")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("axis", int32_t(1))
                     .Attr("epsilon", 1e-10f)
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("norm", "cpu", NormKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("norm_grad", "cpu", NormGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("label_smooth")
        .Comment("Out = (1 - epsilon) X + epsilon * PriorDist (uniform 1 / K without it).")
        .Input("X", "one-hot labels [..., K]")
        .Input("PriorDist", "[K] (optional)")
        .AsDispensable()
        .Output("Out", "smoothed labels")
        .Attr("epsilon", 0.0f, "the smoothing weight")
        .InferShape(tide::SameShapeAsInput("X", "Out"))
        .Grad([](tide::GradMaker& g) {
          g.NewOp("scale")
              .Input("X", g.OutputGrad("Out"))
              .Output("Out", g.InputGrad("X"))
              .Attr("scale", 1.0f - g.Attr<float>("epsilon"))
              .Attr("bias", 0.0f);
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
                       c.SetOutputDims("Out", tide::ops::MaxoutOutDims(MaxoutGeomOf(c, x), x));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .Grad(DefaultLikeGrad("maxout_grad", {"X"}, {"Out"}, {"X"})));
TIDE_REGISTER_OP(tide::OpSchema("maxout_grad")
                     .Input("X")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .RequiredAttr("groups", TIDE_ATTR_INT)
                     .Attr("axis", int32_t(1))
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("maxout", "cpu", MaxoutKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("maxout_grad", "cpu", MaxoutGradKernel, OPS_NN_FLOAT_TYPES);
