// blas_ops.cc: mul, matmul and matmul_v2 (and grads) on the GPU through cuBLAS, on the place's
// handle and stream. Tide's tensors are row-major and cuBLAS is column-major: a row-major C = op(A)
// op(B) is the column-major C^T = op(B)^T op(A)^T, so every call swaps the operands.
#include <climits>
#include <tide/ops/matmul.hpp>
#include <tide/ops/matmul_v2.hpp>
#include <type_traits>

#include "convert.h"
#include "cuda_libs.h"
#include "gpu.h"

namespace tide_cuda {
namespace {

using tide::ops::GetMatmulV2Runs;
using tide::ops::MatmulShape;
using tide::ops::MatmulV2Runs;
using tide::ops::MatmulV2Shape;

cublasHandle_t Handle(const Gpu& g) {
  Cublas();  // throws with the loader's reason when cuBLAS is missing
  if (!g.ext().cublas)
    TIDE_THROW(TIDE_UNAVAILABLE, "op '", g.op(), "': cuBLAS could not be set up on ",
               g.place().ToString(), " (the reason is in the log of its context's creation)");
  return static_cast<cublasHandle_t>(g.ext().cublas);
}

void CheckBlas(const Gpu& g, cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    TIDE_THROW(s == CUBLAS_STATUS_ALLOC_FAILED ? TIDE_RESOURCE_EXHAUSTED : TIDE_INTERNAL, "op '",
               g.op(), "' on ", g.place().ToString(), ": ", call, ": ", CublasStatusText(s));
}

int AsInt(const Gpu& g, int64_t v, const char* what) {
  TIDE_CHECK(v >= 0 && v <= INT_MAX, "op '", g.op(), "': ", what, " = ", v,
             " exceeds cuBLAS's int range");
  return static_cast<int>(v);
}

// A 16-bit GEMM this device's cuBLAS does not run (bfloat16 below compute capability 8.0) is
// declined: every GEMM of the op fails alike, so the first fails before anything is written, and
// the core runs the float32 kernel on widened data.
void CheckLowBlas(const Gpu& g, cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", g.op(), "' on ", g.place().ToString(), ": ", call,
               " does not take this 16-bit GEMM here: ", CublasStatusText(s));
  CheckBlas(g, s, call);
}

// alpha and beta: float for the 16-bit types (cuBLAS's CUBLAS_COMPUTE_32F scale type), T
// otherwise.
template <typename T>
using Scal = std::conditional_t<kLowFloat<T>, float, T>;

template <typename T>
constexpr cudaDataType_t CudaType() {
  if constexpr (std::is_same_v<T, __half>)
    return CUDA_R_16F;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return CUDA_R_16BF;
  else
    return CUDA_R_32F;
}

// The handle's math mode with CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION added for one
// 16-bit GEMM, restored after it (as PyTorch does): cuBLAS may otherwise sum split-K partial
// results in the output's 16-bit type, and the result is to be float32 accumulation throughout.
class DisallowReducedReduction {
 public:
  DisallowReducedReduction(const Gpu& g, cublasHandle_t h) : g_(g), h_(h) {
    const CublasApi& api = Cublas();
    CheckStatus(api.cublasGetMathMode(h_, &old_), "cublasGetMathMode");
    CheckStatus(
        api.cublasSetMathMode(
            h_, static_cast<cublasMath_t>(old_ | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
        "cublasSetMathMode");
  }
  ~DisallowReducedReduction() { Cublas().cublasSetMathMode(h_, old_); }
  DisallowReducedReduction(const DisallowReducedReduction&) = delete;
  DisallowReducedReduction& operator=(const DisallowReducedReduction&) = delete;

 private:
  void CheckStatus(cublasStatus_t s, const char* call) const {
    if (s != CUBLAS_STATUS_SUCCESS)
      TIDE_THROW(TIDE_INTERNAL, "op '", g_.op(), "' on ", g_.place().ToString(), ": ", call, ": ",
                 CublasStatusText(s));
  }
  const Gpu& g_;
  cublasHandle_t h_;
  cublasMath_t old_ = CUBLAS_DEFAULT_MATH;
};

// C_b[m, n] = alpha * op(A_b) op(B_b) + beta * C_b for b < batch (row-major), where X_b = X +
// b * stride_x (a stride of 0 shares one matrix). beta is 0 or 1. float and double: cublasSgemm /
// cublasDgemm (strided batched). __half and __nv_bfloat16: cublasGemmEx /
// cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32F (tensor cores, float32 accumulation), C of
// type T or float (a float32 sum over several GEMMs, rounded once by the caller).
template <typename T, typename C = T>
void Gemm(const Gpu& g, bool ta, bool tb, int64_t m, int64_t n, int64_t k, Scal<T> alpha,
          const T* a, int64_t stride_a, const T* b, int64_t stride_b, Scal<T> beta, C* c,
          int64_t stride_c, int64_t batch) {
  static_assert(std::is_same_v<C, T> || (kLowFloat<T> && std::is_same_v<C, float>),
                "a 16-bit GEMM writes T or float, the others T");
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) {  // an empty sum: C = beta * C
    if (beta == Scal<T>(0)) g.Zero(c, sizeof(C) * size_t(m * n + (batch - 1) * stride_c));
    return;
  }
  const int im = AsInt(g, m, "rows"), in = AsInt(g, n, "columns"), ik = AsInt(g, k, "inner dim");
  const int lda = ta ? im : ik, ldb = tb ? ik : in;
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasHandle_t h = Handle(g);
  const CublasApi& api = Cublas();
  cublasStatus_t s;
  if constexpr (kLowFloat<T>) {
    const DisallowReducedReduction mode(g, h);
    constexpr cudaDataType_t ab = CudaType<T>(), ct = CudaType<C>();
    if (batch == 1) {
      s = api.cublasGemmEx(h, opb, opa, in, im, ik, &alpha, b, ab, ldb, a, ab, lda, &beta, c, ct,
                           in, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      CheckLowBlas(g, s, "cublasGemmEx");
      return;
    }
    const int ib = AsInt(g, batch, "batch");
    s = api.cublasGemmStridedBatchedEx(h, opb, opa, in, im, ik, &alpha, b, ab, ldb, stride_b, a, ab,
                                       lda, stride_a, &beta, c, ct, in, stride_c, ib,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    CheckLowBlas(g, s, "cublasGemmStridedBatchedEx");
    return;
  } else {
    if (batch == 1) {
      if constexpr (std::is_same_v<T, float>)
        s = api.cublasSgemm_v2(h, opb, opa, in, im, ik, &alpha, b, ldb, a, lda, &beta, c, in);
      else
        s = api.cublasDgemm_v2(h, opb, opa, in, im, ik, &alpha, b, ldb, a, lda, &beta, c, in);
      CheckBlas(g, s, std::is_same_v<T, float> ? "cublasSgemm" : "cublasDgemm");
      return;
    }
    const int ib = AsInt(g, batch, "batch");
    if constexpr (std::is_same_v<T, float>)
      s = api.cublasSgemmStridedBatched(h, opb, opa, in, im, ik, &alpha, b, ldb, stride_b, a, lda,
                                        stride_a, &beta, c, in, stride_c, ib);
    else
      s = api.cublasDgemmStridedBatched(h, opb, opa, in, im, ik, &alpha, b, ldb, stride_b, a, lda,
                                        stride_a, &beta, c, in, stride_c, ib);
    CheckBlas(g, s,
              std::is_same_v<T, float> ? "cublasSgemmStridedBatched" : "cublasDgemmStridedBatched");
  }
}

template <typename T>
void Gemm(const Gpu& g, bool ta, bool tb, int64_t m, int64_t n, int64_t k, Scal<T> alpha,
          const T* a, const T* b, Scal<T> beta, T* c) {
  Gemm<T>(g, ta, tb, m, n, k, alpha, a, 0, b, 0, beta, c, 0, 1);
}

// A gradient summed over several GEMMs (beta = 1 after the first): `run(out)` writes it into
// `out`. In T for float and double; for the 16-bit types into float32 scratch, rounded to T once
// at the end (so the sum over the batches is float32 too, as within one GEMM).
// Where `sums` is false (one GEMM writes each element once) run(d) writes d directly.
template <typename T, typename Run>
void Accumulated(const Gpu& g, T* d, int64_t numel, bool sums, Run run) {
  if constexpr (kLowFloat<T>) {
    if (sums) {
      float* acc = g.Temp<float>(numel);
      run(acc);
      FloatToLow<T>(g, acc, d, numel);
      return;
    }
  }
  run(d);
}

// ---------------------------------------------------------------------------------------------
// mul
template <typename T>
void MulKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetMulArgs<T>(ctx);
  Gemm<T>(g, false, false, a.m, a.n, a.k, Scal<T>(1), a.x, a.y, Scal<T>(0), a.out);
}

template <typename T>
void MulGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetMulGradArgs<T>(ctx);
  using S = Scal<T>;
  if (a.dx) Gemm<T>(g, false, true, a.m, a.k, a.n, S(1), a.dout, a.y, S(0), a.dx);  // dOut Y^T
  if (a.dy) Gemm<T>(g, true, false, a.k, a.n, a.m, S(1), a.x, a.dout, S(0), a.dy);  // X^T dOut
}

// ---------------------------------------------------------------------------------------------
// matmul: operands as [batch, rows, cols] (tide/ops/matmul.hpp); a rank-2 side is shared by
// every batch. alpha is the float attribute itself (the 16-bit kernels do not round it).
template <typename T>
void MatmulKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetMatmulArgs<T>(ctx);
  const MatmulShape& s = a.s;
  const Scal<T> alpha = static_cast<Scal<T>>(ctx.Attr<float>("alpha"));
  Gemm<T>(g, a.tx, a.ty, s.m, s.n, s.k, alpha, a.x, s.x_batched ? s.m * s.k : 0, a.y,
          s.y_batched ? s.k * s.n : 0, Scal<T>(0), a.out, s.m * s.n, s.batch);
}

template <typename T>
void MatmulGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  using S = Scal<T>;
  const auto a = tide::ops::GetMatmulGradArgs<T>(ctx);
  const MatmulShape& s = a.s;
  const bool tx = a.tx, ty = a.ty;
  const S alpha = static_cast<S>(ctx.Attr<float>("alpha"));
  const int64_t xs = s.m * s.k, ys = s.k * s.n, gs = s.m * s.n;
  // dX_b = alpha * dOut_b op(Y_b)^T (or its transpose when tx); a shared (unbatched) X sums the
  // batches, one GEMM per batch accumulating (beta = 1).
  if (T* d = a.dx) {
    auto run = [&](auto* out) {
      using C = std::remove_pointer_t<decltype(out)>;
      auto one = [&](int64_t b0, int64_t count, S beta) {
        const T* yb = a.y + (s.y_batched ? b0 * ys : 0);
        const T* gb = a.dout + b0 * gs;
        C* db = out + (s.x_batched ? b0 * xs : 0);
        const int64_t sy = s.y_batched ? ys : 0, sd = s.x_batched ? xs : 0;
        if (!tx)
          Gemm<T, C>(g, false, !ty, s.m, s.k, s.n, alpha, gb, gs, yb, sy, beta, db, sd, count);
        else
          Gemm<T, C>(g, ty, true, s.k, s.m, s.n, alpha, yb, sy, gb, gs, beta, db, sd, count);
      };
      if (s.x_batched)
        one(0, s.batch, S(0));
      else
        for (int64_t b = 0; b < s.batch; ++b) one(b, 1, b > 0 ? S(1) : S(0));
      if (s.batch == 0) g.Zero(out, sizeof(C) * size_t(a.x_numel));
    };
    Accumulated<T>(g, d, a.x_numel, !s.x_batched && s.batch > 1, run);
  }
  if (T* d = a.dy) {
    auto run = [&](auto* out) {
      using C = std::remove_pointer_t<decltype(out)>;
      auto one = [&](int64_t b0, int64_t count, S beta) {
        const T* xb = a.x + (s.x_batched ? b0 * xs : 0);
        const T* gb = a.dout + b0 * gs;
        C* db = out + (s.y_batched ? b0 * ys : 0);
        const int64_t sx = s.x_batched ? xs : 0, sd = s.y_batched ? ys : 0;
        if (!ty)
          Gemm<T, C>(g, !tx, false, s.k, s.n, s.m, alpha, xb, sx, gb, gs, beta, db, sd, count);
        else
          Gemm<T, C>(g, true, tx, s.n, s.k, s.m, alpha, gb, gs, xb, sx, beta, db, sd, count);
      };
      if (s.y_batched)
        one(0, s.batch, S(0));
      else
        for (int64_t b = 0; b < s.batch; ++b) one(b, 1, b > 0 ? S(1) : S(0));
      if (s.batch == 0) g.Zero(out, sizeof(C) * size_t(a.y_numel));
    };
    Accumulated<T>(g, d, a.y_numel, !s.y_batched && s.batch > 1, run);
  }
}

