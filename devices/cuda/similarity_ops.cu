// similarity_ops.cu: ops_nn's cos_sim and norm (l2_normalize) on the GPU, with grads, over
// tide/ops/similarity.hpp's shapes and gradient formulas: a block per row (cos_sim) or per line
// along the axis (norm) sums in the data's type, as the CPU kernels do; cos_sim's shared-Y
// gradient sums over X's rows through reduce.cuh.
#include <tide/ops/similarity.hpp>

#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::AxisSplit;

inline unsigned LineGrid(int64_t lines) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(lines, 1), 65535));
}

// ---------------------------------------------------------------------------------------------
// cos_sim: Out[i] = <x_i, y_i> / (|x_i| |y_i|), y_i = Y's row 0 when shared.
template <typename T>
__global__ void RowNormsKernel(const T* y, T* norms, int64_t rows, int64_t d) {
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    T s = 0;
    for (int64_t k = threadIdx.x; k < d; k += blockDim.x) s += y[i * d + k] * y[i * d + k];
    s = BlockSum(s);
    if (threadIdx.x == 0) norms[i] = Sqrt(s);
  }
}

template <typename T>
__global__ void CosSimKernel(const T* x, const T* y, const T* yn, bool y_shared, T* out, T* xn,
                             int64_t rows, int64_t d) {
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const T* yr = y + (y_shared ? 0 : i * d);
    T sq = 0, dot = 0;
    for (int64_t k = threadIdx.x; k < d; k += blockDim.x) {
      sq += x[i * d + k] * x[i * d + k];
      dot += x[i * d + k] * yr[k];
    }
    sq = BlockSum(sq);
    dot = BlockSum(dot);
    if (threadIdx.x == 0) {
      xn[i] = Sqrt(sq);
      out[i] = dot / (xn[i] * yn[y_shared ? 0 : i]);
    }
  }
}

template <typename T>
void CosSim(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetCosSimArgs<T>(ctx);
  const auto& c = a.g;
  const int64_t y_rows = c.y_shared ? 1 : c.n;
  if (c.n == 0) return;
  const int threads = BlockFor(c.d, 256);
  RowNormsKernel<T><<<LineGrid(y_rows), threads, 0, g.stream()>>>(a.y, a.y_norm, y_rows, c.d);
  g.CheckLaunch("RowNormsKernel");
  CosSimKernel<T><<<LineGrid(c.n), threads, 0, g.stream()>>>(a.x, a.y, a.y_norm, c.y_shared, a.out,
                                                             a.x_norm, c.n, c.d);
  g.CheckLaunch("CosSimKernel");
}

// X@GRAD, or Y@GRAD with one Y row per X row: element e = i * d + k of `own` (X or Y).
template <typename T>
__global__ void CosSimRowGradKernel(const T* own, const T* other, const T* out, const T* own_norm,
                                    const T* other_norm, bool other_shared, const T* dout, T* grad,
                                    int64_t total, int64_t d) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / d, k = e - i * d, oi = other_shared ? 0 : i;
    const T b = other[other_shared ? k : e];
    grad[e] = tide::ops::CosSimGrad(dout[i], own[e], b, out[i], own_norm[i] * other_norm[oi],
                                    own_norm[i]);
  }
}

// Y@GRAD of the shared Y row: the sum over X's rows i of the term of element (i, k).
template <typename T>
struct SharedYGradTerm {
  const T *x, *y, *out, *xn, *yn, *dout;
  int64_t d;
  __device__ T operator()(int64_t e, int64_t k) const {
    const int64_t i = e / d;
    return tide::ops::CosSimGrad(dout[i], y[k], x[e], out[i], xn[i] * yn[0], yn[0]);
  }
};

template <typename T>
void CosSimGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetCosSimGradArgs<T>(ctx);
  const auto& c = a.g;
  if (a.dx)
    Launch(g, "CosSimRowGradKernel", a.x_numel, CosSimRowGradKernel<T>, a.x, a.y, a.out, a.x_norm,
           a.y_norm, c.y_shared, a.dout, a.dx, a.x_numel, c.d);
  if (!a.dy) return;
  if (!c.y_shared) {
    Launch(g, "CosSimRowGradKernel", a.y_numel, CosSimRowGradKernel<T>, a.y, a.x, a.out, a.y_norm,
           a.x_norm, false, a.dout, a.dy, a.y_numel, c.d);
    return;
  }
  ReduceMid<T>(g, "CosSimSharedYGrad", c.n, c.d, 1,
               SharedYGradTerm<T>{a.x, a.y, a.out, a.x_norm, a.y_norm, a.dout, c.d},
               StoreFinish<T, T>{a.dy, T(1)});
}

// ---------------------------------------------------------------------------------------------
// norm: a block per line (i, k) along the axis of X viewed as [pre, n, post].
__device__ __forceinline__ int64_t LineAt(const AxisSplit& s, int64_t line, int64_t j) {
  const int64_t i = line / s.post, k = line - i * s.post;
  return (i * s.n + j) * s.post + k;
}

template <typename T>
__global__ void NormKernel(const T* x, AxisSplit s, T eps, T* out, T* norm) {
  for (int64_t line = blockIdx.x; line < s.pre * s.post; line += gridDim.x) {
    T sq = 0;
    for (int64_t j = threadIdx.x; j < s.n; j += blockDim.x) {
      const T v = x[LineAt(s, line, j)];
      sq += v * v;
    }
    const T n = Sqrt(BlockSum(sq) + eps);
    if (threadIdx.x == 0) norm[line] = n;
    for (int64_t j = threadIdx.x; j < s.n; j += blockDim.x)
      out[LineAt(s, line, j)] = x[LineAt(s, line, j)] / n;
  }
}

template <typename T>
__global__ void NormGradKernel(const T* x, const T* norm, const T* dout, AxisSplit s, T* dx) {
  for (int64_t line = blockIdx.x; line < s.pre * s.post; line += gridDim.x) {
    const T n = norm[line];
    T dot = 0;
    for (int64_t j = threadIdx.x; j < s.n; j += blockDim.x) {
      const int64_t e = LineAt(s, line, j);
      dot += tide::ops::L2NormalizeDotTerm(dout[e], x[e], n);
    }
    dot = BlockSum(dot);
    for (int64_t j = threadIdx.x; j < s.n; j += blockDim.x) {
      const int64_t e = LineAt(s, line, j);
      dx[e] = tide::ops::L2NormalizeGrad(dout[e], x[e], n, dot);
    }
  }
}

template <typename T>
void Norm(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetL2NormArgs<T>(ctx);
  const int64_t lines = a.s.pre * a.s.post;
  if (lines == 0) return;
  NormKernel<T>
      <<<LineGrid(lines), BlockFor(a.s.n, 256), 0, g.stream()>>>(a.x, a.s, a.eps, a.out, a.norm);
  g.CheckLaunch("NormKernel");
}

template <typename T>
void NormGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetL2NormGradArgs<T>(ctx);
  const int64_t lines = a.s.pre * a.s.post;
  if (lines == 0 || a.s.n == 0) return;
  NormGradKernel<T>
      <<<LineGrid(lines), BlockFor(a.s.n, 256), 0, g.stream()>>>(a.x, a.norm, a.dout, a.s, a.dx);
  g.CheckLaunch("NormGradKernel");
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("cos_sim", "gpu", CosSim, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("cos_sim_grad", "gpu", CosSimGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("norm", "gpu", Norm, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("norm_grad", "gpu", NormGrad, TIDE_CUDA_FLOAT_TYPES);
