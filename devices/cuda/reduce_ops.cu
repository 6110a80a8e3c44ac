// reduce_ops.cu: the reducing ops of ops_math on the GPU: mean (+grad), sum of a tensor list,
// squared_l2_norm (+grad), clip_by_norm (of a SelectedRows too), softmax along an axis (+grad).
// Results stay on the device: a scalar a later kernel needs (a norm, Out@GRAD[0]) is read there,
// never copied to the host.
#include <tide/ops/clip.hpp>
#include <tide/ops/reduce.hpp>
#include <tide/ops/softmax.hpp>
#include <tide/ops/sum.hpp>
#include <type_traits>

#include "merge_rows.cuh"
#include "reduce.cuh"

namespace tide_cuda {
namespace {

// ---------------------------------------------------------------------------------------------
// mean
template <typename T>
void MeanKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetMeanArgs<T>(ctx);
  ReduceMid<T>(g, "mean", 1, 1, a.n, LoadTerm<T, T>{a.x},
               StoreFinish<T, T>{a.out, static_cast<T>(a.n)});
}

template <typename T>
__global__ void MeanGradKernel(const T* dout, T* dx, int64_t n) {
  const T v = dout[0] / static_cast<T>(n);
  TIDE_CUDA_LOOP(i, n) { dx[i] = v; }
}

template <typename T>
void MeanGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetScalarReduceGradArgs<T>(ctx);
  Launch(g, "MeanGradKernel", a.n, MeanGradKernel<T>, a.dout, a.dx, a.n);
}

// ---------------------------------------------------------------------------------------------
// sum: up to kSumFanIn inputs per launch; each element reads all its inputs before it writes,
// so Out may be one of the inputs (in-place accumulation).
constexpr int kSumFanIn = 8;
template <typename T>
struct SumInputs {
  const T* p[kSumFanIn];
  int count;
};

template <typename T>
__global__ void SumKernel(SumInputs<T> in, T* out, int64_t n) {
  TIDE_CUDA_LOOP(i, n) {
    Acc<T> s = Load(in.p[0], i);
    for (int k = 1; k < in.count; ++k) s += Load(in.p[k], i);
    out[i] = static_cast<T>(s);
  }
}

// Dense and sparse inputs: the dense sum, then each sparse row added to its row.
// Dense and SelectedRows inputs: the dense ones summed, each sparse row added to its row.
template <typename T>
void SumMixed(KernelContext& ctx, const Gpu& g, size_t n) {
  const tide::ops::MixedSum in = tide::ops::GetMixedSum(ctx, n);
  const int64_t total = DimsProduct(in.dims), width = in.width;
  T* acc = g.Temp<T>(total);
  g.Zero(acc, sizeof(T) * size_t(total));
  for (const Tensor& t : in.dense) {
    SumInputs<T> s{};
    s.p[0] = acc;
    s.p[1] = t.data<T>();
    s.count = 2;
    Launch(g, "SumKernel", total, SumKernel<T>, s, acc, total);
  }
  for (const auto& sp : in.sparse) {
    const int64_t listed = static_cast<int64_t>(sp.rows.size()) * width;
    if (listed == 0) continue;
    int64_t* drows = g.Temp<int64_t>(static_cast<int64_t>(sp.rows.size()));
    g.CopyFromHost(drows, sp.rows.data(), sizeof(int64_t) * sp.rows.size());
    Launch(g, "AddRowsKernel", listed, AddRowsKernel<T>, static_cast<const int64_t*>(drows),
           DeviceData<T>(g, sp.value), width, listed, acc);
  }
  T* o = ctx.Output("Out").mutable_data<T>(in.dims, g.place());
  g.CopyD2D(o, acc, sizeof(T) * size_t(total));
}

