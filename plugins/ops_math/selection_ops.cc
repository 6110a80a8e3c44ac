// selection_ops.cc: Paddle's kthvalue, mode and median (each picks elements of X along reduced
// axes; Out and an int64 index into the reduced elements) and their grads (dOut to the picked
// elements). The picks follow Paddle's CPU kernels, ties included: the line's (value, index)
// pairs ordered by value alone (NaN last) by the same standard algorithms Paddle calls, so
// which of equal elements is picked is Paddle's:
//  - kthvalue: std::partial_sort when k * 64 < n, else std::nth_element; the k-th pair;
//  - mode: std::sort; the most frequent value (the smallest of equally frequent ones), the
//    index of the last pair of its run;
//  - median: the n / 2 + 1 smallest as Paddle's top-k finds them (std::nth_element, then
//    std::sort of those before); odd n: the middle
//    pair; even n: 'avg' the mean of the two middle values (MedianIndex both indices), 'min' the
//    lower one. A NaN in the line gives NaN and the first NaN's index. Its grad: 'min' over one
//    axis gives dOut to the index; otherwise dOut is split evenly among the elements equal to
//    Out (NaNs, when Out is NaN), else halved between the two indices.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tide/ops/axis.hpp>
#include <utility>
#include <vector>

#include "common.h"
#include "selection.h"

namespace ops_math {
namespace {

using tide::GradVarName;

std::vector<bool> OneAxis(const char* op, int64_t axis, const Dims& x) {
  std::vector<bool> reduced(x.size(), false);
  if (!x.empty()) reduced[tide::ops::NormAxis(op, axis, x.size())] = true;
  return reduced;
}

// --- kthvalue / mode ---

template <typename Ctx>
std::vector<bool> AxisOf(const Ctx& ctx, const Dims& x) {
  return OneAxis(ctx.op_type(), ctx.template Attr<int32_t>("axis"), x);
}

void PickInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const std::vector<bool> reduced = AxisOf(ctx, x);
  if (ctx.op_type() == std::string("kthvalue")) {
    const int32_t k = ctx.Attr<int32_t>("k");
    const int64_t n =
        x.empty() ? 1 : x[tide::ops::NormAxis(ctx.op_type(), ctx.Attr<int32_t>("axis"), x.size())];
    TIDE_CHECK(k >= 1 && (n < 0 || k <= n), "op 'kthvalue': k must be in [1, ", n,
               "] (X's dim along axis), got ", k);
  }
  const Dims out = ReducedDims(x, reduced, ctx.Attr<bool>("keepdim"));
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.SetOutputDims("Indices", out);
  ctx.SetOutputDataType("Indices", TIDE_INT64);
}

// Picks (value, index) per row; kthvalue and mode differ only in the pick.
template <typename T, typename Pick>
void PickKernel(KernelContext& ctx, Pick&& pick) {
  Tensor x = ctx.Input("X");
  const std::vector<bool> reduced = AxisOf(ctx, x.dims());
  const Rows rows = RowsOf(x.dims(), reduced);
  const Dims out_dims = ReducedDims(x.dims(), reduced, ctx.Attr<bool>("keepdim"));
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(out_dims, ctx.place());
  int64_t* idx = ctx.Output("Indices").mutable_data<int64_t>(out_dims, ctx.place());
  TIDE_CHECK(!rows.col.empty(), "op '", ctx.op_type(), "': X ", tide::ToString(x.dims()),
             " has no elements along axis");
  for (size_t r = 0; r < rows.row.size(); ++r) {
    auto line = LineOf(xd, rows, r);
    const std::pair<T, int64_t> p = pick(line);
    o[r] = p.first;
    idx[r] = p.second;
  }
}

template <typename T>
void KthvalueKernel(KernelContext& ctx) {
  const int64_t k = ctx.Attr<int32_t>("k");
  PickKernel<T>(ctx, [&](std::vector<std::pair<T, int64_t>>& line) {
    const int64_t n = static_cast<int64_t>(line.size());
    TIDE_CHECK(k >= 1 && k <= n, "op 'kthvalue': k must be in [1, ", n,
               "] (X's dim along axis), got ", k);
    if (k * 64 < n)
      std::partial_sort(line.begin(), line.begin() + k, line.end(), LessNanLast<T>);
    else
      std::nth_element(line.begin(), line.begin() + k - 1, line.end(), LessNanLast<T>);
    return line[k - 1];
  });
}

template <typename T>
void ModeKernel(KernelContext& ctx) {
  PickKernel<T>(ctx, [](std::vector<std::pair<T, int64_t>>& line) {
    std::sort(line.begin(), line.end(), LessNanLast<T>);
    std::pair<T, int64_t> best{T(0), 0};
    int64_t run = 0, most = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      ++run;
      if (i + 1 == line.size() || line[i + 1].first != line[i].first) {
        if (run > most) {
          most = run;
          best = line[i];
        }
        run = 0;
      }
    }
    return best;
  });
}

