// nanmedian_op.cc: Paddle's nanmedian (paddle.nanmedian: the median over axis of X's numbers,
// NaNs ignored) and its grad, as Paddle's CPU kernels (paddle/phi/kernels/cpu/nanmedian_*):
// each line of reduced elements is ordered by Paddle's top-k (NaN last; the k smallest, k = n /
// 2 + 1 when X has no NaN, else the most numbers any line holds) and, of its v numbers, the
// middle one (odd v) or, for even v, 'avg' the mean of the two middle values (an integer X:
// truncated) and 'min' the lower. MedianIndex (int64, positions among the line's elements,
// Out's dims and 2 more with 'avg') holds the middle elements, -1 for a line of NaNs (whose Out
// is NaN). The grad: dOut to the middle element, halved between two different ones; nothing
// for a line of NaNs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common.h"
#include "selection.h"

namespace ops_math {
namespace {

using tide::GradVarName;

template <typename T>
bool IsNan(T v) {
  return std::isnan(static_cast<double>(v));
}

template <typename T>
void NanmedianKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const MedianOutputs<T> m = MedianOutputsOf<T>(ctx, x);
  const T* xd = x.data<T>();
  const int64_t n = static_cast<int64_t>(m.rows.col.size());
  // Each line's count of numbers; Paddle's k for its top-k.
  std::vector<int64_t> valid(m.rows.row.size());
  int64_t most = 0;
  bool any_nan = false;
  for (size_t r = 0; r < m.rows.row.size(); ++r) {
    int64_t v = 0;
    for (int64_t c : m.rows.col) v += !IsNan(xd[m.rows.row[r] + c]);
    valid[r] = v;
    most = std::max(most, v);
    any_nan = any_nan || v < n;
  }
  const int64_t k = any_nan ? most : n / 2 + 1;
  for (size_t r = 0; r < m.rows.row.size(); ++r) {
    int64_t* idx = m.index + r * m.per;
    if (valid[r] == 0) {  // a line of NaNs
      m.out[r] = std::numeric_limits<T>::quiet_NaN();
      std::fill(idx, idx + m.per, int64_t{-1});
      continue;
    }
    auto line = LineOf(xd, m.rows, r);
    PaddleSmallestK(&line, k);
    WriteMiddle(line, valid[r], m.avg, m.out + r, idx);
  }
}

template <typename T>
void NanmedianGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Rows rows = RowsOf(x.dims(), MedianAxes(ctx, x.dims()));
  const int64_t per = AvgMode(ctx) ? 2 : 1;
  const int64_t* mi = ctx.Input("MedianIndex").data<int64_t>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (size_t r = 0; r < rows.row.size(); ++r) {
    const int64_t* m = mi + r * per;
    if (m[0] < 0) continue;  // a line of NaNs
    if (m[0] == m[per - 1]) {
      dx[rows.row[r] + rows.col[m[0]]] = g[r];
    } else {
      dx[rows.row[r] + rows.col[m[0]]] = g[r] / T(2);
      dx[rows.row[r] + rows.col[m[1]]] = g[r] / T(2);
    }
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(MedianAttrs(tide::OpSchema("nanmedian")
                                 .Comment("Out = the median of X's numbers over axis, NaNs "
                                          "ignored (paddle.nanmedian), MedianIndex the "
                                          "positions of the middle elements among the reduced "
                                          "ones (-1: all NaN).")
                                 .Input("X", "the input")
                                 .Output("Out", "X's dims less the reduced ones (1s with keepdim)")
                                 .Output("MedianIndex", "int64: Out's dims, and 2 more with 'avg'")
                                 .InferShape(MedianInferShape))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("nanmedian_grad")
                           .Input("X", g.Input("X"))
                           .Input("MedianIndex", g.Output("MedianIndex"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(MedianAttrs(tide::OpSchema("nanmedian_grad")
                                 .Input("X")
                                 .Input("MedianIndex")
                                 .Input(GradVarName("Out"))
                                 .Output(GradVarName("X"))
                                 .KernelDataTypeFrom("X")
                                 .InferShape([](tide::InferShapeContext& ctx) {
                                   GradsLikeInputs(ctx, {"X"});
                                 })));
TIDE_REGISTER_KERNEL("nanmedian", "cpu", NanmedianKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("nanmedian_grad", "cpu", NanmedianGradKernel, OPS_MATH_FLOAT_TYPES);
