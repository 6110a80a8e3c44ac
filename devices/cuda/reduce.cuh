// reduce.cuh: block reductions and ReduceMid, the one reduction the kernels need: for a tensor
// viewed as [pre, n, post], out[j] = sum over (p, k) of term(e, j), e = (p * n + j) * post + k.
// It covers column sums (post = 1: bias grads), per-channel sums (batch norm), broadcast
// gradients and full sums (pre = n = 1). The split of the work depends only on the sizes, so a
// result is the same from run to run.
#pragma once

#include "gpu.h"

namespace tide_cuda {

// Sum or max over a warp; every lane gets the result.
template <typename T>
__device__ __forceinline__ T WarpSum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <typename T>
__device__ __forceinline__ T WarpMax(T v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over a 1-D block (blockDim.x a multiple of 32, at most 1024); every thread gets it. Safe to
// call repeatedly in one kernel.
template <typename T>
__device__ T BlockSum(T v) {
  __shared__ T partial[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = WarpSum(v);
  __syncthreads();  // a previous call may still be reading `partial`
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < warps ? partial[lane] : T(0);
  return WarpSum(v);
}
template <typename T>
__device__ T BlockMax(T v, T lowest) {
  __shared__ T partial[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = WarpMax(v);
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < warps ? partial[lane] : lowest;
  return WarpMax(v);
}

// Threads per block for work of `n` items per block: a power of two in [32, 1024].
inline int BlockFor(int64_t n, int max_threads = 512) {
  int t = 32;
  while (t < max_threads && t < n) t <<= 1;
  return t;
}

namespace detail {

constexpr int kColTile = 32;         // columns per block of the column kernel
constexpr int kColRows = 16;         // threads per column
constexpr int64_t kPerBlock = 8192;  // elements one block sums before the work is split
constexpr int64_t kMaxPartials = int64_t(1) << 22;  // bounds the scratch of split sums

// How many blocks share the sum of one j: enough to fill the device on long sums, bounded by
// `cap` and by the scratch the partial sums take.
inline int64_t SplitsFor(int64_t work, int64_t n, int64_t cap) {
  int64_t s = std::min<int64_t>((work + kPerBlock - 1) / kPerBlock, cap);
  s = std::min<int64_t>(s, kMaxPartials / std::max<int64_t>(n, 1));
  return std::max<int64_t>(s, 1);
}

// post == 1: [pre, n] row-major, sum over rows. Block (32, 16): coalesced along a row.
template <typename A, typename Term, typename Finish>
__global__ void ColumnReduceKernel(int64_t pre, int64_t n, int64_t rows_per_split, Term term,
                                   Finish finish, A* partial) {
  __shared__ A tile[kColRows][kColTile + 1];
  const int64_t j = blockIdx.x * int64_t(kColTile) + threadIdx.x;
  const int64_t begin = blockIdx.y * rows_per_split;
  const int64_t end = min(pre, begin + rows_per_split);
  A acc = A(0);
  if (j < n)
    for (int64_t p = begin + threadIdx.y; p < end; p += kColRows) acc += term(p * n + j, j);
  tile[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && j < n) {
    A s = A(0);
    for (int r = 0; r < kColRows; ++r) s += tile[r][threadIdx.x];
    if (gridDim.y == 1)
      finish(j, s);
    else
      partial[blockIdx.y * n + j] = s;
  }
}

// post > 1: block (j, split) sums its chunk of the pre * post elements of j.
template <typename A, typename Term, typename Finish>
__global__ void MidReduceKernel(int64_t n, int64_t post, int64_t m, int64_t per_split, Term term,
                                Finish finish, A* partial) {
  for (int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    const int64_t begin = blockIdx.y * per_split;
    const int64_t end = min(m, begin + per_split);
    A acc = A(0);
    for (int64_t t = begin + threadIdx.x; t < end; t += blockDim.x) {
      const int64_t p = t / post, k = t - p * post;
      acc += term((p * n + j) * post + k, j);
    }
    acc = BlockSum(acc);
    if (threadIdx.x == 0) {
      if (gridDim.y == 1)
        finish(j, acc);
      else
        partial[blockIdx.y * n + j] = acc;
    }
  }
}

// Adds the splits' partial sums of each j in a fixed order.
template <typename A, typename Finish>
__global__ void FinishPartialsKernel(int64_t n, int64_t splits, const A* partial, Finish finish) {
  TIDE_CUDA_LOOP(j, n) {
    A s = A(0);
    for (int64_t q = 0; q < splits; ++q) s += partial[q * n + j];
    finish(j, s);
  }
}

}  // namespace detail

// out[j] = finish(j, sum over the [pre, n, post] view of term(e, j)), for every j in [0, n),
// with A the accumulator type. Term and Finish are device functors (copied to the device);
// finish is called once per j, also when pre * post == 0 (with a zero sum).
template <typename A, typename Term, typename Finish>
void ReduceMid(const Gpu& g, const char* name, int64_t pre, int64_t n, int64_t post, Term term,
               Finish finish) {
  using namespace detail;
  if (n <= 0) return;
  const int64_t m = pre * post;
  if (post == 1) {
    const int64_t col_blocks = (n + kColTile - 1) / kColTile;
    const int64_t splits = SplitsFor(pre * kColTile, n, 512);
    const int64_t rows_per_split = (pre + splits - 1) / splits;
    TIDE_CHECK(col_blocks < (int64_t(1) << 31), "op '", g.op(), "': ", n, " columns are too many");
    A* partial = splits > 1 ? g.Temp<A>(splits * n) : nullptr;
    ColumnReduceKernel<A, Term, Finish>
        <<<dim3(unsigned(col_blocks), unsigned(splits)), dim3(kColTile, kColRows), 0, g.stream()>>>(
            pre, n, rows_per_split, term, finish, partial);
    g.CheckLaunch(name);
    if (splits > 1) {
      FinishPartialsKernel<A, Finish>
          <<<GridFor(g, n), kBlock, 0, g.stream()>>>(n, splits, partial, finish);
      g.CheckLaunch(name);
    }
    return;
  }
  const int64_t splits = SplitsFor(m, n, 1024);
  const int64_t per_split = (m + splits - 1) / splits;
  const int threads = BlockFor(per_split, 256);
  const unsigned grid_x = static_cast<unsigned>(std::min<int64_t>(n, 65535));
  A* partial = splits > 1 ? g.Temp<A>(splits * n) : nullptr;
  MidReduceKernel<A, Term, Finish><<<dim3(grid_x, unsigned(splits)), threads, 0, g.stream()>>>(
      n, post, m, per_split, term, finish, partial);
  g.CheckLaunch(name);
  if (splits > 1) {
    FinishPartialsKernel<A, Finish>
        <<<GridFor(g, n), kBlock, 0, g.stream()>>>(n, splits, partial, finish);
    g.CheckLaunch(name);
  }
}

// Common functors.
template <typename T, typename A = Acc<T>>
struct LoadTerm {  // term(e) = x[e]
  const T* x;
  __device__ A operator()(int64_t e, int64_t) const { return static_cast<A>(x[e]); }
};
template <typename T, typename A = Acc<T>>
struct SquareTerm {  // term(e) = x[e]^2
  const T* x;
  __device__ A operator()(int64_t e, int64_t) const {
    const A v = static_cast<A>(x[e]);
    return v * v;
  }
};
template <typename T, typename A = Acc<T>>
struct StoreFinish {  // out[j] = sum / divisor
  T* out;
  A divisor;
  __device__ void operator()(int64_t j, A s) const { out[j] = static_cast<T>(s / divisor); }
};

}  // namespace tide_cuda
