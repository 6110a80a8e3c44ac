// optimizer_ops.cu: the ops_optimizers updates on the GPU: sgd (dense and SelectedRows), momentum,
// adam (lazy or not), adagrad, rmsprop. Same checks and messages as the CPU kernels; the
// one-element inputs (LearningRate, Beta1Pow, ...) are read on the device, so an update never waits
// for the host. Each element reads all of its inputs before it writes any output, so outputs may be
// their inputs' variables (the usual in-place update).
#include <algorithm>
#include <tide/ops/optimizer.hpp>
#include <tide/ops/optimizer_update.hpp>
#include <vector>

#include "gpu.h"

namespace tide_cuda {
namespace {

// Param-shaped state inputs and outputs, checked and allocated as tide/ops/optimizer_update.hpp
// says.
using tide::ops::OptimizerStateInput;
using tide::ops::OptimizerStateOutput;

// A SelectedRows Grad: rows on the host (checked there), values on the device (copied there
// when the SelectedRows holds them on the host).
template <typename T>
struct SparseGrad {
  std::vector<int64_t> rows;
  const T* values = nullptr;  // rows.size() x row_size, device
  int64_t row_size = 0;
};

template <typename T>
SparseGrad<T> ReadSparseGrad(const KernelContext& ctx, const Gpu& gpu, const Tensor& param) {
  tide::ops::SparseGradRows sr = tide::ops::ReadSparseGradRows<T>(ctx, param);
  SparseGrad<T> g;
  g.rows = std::move(sr.rows);
  g.row_size = sr.row_size;
  if (!g.rows.empty()) g.values = DeviceData<T>(gpu, sr.value);
  return g;
}

const int64_t* Upload(const Gpu& g, const std::vector<int64_t>& v) {
  int64_t* d = g.Temp<int64_t>(static_cast<int64_t>(v.size()));
  g.CopyFromHost(d, v.data(), sizeof(int64_t) * v.size());
  return d;
}

// dst[rows[r] * row_size + j] += scale * values[r * row_size + j]; repeated rows add up.
template <typename T>
__global__ void ScatterAddRowsKernel(const int64_t* rows, const T* values, int64_t row_size,
                                     int64_t n, T scale, T* dst) {
  TIDE_CUDA_LOOP(i, n) {
    const int64_t r = i / row_size;
    atomicAdd(dst + rows[r] * row_size + (i - r * row_size), scale * values[i]);
  }
}

// The gradient as Param-shaped dense values (tide/ops/optimizer_update.hpp), a SelectedRows Grad
// scattered into device scratch.
using tide::ops::DenseGrad;

template <typename T>
DenseGrad<T> ReadGrad(const KernelContext& ctx, const Gpu& g, const Tensor& param) {
  return tide::ops::ReadDenseGrad<T>(ctx, param, [&](const tide::ops::SparseGradRows& sr) {
    const int64_t n = param.numel();
    T* dense = g.Temp<T>(n);
    g.Zero(dense, sizeof(T) * size_t(n));
    const int64_t listed = static_cast<int64_t>(sr.rows.size()) * sr.row_size;
    if (listed > 0)
      Launch(g, "ScatterAddRowsKernel", listed, ScatterAddRowsKernel<T>, Upload(g, sr.rows),
             DeviceData<T>(g, sr.value), sr.row_size, listed, T(1), dense);
    return static_cast<const T*>(dense);
  });
}

// f(i) for every element, or only for the elements of the listed (distinct) rows.
template <typename F>
__global__ void ForEachKernel(F f, int64_t n) {
  TIDE_CUDA_LOOP(i, n) { f(i); }
}
template <typename F>
__global__ void ForEachInRowsKernel(F f, const int64_t* rows, int64_t row_size, int64_t n) {
  TIDE_CUDA_LOOP(k, n) {
    const int64_t r = k / row_size;
    f(rows[r] * row_size + (k - r * row_size));
  }
}

template <typename F>
void ForEach(const Gpu& g, int64_t n, const F& f) {
  Launch(g, "ForEachKernel", n, ForEachKernel<F>, f, n);
}
template <typename F>
void ForEachInRows(const Gpu& g, const std::vector<int64_t>& rows, int64_t row_size, const F& f) {
  const int64_t n = static_cast<int64_t>(rows.size()) * row_size;
  if (n > 0)
    Launch(g, "ForEachInRowsKernel", n, ForEachInRowsKernel<F>, f, Upload(g, rows), row_size, n);
}

// ---------------------------------------------------------------------------------------------
// sgd
template <typename T>
struct SgdUpdate {
  Scalar lr;
  const T *p, *g;
  T* out;
  __device__ void operator()(int64_t i) const { out[i] = p[i] - ReadScalar<T>(lr) * g[i]; }
};

// ParamOut[rows[r]] -= lr * values[r], once per listing (a repeated row takes every listing).
template <typename T>
__global__ void SgdSparseKernel(Scalar lr_s, const int64_t* rows, const T* values, int64_t row_size,
                                int64_t n, T* out) {
  const T lr = ReadScalar<T>(lr_s);
  TIDE_CUDA_LOOP(i, n) {
    const int64_t r = i / row_size;
    atomicAdd(out + rows[r] * row_size + (i - r * row_size), -(lr * values[i]));
  }
}

template <typename T>
void SgdKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor param = ctx.Input("Param");
  const Scalar lr = ScalarInput(ctx, g, "LearningRate");
  const int64_t n = param.numel();
  tide::Variable grad = ctx.InputVar("Grad");
  if (grad && grad.IsSelectedRows()) {
    SparseGrad<T> sg = ReadSparseGrad<T>(ctx, g, param);
    const T* p = param.data<T>();
    T* out = OptimizerStateOutput<T>(ctx, "ParamOut", param);
    g.CopyD2D(out, p, sizeof(T) * size_t(n));
    const int64_t listed = static_cast<int64_t>(sg.rows.size()) * sg.row_size;
    if (listed > 0)
      Launch(g, "SgdSparseKernel", listed, SgdSparseKernel<T>, lr, Upload(g, sg.rows), sg.values,
             sg.row_size, listed, out);
    return;
  }
  const T* gd = OptimizerStateInput<T>(ctx, "Grad", param);
  const T* p = param.data<T>();
  T* out = OptimizerStateOutput<T>(ctx, "ParamOut", param);
  ForEach(g, n, SgdUpdate<T>{lr, p, gd, out});
}

// ---------------------------------------------------------------------------------------------
// momentum
template <typename T>
void MomentumKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor param = ctx.Input("Param");
  const Scalar lr = ScalarInput(ctx, g, "LearningRate");
  const DenseGrad<T> grad = ReadGrad<T>(ctx, g, param);  // unlisted rows: gradient 0, still decay
  ForEach(g, param.numel(), tide::ops::GetMomentumUpdate<T>(ctx, param, lr, grad.data));
}

