// selection.h: the helpers of the ops that pick elements of X along reduced axes
// (selection_ops.cc's kthvalue, mode and median; nanmedian_op.cc): X as rows of reduced
// elements, the reduced dims, Paddle's order of values (NaN last), median's axes and mode.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <tide/ops/axis.hpp>
#include <utility>
#include <vector>

#include "common.h"

namespace ops_math {

// X's elements as rows (the kept dims' positions, row-major) of columns (the reduced dims',
// ascending and row-major): element (r, c) is at row[r] + col[c].
struct Rows {
  std::vector<int64_t> row, col;
};

inline Rows RowsOf(const Dims& x, const std::vector<bool>& reduced) {
  std::vector<int64_t> stride(x.size(), 1);
  for (int k = static_cast<int>(x.size()) - 2; k >= 0; --k) stride[k] = stride[k + 1] * x[k + 1];
  Rows r{{0}, {0}};
  for (size_t k = 0; k < x.size(); ++k) {  // each dim multiplies its side's offsets
    std::vector<int64_t>& side = reduced[k] ? r.col : r.row;
    std::vector<int64_t> next;
    next.reserve(side.size() * x[k]);
    for (int64_t o : side)
      for (int64_t i = 0; i < x[k]; ++i) next.push_back(o + i * stride[k]);
    side = std::move(next);
  }
  return r;
}

// Out's dims: the reduced dims dropped, or 1 with keepdim.
inline Dims ReducedDims(const Dims& x, const std::vector<bool>& reduced, bool keepdim) {
  Dims out;
  for (size_t k = 0; k < x.size(); ++k)
    if (!reduced[k])
      out.push_back(x[k]);
    else if (keepdim)
      out.push_back(1);
  return out;
}

// Paddle's order: by value, NaN after every number.
template <typename T>
bool LessNanLast(const std::pair<T, int64_t>& l, const std::pair<T, int64_t>& r) {
  return (!std::isnan(static_cast<double>(l.first)) && std::isnan(static_cast<double>(r.first))) ||
         (l.first < r.first);
}

template <typename T>
std::vector<std::pair<T, int64_t>> LineOf(const T* x, const Rows& rows, int64_t r) {
  std::vector<std::pair<T, int64_t>> line;
  line.reserve(rows.col.size());
  for (size_t c = 0; c < rows.col.size(); ++c)
    line.emplace_back(x[rows.row[r] + rows.col[c]], static_cast<int64_t>(c));
  return line;
}

// The reduced axes of median and nanmedian: `axis` (empty, or X of rank <= 1: all of them).
template <typename Ctx>
std::vector<bool> MedianAxes(const Ctx& ctx, const Dims& x) {
  const auto axes = ctx.template Attr<std::vector<int64_t>>("axis");
  std::vector<bool> reduced(x.size(), axes.empty() || x.size() <= 1);
  for (int64_t a : axes)
    if (!x.empty()) reduced[tide::ops::NormAxis(ctx.op_type(), a, x.size())] = true;
  return reduced;
}

template <typename Ctx>
bool AvgMode(const Ctx& ctx) {
  const std::string mode = ctx.template Attr<std::string>("mode");
  TIDE_CHECK(mode == "avg" || mode == "min", "op '", ctx.op_type(),
             "': mode must be 'avg' or 'min', got '", mode, "'");
  return mode == "avg";
}

// The k smallest of `line` in order, as Paddle's CPU top-k finds them (which of equal values
// comes first is Paddle's): std::partial_sort when k * 64 < n, else std::nth_element for the
// k-th and std::sort of those before it.
template <typename T>
void PaddleSmallestK(std::vector<std::pair<T, int64_t>>* line, int64_t k) {
  const int64_t n = static_cast<int64_t>(line->size());
  if (k * 64 < n) {
    std::partial_sort(line->begin(), line->begin() + k, line->end(), LessNanLast<T>);
  } else {
    std::nth_element(line->begin(), line->begin() + k - 1, line->end(), LessNanLast<T>);
    std::sort(line->begin(), line->begin() + k - 1, LessNanLast<T>);
  }
}

// A median op's outputs for X: Out and MedianIndex (Out's dims, and 2 more with 'avg')
// allocated, and X as rows of its reduced elements.
template <typename T>
struct MedianOutputs {
  Rows rows;
  bool avg;
  int64_t per;  // indices per result: 2 with 'avg', else 1
  T* out;
  int64_t* index;
};

template <typename T>
MedianOutputs<T> MedianOutputsOf(KernelContext& ctx, const Tensor& x) {
  const std::vector<bool> reduced = MedianAxes(ctx, x.dims());
  MedianOutputs<T> m{RowsOf(x.dims(), reduced), AvgMode(ctx), 1, nullptr, nullptr};
  m.per = m.avg ? 2 : 1;
  const Dims out_dims = ReducedDims(x.dims(), reduced, ctx.Attr<bool>("keepdim"));
  Dims index_dims = out_dims;
  if (m.avg) index_dims.push_back(2);
  m.out = ctx.Output("Out").mutable_data<T>(out_dims, ctx.place());
  m.index = ctx.Output("MedianIndex").mutable_data<int64_t>(index_dims, ctx.place());
  TIDE_CHECK(!m.rows.col.empty(), "op '", ctx.op_type(), "': X ", tide::ToString(x.dims()),
             " has no elements along the reduced axes");
  return m;
}

// The median of a line whose first `count` elements (count >= 1) are its numbers in order:
// the middle one, or for an even count the mean of the two middle values ('avg', both indices)
// or the lower ('min').
template <typename T>
void WriteMiddle(const std::vector<std::pair<T, int64_t>>& line, int64_t count, bool avg, T* out,
                 int64_t* index) {
  const auto& right = line[count / 2];
  const auto& left = count % 2 == 0 ? line[count / 2 - 1] : right;
  if (avg) {
    *out = count % 2 ? right.first : static_cast<T>((left.first + right.first) / T(2));
    index[0] = left.second;
    index[1] = right.second;
  } else {
    *out = left.first;
    index[0] = left.second;
  }
}

// Out and MedianIndex (Out's dims, and 2 more with 'avg') of median and nanmedian.
inline void MedianInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const Dims out = ReducedDims(x, MedianAxes(ctx, x), ctx.Attr<bool>("keepdim"));
  Dims index = out;
  if (AvgMode(ctx)) index.push_back(2);
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.SetOutputDims("MedianIndex", index);
  ctx.SetOutputDataType("MedianIndex", TIDE_INT64);
}

// median's and nanmedian's attributes.
inline tide::OpSchema MedianAttrs(tide::OpSchema s) {
  return s.Attr("axis", std::vector<int64_t>{}, "the dims reduced (empty: all)")
      .Attr("keepdim", false, "keep the reduced dims, as 1s")
      .Attr("mode", std::string("avg"),
            "even counts: 'avg' the mean of the two middle values, 'min' the lower");
}

}  // namespace ops_math
