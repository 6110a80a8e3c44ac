// diag_embed_op.cc: Paddle's diag_embed (paddle.diag_embed): Input's last dim (n values) laid
// on the `offset` diagonal of square matrices (n + |offset| wide) spanning Out's dims dim1 and
// dim2, zeros elsewhere; Out: Input's other dims with the two matrix dims inserted at dim1 and
// dim2 (of Out's rank). The grad reads that diagonal of Out@GRAD back.
#include "common.h"

namespace ops_nn {
namespace {

// Out's dims, and for Input element (batch b, diagonal position i) its Out offset.
struct EmbedGeom {
  Dims out;
  int64_t batch = 1, n = 0;
  std::vector<int64_t> batch_offset;  // Out offset of each batch's [0, 0] matrix element
  int64_t step = 0;                   // Out offset between diagonal neighbours
  int64_t start = 0;                  // Out offset of the diagonal's first element in a matrix
};

template <typename Ctx>
EmbedGeom GetEmbedGeom(const Ctx& ctx, const Dims& input) {
  const char* op = ctx.op_type();
  TIDE_CHECK(!input.empty(), "op '", op, "': Input must have at least 1 dim, got a 0-D Input");
  const int rank = static_cast<int>(input.size()) + 1;
  const int32_t d1 = ctx.template Attr<int32_t>("dim1"), d2 = ctx.template Attr<int32_t>("dim2");
  TIDE_CHECK(d1 >= -rank && d1 < rank, "op '", op, "': dim1 ", d1, " is out of range [", -rank,
             ", ", rank, ") for Out of rank ", rank);
  TIDE_CHECK(d2 >= -rank && d2 < rank, "op '", op, "': dim2 ", d2, " is out of range [", -rank,
             ", ", rank, ") for Out of rank ", rank);
  const int a1 = d1 < 0 ? d1 + rank : d1, a2 = d2 < 0 ? d2 + rank : d2;
  TIDE_CHECK(a1 != a2, "op '", op, "': dim1 (", d1, ") and dim2 (", d2,
             ") must name different dims of Out");
  const int64_t offset = ctx.template Attr<int32_t>("offset");
  EmbedGeom g;
  g.n = input.back();
  const int64_t m = g.n < 0 ? -1 : g.n + (offset < 0 ? -offset : offset);
  // Out's dims: Input's batch dims in order, the matrix dims at a1 and a2.
  Dims batch(input.begin(), input.end() - 1);
  size_t next = 0;
  for (int d = 0; d < rank; ++d) g.out.push_back(d == a1 || d == a2 ? m : batch[next++]);
  if (!Known(g.out)) return g;
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 1; d > 0; --d) stride[d - 1] = stride[d] * g.out[d];
  g.step = stride[a1] + stride[a2];
  g.start = offset >= 0 ? offset * stride[a2] : -offset * stride[a1];
  g.batch = DimsProduct(batch);
  // Each batch index's Out offset, batch dims in row-major order.
  std::vector<int> batch_axes;
  for (int d = 0; d < rank; ++d)
    if (d != a1 && d != a2) batch_axes.push_back(d);
  g.batch_offset.assign(static_cast<size_t>(g.batch), 0);
  for (int64_t b = 0; b < g.batch; ++b) {
    int64_t rest = b;
    for (size_t k = batch_axes.size(); k-- > 0;) {
      const int d = batch_axes[k];
      g.batch_offset[b] += (rest % g.out[d]) * stride[d];
      rest /= g.out[d];
    }
  }
  return g;
}

void DiagEmbedInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", GetEmbedGeom(ctx, ctx.InputDims("Input")).out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
}

template <typename T>
void DiagEmbedKernel(KernelContext& ctx) {
  Tensor input = ctx.Input("Input");
  const EmbedGeom g = GetEmbedGeom(ctx, input.dims());
  const T* in = input.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(g.out, ctx.place());
  std::fill(o, o + DimsProduct(g.out), T(0));
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t i = 0; i < g.n; ++i) o[g.batch_offset[b] + g.start + i * g.step] = in[b * g.n + i];
}

template <typename T>
void DiagEmbedGradKernel(KernelContext& ctx) {
  const Dims input = ctx.Input("Input").dims();
  const EmbedGeom g = GetEmbedGeom(ctx, input);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  TIDE_CHECK(dout.dims() == g.out, "op '", ctx.op_type(), "': Out@GRAD ",
             tide::ToString(dout.dims()), " differs from Out ", tide::ToString(g.out));
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("Input").c_str()).mutable_data<T>(input, ctx.place());
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t i = 0; i < g.n; ++i)
      dx[b * g.n + i] = gd[g.batch_offset[b] + g.start + i * g.step];
}

tide::OpSchema DiagEmbedAttrs(tide::OpSchema s) {
  return s.Attr("offset", int32_t{0}, "the diagonal (> 0: above the main one, < 0: below)")
      .Attr("dim1", int32_t{-2}, "Out's dim of the matrices' rows (negative: from the end)")
      .Attr("dim2", int32_t{-1}, "Out's dim of the matrices' columns (negative: from the end)");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(DiagEmbedAttrs(tide::OpSchema("diag_embed")
                                    .Comment("Out = matrices over dims dim1, dim2 holding Input's "
                                             "last dim on their `offset` diagonal "
                                             "(paddle.diag_embed).")
                                    .Input("Input", "the diagonals, in its last dim")
                                    .Output("Out", "Input's rank + 1")
                                    .KernelDataTypeFrom("Input")
                                    .InferShape(DiagEmbedInferShape))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("diag_embed_grad")
                           .Input("Input", g.Input("Input"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("Input"), g.InputGrad("Input"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(DiagEmbedAttrs(tide::OpSchema("diag_embed_grad")
                                    .Comment("Input@GRAD = Out@GRAD's `offset` diagonal.")
                                    .Input("Input")
                                    .Input(GradVarName("Out"))
                                    .Output(GradVarName("Input"))
                                    .KernelDataTypeFrom("Input")
                                    .InferShape(GradLike({"Input"}))));
TIDE_REGISTER_KERNEL("diag_embed", "cpu", DiagEmbedKernel, OPS_NN_MOVE_TYPES, bool);
TIDE_REGISTER_KERNEL("diag_embed_grad", "cpu", DiagEmbedGradKernel, OPS_NN_FLOAT_TYPES);
