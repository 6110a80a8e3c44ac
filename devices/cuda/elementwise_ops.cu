// elementwise_ops.cu: the elementwise ops of ops_math on the GPU: elementwise_add/sub/mul/div/
// max/min/pow/mod/floordiv with Fluid's broadcast and the grads of the differentiable ones (dY
// summed over the broadcast dims), sqrt, sign, clip, scale, with grads; clip and scale also take a
// SelectedRows X, scale its ScaleTensor. add/sub/mul/div/max/min also take __half and
// __nv_bfloat16 (computed in float); grads are float and double, like the CPU's. The activations
// are activation_ops.cu.
#include <cmath>
#include <limits>
#include <tide/ops/clip.hpp>
#include <tide/ops/elementwise.hpp>
#include <tide/ops/scale.hpp>
#include <tide/ops/unary.hpp>
#include <type_traits>
#include <vector>

#include "broadcast.cuh"
#include "host_ints.h"
#include "merge_rows.cuh"
#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::Broadcast;
using tide::ops::BroadcastIndex;
using tide::ops::GetBroadcast;

// ---------------------------------------------------------------------------------------------
// Binary ops: F()(x, y, error_word) on the accumulator type.
struct AddF {
  template <typename A>
  __device__ A operator()(A x, A y, int*) const {
    return x + y;
  }
};
struct SubF {
  template <typename A>
  __device__ A operator()(A x, A y, int*) const {
    return x - y;
  }
};
struct MulF {
  template <typename A>
  __device__ A operator()(A x, A y, int*) const {
    return x * y;
  }
};
struct DivF {
  template <typename A>
  __device__ A operator()(A x, A y, int* err) const {
    if constexpr (std::is_integral_v<A>) {
      if (y == A(0)) {  // the CPU kernel refuses this before computing anything
        RaiseDeviceError(err, kIntegerDivisionByZero);
        return A(0);
      }
    }
    return x / y;
  }
};
struct MaxF {
  template <typename A>
  __device__ A operator()(A x, A y, int*) const {
    return x > y ? x : y;
  }
};
struct MinF {
  template <typename A>
  __device__ A operator()(A x, A y, int*) const {
    return x < y ? x : y;
  }
};

// pow, mod and floordiv with the CPU kernels' exact rules (ops_math's elementwise_ops.cc):
// integer pow rounds to the nearest (2^-1 is 0), mod takes the sign of Y (Python's %), floordiv
// rounds toward -inf; an integer Y of 0 is an error, INT_MIN / -1 wraps and INT_MIN % -1 is 0.
__device__ __forceinline__ float PowOf(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double PowOf(double x, double y) { return pow(x, y); }
__device__ __forceinline__ float FmodOf(float x, float y) { return fmodf(x, y); }
__device__ __forceinline__ double FmodOf(double x, double y) { return fmod(x, y); }
__device__ __forceinline__ float FloorOf(float x) { return floorf(x); }
__device__ __forceinline__ double FloorOf(double x) { return floor(x); }

// x / y for integers with y != 0; INT_MIN / -1 wraps (two's complement).
template <typename A>
__device__ __forceinline__ A IntDiv(A x, A y) {
  if (y == A(-1)) return static_cast<A>(A(0) - static_cast<std::make_unsigned_t<A>>(x));
  return x / y;
}
// False, recording the error, for an integer y of 0 (the CPU kernel refuses it up front).
template <typename A>
__device__ __forceinline__ bool NonZeroDivisor(A y, int* err) {
  if constexpr (std::is_integral_v<A>) {
    if (y == A(0)) {
      RaiseDeviceError(err, kIntegerDivisionByZero);
      return false;
    }
  }
  return true;
}

struct PowF {
  template <typename A>
  __device__ A operator()(A x, A y, int*) const {
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(llrint(pow(static_cast<double>(x), static_cast<double>(y))));
    else
      return PowOf(x, y);
  }
};
struct ModF {
  template <typename A>
  __device__ A operator()(A x, A y, int* err) const {
    if (!NonZeroDivisor(y, err)) return A(0);
    A r;
    if constexpr (std::is_integral_v<A>) {
      if (y == A(-1)) return A(0);
      r = x % y;
    } else {
      r = FmodOf(x, y);
    }
    return (r != A(0) && ((r < A(0)) != (y < A(0)))) ? static_cast<A>(r + y) : r;
  }
};
struct FloorDivF {
  template <typename A>
  __device__ A operator()(A x, A y, int* err) const {
    if (!NonZeroDivisor(y, err)) return A(0);
    if constexpr (std::is_integral_v<A>) {
      const A q = IntDiv(x, y);
      return (y != A(-1) && x % y != 0 && ((x < A(0)) != (y < A(0)))) ? static_cast<A>(q - 1) : q;
    } else {
      return FloorOf(x / y);
    }
  }
};

template <typename T, typename F>
__global__ void BinaryKernel(const T* x, const T* y, T* out, int64_t total, YPairing pair,
                             int* err) {
  TIDE_CUDA_LOOP(i, total) { out[i] = static_cast<T>(F()(Load(x, i), Load(y, pair(i)), err)); }
}

// Paddle 2.x's numpy broadcast (tide/ops/elementwise.hpp) is the CPU kernel's.
void DeclineNumpyBroadcast(const KernelContext& ctx) {
  if (tide::ops::ElementwiseNumpyPath(ctx))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(),
               "': the CUDA kernel broadcasts Y over X "
               "(Fluid's rule), not X ",
               tide::ToString(ctx.Input("X").dims()), " and Y ",
               tide::ToString(ctx.Input("Y").dims()),
               " both ways (numpy's); run the op on the CPU");
}

