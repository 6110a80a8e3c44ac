// spectral_norm_op.cc: Paddle's spectral_norm (nn.SpectralNorm, static.nn.spectral_norm): Weight
// seen as the matrix M [h, w] (h = Weight's dim `dim`, w the product of the others in order),
// power_iters rounds of v = M^T u / (|M^T u| + eps), u = M v / (|M v| + eps) from the given U, V,
// then Out = Weight / sigma, sigma = u^T M v. U and V are read, never written. The grad is
// Paddle's kernel's formula, Out@GRAD (1 - u v^T sum(Weight / sigma)) / sigma (element-wise; not
// the exact derivative of Out, which central differences would give).
#include <cmath>

#include "common.h"

namespace ops_nn {
namespace {

// Weight [outer, h, inner] around `dim`: M[r, o * inner + i] = Weight[o, r, i].
struct SpectralGeom {
  int64_t outer = 1, h = 0, inner = 1;
  int64_t w() const { return outer * inner; }
};

template <typename Ctx>
SpectralGeom GetSpectral(const Ctx& ctx, const Dims& wd, const Dims& ud, const Dims& vd) {
  const char* op = ctx.op_type();
  const int rank = static_cast<int>(wd.size());
  const int dim = ctx.template Attr<int32_t>("dim");
  TIDE_CHECK(rank >= 2, "op '", op, "': Weight must be at least 2-D, got ", tide::ToString(wd));
  TIDE_CHECK(dim >= 0 && dim < rank, "op '", op, "': dim must be in [0, ", rank, ") for Weight ",
             tide::ToString(wd), ", got ", dim);
  const int iters = ctx.template Attr<int32_t>("power_iters");
  TIDE_CHECK(iters >= 0, "op '", op, "': power_iters must be >= 0, got ", iters);
  const float eps = ctx.template Attr<float>("eps");
  TIDE_CHECK(eps > 0, "op '", op, "': eps must be > 0, got ", eps);
  SpectralGeom g;
  g.outer = DimsProductOrUnknown(wd, 0, dim);
  g.h = wd[dim];
  g.inner = DimsProductOrUnknown(wd, dim + 1, wd.size());
  const int64_t w = g.outer < 0 || g.inner < 0 ? -1 : g.w();
  TIDE_CHECK(ud.size() == 1 && DimsCompatible(ud[0], g.h), "op '", op, "': U must be [", g.h,
             "] (Weight's dim ", dim, "), got ", tide::ToString(ud));
  TIDE_CHECK(vd.size() == 1 && DimsCompatible(vd[0], w), "op '", op, "': V must be [", w,
             "] (the product of Weight's other dims), got ", tide::ToString(vd));
  return g;
}

void SpectralShape(tide::InferShapeContext& ctx) {
  GetSpectral(ctx, ctx.InputDims("Weight"), ctx.InputDims("U"), ctx.InputDims("V"));
  CheckSameType(ctx, "Weight", "U");
  CheckSameType(ctx, "Weight", "V");
  ctx.SetOutputDims("Out", ctx.InputDims("Weight"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("Weight"));
}

// The power iteration: u, v after power_iters rounds and sigma.
template <typename T>
double Sigma(const KernelContext& ctx, const SpectralGeom& g, const T* wt, std::vector<double>* u,
             std::vector<double>* v) {
  const int iters = ctx.Attr<int32_t>("power_iters");
  const double eps = ctx.Attr<float>("eps");
  const int64_t w = g.w();
  auto m = [&](int64_t r, int64_t c) -> double {
    return wt[((c / g.inner) * g.h + r) * g.inner + c % g.inner];
  };
  auto normalise = [eps](std::vector<double>* x) {
    double s = 0;
    for (double e : *x) s += e * e;
    const double d = std::sqrt(s) + eps;
    for (double& e : *x) e /= d;
  };
  for (int it = 0; it < iters; ++it) {
    for (int64_t c = 0; c < w; ++c) {
      double s = 0;
      for (int64_t r = 0; r < g.h; ++r) s += m(r, c) * (*u)[r];
      (*v)[c] = s;
    }
    normalise(v);
    for (int64_t r = 0; r < g.h; ++r) {
      double s = 0;
      for (int64_t c = 0; c < w; ++c) s += m(r, c) * (*v)[c];
      (*u)[r] = s;
    }
    normalise(u);
  }
  double sigma = 0;
  for (int64_t r = 0; r < g.h; ++r)
    for (int64_t c = 0; c < w; ++c) sigma += (*u)[r] * m(r, c) * (*v)[c];
  return sigma;
}

struct SpectralRun {
  SpectralGeom g;
  std::vector<double> u, v;
  double sigma = 0;
};

template <typename T>
SpectralRun RunSpectral(const KernelContext& ctx, const Tensor& wt) {
  Tensor ut = ctx.Input("U"), vt = ctx.Input("V");
  SpectralRun r;
  r.g = GetSpectral(ctx, wt.dims(), ut.dims(), vt.dims());
  r.u.assign(ut.data<T>(), ut.data<T>() + ut.numel());
  r.v.assign(vt.data<T>(), vt.data<T>() + vt.numel());
  r.sigma = Sigma(ctx, r.g, wt.data<T>(), &r.u, &r.v);
  return r;
}

template <typename T>
void SpectralNormKernel(KernelContext& ctx) {
  Tensor wt = ctx.Input("Weight");
  const SpectralRun r = RunSpectral<T>(ctx, wt);
  const T* w = wt.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(wt.dims(), ctx.place());
  for (int64_t i = 0, n = wt.numel(); i < n; ++i) out[i] = static_cast<T>(w[i] / r.sigma);
}

template <typename T>
void SpectralNormGradKernel(KernelContext& ctx) {
  Tensor wt = ctx.Input("Weight");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), wt.dims());
  const SpectralRun r = RunSpectral<T>(ctx, wt);
  const SpectralGeom& g = r.g;
  const T* w = wt.data<T>();
  const T* gd = dout.data<T>();
  const int64_t n = wt.numel();
  double total = 0;  // sum(Weight / sigma)
  for (int64_t i = 0; i < n; ++i) total += w[i] / r.sigma;
  T* dw = ctx.Output(GradVarName("Weight").c_str()).mutable_data<T>(wt.dims(), ctx.place());
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t row = 0; row < g.h; ++row)
      for (int64_t i = 0; i < g.inner; ++i) {
        const int64_t at = (o * g.h + row) * g.inner + i;
        const double uv = r.u[row] * r.v[o * g.inner + i];
        dw[at] = static_cast<T>(gd[at] * (1.0 - uv * total) / r.sigma);
      }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("spectral_norm")
                     .Comment("Out = Weight / sigma, sigma = u^T M v after power_iters rounds of "
                              "the power iteration from U, V (M: Weight as [h, w] around dim).")
                     .Input("Weight", "at least 2-D")
                     .Input("U", "[h], h = Weight's dim `dim`")
                     .Input("V", "[w], the product of Weight's other dims")
                     .Output("Out", "Weight's dims")
                     .Attr("dim", int32_t(0), "Weight's dim that gives M's rows (Paddle: 0 or 1)")
                     .Attr("power_iters", int32_t(1), "power iteration rounds (>= 0)")
                     .Attr("eps", 1e-12f, "added to the norms (> 0)")
                     .KernelDataTypeFrom("Weight")
                     .InferShape(SpectralShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("spectral_norm_grad")
                           .Input("Weight", g.Input("Weight"))
                           .Input("U", g.Input("U"))
                           .Input("V", g.Input("V"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("Weight"), g.InputGrad("Weight"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("spectral_norm_grad")
                     .Input("Weight")
                     .Input("U")
                     .Input("V")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("Weight"))
                     .Attr("dim", int32_t(0))
                     .Attr("power_iters", int32_t(1))
                     .Attr("eps", 1e-12f)
                     .KernelDataTypeFrom("Weight")
                     .InferShape(GradLike({"Weight"})));
TIDE_REGISTER_KERNEL("spectral_norm", "cpu", SpectralNormKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("spectral_norm_grad", "cpu", SpectralNormGradKernel, OPS_NN_FLOAT_TYPES);