// dX: dOut at each row's picked element, zero elsewhere.
template <typename T>
void PickGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const std::vector<bool> reduced = AxisOf(ctx, x.dims());
  const Rows rows = RowsOf(x.dims(), reduced);
  const int64_t* idx = ctx.Input("Indices").data<int64_t>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  for (size_t r = 0; r < rows.row.size(); ++r) dx[rows.row[r] + rows.col[idx[r]]] = g[r];
}

// --- median ---

template <typename T>
void MedianKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const MedianOutputs<T> m = MedianOutputsOf<T>(ctx, x);
  const T* xd = x.data<T>();
  const int64_t n = static_cast<int64_t>(m.rows.col.size());
  for (size_t r = 0; r < m.rows.row.size(); ++r) {
    auto line = LineOf(xd, m.rows, r);
    int64_t* idx = m.index + r * m.per;
    const auto nan = std::find_if(line.begin(), line.end(), [](const auto& p) {
      return std::isnan(static_cast<double>(p.first));
    });
    if (nan != line.end()) {  // NaN, at the first NaN
      m.out[r] = std::numeric_limits<T>::quiet_NaN();
      std::fill(idx, idx + m.per, nan->second);
      continue;
    }
    PaddleSmallestK(&line, n / 2 + 1);
    WriteMiddle(line, n, m.avg, m.out + r, idx);
  }
}

template <typename T>
void MedianGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const std::vector<bool> reduced = MedianAxes(ctx, x.dims());
  const Rows rows = RowsOf(x.dims(), reduced);
  const bool avg = AvgMode(ctx);
  // Paddle's rule: 'min' over one axis gives dOut to the index, else it is split evenly.
  const bool evenly = avg || ctx.Attr<std::vector<int64_t>>("axis").size() != 1;
  const T* xd = x.data<T>();
  const T* out = ctx.Input("Out").data<T>();
  const int64_t* mi = ctx.Input("MedianIndex").data<int64_t>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  const int64_t per = avg ? 2 : 1;
  for (size_t r = 0; r < rows.row.size(); ++r) {
    const int64_t base = rows.row[r];
    const int64_t* m = mi + r * per;
    if (!evenly) {
      dx[base + rows.col[m[0]]] = g[r];
      continue;
    }
    auto same = [&](int64_t c) {  // NaN matches NaN
      const T v = xd[base + c];
      return v == out[r] ||
             (std::isnan(static_cast<double>(v)) && std::isnan(static_cast<double>(out[r])));
    };
    const int64_t equal = std::count_if(rows.col.begin(), rows.col.end(), same);
    if (equal > 0) {
      for (int64_t c : rows.col)
        if (same(c)) dx[base + c] = g[r] / static_cast<T>(equal);
    } else if (m[0] == m[per - 1]) {
      dx[base + rows.col[m[0]]] = g[r];
    } else {  // the mean of two different values
      dx[base + rows.col[m[0]]] = g[r] / T(2);
      dx[base + rows.col[m[1]]] = g[r] / T(2);
    }
  }
}

void GradLikeX(tide::InferShapeContext& ctx) {
  const std::string dx = GradVarName("X");
  if (!ctx.HasOutput(dx.c_str())) return;
  ctx.SetOutputDims(dx.c_str(), ctx.InputDims("X"));
  ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType("X"));
}