// ---------------------------------------------------------------------------------------------
// adam
template <typename T>
struct AdamUpdate {
  T beta1, beta2, epsilon;
  Scalar lr, beta1_pow, beta2_pow;
  int* err;
  const T *g, *m1, *m2, *p;
  T *m1_out, *m2_out, *p_out;
  __device__ void operator()(int64_t i) const {
    const T b1p = ReadScalar<T>(beta1_pow), b2p = ReadScalar<T>(beta2_pow);
    if (i == 0 && b1p == T(1)) RaiseDeviceError(err, kBeta1PowIsOne);
    const T lr_t = ReadScalar<T>(lr) * Sqrt(T(1) - b2p) / (T(1) - b1p);
    const T gi = g[i];
    const T m1i = beta1 * m1[i] + (T(1) - beta1) * gi;
    const T m2i = beta2 * m2[i] + (T(1) - beta2) * gi * gi;
    // epsilon joins the bias-corrected second moment (Paddle 2+, PyTorch), as on the CPU.
    const T pi = p[i] - lr_t * (m1i / (Sqrt(m2i) + epsilon * Sqrt(T(1) - b2p)));
    m1_out[i] = m1i;
    m2_out[i] = m2i;
    p_out[i] = pi;
  }
};

template <typename T>
__global__ void CheckBeta1PowKernel(Scalar beta1_pow, int* err) {
  if (ReadScalar<T>(beta1_pow) == T(1)) RaiseDeviceError(err, kBeta1PowIsOne);
}

