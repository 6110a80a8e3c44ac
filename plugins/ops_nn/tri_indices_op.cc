// tri_indices_op.cc: Paddle's triu_indices / tril_indices (paddle.triu_indices, tril_indices):
// out [2, N] = the (row, column) coordinates, row by row, of the elements on and above (below)
// the `offset` diagonal of a row x col matrix (numpy's triu_indices / tril_indices), in `dtype`
// (int32 or int64). No inputs: the attributes say it all.
#include <tide/ops/dtype_attr.hpp>

#include "common.h"

namespace ops_nn {
namespace {

// The op's row / column attribute names differ (Paddle's): triu_indices row, col;
// tril_indices rows, cols.
struct TriArgs {
  int64_t rows, cols, offset;
  bool upper;
  TideDataType dtype;
};

template <typename Ctx>
TriArgs GetTriArgs(const Ctx& ctx) {
  const char* op = ctx.op_type();
  const bool upper = std::string(op) == "triu_indices";
  TriArgs a{ctx.template Attr<int32_t>(upper ? "row" : "rows"),
            ctx.template Attr<int32_t>(upper ? "col" : "cols"),
            ctx.template Attr<int32_t>("offset"), upper, tide::ops::DataTypeAttr(ctx, "dtype")};
  TIDE_CHECK(a.rows >= 0 && a.cols >= 0, "op '", op,
             "': the matrix must have >= 0 rows and "
             "columns, got ",
             a.rows, " x ", a.cols);
  TIDE_CHECK(a.dtype == TIDE_INT32 || a.dtype == TIDE_INT64, "op '", op,
             "': attribute 'dtype' must be int32 or int64, got ", tide::DataTypeName(a.dtype));
  return a;
}

// The columns of row r that are kept: [lo, hi).
void RowSpan(const TriArgs& a, int64_t r, int64_t* lo, int64_t* hi) {
  if (a.upper) {
    *lo = std::min(std::max<int64_t>(r + a.offset, 0), a.cols);
    *hi = a.cols;
  } else {
    *lo = 0;
    *hi = std::min(std::max<int64_t>(r + a.offset + 1, 0), a.cols);
  }
}

int64_t Count(const TriArgs& a) {
  int64_t n = 0, lo, hi;
  for (int64_t r = 0; r < a.rows; ++r) {
    RowSpan(a, r, &lo, &hi);
    n += hi - lo;
  }
  return n;
}

void TriIndicesInferShape(tide::InferShapeContext& ctx) {
  const TriArgs a = GetTriArgs(ctx);
  ctx.SetOutputDims("out", {2, Count(a)});
  ctx.SetOutputDataType("out", a.dtype);
}

template <typename I>
void Fill(const TriArgs& a, I* o, int64_t n) {
  int64_t k = 0, lo, hi;
  for (int64_t r = 0; r < a.rows; ++r) {
    RowSpan(a, r, &lo, &hi);
    for (int64_t c = lo; c < hi; ++c, ++k) {
      o[k] = static_cast<I>(r);
      o[n + k] = static_cast<I>(c);
    }
  }
}

// Chosen by `dtype` (int32 or int64).
template <typename T>
void TriIndicesKernel(KernelContext& ctx) {
  const TriArgs a = GetTriArgs(ctx);
  const int64_t n = Count(a);
  Tensor out = ctx.Output("out");
  if (a.dtype == TIDE_INT32)
    Fill(a, out.mutable_data<int32_t>({2, n}, ctx.place()), n);
  else
    Fill(a, out.mutable_data<int64_t>({2, n}, ctx.place()), n);
}

tide::OpSchema TriIndicesSchema(const std::string& type, const char* rows, const char* cols,
                                const std::string& where) {
  return tide::OpSchema(type)
      .Comment("out [2, N] = the coordinates of a " + std::string(rows) + " x " + cols +
               " matrix's elements on and " + where + " the offset diagonal (paddle." + type + ").")
      .Output("out", "[2, N], `dtype`: rows, then columns")
      .Attr(rows, int32_t{0}, "the matrix's rows")
      .Attr(cols, int32_t{0}, "the matrix's columns")
      .Attr("offset", int32_t{0}, "the diagonal (> 0: above the main one, < 0: below)")
      .Attr("dtype", int32_t{TIDE_INT64}, "out's type: int32 or int64")
      .KernelDataTypeFrom("attr:dtype")
      .InferShape(TriIndicesInferShape)
      .NoGradient();
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(TriIndicesSchema("triu_indices", "row", "col", "above"));
TIDE_REGISTER_OP(TriIndicesSchema("tril_indices", "rows", "cols", "below"));
TIDE_REGISTER_KERNEL("triu_indices", "cpu", TriIndicesKernel, int32_t, int64_t);
TIDE_REGISTER_KERNEL("tril_indices", "cpu", TriIndicesKernel, int32_t, int64_t);