tide::OpSchema KthvalueAttrs(tide::OpSchema s) {
  return s.Attr("k", int32_t{1}, "which smallest element (1: the smallest)")
      .Attr("axis", int32_t{-1}, "the dim searched (negative: from the end)")
      .Attr("keepdim", false, "keep the dim searched, as 1");
}
tide::OpSchema ModeAttrs(tide::OpSchema s) {
  return s.Attr("axis", int32_t{-1}, "the dim searched (negative: from the end)")
      .Attr("keepdim", false, "keep the dim searched, as 1");
}
// The grad maker of kthvalue and mode: X, Indices, Out@GRAD -> X@GRAD.
void PickGrad(tide::GradMaker& g, const std::string& type) {
  g.NewOp(type + "_grad")
      .Input("X", g.Input("X"))
      .Input("Indices", g.Output("Indices"))
      .Input(GradVarName("Out"), g.OutputGrad("Out"))
      .Output(GradVarName("X"), g.InputGrad("X"))
      .CopyAttrs();
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(KthvalueAttrs(tide::OpSchema("kthvalue")
                                   .Comment("Out = the k-th smallest element of X along axis, "
                                            "Indices its position there (paddle.kthvalue).")
                                   .Input("X", "the input")
                                   .Output("Out", "X's dims less axis (1 with keepdim)")
                                   .Output("Indices", "int64, Out's dims")
                                   .InferShape(PickInferShape))
                     .Grad([](tide::GradMaker& g) { PickGrad(g, "kthvalue"); }));
TIDE_REGISTER_OP(KthvalueAttrs(tide::OpSchema("kthvalue_grad")
                                   .Input("X")
                                   .Input("Indices")
                                   .Input(GradVarName("Out"))
                                   .Output(GradVarName("X"))
                                   .KernelDataTypeFrom("X")
                                   .InferShape(GradLikeX)));
TIDE_REGISTER_OP(ModeAttrs(tide::OpSchema("mode")
                               .Comment("Out = the most frequent element of X along axis (the "
                                        "smallest of ties), Indices its last position there "
                                        "(paddle.mode).")
                               .Input("X", "the input")
                               .Output("Out", "X's dims less axis (1 with keepdim)")
                               .Output("Indices", "int64, Out's dims")
                               .InferShape(PickInferShape))
                     .Grad([](tide::GradMaker& g) { PickGrad(g, "mode"); }));
TIDE_REGISTER_OP(ModeAttrs(tide::OpSchema("mode_grad")
                               .Input("X")
                               .Input("Indices")
                               .Input(GradVarName("Out"))
                               .Output(GradVarName("X"))
                               .KernelDataTypeFrom("X")
                               .InferShape(GradLikeX)));
TIDE_REGISTER_OP(MedianAttrs(tide::OpSchema("median")
                                 .Comment("Out = the median of X over axis (paddle.median), "
                                          "MedianIndex the positions of the middle elements "
                                          "among the reduced ones.")
                                 .Input("X", "the input")
                                 .Output("Out", "X's dims less the reduced ones (1s with keepdim)")
                                 .Output("MedianIndex", "int64: Out's dims, and 2 more with 'avg'")
                                 .InferShape(MedianInferShape))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("median_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out", g.Output("Out"))
                           .Input("MedianIndex", g.Output("MedianIndex"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(MedianAttrs(tide::OpSchema("median_grad")
                                 .Input("X")
                                 .Input("Out")
                                 .Input("MedianIndex")
                                 .Input(GradVarName("Out"))
                                 .Output(GradVarName("X"))
                                 .KernelDataTypeFrom("X")
                                 .InferShape(GradLikeX)));
TIDE_REGISTER_KERNEL("kthvalue", "cpu", KthvalueKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("kthvalue_grad", "cpu", PickGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("mode", "cpu", ModeKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("mode_grad", "cpu", PickGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("median", "cpu", MedianKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("median_grad", "cpu", MedianGradKernel, OPS_MATH_FLOAT_TYPES);
