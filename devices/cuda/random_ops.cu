// random_ops.cu: uniform_random, gaussian_random and dropout (+grad) on the GPU, drawing from a
// counter-based generator (Philox4x32-10): element i's numbers depend only on (seed, i), so a
// seeded op gives the same tensor on every run and every launch shape. The streams differ from
// the CPU kernels' std::mt19937 / minstd_rand: same distributions, other numbers. Out's dims
// come from ShapeTensor / ShapeTensorList (read back to the host) or `shape`, as on the CPU.
#include <random>
#include <tide/ops/dropout.hpp>
#include <tide/ops/random.hpp>
#include <tide/ops/selected_rows.hpp>
#include <tide/ops/shape_inputs.hpp>

#include "host_ints.h"
#include "philox.cuh"

namespace tide_cuda {
namespace {

template <typename T>
__global__ void UniformKernel(T* out, int64_t n, uint64_t seed, T lo, T hi) {
  TIDE_CUDA_LOOP(i, n) {
    T v = lo + UniformAt<T>(i, seed) * (hi - lo);
    // lo + u * (hi - lo) can round up to hi where the grid near hi is coarse; keep [lo, hi).
    if (!(v < hi)) v = nextafter(hi, lo);
    out[i] = v;
  }
}

// uniform_random's diagonal: element k * (step + 1) for k < num.
template <typename T>
__global__ void DiagKernel(T* out, int64_t num, int64_t step, T value) {
  TIDE_CUDA_LOOP(k, num) { out[k * (step + 1)] = value; }
}

// Box-Muller: elements 2j and 2j + 1 share a pair of uniforms (cos and sin).
template <typename T>
__global__ void GaussianKernel(T* out, int64_t n, uint64_t seed, T mean, T stddev) {
  TIDE_CUDA_LOOP(i, n) {
    const uint4 r = Philox(static_cast<uint64_t>(i) >> 1, seed);
    T u1, u2;
    if constexpr (sizeof(T) == 4) {
      u1 = T(1) - Unit(r.x, T());  // (0, 1]: log(u1) is finite
      u2 = Unit(r.y, T());
    } else {
      u1 = T(1) - Unit(r.x, r.y, T());
      u2 = Unit(r.z, r.w, T());
    }
    const T radius = Sqrt(T(-2) * Log(u1));
    const T angle = T(6.283185307179586476925286766559) * u2;
    out[i] = mean + stddev * radius * ((i & 1) ? sin(angle) : cos(angle));
  }
}

Dims OutShape(const KernelContext& ctx, const Gpu& g) {
  return tide::ops::ShapeFromInputs(
      ctx, [&](const char* p) { return HostIntValues(ctx, g, p); },
      [&](const char* p) { return HostIntScalars(ctx, g, p); });
}

template <typename T>
void UniformRandom(KernelContext& ctx) {
  Gpu g(ctx);
  const auto [lo, hi] = tide::ops::GetUniformRange<T>(ctx);
  Tensor out = tide::ops::OutputValue(ctx, "Out");  // a SelectedRows' value, rows kept
  T* o = out.mutable_data<T>(OutShape(ctx, g), g.place());
  const tide::ops::UniformDiag diag = tide::ops::GetUniformDiag(ctx, out.numel());
  Launch(g, "UniformKernel", out.numel(), UniformKernel<T>, o, out.numel(),
         SeedOf(ctx.Attr<int32_t>("seed")), lo, hi);
  if (diag.num > 0)
    Launch(g, "DiagKernel", diag.num, DiagKernel<T>, o, diag.num, diag.step,
           static_cast<T>(diag.value));
}

template <typename T>
void GaussianRandom(KernelContext& ctx) {
  Gpu g(ctx);
  const auto [mean, stddev] = tide::ops::GetGaussianParams<T>(ctx);
  Tensor out = ctx.Output("Out");
  T* o = out.mutable_data<T>(OutShape(ctx, g), g.place());
  Launch(g, "GaussianKernel", out.numel(), GaussianKernel<T>, o, out.numel(),
         SeedOf(ctx.Attr<int32_t>("seed")), mean, stddev);
}

// ---------------------------------------------------------------------------------------------
// dropout: Mask holds dOut/dX per element (0 or `keep` in training, the constant factor at
// inference), as ops_nn's kernel does.
template <typename T>
__global__ void DropoutKernel(const T* x, T* out, T* mask, int64_t n, uint64_t seed, float p,
                              T keep) {
  TIDE_CUDA_LOOP(i, n) {
    const T m = UniformAt<float>(i, seed) < p ? T(0) : keep;
    out[i] = x[i] * m;
    if (mask) mask[i] = m;
  }
}

template <typename T>
__global__ void ScaleFillKernel(const T* x, T* out, T* mask, int64_t n, T factor) {
  TIDE_CUDA_LOOP(i, n) {
    out[i] = x[i] * factor;
    if (mask) mask[i] = factor;
  }
}

template <typename T>
void Dropout(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetDropoutArgs<T>(ctx, ReadBack{g});
  if (a.is_test) {
    const T factor = a.upscale ? T(1) : static_cast<T>(1.0f - a.p);
    Launch(g, "ScaleFillKernel", a.n, ScaleFillKernel<T>, a.x, a.out, a.mask, a.n, factor);
    return;
  }
  if (a.p == 1.0f) {  // everything dropped
    Launch(g, "ScaleFillKernel", a.n, ScaleFillKernel<T>, a.x, a.out, a.mask, a.n, T(0));
    return;
  }
  // A fixed seed (0 too) repeats the mask on every run.
  const uint64_t seed = a.seed.fixed ? static_cast<uint64_t>(a.seed.value) : FreshSeed();
  const T keep = a.upscale ? T(1) / (T(1) - static_cast<T>(a.p)) : T(1);
  Launch(g, "DropoutKernel", a.n, DropoutKernel<T>, a.x, a.out, a.mask, a.n, seed, a.p, keep);
}

template <typename T>
__global__ void MulKernel(const T* a, const T* b, T* out, int64_t n) {
  TIDE_CUDA_LOOP(i, n) { out[i] = a[i] * b[i]; }
}

template <typename T>
void DropoutGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetDropoutGradArgs<T>(ctx);
  Launch(g, "MulKernel", a.n, MulKernel<T>, a.dout, a.mask, a.dx, a.n);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL_HOST_INPUTS("uniform_random", "gpu",
                                 TIDE_HOST_INPUTS("ShapeTensor", "ShapeTensorList"), UniformRandom,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("gaussian_random", "gpu",
                                 TIDE_HOST_INPUTS("ShapeTensor", "ShapeTensorList"), GaussianRandom,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("dropout", "gpu", TIDE_HOST_INPUTS("Seed"), Dropout,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("dropout_grad", "gpu", DropoutGrad, TIDE_CUDA_FLOAT_TYPES);
