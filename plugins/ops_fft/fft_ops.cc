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
// No gradient: the backward pass does not differentiate through complex values.
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

FftArgs ReadFftArgs(const KernelContext& ctx) {
  FftArgs a;
  a.x = ctx.Input("X").dims();
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

template <typename C>
void FftC2CKernel(KernelContext& ctx) {
  using R = typename C::value_type;
  const FftArgs a = ReadFftArgs(ctx);
  Tensor x = ctx.Input("X");
  C* out = ctx.Output("Out").mutable_data<C>(a.x, ctx.place());
  const int64_t numel = x.numel();
  std::copy(x.data<C>(), x.data<C>() + numel, out);
  if (numel == 0) return;
  ComplexTransforms(ctx, out, a.x, a.axes, a.forward);
  Scale(out, numel, NormFactor(a.norm, a.forward, SignalSize(a.x, a.axes)));
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

// The attributes every FFT op has.
tide::OpSchema FftSchema(const char* type, const char* comment, const char* x, const char* out) {
  return tide::OpSchema(type)
      .Comment(comment)
      .Input("X", x)
      .Output("Out", out)
      .RequiredAttr("axes", TIDE_ATTR_LONGS,
                    "the axes transformed (negative counts from the end; distinct)")
      .Attr("normalization", std::string("backward"),
            "backward (the inverse divided by n), forward (the forward divided by n) or ortho "
            "(both by sqrt(n)); n: the product of the transformed sizes")
      .Check(CheckNormalization)
      .Attr("forward", true, "the forward transform (exponent -i), else the inverse (+i)")
      .KernelDataTypeFrom("X");
}

}  // namespace
}  // namespace ops_fft

using namespace ops_fft;  // NOLINT: registration macros below

TIDE_REGISTER_OP(FftSchema("fft_c2c",
                           "Out = the complex FFT of X over axes (paddle.fft.fft / ifft / fftn of "
                           "a complex tensor).",
                           "complex64 / complex128", "X's dims and data type")
                     .InferShape(FftC2CInferShape));
TIDE_REGISTER_OP(FftSchema("fft_r2c",
                           "Out = the FFT of real X over axes (paddle.fft.rfft / rfftn, fft of a "
                           "real tensor, ihfft): the last axis' n/2+1 bins when onesided.",
                           "float32 / float64", "complex64 / complex128")
                     .Attr("onesided", true,
                           "keep only the last axis' n/2+1 bins (the others are their conjugates)")
                     .InferShape(FftR2CInferShape));
TIDE_REGISTER_OP(
    FftSchema("fft_c2r",
              "Out = the real inverse FFT of Hermitian X over axes (paddle.fft.irfft / irfftn, "
              "hfft with forward): last_dim_size points along the last axis.",
              "complex64 / complex128: the last axis' first last_dim_size/2+1 bins",
              "float32 / float64")
        .Attr("last_dim_size", int64_t{0},
              "the output's size along the last axis; 0: 2 * (bins - 1)")
        .Check([](const TideAttrValue& v) {
          const int64_t n = v.type == TIDE_ATTR_LONG ? v.l : v.i;
          TIDE_CHECK(n >= 0, "attribute 'last_dim_size' must be >= 0, got ", n);
        })
        .InferShape(FftC2RInferShape));
TIDE_REGISTER_KERNEL("fft_c2c", "cpu", FftC2CKernel, OPS_FFT_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("fft_r2c", "cpu", FftR2CKernel, OPS_FFT_REAL_TYPES);
TIDE_REGISTER_KERNEL("fft_c2r", "cpu", FftC2RKernel, OPS_FFT_COMPLEX_TYPES);
