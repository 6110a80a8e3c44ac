// reduce_dim_ops.cu: ops_math's reduce_sum/mean/max/min/prod over `dim` (keep_dim, reduce_all;
// the shape rule is tide/ops/reduce.hpp's) with grads, and reduce_all/reduce_any over bools, on
// the GPU. Sum and mean where Out's elements are one run of X's dims take reduce.cuh's
// [pre, n, post] ReduceMid. Any other case, any set of reduced dims without a transpose: X's
// elements are seen as (Out element o, reduced index r), and a block or a thread reduces each Out
// element (LaunchReduce).
#include <limits>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/reduce.hpp>
#include <type_traits>
#include <vector>

#include "reduce.cuh"

namespace tide_cuda {
namespace {

using tide::ops::BroadcastIndex;
using tide::ops::GetReduceShape;
using tide::ops::ReduceShape;

// X's offset of (o, r): kept.Offset(o) + reduced.Offset(r), each over X's kept or reduced dims
// (size-1 dims dropped, neighbours of one kind merged), row-major.
struct ReduceLayout {
  static constexpr int kMaxRank = 16;
  struct Part {
    int rank = 0;
    int64_t dims[kMaxRank] = {};
    int64_t strides[kMaxRank] = {};
    __device__ int64_t Offset(int64_t i) const {
      int64_t off = 0;
      for (int d = rank - 1; d >= 0; --d) {
        off += (i % dims[d]) * strides[d];
        i /= dims[d];
      }
      return off;
    }
  };
  Part kept, reduced;
  bool reduced_innermost = false;  // X's innermost (non-1) dim is reduced: stride 1
};

ReduceLayout LayoutOf(const char* op, const Dims& x, const ReduceShape& s) {
  struct Run {
    bool reduced;
    int64_t size, stride;
  };
  std::vector<Run> runs;  // innermost first
  int64_t stride = 1;
  for (int d = static_cast<int>(x.size()) - 1; d >= 0; --d) {
    if (x[d] != 1) {
      if (!runs.empty() && runs.back().reduced == s.reduced[d])
        runs.back().size *= x[d];  // merged: contiguous, the inner stride stays
      else
        runs.push_back({s.reduced[d], x[d], stride});
    }
    stride *= x[d];
  }
  ReduceLayout l;
  l.reduced_innermost = !runs.empty() && runs.front().reduced;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {  // outermost first
    ReduceLayout::Part& p = it->reduced ? l.reduced : l.kept;
    TIDE_CHECK(p.rank < ReduceLayout::kMaxRank, "op '", op, "': X ", tide::ToString(x),
               " alternates reduced and kept dims too often (more than ", ReduceLayout::kMaxRank,
               " runs of each)");
    p.dims[p.rank] = it->size;
    p.strides[p.rank] = it->stride;
    ++p.rank;
  }
  return l;
}

// Reducers over the accumulator type A: Map(x) (X's element to A), Combine, Finish(acc, count).
// The identity (Init) is computed on the host and passed in.
template <typename A>
struct Identity {
  template <typename T>
  __device__ static A Map(T v) {
    return static_cast<A>(v);
  }
  __device__ static A Finish(A a, int64_t) { return a; }
};
template <typename A>
struct SumR : Identity<A> {
  __device__ static A Combine(A a, A b) { return a + b; }
};
template <typename A>
struct MeanR : SumR<A> {
  __device__ static A Finish(A a, int64_t n) { return a / static_cast<A>(n); }
};
template <typename A>
struct MaxR : Identity<A> {
  __device__ static A Combine(A a, A b) { return b > a ? b : a; }
};
template <typename A>
struct MinR : Identity<A> {
  __device__ static A Combine(A a, A b) { return b < a ? b : a; }
};
template <typename A>
struct ProdR : Identity<A> {
  __device__ static A Combine(A a, A b) { return a * b; }
};
template <typename A>
struct AllR : Identity<A> {
  __device__ static A Combine(A a, A b) { return a && b; }
};
template <typename A>
struct AnyR : Identity<A> {
  __device__ static A Combine(A a, A b) { return a || b; }
};
// For reduce_prod's grad: the product of a group's non-zero elements, and its count of zeros.
template <typename A>
struct NonZeroProdR : ProdR<A> {
  template <typename T>
  __device__ static A Map(T v) {
    return v == T(0) ? A(1) : A(v);
  }
};
struct ZeroCountR : SumR<int64_t> {
  template <typename T>
  __device__ static int64_t Map(T v) {
    return v == T(0) ? 1 : 0;
  }
};

constexpr int kReduceThreads = 256;

// Block o (grid-stride) reduces Out element o: threads stride over its reduced elements.
template <typename T, typename A, typename R>
__global__ void BlockPerOutKernel(const T* x, A* out, int64_t n_out, int64_t count, ReduceLayout l,
                                  A init) {
  __shared__ A part[kReduceThreads];
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    const T* base = x + l.kept.Offset(o);
    A acc = init;
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x)
      acc = R::Combine(acc, R::template Map<T>(base[l.reduced.Offset(r)]));
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = kReduceThreads / 2; w > 0; w >>= 1) {  // a fixed tree: the same order each run
      if (threadIdx.x < w) part[threadIdx.x] = R::Combine(part[threadIdx.x], part[threadIdx.x + w]);
      __syncthreads();
    }
    if (threadIdx.x == 0) out[o] = R::Finish(part[0], count);
    __syncthreads();  // part[0] is read before the next o overwrites it
  }
}