template <typename T, typename F>
void BinaryOp(KernelContext& ctx) {
  Gpu g(ctx);
  DeclineNumpyBroadcast(ctx);
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  Broadcast b = GetBroadcast(ctx.op_type(), x.dims(), y.dims(), ctx.Attr<int32_t>("axis"), true);
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  T* od = out.mutable_data<T>(x.dims(), g.place());
  const int64_t total = x.numel();
  Launch(g, "BinaryKernel", total, BinaryKernel<T, F>, xd, yd, od, total, YPairing(b),
         g.error_word());
}

template <typename T>
void AddKernel(KernelContext& c) {
  BinaryOp<T, AddF>(c);
}
template <typename T>
void SubKernel(KernelContext& c) {
  BinaryOp<T, SubF>(c);
}
template <typename T>
void MulKernel(KernelContext& c) {
  BinaryOp<T, MulF>(c);
}
template <typename T>
void DivKernel(KernelContext& c) {
  BinaryOp<T, DivF>(c);
}
template <typename T>
void MaxKernel(KernelContext& c) {
  BinaryOp<T, MaxF>(c);
}
template <typename T>
void MinKernel(KernelContext& c) {
  BinaryOp<T, MinF>(c);
}
template <typename T>
void PowKernel(KernelContext& c) {
  BinaryOp<T, PowF>(c);
}
template <typename T>
void ModKernel(KernelContext& c) {
  BinaryOp<T, ModF>(c);
}
template <typename T>
void FloorDivKernel(KernelContext& c) {
  BinaryOp<T, FloorDivF>(c);
}

// Partial derivatives: dX = dOut * DX(x, y, out), dY = dOut * DY(x, y, out).
struct AddG {
  template <typename A>
  __device__ static A DX(A, A, A) {
    return A(1);
  }
  template <typename A>
  __device__ static A DY(A, A, A) {
    return A(1);
  }
};
struct SubG {
  template <typename A>
  __device__ static A DX(A, A, A) {
    return A(1);
  }
  template <typename A>
  __device__ static A DY(A, A, A) {
    return A(-1);
  }
};
struct MulG {
  template <typename A>
  __device__ static A DX(A, A y, A) {
    return y;
  }
  template <typename A>
  __device__ static A DY(A x, A, A) {
    return x;
  }
};
struct DivG {
  template <typename A>
  __device__ static A DX(A, A y, A) {
    return A(1) / y;
  }
  template <typename A>
  __device__ static A DY(A, A y, A out) {
    return -out / y;
  }
};
// The gradient goes to the larger (max) or smaller (min) operand; ties go to Y, as in Fluid.
struct MaxG {
  template <typename A>
  __device__ static A DX(A x, A y, A) {
    return x > y ? A(1) : A(0);
  }
  template <typename A>
  __device__ static A DY(A x, A y, A) {
    return x > y ? A(0) : A(1);
  }
};
struct MinG {
  template <typename A>
  __device__ static A DX(A x, A y, A) {
    return x < y ? A(1) : A(0);
  }
  template <typename A>
  __device__ static A DY(A x, A y, A) {
    return x < y ? A(0) : A(1);
  }
};
// d(x^y)/dx = y x^(y-1), d(x^y)/dy = x^y log(x) (Fluid's PowGradDX/DY).
struct PowG {
  template <typename A>
  __device__ static A DX(A x, A y, A) {
    return y * PowOf(x, y - A(1));
  }
  template <typename A>
  __device__ static A DY(A x, A y, A) {
    return PowOf(x, y) * Log(x);
  }
};

