// common.h: helpers shared by the ops_linalg kernels. Every op takes a batch of matrices
// [..., M, N] (the leading dims the batch, row-major) and works on one matrix at a time through
// Eigen maps; the shape checks name the op, the variable, what was expected and what was found.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cstdint>
#include <string>
#include <tide/ops/broadcast_dims.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace ops_linalg {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::Tensor;
using tide::ops::DimsProduct;

// Kernels for float and double: Eigen's decompositions compute in the input type.
#define OPS_LINALG_FLOAT_TYPES float, double

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<Matrix<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const Matrix<T>>;

// A dim known at build time (shape inference sees -1 for an unknown one).
inline bool Known(int64_t d) { return d >= 0; }

// The leading (batch) dims of [..., M, N] (none for a rank below 2, which CheckMatrices refuses).
inline Dims BatchDims(const Dims& d) {
  return d.size() < 2 ? Dims() : Dims(d.begin(), d.end() - 2);
}

// Checks that `var` holds matrices [..., M, N] (rank >= 2).
inline void CheckMatrices(const char* op, const char* var, const Dims& d) {
  TIDE_CHECK(d.size() >= 2, "op '", op, "': ", var,
             " must be a matrix or a batch of matrices [..., M, N], but its dims are ",
             tide::ToString(d));
}

// Checks that `var` holds square matrices [..., M, M] (an unknown dim passes).
inline void CheckSquare(const char* op, const char* var, const Dims& d) {
  TIDE_CHECK(
      d.size() >= 2, "op '", op, "': ", var,
      " must be a square matrix or a batch of square matrices [..., M, M], but its dims are ",
      tide::ToString(d));
  const int64_t m = d[d.size() - 2], n = d[d.size() - 1];
  TIDE_CHECK(!Known(m) || !Known(n) || m == n, "op '", op, "': ", var,
             " must be square matrices [..., M, M], but its dims are ", tide::ToString(d), " (", m,
             " rows, ", n, " columns)");
}

// Two batches of matrices paired numpy-style over their batch dims (a batch dim of 1 repeats):
// the result's batch dims and, per result matrix, the X and Y matrix it reads.
struct BatchPairs {
  Dims out;                     // the result's batch dims
  std::vector<int64_t> xi, yi;  // per result matrix: X's / Y's matrix index
};

inline Dims BroadcastBatchDims(const char* op, const Dims& xb, const Dims& yb, const Dims& x,
                               const Dims& y) {
  Dims out;
  tide::ops::DimsClash c;
  TIDE_CHECK(tide::ops::BroadcastDims(xb, yb, &out, &c), "op '", op, "': the batch dims of X ",
             tide::ToString(x), " and Y ", tide::ToString(y), " do not broadcast (", c.a, " vs ",
             c.b, ")");
  return out;
}

inline BatchPairs PairBatches(const char* op, const Dims& xb, const Dims& yb, const Dims& x,
                              const Dims& y) {
  BatchPairs p;
  p.out = BroadcastBatchDims(op, xb, yb, x, y);
  const size_t r = p.out.size();
  const int64_t n = DimsProduct(p.out);
  p.xi.assign(n, 0);
  p.yi.assign(n, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t rest = e, sx = 1, sy = 1;
    for (size_t d = r; d-- > 0;) {
      const int64_t c = rest % p.out[d];
      rest /= p.out[d];
      const int64_t dx = d + xb.size() >= r ? xb[d + xb.size() - r] : 1;
      const int64_t dy = d + yb.size() >= r ? yb[d + yb.size() - r] : 1;
      if (dx != 1) p.xi[e] += c * sx;
      if (dy != 1) p.yi[e] += c * sy;
      sx *= dx;
      sy *= dy;
    }
  }
  return p;
}

// dims = batch + tail.
inline Dims Concat(Dims batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail.begin(), tail.end());
  return batch;
}

// A grad op's shape inference: each X@GRAD-style output that the op has takes its input's dims
// and data type.
using tide::ops::GradsLikeInputs;

// The solve ops' grads (solve, triangular_solve, cholesky_solve): X@GRAD and Y@GRAD.
inline void XYGradInferShape(tide::InferShapeContext& ctx) { GradsLikeInputs(ctx, {"X", "Y"}); }

}  // namespace ops_linalg

namespace ops_linalg {

// A linear solve's operands: A (`a_var`) square matrices [..., M, M] and B (`b_var`) right-hand
// sides [..., M, K], their batch dims broadcast; returns the solution's dims [batch..., M, K].
inline Dims SolveOutDims(const char* op, const char* a_var, const Dims& a, const char* b_var,
                         const Dims& b) {
  CheckSquare(op, a_var, a);
  CheckMatrices(op, b_var, b);
  const int64_t m = a[a.size() - 1], bm = b[b.size() - 2];
  TIDE_CHECK(!Known(m) || !Known(bm) || m == bm, "op '", op, "': ", b_var, " ", tide::ToString(b),
             " must have as many rows as ", a_var, " ", tide::ToString(a), " (", m,
             "), but it has ", bm);
  const bool a_first = std::string(a_var) == "X";
  const Dims& x = a_first ? a : b;
  const Dims& y = a_first ? b : a;
  return Concat(BroadcastBatchDims(op, BatchDims(x), BatchDims(y), x, y), {m, b.back()});
}

// Sums per-result-matrix gradients into an operand's gradient (the operand's matrix `index[e]`
// takes result matrix e's): the operand's dims repeated along the broadcast batch dims.
template <typename T>
struct BatchGrad {
  T* data = nullptr;
  BatchGrad(KernelContext& ctx, const char* input) {
    const std::string g = GradVarName(input);
    if (!ctx.HasOutput(g.c_str())) return;
    Tensor in = ctx.Input(input);
    data = ctx.Output(g.c_str()).mutable_data<T>(in.dims(), ctx.place());
    std::fill(data, data + in.numel(), T(0));
  }
  explicit operator bool() const { return data != nullptr; }
};

}  // namespace ops_linalg

namespace ops_linalg {

// An optional gradient input (a grad op's dOut of an output the loss does not use): null when
// absent.
template <typename T>
const T* OptionalGrad(KernelContext& ctx, const char* output) {
  const std::string g = GradVarName(output);
  Tensor t = ctx.OptionalInput(g.c_str());
  return t && t.initialized() ? t.data<T>() : nullptr;
}

}  // namespace ops_linalg