// Thread o reduces Out element o alone, in X's order (as the CPU kernel).
template <typename T, typename A, typename R>
__global__ void ThreadPerOutKernel(const T* x, A* out, int64_t n_out, int64_t count, ReduceLayout l,
                                   A init) {
  TIDE_CUDA_LOOP(o, n_out) {
    const T* base = x + l.kept.Offset(o);
    A acc = init;
    for (int64_t r = 0; r < count; ++r)
      acc = R::Combine(acc, R::template Map<T>(base[l.reduced.Offset(r)]));
    out[o] = R::Finish(acc, count);
  }
}

// out[o] = the reduction of Out element o's X elements (n_out = numel(Out) > 0). A block per Out
// element for long reductions whose elements are adjacent, or too few Out elements to keep the
// device busy; a thread per Out element for short reductions and many Out elements.
template <typename T, typename A, typename R>
void LaunchReduce(const Gpu& g, const ReduceLayout& l, const T* x, A* out, int64_t n_out,
                  int64_t count, A init) {
  if (count >= 64 && (l.reduced_innermost || n_out < 1024)) {
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(n_out, 65535));
    BlockPerOutKernel<T, A, R>
        <<<grid, kReduceThreads, 0, g.stream()>>>(x, out, n_out, count, l, init);
    g.CheckLaunch("BlockPerOutKernel");
  } else {
    Launch(g, "ThreadPerOutKernel", n_out, ThreadPerOutKernel<T, A, R>, x, out, n_out, count, l,
           init);
  }
}

// X as [pre, n, post] with Out's elements the n (the kept dims one run between reduced ones):
// sum and mean then take reduce.cuh's ReduceMid, which splits long reductions across blocks.
bool MidView(const Dims& x, const ReduceShape& s, int64_t* pre, int64_t* n, int64_t* post) {
  *pre = *n = *post = 1;
  int stage = 0;  // 0: before the kept run, 1: in it, 2: after it
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    if (!s.reduced[d]) {
      if (stage == 2) return false;
      stage = 1;
      *n *= x[d];
    } else {
      if (stage == 1) stage = 2;
      (stage == 0 ? *pre : *post) *= x[d];
    }
  }
  if (*n == 1) {  // a full reduction: one long run
    *post *= *pre;
    *pre = 1;
  }
  return true;
}

// Out elements of an empty group: the reducer's identity, finished (mean: 0 / 0, NaN).
template <typename T, typename R>
__global__ void EmptyGroupsKernel(T* out, int64_t n_out, T init) {
  TIDE_CUDA_LOOP(o, n_out) { out[o] = R::Finish(init, 0); }
}

// Max and min have no value for an empty group (GetReduceArgs refuses it, as on the CPU).
template <template <typename> class R, typename T>
constexpr bool kHasIdentity = !std::is_same_v<R<T>, MaxR<T>> && !std::is_same_v<R<T>, MinR<T>>;

template <typename T, template <typename> class R>
void Reduce(KernelContext& ctx, T init) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  const auto a = tide::ops::GetReduceArgs<T>(ctx, kHasIdentity<R, T>);
  if (a.n_out == 0) return;
  if (a.total == 0) {
    Launch(g, "EmptyGroupsKernel", a.n_out, EmptyGroupsKernel<T, R<T>>, a.out, a.n_out, init);
    return;
  }
  constexpr bool kMean = std::is_same_v<R<T>, MeanR<T>>;
  if constexpr (kMean || std::is_same_v<R<T>, SumR<T>>) {
    int64_t pre, n, post;
    if (MidView(a.x_dims, a.s, &pre, &n, &post)) {
      ReduceMid<T>(g, op, pre, n, post, LoadTerm<T, T>{a.x},
                   StoreFinish<T, T>{a.out, kMean ? static_cast<T>(a.count()) : T(1)});
      return;
    }
  }
  LaunchReduce<T, T, R<T>>(g, LayoutOf(op, a.x_dims, a.s), a.x, a.out, a.n_out, a.count(), init);
}

template <typename T>
void SumKernel(KernelContext& c) {
  Reduce<T, SumR>(c, T(0));
}
template <typename T>
void MeanKernel(KernelContext& c) {
  Reduce<T, MeanR>(c, T(0));
}
template <typename T>
void MaxKernel(KernelContext& c) {
  Reduce<T, MaxR>(c, std::numeric_limits<T>::lowest());
}
template <typename T>
void MinKernel(KernelContext& c) {
  Reduce<T, MinR>(c, std::numeric_limits<T>::max());
}
template <typename T>
void ProdKernel(KernelContext& c) {
  Reduce<T, ProdR>(c, T(1));
}
template <typename T>
void AllKernel(KernelContext& c) {
  Reduce<T, AllR>(c, true);
}
template <typename T>
void AnyKernel(KernelContext& c) {
  Reduce<T, AnyR>(c, false);
}

