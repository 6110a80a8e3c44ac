// compare_logical_ops.cu: ops_control's comparisons (less_than, ..., not_equal: X op Y, Out
// bool) and logical_and/or/xor/not on the GPU, with the CPU kernels' types and checks
// (compare_logical_ops.cc), for operands Fluid's rule pairs (Y broadcast over X). Operands that
// broadcast both ways (Paddle's rule: a 0-D X against Y [1], X [3, 1] against Y [4]) are
// declined to the CPU kernels, which take them.
#include <tide/ops/compare_logical.hpp>

#include "broadcast.cuh"

namespace tide_cuda {
namespace {

struct LessF {
  template <typename T>
  __device__ bool operator()(T x, T y) const {
    return x < y;
  }
};
struct LessEqualF {
  template <typename T>
  __device__ bool operator()(T x, T y) const {
    return x <= y;
  }
};
struct GreaterF {
  template <typename T>
  __device__ bool operator()(T x, T y) const {
    return x > y;
  }
};
struct GreaterEqualF {
  template <typename T>
  __device__ bool operator()(T x, T y) const {
    return x >= y;
  }
};
struct EqualF {
  template <typename T>
  __device__ bool operator()(T x, T y) const {
    return x == y;
  }
};
struct NotEqualF {
  template <typename T>
  __device__ bool operator()(T x, T y) const {
    return x != y;
  }
};
struct AndF {
  __device__ bool operator()(bool x, bool y) const { return x && y; }
};
struct OrF {
  __device__ bool operator()(bool x, bool y) const { return x || y; }
};
struct XorF {
  __device__ bool operator()(bool x, bool y) const { return x != y; }
};

template <typename T, typename Cmp>
__global__ void CompareKernel(const T* x, const T* y, bool* out, int64_t n, YPairing pair) {
  TIDE_CUDA_LOOP(i, n) { out[i] = Cmp()(x[i], y[pair(i)]); }
}

// Before anything is allocated or queued, as a declining kernel must.
void DeclineBothWays(const KernelContext& ctx, int axis) {
  if (tide::ops::CompareNeedsBothWays(ctx, axis))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(),
               "': the CUDA kernel broadcasts Y over X (Fluid's rule), not X ",
               tide::ToString(ctx.Input("X").dims()), " and Y ",
               tide::ToString(ctx.Input("Y").dims()),
               " both ways (Paddle's); run the op on the CPU");
}

template <typename T, typename Cmp>
void Compare(KernelContext& ctx) {
  Gpu g(ctx);
  DeclineBothWays(ctx, ctx.Attr<int32_t>("axis"));
  const auto a = tide::ops::GetCompareArgs<T>(ctx);
  Launch(g, "CompareKernel", a.n, CompareKernel<T, Cmp>, a.x, a.y, a.out, a.n, YPairing(a.p.b));
}

template <typename T>
void LessThan(KernelContext& c) {
  Compare<T, LessF>(c);
}
template <typename T>
void LessEqual(KernelContext& c) {
  Compare<T, LessEqualF>(c);
}
template <typename T>
void GreaterThan(KernelContext& c) {
  Compare<T, GreaterF>(c);
}
template <typename T>
void GreaterEqual(KernelContext& c) {
  Compare<T, GreaterEqualF>(c);
}
template <typename T>
void Equal(KernelContext& c) {
  Compare<T, EqualF>(c);
}
template <typename T>
void NotEqual(KernelContext& c) {
  Compare<T, NotEqualF>(c);
}

template <typename Op>
__global__ void LogicalBinaryKernel(const bool* x, const bool* y, bool* out, int64_t n,
                                    YPairing pair) {
  TIDE_CUDA_LOOP(i, n) { out[i] = Op()(x[i], y[pair(i)]); }
}

template <typename T, typename Op>
void LogicalBinary(KernelContext& ctx) {
  Gpu g(ctx);
  DeclineBothWays(ctx, -1);
  const tide::ops::LogicalArgs a = tide::ops::GetLogicalArgs(ctx, true);
  Launch(g, "LogicalBinaryKernel", a.n, LogicalBinaryKernel<Op>, a.x, a.y, a.out, a.n,
         YPairing(a.p.b));
}

template <typename T>
void LogicalAnd(KernelContext& c) {
  LogicalBinary<T, AndF>(c);
}
template <typename T>
void LogicalOr(KernelContext& c) {
  LogicalBinary<T, OrF>(c);
}
template <typename T>
void LogicalXor(KernelContext& c) {
  LogicalBinary<T, XorF>(c);
}

__global__ void LogicalNotKernel(const bool* x, bool* out, int64_t n) {
  TIDE_CUDA_LOOP(i, n) { out[i] = !x[i]; }
}

template <typename T>
void LogicalNot(KernelContext& ctx) {
  Gpu g(ctx);
  const tide::ops::LogicalArgs a = tide::ops::GetLogicalArgs(ctx, false);
  Launch(g, "LogicalNotKernel", a.n, LogicalNotKernel, a.x, a.out, a.n);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

// bool too, as the CPU kernels (false < true: a padding mask compared with 0).
#define TIDE_CUDA_COMPARE_TYPES float, double, int32_t, int64_t, bool
TIDE_REGISTER_KERNEL("less_than", "gpu", LessThan, TIDE_CUDA_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("less_equal", "gpu", LessEqual, TIDE_CUDA_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("greater_than", "gpu", GreaterThan, TIDE_CUDA_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("greater_equal", "gpu", GreaterEqual, TIDE_CUDA_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("equal", "gpu", Equal, TIDE_CUDA_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("not_equal", "gpu", NotEqual, TIDE_CUDA_COMPARE_TYPES);
TIDE_REGISTER_KERNEL("logical_and", "gpu", LogicalAnd, bool);
TIDE_REGISTER_KERNEL("logical_or", "gpu", LogicalOr, bool);
TIDE_REGISTER_KERNEL("logical_xor", "gpu", LogicalXor, bool);
TIDE_REGISTER_KERNEL("logical_not", "gpu", LogicalNot, bool);