// ---------------------------------------------------------------------------------------------
// matmul_v2: numpy's broadcasting of the batch dims (tide/ops/matmul_v2.hpp), one strided batched
// GEMM per run of batches over which each side's matrix advances by a constant step: one GEMM in
// all for per-batch or shared operands, more where the broadcast is inside the batch dims.
template <typename T>
void MatmulV2Kernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetMatmulV2Args<T>(ctx);
  const MatmulV2Shape& s = a.s;
  const int64_t xs = s.m * s.k, ys = s.k * s.n, os = s.m * s.n;
  const MatmulV2Runs r = GetMatmulV2Runs(s, false, false);
  for (int64_t b = 0; b < s.batch; b += r.len)
    Gemm<T>(g, s.tx, s.ty, s.m, s.n, s.k, Scal<T>(1), a.x + s.x_off[b] * xs, r.x_step * xs,
            a.y + s.y_off[b] * ys, r.y_step * ys, Scal<T>(0), a.out + b * os, os, r.len);
}

// dX_b += dOut_b op(Y_b)^T (or its transpose when trans_x), dY_b += op(X_b)^T dOut_b (likewise),
// one strided batched GEMM per run whose gradient matrices differ. A side with a matrix per batch
// is written once (beta = 0); a broadcast side is zeroed and collects the sum over the batches
// that share each matrix (beta = 1, the runs in stream order; in float32 scratch for the 16-bit
// types, rounded once).
template <typename T>
void MatmulV2GradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  using S = Scal<T>;
  const auto a = tide::ops::GetMatmulV2GradArgs<T>(ctx);
  const MatmulV2Shape& s = a.s;
  const int64_t xs = s.m * s.k, ys = s.k * s.n, gs = s.m * s.n;
  const bool tx = s.tx, ty = s.ty;
  if (T* d = a.dx) {
    const bool once = a.x_numel == s.batch * xs && gs > 0;  // every matrix of X in one batch
    const MatmulV2Runs r = GetMatmulV2Runs(s, true, false);
    const S beta = once ? S(0) : S(1);
    auto run = [&](auto* out) {
      using C = std::remove_pointer_t<decltype(out)>;
      if (!once) g.Zero(out, sizeof(C) * size_t(a.x_numel));
      for (int64_t b = 0; gs > 0 && b < s.batch; b += r.len) {
        const T* yb = a.y + s.y_off[b] * ys;
        const T* gb = a.dout + b * gs;
        C* db = out + s.x_off[b] * xs;
        if (!tx)
          Gemm<T, C>(g, false, !ty, s.m, s.k, s.n, S(1), gb, gs, yb, r.y_step * ys, beta, db,
                     r.x_step * xs, r.len);
        else
          Gemm<T, C>(g, ty, true, s.k, s.m, s.n, S(1), yb, r.y_step * ys, gb, gs, beta, db,
                     r.x_step * xs, r.len);
      }
    };
    Accumulated<T>(g, d, a.x_numel, !once, run);
  }
  if (T* d = a.dy) {
    const bool once = a.y_numel == s.batch * ys && gs > 0;
    const MatmulV2Runs r = GetMatmulV2Runs(s, false, true);
    const S beta = once ? S(0) : S(1);
    auto run = [&](auto* out) {
      using C = std::remove_pointer_t<decltype(out)>;
      if (!once) g.Zero(out, sizeof(C) * size_t(a.y_numel));
      for (int64_t b = 0; gs > 0 && b < s.batch; b += r.len) {
        const T* xb = a.x + s.x_off[b] * xs;
        const T* gb = a.dout + b * gs;
        C* db = out + s.y_off[b] * ys;
        if (!ty)
          Gemm<T, C>(g, !tx, false, s.k, s.n, s.m, S(1), xb, r.x_step * xs, gb, gs, beta, db,
                     r.y_step * ys, r.len);
        else
          Gemm<T, C>(g, true, tx, s.n, s.k, s.m, S(1), gb, gs, xb, r.x_step * xs, beta, db,
                     r.y_step * ys, r.len);
      }
    };
    Accumulated<T>(g, d, a.y_numel, !once, run);
  }
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

#define TIDE_CUDA_GEMM_TYPES TIDE_CUDA_FLOAT_TYPES, TIDE_CUDA_LOW_FLOAT_TYPES
TIDE_REGISTER_KERNEL("mul", "gpu", MulKernel, TIDE_CUDA_GEMM_TYPES);
TIDE_REGISTER_KERNEL("mul_grad", "gpu", MulGradKernel, TIDE_CUDA_GEMM_TYPES);
TIDE_REGISTER_KERNEL("matmul", "gpu", MatmulKernel, TIDE_CUDA_GEMM_TYPES);
TIDE_REGISTER_KERNEL("matmul_grad", "gpu", MatmulGradKernel, TIDE_CUDA_GEMM_TYPES);
TIDE_REGISTER_KERNEL("matmul_v2", "gpu", MatmulV2Kernel, TIDE_CUDA_GEMM_TYPES);
TIDE_REGISTER_KERNEL("matmul_v2_grad", "gpu", MatmulV2GradKernel, TIDE_CUDA_GEMM_TYPES);
