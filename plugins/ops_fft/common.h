// common.h: what the ops_fft kernels share: the FFT ops' attributes (axes checked against the
// rank, normalization) and X's data type, Paddle's normalization factor, and the walk over every
// 1-D line of a tensor along one axis that each 1-D transform runs on.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <tide/eigen.hpp>
#include <tide/ops/complex.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace ops_fft {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::Tensor;
using tide::ops::DimsProduct;
using tide::ops::IsComplexType;
using tide::ops::RealType;

// Paddle's CPU kernels: the FFTs on float / double and their complex types; frame and
// overlap_add also on the integer types, their grads (which only move and sum values) on the
// float and complex types.
#define OPS_FFT_REAL_TYPES float, double
#define OPS_FFT_COMPLEX_TYPES std::complex<float>, std::complex<double>
#define OPS_FFT_FRAME_TYPES int32_t, int64_t, float, double, OPS_FFT_COMPLEX_TYPES
#define OPS_FFT_FRAME_GRAD_TYPES OPS_FFT_REAL_TYPES, OPS_FFT_COMPLEX_TYPES

// Checks X's data type at compile time (TIDE_UNDEFINED passes): complex for fft_c2c / fft_c2r,
// float32 / float64 for fft_r2c.
inline void CheckFftInputType(tide::InferShapeContext& ctx, bool complex) {
  const TideDataType t = ctx.InputDataType("X");
  const bool ok =
      t == TIDE_UNDEFINED || (complex ? IsComplexType(t) : (t == TIDE_FP32 || t == TIDE_FP64));
  TIDE_CHECK(ok, "op '", ctx.op_type(), "': X ('", ctx.InputName("X"), "') must be ",
             complex ? "complex64 or complex128" : "float32 or float64", ", got ",
             tide::DataTypeName(t));
}

// Attribute 'axes' of an FFT op on a tensor of `rank` dims: each in [-rank, rank) (negative
// counts from the end), none repeated, at least one; returned normalised, in order (the last is
// the real axis of fft_r2c / fft_c2r).
inline std::vector<int> FftAxes(const char* op, const std::vector<int64_t>& axes, size_t rank) {
  TIDE_CHECK(!axes.empty(), "op '", op, "': attribute 'axes' is empty (name at least one axis)");
  const int64_t r = static_cast<int64_t>(rank);
  std::vector<int> out;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    TIDE_CHECK(a >= 0 && a < r, "op '", op, "': attribute 'axes'[", i, "] = ", axes[i],
               " is out of range for X of rank ", rank);
    TIDE_CHECK(std::find(out.begin(), out.end(), static_cast<int>(a)) == out.end(), "op '", op,
               "': attribute 'axes' repeats axis ", a, " (axes[", i, "] = ", axes[i], ")");
    out.push_back(static_cast<int>(a));
  }
  return out;
}

// Attribute 'normalization': "backward" (or "", Paddle's default), "forward" or "ortho".
inline void CheckNormalization(const TideAttrValue& v) {
  const std::string s = v.s ? v.s : "";
  TIDE_CHECK(s.empty() || s == "backward" || s == "forward" || s == "ortho",
             "attribute 'normalization' must be one of {backward, forward, ortho}, got '", s, "'");
}

// Paddle's fft_normalization_factor: the scale of a transform over `signal` points (the
// product of the transformed axes' sizes: the input's for fft_c2c / fft_r2c, the output's for
// fft_c2r). "backward" leaves the forward transform unscaled and divides the inverse by n,
// "forward" the other way round, "ortho" divides both by sqrt(n).
inline double NormFactor(const std::string& norm, bool forward, int64_t signal) {
  const double n = static_cast<double>(signal);
  if (norm == "ortho") return 1.0 / std::sqrt(n);
  const bool by_n = norm == "forward" ? forward : !forward;
  return by_n ? 1.0 / n : 1.0;
}

// The signal size: the product of `dims` over `axes`.
inline int64_t SignalSize(const Dims& dims, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= dims[a];
  return n;
}

// Runs a line function on every 1-D line along `axis` of `src` (dims `sd`) and the matching line
// of `dst` (dims `dd`, equal to sd but at `axis`): each line gathered into a contiguous buffer,
// the function writing the other, which is scattered back. src and dst may be the same tensor.
// The lines are split over the CPU pool; each thread's range gets its own line function from
// make_fn() (a transform with its own plans and buffers: Eigen's FFT objects are not shared).
// cost_per_point: the work per point of a line, for the split.
template <typename S, typename D, typename MakeFn>
void ForEachLine(const KernelContext& ctx, int64_t cost_per_point, const S* src, const Dims& sd,
                 D* dst, const Dims& dd, int axis, MakeFn make_fn) {
  const int64_t pre = DimsProduct(sd, 0, axis), post = DimsProduct(sd, axis + 1, sd.size());
  const int64_t ns = sd[axis], nd = dd[axis];
  tide::ParallelFor(ctx, pre * post, cost_per_point * std::max(ns, nd), [&](int64_t b, int64_t e) {
    auto fn = make_fn();
    std::vector<S> in(static_cast<size_t>(ns));
    std::vector<D> out(static_cast<size_t>(nd));
    for (int64_t line = b; line < e; ++line) {
      const int64_t p = line / post, q = line % post;
      const S* s = src + p * ns * post + q;
      for (int64_t i = 0; i < ns; ++i) in[i] = s[i * post];
      fn(in.data(), out.data());
      D* d = dst + p * nd * post + q;
      for (int64_t i = 0; i < nd; ++i) d[i * post] = out[i];
    }
  });
}

// The work per point of an FFT line (n log n, for ForEachLine's split) and of a copy.
constexpr int64_t kFftCostPerPoint = 32;
constexpr int64_t kCopyCostPerPoint = 1;

// Checks that a 1-D transform of n points fits Eigen's FFT, which counts in int.
inline int FftLength(const char* op, int64_t n) {
  TIDE_CHECK(n <= INT32_MAX, "op '", op, "': an FFT of ", n, " points is more than ", INT32_MAX,
             ", the most Eigen's FFT takes");
  return static_cast<int>(n);
}

}  // namespace ops_fft