template <typename T>
void SumOp(KernelContext& ctx) {
  Gpu g(ctx);
  const size_t count = ctx.InputCount("X");
  size_t sparse = 0;
  for (size_t i = 0; i < count; ++i) sparse += ctx.InputVar("X", i).IsSelectedRows() ? 1 : 0;
  if (sparse > 0) {
    if constexpr (kLowFloat<T>) {
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op 'sum': no ", tide::DataTypeName(tide::DataTypeOf<T>()),
                 " kernel for SelectedRows inputs");
    } else {
      // All sparse: each distinct row once, ascending, as the CPU kernel (merge_rows.cuh).
      if (sparse == count) return MergeInputsIntoOut<T>(ctx, g, count);
      return SumMixed<T>(ctx, g, count);
    }
  }
  const std::vector<Tensor> xs = tide::ops::GetDenseSumInputs(ctx);
  Tensor out = ctx.Output("Out");
  const int64_t n = xs[0].numel();
  std::vector<const T*> ptrs;
  for (const Tensor& t : xs) ptrs.push_back(t.data<T>());
  const Dims dims = xs[0].dims();
  T* od = out.mutable_data<T>(dims, g.place());
  // With more inputs than one launch takes, accumulate in scratch unless Out aliases no input.
  bool aliased = false;
  for (const T* p : ptrs) aliased |= p == od;
  T* acc = (ptrs.size() > size_t(kSumFanIn) && aliased) ? g.Temp<T>(n) : od;
  for (size_t first = 0; first < ptrs.size();) {
    SumInputs<T> in{};
    int k = 0;
    if (first > 0) in.p[k++] = acc;  // the running total
    while (k < kSumFanIn && first < ptrs.size()) in.p[k++] = ptrs[first++];
    in.count = k;
    Launch(g, "SumKernel", n, SumKernel<T>, in, acc, n);
  }
  if (acc != od) g.CopyD2D(od, acc, sizeof(T) * size_t(n));
}

// ---------------------------------------------------------------------------------------------
// squared_l2_norm, its grad, clip_by_norm
template <typename T>
void SquaredL2Norm(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetScalarReduceArgs<T>(ctx);
  ReduceMid<T>(g, "squared_l2_norm", 1, 1, a.n, SquareTerm<T, T>{a.x},
               StoreFinish<T, T>{a.out, T(1)});
}

template <typename T>
__global__ void ScaleByDeviceScalarKernel(const T* x, const T* s, T factor, T* out, int64_t n) {
  const T v = s[0] * factor;
  TIDE_CUDA_LOOP(i, n) { out[i] = x[i] * v; }
}

template <typename T>
void SquaredL2NormGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetScalarReduceGradArgs<T>(ctx);
  Launch(g, "ScaleByDeviceScalarKernel", a.n, ScaleByDeviceScalarKernel<T>, a.x, a.dout, T(2), a.dx,
         a.n);
}

// Out = X * max_norm / max(||X||, max_norm), with the sum of squares in sq[0].
template <typename T>
__global__ void ClipByNormKernel(const T* x, const T* sq, T max_norm, T* out, int64_t n) {
  const T norm = Sqrt(sq[0]);
  const T factor = norm > max_norm ? max_norm / norm : T(1);
  TIDE_CUDA_LOOP(i, n) { out[i] = x[i] * factor; }
}

// A SelectedRows X, as on the CPU: its rows merged into Out first, then Out's values clipped.
template <typename T>
void ClipByNorm(KernelContext& ctx) {
  Gpu g(ctx);
  const T max_norm = tide::ops::ClipMaxNorm<T>(ctx);
  tide::Variable xv = ctx.InputVar("X");
  const bool sparse = xv && xv.IsSelectedRows();
  if (sparse) MergeInputsIntoOut<T>(ctx, g, 1);
  Tensor x = sparse ? ctx.OutputVar("Out").GetSelectedRows().value() : ctx.Input("X");
  Tensor out = sparse ? x : ctx.Output("Out");
  if (x.numel() == 0) {
    out.mutable_data<T>(x.dims(), g.place());
    return;
  }
  const T* xd = x.data<T>();
  T* sq = g.Temp<T>(1);
  ReduceMid<T>(g, "clip_by_norm", 1, 1, x.numel(), SquareTerm<T, T>{xd},
               StoreFinish<T, T>{sq, T(1)});
  T* od = out.mutable_data<T>(x.dims(), g.place());
  Launch(g, "ClipByNormKernel", x.numel(), ClipByNormKernel<T>, xd, sq, max_norm, od, x.numel());
}

