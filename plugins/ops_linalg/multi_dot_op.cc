// multi_dot_op.cc: Paddle's multi_dot (paddle.linalg.multi_dot: X[0] X[1] ... X[n-1] for n >= 2
// matrices, X[0] may be 1-D (a row vector [1, N], dropped from Out's dims) and X[n-1] 1-D (a
// column [N, 1], dropped too: both 1-D give a 0-D Out); three or more are multiplied in the
// order of fewest multiplications, as Paddle's) and its grad: dX[i] = (X[0]..X[i-1])^T dOut
// (X[i+1]..X[n-1])^T, in X[i]'s dims.
#include <string>

#include "common.h"

namespace ops_linalg {
namespace {

// Each input as a matrix [rows, cols] (1-D first: [1, N]; 1-D last: [N, 1]), checked.
std::vector<std::pair<int64_t, int64_t>> ChainShapes(const char* op, const std::vector<Dims>& xs) {
  TIDE_CHECK(xs.size() >= 2, "op '", op, "': X needs at least 2 tensors, got ", xs.size());
  std::vector<std::pair<int64_t, int64_t>> s;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Dims& d = xs[i];
    const bool end = i == 0 || i + 1 == xs.size();
    TIDE_CHECK(d.size() == 2 || (end && d.size() == 1), "op '", op, "': X[", i, "] must be ",
               end ? "1-D or 2-D" : "2-D",
               " (only the first and the last may be 1-D), but its dims "
               "are ",
               tide::ToString(d));
    if (d.size() == 2)
      s.emplace_back(d[0], d[1]);
    else if (i == 0)
      s.emplace_back(1, d[0]);
    else
      s.emplace_back(d[0], 1);
  }
  for (size_t i = 0; i + 1 < s.size(); ++i)
    TIDE_CHECK(!Known(s[i].second) || !Known(s[i + 1].first) || s[i].second == s[i + 1].first,
               "op '", op, "': X[", i, "] ", tide::ToString(xs[i]), " and X[", i + 1, "] ",
               tide::ToString(xs[i + 1]), " cannot be multiplied (", s[i].second, " vs ",
               s[i + 1].first, ")");
  return s;
}

Dims OutDims(const std::vector<Dims>& xs, const std::vector<std::pair<int64_t, int64_t>>& s) {
  Dims out;
  if (xs.front().size() == 2) out.push_back(s.front().first);
  if (xs.back().size() == 2) out.push_back(s.back().second);
  return out;
}

void MultiDotInferShape(tide::InferShapeContext& ctx) {
  const std::vector<Dims> xs = ctx.InputsDims("X");
  const auto s = ChainShapes(ctx.op_type(), xs);
  const TideDataType t = ctx.InputDataType("X");
  for (size_t i = 1; i < xs.size(); ++i)
    TIDE_CHECK(ctx.InputDataType("X", i) == t, "op '", ctx.op_type(),
               "': every X must have X[0]'s data type");
  ctx.SetOutputDims("Out", OutDims(xs, s));
  ctx.SetOutputDataType("Out", t);
}

// The product of mats[i..j] in the order of fewest multiplications (the matrix-chain split).
template <typename T>
Matrix<T> ChainProduct(const std::vector<Matrix<T>>& mats, size_t i, size_t j,
                       const std::vector<std::vector<size_t>>& split) {
  if (i == j) return mats[i];
  const size_t k = split[i][j];
  return ChainProduct(mats, i, k, split) * ChainProduct(mats, k + 1, j, split);
}

template <typename T>
Matrix<T> MultiplyChain(const std::vector<Matrix<T>>& mats) {
  const size_t n = mats.size();
  if (n == 0) return Matrix<T>();
  std::vector<int64_t> p(n + 1);
  for (size_t i = 0; i < n; ++i) p[i] = mats[i].rows();
  p[n] = mats[n - 1].cols();
  std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0.0));
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  for (size_t len = 1; len < n; ++len)
    for (size_t i = 0; i + len < n; ++i) {
      const size_t j = i + len;
      cost[i][j] = -1;
      for (size_t k = i; k < j; ++k) {
        const double c = cost[i][k] + cost[k + 1][j] + double(p[i]) * p[k + 1] * p[j + 1];
        if (cost[i][j] < 0 || c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = k;
        }
      }
    }
  return ChainProduct(mats, 0, n - 1, split);
}