// ---------------------------------------------------------------------------------------------
// Grads: dX[e] = G(x, out, dout, count) of e's Out element j (X's element e finds j through the
// broadcast index of Out, seen with keep_dim's dims, over X).
struct SumG {
  template <typename T>
  __device__ static T D(T, T, T g, int64_t) {
    return g;
  }
};
struct MeanG {
  template <typename T>
  __device__ static T D(T, T, T g, int64_t n) {
    return g / static_cast<T>(n);
  }
};
// Every element equal to the max (min) gets the gradient, as in Fluid.
struct ExtremeG {
  template <typename T>
  __device__ static T D(T x, T out, T g, int64_t) {
    return x == out ? g : T(0);
  }
};

template <typename T, typename G>
__global__ void ReduceGradKernel(const T* x, const T* out, const T* dout, T* dx, int64_t total,
                                 int64_t count, BroadcastIndex index) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t j = index(e);
    dx[e] = G::D(x[e], out ? out[j] : T(0), dout[j], count);
  }
}

template <typename T, typename G>
void ReduceGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetReduceGradArgs<T>(ctx, std::is_same_v<G, ExtremeG>);
  const BroadcastIndex index = tide::ops::MakeBroadcastIndex(ctx.op_type(), a.x_dims, a.s.keep, 0);
  Launch(g, "ReduceGradKernel", a.total, ReduceGradKernel<T, G>, a.x, a.out, a.dout, a.dx, a.total,
         a.count(), index);
}

// dX[e] = dOut * (the product of the other elements of its group), exact with zeros in X (as
// the CPU kernel): from each group's product of non-zero elements and its count of zeros.
template <typename T>
__global__ void ProdGradDxKernel(const T* x, const T* nonzero, const int64_t* zeros, const T* dout,
                                 T* dx, int64_t total, BroadcastIndex index) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t j = index(e);
    T others;
    if (x[e] != T(0))
      others = zeros[j] ? T(0) : nonzero[j] / x[e];
    else
      others = zeros[j] == 1 ? nonzero[j] : T(0);
    dx[e] = dout[j] * others;
  }
}

template <typename T>
void ProdGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  const auto a = tide::ops::GetReduceGradArgs<T>(ctx, false);
  if (a.total == 0) return;
  const BroadcastIndex index = tide::ops::MakeBroadcastIndex(op, a.x_dims, a.s.keep, 0);
  const ReduceLayout l = LayoutOf(op, a.x_dims, a.s);
  T* nonzero = g.Temp<T>(a.n_out);
  int64_t* zeros = g.Temp<int64_t>(a.n_out);
  LaunchReduce<T, T, NonZeroProdR<T>>(g, l, a.x, nonzero, a.n_out, a.count(), T(1));
  LaunchReduce<T, int64_t, ZeroCountR>(g, l, a.x, zeros, a.n_out, a.count(), int64_t(0));
  Launch(g, "ProdGradDxKernel", a.total, ProdGradDxKernel<T>, a.x, nonzero, zeros, a.dout, a.dx,
         a.total, index);
}

template <typename T>
void SumGradKernel(KernelContext& c) {
  ReduceGrad<T, SumG>(c);
}
template <typename T>
void MeanGradKernel(KernelContext& c) {
  ReduceGrad<T, MeanG>(c);
}
template <typename T>
void ExtremeGradKernel(KernelContext& c) {
  ReduceGrad<T, ExtremeG>(c);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

// The CPU kernels' types.
#define TIDE_CUDA_REDUCE_TYPES float, double, int32_t, int64_t
TIDE_REGISTER_KERNEL("reduce_sum", "gpu", SumKernel, TIDE_CUDA_REDUCE_TYPES);
TIDE_REGISTER_KERNEL("reduce_mean", "gpu", MeanKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_max", "gpu", MaxKernel, TIDE_CUDA_REDUCE_TYPES);
TIDE_REGISTER_KERNEL("reduce_min", "gpu", MinKernel, TIDE_CUDA_REDUCE_TYPES);
TIDE_REGISTER_KERNEL("reduce_prod", "gpu", ProdKernel, TIDE_CUDA_REDUCE_TYPES);
TIDE_REGISTER_KERNEL("reduce_all", "gpu", AllKernel, bool);
TIDE_REGISTER_KERNEL("reduce_any", "gpu", AnyKernel, bool);
TIDE_REGISTER_KERNEL("reduce_sum_grad", "gpu", SumGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_mean_grad", "gpu", MeanGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_max_grad", "gpu", ExtremeGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_min_grad", "gpu", ExtremeGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reduce_prod_grad", "gpu", ProdGradKernel, TIDE_CUDA_FLOAT_TYPES);
