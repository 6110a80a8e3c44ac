// fft_ops.cc: Paddle's FFT ops (paddle.fft.*, paddle.signal.stft / istft, paddle.audio's
// spectrograms) on Eigen's FFT (fft_1d.h: kissfft, Bluestein's algorithm over it for lengths with
// a large prime factor): an n-D transform over `axes` is a 1-D transform along each axis in turn.
//  - fft_c2c: complex X -> complex Out of X's dims; forward (exponent -i) or inverse (+i).
//  - fft_r2c: real X -> complex Out; the real transform along the last of `axes` (onesided: its
//    n/2+1 bins, else all n), then complex ones along the others; forward = false conjugates the
//    result (the transform with exponent +i, paddle.fft.ihfft's).
//  - fft_c2r: complex X -> real Out whose last axis has last_dim_size points (0: 2 * (m - 1) for
//    m bins); complex inverse transforms along the other axes, then the real inverse along the
//    last, reading its first n/2+1 bins (missing ones zero, as numpy's irfft). forward = true
//    (paddle.fft.hfft's) conjugates X first. Imaginary parts of the DC and Nyquist bins are
//    ignored, as Paddle's (pocketfft / MKL) and numpy's.
// Each then scales by Paddle's normalization factor (common.h). An X of no elements gives zeros.
// Their grads (fft_c2c_grad, fft_r2c_grad, fft_c2r_grad: Out@GRAD, and X for its dims, ->
// X@GRAD) are the adjoints of these linear maps in the real inner product Re<a, b> (the gradient
// of a complex z = x + iy being dL/dx + i dL/dy): the transforms with the opposite exponent,
// scaled by the forward's own factor; r2c's keeps the real part of the adjoint of its bins
// zero-padded to the full length, c2r's doubles the bins whose conjugate partner it also
// summed (a real line's onesided transform).
#include "common.h"
#include "fft_1d.h"