template <typename T>
std::vector<Matrix<T>> ReadChain(KernelContext& ctx, std::vector<Dims>* dims) {
  const std::vector<Tensor> xs = ctx.Inputs("X");
  for (const Tensor& x : xs) dims->push_back(x.dims());
  const auto s = ChainShapes(ctx.op_type(), *dims);
  std::vector<Matrix<T>> mats;
  for (size_t i = 0; i < xs.size(); ++i)
    mats.emplace_back(ConstMatrixMap<T>(xs[i].data<T>(), s[i].first, s[i].second));
  return mats;
}

template <typename T>
void MultiDotKernel(KernelContext& ctx) {
  std::vector<Dims> dims;
  const std::vector<Matrix<T>> mats = ReadChain<T>(ctx, &dims);
  const Matrix<T> out = MultiplyChain(mats);
  const Dims od = OutDims(dims, ChainShapes(ctx.op_type(), dims));
  MatrixMap<T>(ctx.Output("Out").mutable_data<T>(od, ctx.place()), out.rows(), out.cols()) = out;
}

template <typename T>
void MultiDotGradKernel(KernelContext& ctx) {
  std::vector<Dims> dims;
  const std::vector<Matrix<T>> mats = ReadChain<T>(ctx, &dims);
  const size_t n = mats.size();
  const Matrix<T> g = ConstMatrixMap<T>(ctx.Input(GradVarName("Out").c_str()).data<T>(),
                                        mats.front().rows(), mats.back().cols());
  const std::string dx = GradVarName("X");
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.HasOutput(dx.c_str(), i)) continue;
    Matrix<T> left = g;  // (X[0]..X[i-1])^T g (X[i+1]..X[n-1])^T
    if (i > 0)
      left =
          MultiplyChain(std::vector<Matrix<T>>(mats.begin(), mats.begin() + i)).transpose() * left;
    if (i + 1 < n)
      left = left *
             MultiplyChain(std::vector<Matrix<T>>(mats.begin() + i + 1, mats.end())).transpose();
    MatrixMap<T>(ctx.Output(dx.c_str(), i).mutable_data<T>(dims[i], ctx.place()), mats[i].rows(),
                 mats[i].cols()) = left;
  }
}

void MultiDotGradInferShape(tide::InferShapeContext& ctx) {
  const std::string dx = GradVarName("X");
  for (size_t i = 0, n = ctx.InputCount("X"); i < n && i < ctx.OutputCount(dx.c_str()); ++i) {
    ctx.SetOutputDims(dx.c_str(), ctx.InputDims("X", i), i);
    ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType("X", i), i);
  }
}

}  // namespace
}  // namespace ops_linalg

using namespace ops_linalg;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("multi_dot")
                     .Comment("Out = X[0] X[1] ... X[n-1] (paddle.linalg.multi_dot), the first "
                              "and last may be vectors.")
                     .Input("X", "n >= 2 tensors: 2-D, the first and the last may be 1-D")
                     .AsDuplicable()
                     .Output("Out", "[rows of X[0], cols of X[n-1]], less the 1-D ends' dims")
                     .InferShape(MultiDotInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("multi_dot_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("multi_dot_grad")
                     .Input("X")
                     .AsDuplicable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDuplicable()
                     .KernelDataTypeFrom("X")
                     .InferShape(MultiDotGradInferShape));
TIDE_REGISTER_KERNEL("multi_dot", "cpu", MultiDotKernel, OPS_LINALG_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("multi_dot_grad", "cpu", MultiDotGradKernel, OPS_LINALG_FLOAT_TYPES);