template <typename T>
void AdamKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor param = ctx.Input("Param");
  AdamUpdate<T> u;
  u.lr = ScalarInput(ctx, g, "LearningRate");
  u.beta1_pow = ScalarInput(ctx, g, "Beta1Pow");
  u.beta2_pow = ScalarInput(ctx, g, "Beta2Pow");
  // Beta1Pow = 1 is found on the device (it is never read on the host) and reported by the
  // next synchronisation; a value on the host is checked here, as the CPU kernel does.
  if (!u.beta1_pow.ptr) tide::ops::CheckBeta1Pow(ctx, static_cast<T>(u.beta1_pow.value));
  u.err = g.error_word();
  DenseGrad<T> grad = ReadGrad<T>(ctx, g, param);
  u.beta1 = static_cast<T>(ctx.Attr<double>("beta1"));
  u.beta2 = static_cast<T>(ctx.Attr<double>("beta2"));
  u.epsilon = static_cast<T>(ctx.Attr<double>("epsilon"));
  u.g = grad.data;
  u.m1 = OptimizerStateInput<T>(ctx, "Moment1", param);
  u.m2 = OptimizerStateInput<T>(ctx, "Moment2", param);
  u.p = param.data<T>();
  u.m1_out = OptimizerStateOutput<T>(ctx, "Moment1Out", param);
  u.m2_out = OptimizerStateOutput<T>(ctx, "Moment2Out", param);
  u.p_out = OptimizerStateOutput<T>(ctx, "ParamOut", param);
  const int64_t n = param.numel();
  if (grad.sparse && ctx.Attr<bool>("lazy_mode")) {
    // Lazy: rows the gradient does not list keep their moments and values.
    g.CopyD2D(u.m1_out, u.m1, sizeof(T) * size_t(n));
    g.CopyD2D(u.m2_out, u.m2, sizeof(T) * size_t(n));
    g.CopyD2D(u.p_out, u.p, sizeof(T) * size_t(n));
    if (u.beta1_pow.ptr && n > 0 && (grad.rows.empty() || grad.rows[0] != 0)) {
      // The Beta1Pow check rides on element 0, which this update does not visit.
      CheckBeta1PowKernel<T><<<1, 1, 0, g.stream()>>>(u.beta1_pow, u.err);
      g.CheckLaunch("CheckBeta1PowKernel");
    }
    ForEachInRows(g, grad.rows, grad.row_size, u);
    return;
  }
  ForEach(g, n, u);
}

// ---------------------------------------------------------------------------------------------
// adagrad
template <typename T>
void AdagradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor param = ctx.Input("Param");
  DenseGrad<T> grad = ReadGrad<T>(ctx, g, param);
  const auto u =
      tide::ops::GetAdagradUpdate<T>(ctx, param, ScalarInput(ctx, g, "LearningRate"), grad.data);
  const int64_t n = param.numel();
  if (grad.sparse) {  // only the listed rows change, as in Fluid's sparse Adagrad
    g.CopyD2D(u.m_out, u.m, sizeof(T) * size_t(n));
    g.CopyD2D(u.p_out, u.p, sizeof(T) * size_t(n));
    ForEachInRows(g, grad.rows, grad.row_size, u);
    return;
  }
  ForEach(g, n, u);
}

// ---------------------------------------------------------------------------------------------
// rmsprop
template <typename T>
void RmspropKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor param = ctx.Input("Param");
  const DenseGrad<T> grad = ReadGrad<T>(ctx, g, param);
  const Scalar lr = ScalarInput(ctx, g, "LearningRate");
  ForEach(g, param.numel(), tide::ops::GetRmspropUpdate<T>(ctx, param, lr, grad.data));
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("sgd", "gpu", SgdKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("momentum", "gpu", MomentumKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("adam", "gpu", AdamKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("adagrad", "gpu", AdagradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("rmsprop", "gpu", RmspropKernel, TIDE_CUDA_FLOAT_TYPES);