namespace ops_fft {
namespace {

// Complex transforms of `data` (dims d) along each of `axes`, in place.
template <typename R>
void ComplexTransforms(const KernelContext& ctx, std::complex<R>* data, const Dims& d,
                       const std::vector<int>& axes, bool forward) {
  using C = std::complex<R>;
  const char* op = ctx.op_type();
  for (int a : axes) {
    const int n = FftLength(op, d[a]);
    ForEachLine(ctx, kFftCostPerPoint, data, d, data, d, a, [&] {
      return [fft = Fft1D<R>(op), n, forward](const C* in, C* out) mutable {
        fft.Complex(in, out, n, forward);
      };
    });
  }
}

// p[0, n) *= factor (Paddle's normalization), in T's real type.
template <typename T>
void Scale(T* p, int64_t n, double factor) {
  if (factor == 1.0) return;
  const RealType<T> f = static_cast<RealType<T>>(factor);
  for (int64_t i = 0; i < n; ++i) p[i] *= f;
}

struct FftArgs {
  Dims x;
  std::vector<int> axes;  // normalised; the last is the real axis of r2c / c2r
  std::string norm;
  bool forward;
};

// The attributes, with X's dims read from input `dims_of` (X, or Out@GRAD of fft_c2c_grad).
FftArgs ReadFftArgs(const KernelContext& ctx, const std::string& dims_of = "X") {
  FftArgs a;
  a.x = ctx.Input(dims_of.c_str()).dims();
  a.axes = FftAxes(ctx.op_type(), ctx.Attr<std::vector<int64_t>>("axes"), a.x.size());
  a.norm = ctx.Attr<std::string>("normalization");
  a.forward = ctx.Attr<bool>("forward");
  return a;
}

// fft_c2r's output size along the last axis: last_dim_size, or 2 * (m - 1) for m bins when it
// is 0 (-1 while m is unknown at compile time).
int64_t C2ROutSize(const char* op, const std::string& x_name, int64_t last_dim_size, int64_t m,
                   int axis) {
  TIDE_CHECK(last_dim_size >= 0, "op '", op, "': attribute 'last_dim_size' must be >= 0, got ",
             last_dim_size);
  if (last_dim_size > 0) return last_dim_size;
  if (m < 0) return -1;
  TIDE_CHECK(m >= 1, "op '", op, "': X ('", x_name, "') has no elements along axis ", axis,
             ", which gives no output size (2 * (m - 1)); set attribute 'last_dim_size'");
  return 2 * (m - 1);
}

// --- kernels ---------------------------------------------------------------------------------

// out = factor * the transform of `in` (dims d) over axes with exponent -i (forward) or +i.
template <typename C>
void C2C(const KernelContext& ctx, const Tensor& in, C* out, const Dims& d,
         const std::vector<int>& axes, bool forward, double factor) {
  const int64_t numel = DimsProduct(d);
  std::copy(in.data<C>(), in.data<C>() + numel, out);
  if (numel == 0) return;
  ComplexTransforms(ctx, out, d, axes, forward);
  Scale(out, numel, factor);
}

template <typename C>
void FftC2CKernel(KernelContext& ctx) {
  const FftArgs a = ReadFftArgs(ctx);
  C* out = ctx.Output("Out").mutable_data<C>(a.x, ctx.place());
  const double s = NormFactor(a.norm, a.forward, SignalSize(a.x, a.axes));
  C2C(ctx, ctx.Input("X"), out, a.x, a.axes, a.forward, s);
}

// The adjoint of s * T is s * T^H: the opposite exponent, the forward's factor.
template <typename C>
void FftC2CGradKernel(KernelContext& ctx) {
  const std::string dout = GradVarName("Out");
  const FftArgs a = ReadFftArgs(ctx, dout);
  C* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<C>(a.x, ctx.place());
  const double s = NormFactor(a.norm, a.forward, SignalSize(a.x, a.axes));
  C2C(ctx, ctx.Input(dout.c_str()), dx, a.x, a.axes, !a.forward, s);
}

template <typename R>
void FftR2CKernel(KernelContext& ctx) {
  using C = std::complex<R>;
  const FftArgs a = ReadFftArgs(ctx);
  const bool onesided = ctx.Attr<bool>("onesided");
  const int last = a.axes.back();
  Dims od = a.x;
  if (onesided) od[last] = a.x[last] / 2 + 1;
  C* out = ctx.Output("Out").mutable_data<C>(od, ctx.place());
  const int64_t numel = DimsProduct(od);
  Tensor x = ctx.Input("X");
  if (x.numel() == 0) {  // Paddle's: zeros
    std::fill(out, out + numel, C(0));
    return;
  }
  const int n = FftLength(ctx.op_type(), a.x[last]);
  ForEachLine(ctx, kFftCostPerPoint, x.data<R>(), a.x, out, od, last, [&] {
    return [fft = Fft1D<R>(ctx.op_type()), n, onesided](const R* in, C* o) mutable {
      fft.RealForward(in, o, n, onesided);
    };
  });
  ComplexTransforms(ctx, out, od, {a.axes.begin(), a.axes.end() - 1}, true);
  if (!a.forward)  // a real signal's transform with exponent +i is the conjugate of its forward one
    for (int64_t i = 0; i < numel; ++i) out[i] = std::conj(out[i]);
  Scale(out, numel, NormFactor(a.norm, a.forward, SignalSize(a.x, a.axes)));
}

// X real: the adjoint's real part, Re(s * T'(Out@GRAD zero-padded back to X's length along the
// last axis)), T' the opposite exponent over every axis. Re(z) = Re(conj z), so ihfft's (forward
// false: T' has exponent -i) is the same with Out@GRAD conjugated and exponent +i. Onesided, the
// last axis' sum over its n/2+1 bins is the real inverse of them with the bins that stand for two
// (0 < k, 2k != n) halved: a half-size transform, no complex copy of X's size.
template <typename R>
void FftR2CGradKernel(KernelContext& ctx) {
  using C = std::complex<R>;
  const FftArgs a = ReadFftArgs(ctx);
  const int last = a.axes.back();
  const bool onesided = ctx.Attr<bool>("onesided");
  Dims od = a.x;
  if (onesided) od[last] = a.x[last] / 2 + 1;
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  R* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<R>(a.x, ctx.place());
  const int64_t numel = DimsProduct(a.x);
  if (numel == 0) return;
  const double s = NormFactor(a.norm, a.forward, SignalSize(a.x, a.axes));
  std::vector<C> g(static_cast<size_t>(DimsProduct(od)));
  const C* dg = dout.data<C>();
  for (size_t i = 0; i < g.size(); ++i) g[i] = a.forward ? dg[i] : std::conj(dg[i]);
  if (!onesided) {
    ComplexTransforms(ctx, g.data(), a.x, a.axes, false);
    for (int64_t i = 0; i < numel; ++i) dx[i] = static_cast<R>(g[i].real() * s);
    return;
  }
  ComplexTransforms(ctx, g.data(), od, {a.axes.begin(), a.axes.end() - 1}, false);
  const int n = FftLength(ctx.op_type(), a.x[last]);
  ForEachLine(ctx, kFftCostPerPoint, g.data(), od, dx, a.x, last, [&] {
    std::vector<C> half(n / 2 + 1);
    return [fft = Fft1D<R>(ctx.op_type()), half, n](const C* in, R* out) mutable {
      for (int k = 0; k <= n / 2; ++k) half[k] = k > 0 && 2 * k != n ? in[k] * R(0.5) : in[k];
      fft.RealInverse(half.data(), out, n);
    };
  });
  Scale(dx, numel, s);
}

template <typename C>
void FftC2RKernel(KernelContext& ctx) {
  using R = typename C::value_type;
  const FftArgs a = ReadFftArgs(ctx);
  const int last = a.axes.back();
  const int64_t m = a.x[last];
  const int64_t n =
      C2ROutSize(ctx.op_type(), ctx.InputName("X"), ctx.Attr<int64_t>("last_dim_size"), m, last);
  Dims od = a.x;
  od[last] = n;
  R* out = ctx.Output("Out").mutable_data<R>(od, ctx.place());
  const int64_t numel = DimsProduct(od);
  if (numel == 0) return;
  Tensor x = ctx.Input("X");
  if (x.numel() == 0) {  // Paddle's: zeros
    std::fill(out, out + numel, R(0));
    return;
  }
  // The half spectrum the real inverse reads: X's first n/2+1 bins along the last axis (zeros
  // past its m), conjugated for a forward transform (exponent -i: the inverse of the conjugate).
  const int64_t h = n / 2 + 1;
  Dims hd = a.x;
  hd[last] = h;
  std::vector<C> half(static_cast<size_t>(DimsProduct(hd)));
  ForEachLine(ctx, kCopyCostPerPoint, x.data<C>(), a.x, half.data(), hd, last, [&] {
    return [&](const C* in, C* o) {
      for (int64_t i = 0; i < h; ++i) {
        const C v = i < m ? in[i] : C(0);
        o[i] = a.forward ? std::conj(v) : v;
      }
    };
  });
  ComplexTransforms(ctx, half.data(), hd, {a.axes.begin(), a.axes.end() - 1}, false);
  const int nn = FftLength(ctx.op_type(), n);
  ForEachLine(ctx, kFftCostPerPoint, half.data(), hd, out, od, last, [&] {
    return [fft = Fft1D<R>(ctx.op_type()), nn](const C* in, R* o) mutable {
      fft.RealInverse(in, o, nn);
    };
  });
  Scale(out, numel, NormFactor(a.norm, a.forward, SignalSize(od, a.axes)));
}

// The adjoint of each step of fft_c2r, in reverse. The real inverse along the last axis,
// out_j = sum_k c_k Re(h_k e^{+2 pi i jk / n}) over k <= n/2 (c_k = 2 for the bins whose
// conjugate partner it sums too: 0 < k, 2k != n), has the forward onesided transform of Out@GRAD
// times c_k as adjoint; X's bins past n/2+1 were never read (0). The inverse c2c along the other
// axes has the forward one; hfft's conj, conj.
template <typename C>
void FftC2RGradKernel(KernelContext& ctx) {
  using R = typename C::value_type;
  const FftArgs a = ReadFftArgs(ctx);
  const int last = a.axes.back();
  const int64_t m = a.x[last];
  Dims od = a.x;
  od[last] =
      C2ROutSize(ctx.op_type(), ctx.InputName("X"), ctx.Attr<int64_t>("last_dim_size"), m, last);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  C* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<C>(a.x, ctx.place());
  const int64_t numel = DimsProduct(a.x);
  if (numel == 0) return;
  if (DimsProduct(od) == 0) {  // n = 0: Out has no points, X none of the loss
    std::fill(dx, dx + numel, C(0));
    return;
  }
  const int n = FftLength(ctx.op_type(), od[last]);
  ForEachLine(ctx, kFftCostPerPoint, dout.data<R>(), od, dx, a.x, last, [&] {
    std::vector<C> half(n / 2 + 1);
    return [fft = Fft1D<R>(ctx.op_type()), half, n, m](const R* in, C* out) mutable {
      fft.RealForward(in, half.data(), n, true);
      for (int64_t k = 0; k < m; ++k)
        out[k] = k > n / 2 ? C(0) : k > 0 && 2 * k != n ? R(2) * half[k] : half[k];
    };
  });
  ComplexTransforms(ctx, dx, a.x, {a.axes.begin(), a.axes.end() - 1}, true);
  if (a.forward)
    for (int64_t i = 0; i < numel; ++i) dx[i] = std::conj(dx[i]);
  Scale(dx, numel, NormFactor(a.norm, a.forward, SignalSize(od, a.axes)));
}

// --- shape inference -------------------------------------------------------------------------

std::vector<int> InferAxes(tide::InferShapeContext& ctx, const Dims& x) {
  return FftAxes(ctx.op_type(), ctx.Attr<std::vector<int64_t>>("axes"), x.size());
}

void FftC2CInferShape(tide::InferShapeContext& ctx) {
  CheckFftInputType(ctx, true);
  const Dims x = ctx.InputDims("X");
  InferAxes(ctx, x);
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

void FftR2CInferShape(tide::InferShapeContext& ctx) {
  CheckFftInputType(ctx, false);
  const Dims x = ctx.InputDims("X");
  const int last = InferAxes(ctx, x).back();
  Dims out = x;
  if (ctx.Attr<bool>("onesided") && x[last] >= 0) out[last] = x[last] / 2 + 1;
  ctx.SetOutputDims("Out", out);
  const TideDataType t = ctx.InputDataType("X");
  if (t != TIDE_UNDEFINED) ctx.SetOutputDataType("Out", tide::ops::ComplexTypeOf(t));
}

void FftC2RInferShape(tide::InferShapeContext& ctx) {
  CheckFftInputType(ctx, true);
  const Dims x = ctx.InputDims("X");
  const int last = InferAxes(ctx, x).back();
  Dims out = x;
  out[last] = C2ROutSize(ctx.op_type(), ctx.InputName("X"), ctx.Attr<int64_t>("last_dim_size"),
                         x[last], last);
  ctx.SetOutputDims("Out", out);
  const TideDataType t = ctx.InputDataType("X");
  if (t != TIDE_UNDEFINED) ctx.SetOutputDataType("Out", tide::ops::RealTypeOf(t));
}

// fft_c2c_grad: X@GRAD has Out@GRAD's dims and data type.
void FftC2CGradInferShape(tide::InferShapeContext& ctx) {
  const std::string dout = GradVarName("Out"), dx = GradVarName("X");
  const Dims d = ctx.InputDims(dout.c_str());
  InferAxes(ctx, d);
  ctx.SetOutputDims(dx.c_str(), d);
  ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType(dout.c_str()));
}

// The attributes every FFT op and its grad have.
tide::OpSchema WithFftAttrs(tide::OpSchema s) {
  return s
      .RequiredAttr("axes", TIDE_ATTR_LONGS,
                    "the axes transformed (negative counts from the end; distinct)")
      .Attr("normalization", std::string("backward"),
            "backward (the inverse divided by n), forward (the forward divided by n) or ortho "
            "(both by sqrt(n)); n: the product of the transformed sizes")
      .Check(CheckNormalization)
      .Attr("forward", true, "the forward transform (exponent -i), else the inverse (+i)");
}

// The grad op of an FFT op: Out@GRAD, and X when its dims are needed (fft_r2c / fft_c2r), ->
// X@GRAD; the forward's attributes.
void MakeFftGrad(tide::GradMaker& g, bool with_x) {
  tide::GradOp op = g.NewOp(std::string(g.op_type()) + "_grad");
  if (with_x) op.Input("X", g.Input("X"));
  op.Input(GradVarName("Out"), g.OutputGrad("Out"))
      .Output(GradVarName("X"), g.InputGrad("X"))
      .CopyAttrs();
}

tide::OpSchema FftSchema(const char* type, const char* comment, const char* x, const char* out,
                         bool grad_with_x) {
  return WithFftAttrs(tide::OpSchema(type).Comment(comment).Input("X", x).Output("Out", out))
      .KernelDataTypeFrom("X")
      .Grad([grad_with_x](tide::GradMaker& g) { MakeFftGrad(g, grad_with_x); });
}

tide::OpSchema FftGradSchema(const char* type, bool with_x) {
  tide::OpSchema s(type);
  if (with_x) s.Input("X", "the forward's X: X@GRAD's dims and data type");
  s.Input(GradVarName("Out")).Output(GradVarName("X"));
  return WithFftAttrs(s).KernelDataTypeFrom(with_x ? "X" : GradVarName("Out"));
}

// fft_c2r's attribute last_dim_size.
tide::OpSchema WithLastDimSize(tide::OpSchema s) {
  return s
      .Attr("last_dim_size", int64_t{0}, "the output's size along the last axis; 0: 2 * (bins - 1)")
      .Check([](const TideAttrValue& v) {
        const int64_t n = v.type == TIDE_ATTR_LONG ? v.l : v.i;
        TIDE_CHECK(n >= 0, "attribute 'last_dim_size' must be >= 0, got ", n);
      });
}

void GradLikeX(tide::InferShapeContext& ctx) { tide::ops::GradsLikeInputs(ctx, {"X"}); }

}  // namespace
}  // namespace ops_fft