// ---------------------------------------------------------------------------------------------
// softmax: one block per row of the [pre, n, post] view (a row: the n elements along the axis,
// `post` apart). __half and __nv_bfloat16 compute in float: the exponentials are summed first and
// computed again for Out, so each element is rounded to T once.
template <typename T>
__global__ void SoftmaxKernel(const T* x, T* out, int64_t rows, int64_t n, int64_t post) {
  using A = Acc<T>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = (r / post) * n * post + r % post;
    const T* xr = x + base;
    T* orow = out + base;
    A mx = A(-INFINITY);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) mx = max(mx, Load(xr, j * post));
    mx = BlockMax(mx, A(-INFINITY));
    A sum = 0;
    if constexpr (kLowFloat<T>) {
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += Exp(Load(xr, j * post) - mx);
      sum = BlockSum(sum);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        orow[j * post] = static_cast<T>(Exp(Load(xr, j * post) - mx) / sum);
    } else {
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const T e = Exp(xr[j * post] - mx);
        orow[j * post] = e;
        sum += e;
      }
      sum = BlockSum(sum);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) orow[j * post] /= sum;
    }
  }
}

// dX = (dOut - sum(dOut * Out)) * Out along the axis (in float for __half and __nv_bfloat16).
template <typename T>
__global__ void SoftmaxGradKernel(const T* out, const T* dout, T* dx, int64_t rows, int64_t n,
                                  int64_t post) {
  using A = Acc<T>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = (r / post) * n * post + r % post;
    A dot = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      dot += Load(dout, base + j * post) * Load(out, base + j * post);
    dot = BlockSum(dot);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const int64_t e = base + j * post;
      dx[e] = static_cast<T>((Load(dout, e) - dot) * Load(out, e));
    }
  }
}

inline unsigned RowGrid(int64_t rows) {
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(rows, 1), 65535));
}

template <typename T>
void Softmax(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetSoftmaxArgs<T>(ctx);
  const int64_t rows = a.s.pre * a.s.post;
  if (rows == 0 || a.s.n == 0) return;
  SoftmaxKernel<T>
      <<<RowGrid(rows), BlockFor(a.s.n), 0, g.stream()>>>(a.x, a.out, rows, a.s.n, a.s.post);
  g.CheckLaunch("SoftmaxKernel");
}

template <typename T>
void SoftmaxGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetSoftmaxGradArgs<T>(ctx);
  const int64_t rows = a.s.pre * a.s.post;
  if (rows == 0 || a.s.n == 0) return;
  SoftmaxGradKernel<T><<<RowGrid(rows), BlockFor(a.s.n), 0, g.stream()>>>(a.out, a.dout, a.dx, rows,
                                                                          a.s.n, a.s.post);
  g.CheckLaunch("SoftmaxGradKernel");
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("mean", "gpu", MeanKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("mean_grad", "gpu", MeanGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sum", "gpu", SumOp, float, double, int32_t, int64_t,
                     TIDE_CUDA_LOW_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("squared_l2_norm", "gpu", SquaredL2Norm, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("squared_l2_norm_grad", "gpu", SquaredL2NormGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("clip_by_norm", "gpu", ClipByNorm, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("softmax", "gpu", Softmax, TIDE_CUDA_FLOAT_TYPES, TIDE_CUDA_LOW_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("softmax_grad", "gpu", SoftmaxGrad, TIDE_CUDA_FLOAT_TYPES,
                     TIDE_CUDA_LOW_FLOAT_TYPES);