// dX everywhere, and dY where it is elementwise (same shapes).
template <typename T, typename G>
__global__ void BinaryGradKernel(const T* x, const T* y, const T* out, const T* dout, T* dx,
                                 T* dy_same, int64_t total, YPairing pair) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t j = pair(e);
    const T xv = x[e], yv = y[j], o = out ? out[e] : T(0), gv = dout[e];
    if (dx) dx[e] = gv * G::DX(xv, yv, o);
    if (dy_same) dy_same[e] = gv * G::DY(xv, yv, o);
  }
}

// dY[j] += dOut * DY for a general broadcast (Y's repeated dims are not one contiguous run).
template <typename T, typename G>
__global__ void GeneralDyKernel(const T* x, const T* y, const T* out, const T* dout, T* dy,
                                int64_t total, YPairing pair) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t j = pair(e);
    AtomicAdd(dy + j, dout[e] * G::DY(x[e], y[j], out ? out[e] : T(0)));
  }
}

// dY[j] = sum over the broadcast dims of dOut * DY.
template <typename T, typename G>
struct BroadcastDyTerm {
  const T *x, *y, *out, *dout;
  __device__ T operator()(int64_t e, int64_t j) const {
    return dout[e] * G::DY(x[e], y[j], out ? out[e] : T(0));
  }
};

template <typename T, typename G>
void BinaryGradOp(KernelContext& ctx) {
  Gpu g(ctx);
  DeclineNumpyBroadcast(ctx);
  const auto a = tide::ops::GetElementwiseGradArgs<T>(ctx);
  const Broadcast& b = a.b;
  const int64_t total = a.x_numel;
  if (a.dx || (a.dy && b.same))
    Launch(g, "BinaryGradKernel", total, BinaryGradKernel<T, G>, a.x, a.y, a.out, a.dout, a.dx,
           b.same ? a.dy : nullptr, total, YPairing(b));
  if (a.dy && b.general) {
    g.Zero(a.dy, sizeof(T) * a.y_numel);
    Launch(g, "GeneralDyKernel", total, GeneralDyKernel<T, G>, a.x, a.y, a.out, a.dout, a.dy, total,
           YPairing(b));
  } else if (a.dy && !b.same)
    ReduceMid<T>(g, "BinaryGradKernel (dY)", b.pre, b.n, b.post,
                 BroadcastDyTerm<T, G>{a.x, a.y, a.out, a.dout}, StoreFinish<T, T>{a.dy, T(1)});
}

template <typename T>
void AddGradKernel(KernelContext& c) {
  BinaryGradOp<T, AddG>(c);
}
template <typename T>
void SubGradKernel(KernelContext& c) {
  BinaryGradOp<T, SubG>(c);
}
template <typename T>
void MulGradKernel(KernelContext& c) {
  BinaryGradOp<T, MulG>(c);
}
template <typename T>
void DivGradKernel(KernelContext& c) {
  BinaryGradOp<T, DivG>(c);
}
template <typename T>
void MaxGradKernel(KernelContext& c) {
  BinaryGradOp<T, MaxG>(c);
}
template <typename T>
void MinGradKernel(KernelContext& c) {
  BinaryGradOp<T, MinG>(c);
}
template <typename T>
void PowGradKernel(KernelContext& c) {
  BinaryGradOp<T, PowG>(c);
}