using namespace ops_fft;  // NOLINT: registration macros below

TIDE_REGISTER_OP(FftSchema("fft_c2c",
                           "Out = the complex FFT of X over axes (paddle.fft.fft / ifft / fftn of "
                           "a complex tensor).",
                           "complex64 / complex128", "X's dims and data type", false)
                     .InferShape(FftC2CInferShape));
TIDE_REGISTER_OP(FftSchema("fft_r2c",
                           "Out = the FFT of real X over axes (paddle.fft.rfft / rfftn, fft of a "
                           "real tensor, ihfft): the last axis' n/2+1 bins when onesided.",
                           "float32 / float64", "complex64 / complex128", true)
                     .Attr("onesided", true,
                           "keep only the last axis' n/2+1 bins (the others are their conjugates)")
                     .InferShape(FftR2CInferShape));
TIDE_REGISTER_OP(
    WithLastDimSize(FftSchema("fft_c2r",
                              "Out = the real inverse FFT of Hermitian X over axes "
                              "(paddle.fft.irfft / irfftn, hfft with forward): last_dim_size "
                              "points along the last axis.",
                              "complex64 / complex128: the last axis' first last_dim_size/2+1 "
                              "bins",
                              "float32 / float64", true))
        .InferShape(FftC2RInferShape));
TIDE_REGISTER_OP(FftGradSchema("fft_c2c_grad", false).InferShape(FftC2CGradInferShape));
TIDE_REGISTER_OP(FftGradSchema("fft_r2c_grad", true)
                     .Attr("onesided", true, "as fft_r2c's")
                     .InferShape(GradLikeX));
TIDE_REGISTER_OP(WithLastDimSize(FftGradSchema("fft_c2r_grad", true)).InferShape(GradLikeX));
TIDE_REGISTER_KERNEL("fft_c2c", "cpu", FftC2CKernel, OPS_FFT_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("fft_r2c", "cpu", FftR2CKernel, OPS_FFT_REAL_TYPES);
TIDE_REGISTER_KERNEL("fft_c2r", "cpu", FftC2RKernel, OPS_FFT_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("fft_c2c_grad", "cpu", FftC2CGradKernel, OPS_FFT_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("fft_r2c_grad", "cpu", FftR2CGradKernel, OPS_FFT_REAL_TYPES);
TIDE_REGISTER_KERNEL("fft_c2r_grad", "cpu", FftC2RGradKernel, OPS_FFT_COMPLEX_TYPES);
