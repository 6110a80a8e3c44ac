// rnn_common.h: what the recurrent ops (lstm, gru, lstm_unit, gru_unit) and sequence_conv share:
// dims checks that work at compile time (unknown dims, -1, match anything) and at run time, with
// errors naming the op, the parameter, its variable and the dims expected; row-wise Eigen views.
#pragma once

#include <Eigen/Core>
#include <string>

#include "common.h"

namespace ops_sequence {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;
template <typename T>
using RowVectorMap = Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>;
template <typename T>
using ConstRowVectorMap = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;

// Dims with unknown entries written "?".
inline std::string DimsString(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? ", " : "") + (d[i] < 0 ? "?" : std::to_string(d[i]));
  return s + "]";
}

// Input `param` ('name') must have dims `want` (entries < 0: any); `what` says what they mean.
inline void ExpectDims(const char* op, const char* param, const std::string& name, const Dims& got,
                       const Dims& want, const std::string& what) {
  TIDE_CHECK(tide::ops::DimsCompatible(got, want), "op '", op, "': ", param, " ('", name,
             "') has dims ", DimsString(got), " but must be ", DimsString(want), " (", what, ")");
}

inline Dims InputDimsOf(const KernelContext& ctx, const char* param) {
  return ctx.Input(param).dims();
}
inline Dims InputDimsOf(const tide::InferShapeContext& ctx, const char* param) {
  return ctx.InputDims(param);
}

// The same check for an input of a kernel or of shape inference.
template <typename Ctx>
void ExpectInputDims(const Ctx& ctx, const char* param, const Dims& want, const std::string& what) {
  ExpectDims(ctx.op_type(), param, ctx.InputName(param), InputDimsOf(ctx, param), want, what);
}

// Whether dispensable input `param` is given (kernel or shape inference).
inline bool Given(const KernelContext& ctx, const char* param) {
  return static_cast<bool>(ctx.OptionalInput(param));
}
inline bool Given(const tide::InferShapeContext& ctx, const char* param) {
  return ctx.HasInput(param);
}

// An input of rank 2; its dims.
template <typename Ctx>
Dims Matrix(const Ctx& ctx, const char* param, const std::string& what) {
  Dims d = InputDimsOf(ctx, param);
  TIDE_CHECK(d.size() == 2, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') has dims ", DimsString(d), " but must be a matrix (", what, ")");
  return d;
}

// Rows of `out` = rows of `x` (both [rows, width]) plus `bias` [1, width] broadcast.
template <typename T>
void AddBiasRows(T* x, const T* bias, int64_t rows, int64_t width) {
  MatrixMap<T>(x, rows, width).rowwise() += ConstRowVectorMap<T>(bias, width);
}

// sum[0, width) += the column sums of x [rows, width], row by row (contiguous; Eigen's colwise
// sum of a row-major matrix walks each column down the rows, a cache miss per element).
template <typename T>
void AddColumnSums(const T* x, int64_t rows, int64_t width, T* sum) {
  RowVectorMap<T> s(sum, width);
  for (int64_t r = 0; r < rows; ++r) s += ConstRowVectorMap<T>(x + r * width, width);
}

}  // namespace ops_sequence