// ---------------------------------------------------------------------------------------------
// Unary ops: f(x) on the accumulator type; grads f(from, dout) with `from` = Out or X.
struct SqrtF {
  template <typename A>
  __device__ A operator()(A x) const {
    return Sqrt(x);
  }
};
struct SignF {
  template <typename A>
  __device__ A operator()(A x) const {
    return x > A(0) ? A(1) : (x < A(0) ? A(-1) : A(0));
  }
};
template <typename A>
struct ClipF {
  A lo, hi;
  __device__ A operator()(A x) const {
    const A m = x > lo ? x : lo;  // max(x, lo), then min(., hi), as the CPU's cwiseMax/cwiseMin
    return m < hi ? m : hi;
  }
};
template <typename A>
struct ScaleF {
  A scale, bias;
  bool bias_after_scale;
  __device__ A operator()(A x) const {
    return bias_after_scale ? x * scale + bias : (x + bias) * scale;
  }
};

struct SqrtG {  // from Out
  template <typename A>
  __device__ A operator()(A out, A dout) const {
    return dout / (out * A(2));
  }
};
template <typename A>
struct ClipG {  // from X
  A lo, hi;
  __device__ A operator()(A x, A dout) const { return dout * ((x > lo && x < hi) ? A(1) : A(0)); }
};

template <typename T, typename F>
__global__ void UnaryKernel(const T* x, T* out, int64_t n, F f) {
  TIDE_CUDA_LOOP(i, n) { out[i] = static_cast<T>(f(Load(x, i))); }
}

template <typename T, typename F>
__global__ void UnaryGradKernel(const T* from, const T* dout, T* dx, int64_t n, F f) {
  TIDE_CUDA_LOOP(i, n) { dx[i] = static_cast<T>(f(Load(from, i), Load(dout, i))); }
}

template <typename T, typename F>
void Unary(KernelContext& ctx, F f) {
  Gpu g(ctx);
  const auto a = tide::ops::GetUnaryArgs<T>(ctx);
  Launch(g, "UnaryKernel", a.n, UnaryKernel<T, F>, a.x, a.out, a.n, f);
}

template <typename T, typename F>
void UnaryGrad(const Gpu& g, const tide::ops::UnaryGradArgs<T>& a, F f) {
  Launch(g, "UnaryGradKernel", a.n, UnaryGradKernel<T, F>, a.from, a.dout, a.dx, a.n, f);
}

template <typename T>
void SqrtKernel(KernelContext& c) {
  Unary<T>(c, SqrtF{});
}
template <typename T>
void SignKernel(KernelContext& c) {
  Unary<T>(c, SignF{});
}
template <typename T>
void SqrtGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  UnaryGrad(g, tide::ops::GetUnaryGradArgs<T>(ctx, "Out"), SqrtG{});
}

// clip: a SelectedRows X, as Fluid's clip_op.h: its rows merged first (sum's merge, a row listed
// twice is one row holding the sum), then the merged values clipped, into a SelectedRows Out.
template <typename T>
void ClipKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto [lo, hi] = tide::ops::GetClipRange<T>(ctx, ReadBack{g});
  tide::Variable xv = ctx.InputVar("X");
  if (!xv || !xv.IsSelectedRows()) return Unary<T>(ctx, ClipF<Acc<T>>{lo, hi});
  MergeInputsIntoOut<T>(ctx, g, 1);
  Tensor v = ctx.OutputVar("Out").GetSelectedRows().value();
  if (v.numel() == 0) return;
  T* vd = v.mutable_data<T>(g.place());  // the merged values, clipped in place
  Launch(g, "UnaryKernel", v.numel(), UnaryKernel<T, ClipF<Acc<T>>>, vd, vd, v.numel(),
         ClipF<Acc<T>>{lo, hi});
}

template <typename T>
void ClipGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetClipGradArgs<T>(ctx, ReadBack{g});
  UnaryGrad(g, a.io, ClipG<Acc<T>>{a.r.lo, a.r.hi});
}

// scale: the factor (ScaleTensor's one element, read back to the host, over `scale`) and the
// offset are converted to T first, as the CPU kernel does (so integer kernels truncate them);
// __half and __nv_bfloat16 compute in float. A SelectedRows X gives a SelectedRows Out with X's
// rows and height (values scaled, rows not merged), as on the CPU.
template <typename T>
void ScaleKernel(KernelContext& ctx) {
  Gpu g(ctx);
  using A = Acc<T>;
  const double s = tide::ops::ScaleFactor(ctx, ReadBack{g});
  const double b = ctx.Attr<float>("bias");
  if (!tide::ops::HoldsScaleValue<T>(s) ||
      !tide::ops::HoldsScaleValue<T>(b))  // the CPU kernel names which, before any work
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op 'scale': the CUDA kernel leaves a scale or bias that ",
               tide::DataTypeName(tide::DataTypeOf<T>()), " cannot hold to the CPU kernel");
  A scale, bias;
  if constexpr (kLowFloat<T>) {
    scale = static_cast<float>(s);
    bias = static_cast<float>(b);
  } else {
    scale = static_cast<T>(s);
    bias = static_cast<T>(b);
  }
  const ScaleF<A> f{scale, bias, ctx.Attr<bool>("bias_after_scale")};
  tide::Variable xv = ctx.InputVar("X");
  if (!xv || !xv.IsSelectedRows()) return Unary<T>(ctx, f);
  tide::ops::ScaledRows r = tide::ops::GetScaledRows(ctx);
  if (!r.x.initialized()) return;
  const T* xd = DeviceData<T>(g, r.x);  // a SelectedRows' value may stay on the host
  T* od = r.out.mutable_data<T>(r.x.dims(), g.place());
  Launch(g, "UnaryKernel", r.x.numel(), UnaryKernel<T, ScaleF<A>>, xd, od, r.x.numel(), f);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

#define TIDE_CUDA_BINARY_TYPES float, double, int32_t, int64_t, TIDE_CUDA_LOW_FLOAT_TYPES
TIDE_REGISTER_KERNEL("elementwise_add", "gpu", AddKernel, TIDE_CUDA_BINARY_TYPES);
TIDE_REGISTER_KERNEL("elementwise_sub", "gpu", SubKernel, TIDE_CUDA_BINARY_TYPES);
TIDE_REGISTER_KERNEL("elementwise_mul", "gpu", MulKernel, TIDE_CUDA_BINARY_TYPES);
TIDE_REGISTER_KERNEL("elementwise_div", "gpu", DivKernel, TIDE_CUDA_BINARY_TYPES);
TIDE_REGISTER_KERNEL("elementwise_max", "gpu", MaxKernel, TIDE_CUDA_BINARY_TYPES);
TIDE_REGISTER_KERNEL("elementwise_min", "gpu", MinKernel, TIDE_CUDA_BINARY_TYPES);
TIDE_REGISTER_KERNEL("elementwise_add_grad", "gpu", AddGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_sub_grad", "gpu", SubGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_mul_grad", "gpu", MulGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_div_grad", "gpu", DivGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_max_grad", "gpu", MaxGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_min_grad", "gpu", MinGradKernel, TIDE_CUDA_FLOAT_TYPES);
// The CPU kernels' types: no float16.
#define TIDE_CUDA_NUMERIC_TYPES float, double, int32_t, int64_t
TIDE_REGISTER_KERNEL("elementwise_pow", "gpu", PowKernel, TIDE_CUDA_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_mod", "gpu", ModKernel, TIDE_CUDA_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_floordiv", "gpu", FloorDivKernel, TIDE_CUDA_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_pow_grad", "gpu", PowGradKernel, TIDE_CUDA_FLOAT_TYPES);

TIDE_REGISTER_KERNEL("sqrt", "gpu", SqrtKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sqrt_grad", "gpu", SqrtGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sign", "gpu", SignKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("clip", "gpu", TIDE_HOST_INPUTS("Min", "Max"), ClipKernel,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("clip_grad", "gpu", TIDE_HOST_INPUTS("Min", "Max"), ClipGradKernel,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("scale", "gpu", TIDE_HOST_INPUTS("ScaleTensor"), ScaleKernel,
                                 TIDE_CUDA_BINARY_TYPES);
