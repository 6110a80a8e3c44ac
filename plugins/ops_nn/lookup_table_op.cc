// lookup_table_op.cc: lookup_table (embedding rows of W by int64 Ids; padding_idx rows are zero),
// lookup_table_v2 (Paddle 2.x's nn.Embedding: Out is Ids' dims plus [D], Ids int32 or int64) and
// their grads: a dense W@GRAD, or with is_sparse a SelectedRows (rows = Ids, height = V, value
// = the rows of Out@GRAD) whose variable type shape inference sets at compile time.
// W may be a SelectedRows, as a parameter server's table is (Fluid's distributed lookup table):
// an id is then looked up among W's rows, and an id W does not hold is an error.
#include <cstring>
#include <memory>
#include <string>
#include <tide/ops/lookup_table.hpp>
#include <unordered_map>
#include <vector>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::kNoPaddingIdx;
using tide::ops::LookupOutDims;

void LookupInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  TideDataType it = ctx.InputDataType("Ids");
  const bool v2 = tide::ops::IsLookupV2(op);
  TIDE_CHECK(it == TIDE_INT64 || it == TIDE_UNDEFINED || (v2 && it == TIDE_INT32), "op '", op,
             "': Ids ('", ctx.InputName("Ids"), "') must be int64", v2 ? " or int32" : "", ", got ",
             tide::DataTypeName(it));
  ctx.SetOutputDims("Out", LookupOutDims(op, ctx.InputDims("W"), ctx.InputDims("Ids")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("W"));
  ctx.ShareLoD("Ids", "Out");
}

// A SelectedRows W: Out[i] = the value row of W's row Ids[i] (Fluid's SelectedRows::Index).
template <typename T>
void LookupInRows(KernelContext& ctx, const tide::SelectedRows& table) {
  const char* op = ctx.op_type();
  Tensor value = table.value(), ids = ctx.Input("Ids"), out = ctx.Output("Out");
  const std::vector<int64_t> rows = table.rows();
  const int64_t padding = ctx.Attr<int64_t>("padding_idx");
  TIDE_CHECK(value.initialized() || rows.empty(), "op '", op, "': W ('", ctx.InputName("W"),
             "') is a SelectedRows listing ", rows.size(), " rows but has no value");
  const Dims vd = value.initialized() ? value.dims() : Dims{0, 0};
  TIDE_CHECK(vd.size() == 2 && vd[0] == int64_t(rows.size()), "op '", op, "': W ('",
             ctx.InputName("W"), "') is a SelectedRows with ", rows.size(),
             " rows but a value of dims ", tide::ToString(vd));
  const int64_t d = vd[1], n = ids.numel();
  std::shared_ptr<std::vector<int64_t>> widened;
  const int64_t* id = tide::ops::LookupIds(ctx, ids, &widened);
  tide::ops::CheckLookupIds(ctx, id, n, table.height(), padding);
  std::unordered_map<int64_t, int64_t> index;
  for (size_t r = 0; r < rows.size(); ++r) index.emplace(rows[r], int64_t(r));  // first wins
  const T* wd = value.initialized() ? value.data<T>() : nullptr;
  T* o = out.mutable_data<T>(LookupOutDims(op, {table.height(), d}, ids.dims()), ctx.place());
  for (int64_t i = 0; i < n; ++i) {
    if (padding != kNoPaddingIdx && id[i] == padding) {
      std::fill(o + i * d, o + (i + 1) * d, T(0));
      continue;
    }
    auto it = index.find(id[i]);
    TIDE_CHECK(it != index.end(), "op '", op, "': Ids ('", ctx.InputName("Ids"), "')[", i,
               "] = ", id[i], " is not among the ", rows.size(), " rows of W ('",
               ctx.InputName("W"), "'), a SelectedRows");
    std::memcpy(o + i * d, wd + it->second * d, sizeof(T) * d);
  }
}

template <typename T>
void LookupKernel(KernelContext& ctx) {
  tide::Variable wv = ctx.InputVar("W");
  if (wv && wv.IsSelectedRows()) return LookupInRows<T>(ctx, wv.GetSelectedRows());
  const auto a = tide::ops::GetLookupArgs<T>(ctx, /*host_ids=*/true);
  for (int64_t i = 0; i < a.n; ++i) {
    if (a.padding != kNoPaddingIdx && a.ids[i] == a.padding)
      std::fill(a.out + i * a.d, a.out + (i + 1) * a.d, T(0));
    else
      std::memcpy(a.out + i * a.d, a.w + a.ids[i] * a.d, sizeof(T) * a.d);
  }
}

void LookupGradInferShape(tide::InferShapeContext& ctx) {
  const std::string g = GradVarName("W");
  // The variable type first: at run time, setting dims would otherwise create a LoDTensor.
  ctx.SetOutputVarType(g.c_str(),
                       ctx.Attr<bool>("is_sparse") ? TIDE_VAR_SELECTED_ROWS : TIDE_VAR_LOD_TENSOR);
  ctx.SetOutputDims(g.c_str(), ctx.InputDims("W"));
  ctx.SetOutputDataType(g.c_str(), ctx.InputDataType("W"));
}

template <typename T>
void LookupGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetLookupGradArgs<T>(ctx);
  tide::ops::CheckLookupIds(ctx, a.ids, a.n, a.v, a.padding);
  if (!a.dw) return;  // W needs no gradient
  const int64_t d = a.d, n = a.n;
  if (a.sparse) {
    tide::SelectedRows sr = a.dw.GetSelectedRows();
    sr.set_rows(std::vector<int64_t>(a.ids, a.ids + n));
    sr.set_height(a.v);
    Tensor value = sr.value();
    T* vd = value.mutable_data<T>({n, d}, ctx.place());
    std::memcpy(vd, a.dout, sizeof(T) * n * d);
    if (a.padding != kNoPaddingIdx)
      for (int64_t i = 0; i < n; ++i)
        if (a.ids[i] == a.padding) std::fill(vd + i * d, vd + (i + 1) * d, T(0));
    return;
  }
  T* dd = ctx.Output(GradVarName("W").c_str()).mutable_data<T>(a.w_dims, ctx.place());
  std::fill(dd, dd + a.v * d, T(0));
  for (int64_t i = 0; i < n; ++i) {
    if (a.padding != kNoPaddingIdx && a.ids[i] == a.padding) continue;
    T* row = dd + a.ids[i] * d;
    const T* g = a.dout + i * d;
    for (int64_t j = 0; j < d; ++j) row[j] += g[j];
  }
}

tide::OpSchema LookupAttrs(tide::OpSchema s) {
  return s.Attr("is_sparse", false, "W@GRAD is a SelectedRows (only the looked-up rows)")
      .Attr("is_distributed", false,
            "the table lives on parameter servers (the transpiler's "
            "concern; ignored by the kernel)")
      .Attr("padding_idx", int64_t(kNoPaddingIdx),
            "an id whose output row is zeros and which "
            "gets no gradient; -1: none");
}

// lookup_table and lookup_table_v2 differ in Out's dims and the Ids' types
// (tide/ops/lookup_table.hpp).
tide::OpSchema LookupSchema(const char* type, const char* ids_doc, const char* out_doc) {
  const std::string grad = std::string(type) + "_grad";
  return LookupAttrs(
      tide::OpSchema(type)
          .Comment("Out[i] = W[Ids[i]] (zeros where Ids[i] == padding_idx).")
          .Input(
              "W",
              "the embedding table, [V, D]: a tensor, or a SelectedRows holding some of its rows")
          .Input("Ids", ids_doc)
          .Output("Out", out_doc)
          .KernelDataTypeFrom("W")
          .InferShape(LookupInferShape)
          .Grad([grad](tide::GradMaker& g) {
            g.NewOp(grad.c_str())
                .Input("W", g.Input("W"))
                .Input("Ids", g.Input("Ids"))
                .Input(GradVarName("Out"), g.OutputGrad("Out"))
                .Output(GradVarName("W"), g.InputGrad("W"))
                .CopyAttrs();
          }));
}

tide::OpSchema LookupGradSchema(const char* type) {
  return LookupAttrs(tide::OpSchema(type)
                         .Comment("W@GRAD of the lookup: dense (rows summed per id) or, with "
                                  "is_sparse, a SelectedRows.")
                         .Input("W", "the forward table (for its dims)")
                         .Input("Ids", "the forward ids")
                         .Input(GradVarName("Out"), "gradient of Out")
                         .Output(GradVarName("W"), "gradient of W")
                         .KernelDataTypeFrom("W")
                         .InferShape(LookupGradInferShape));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(LookupSchema("lookup_table", "int64 row ids, [N, 1] (or [N], or [..., 1])",
                              "the rows, Ids' dims without the last 1, plus D"));
TIDE_REGISTER_OP(LookupGradSchema("lookup_table_grad"));
TIDE_REGISTER_OP(LookupSchema("lookup_table_v2", "int64 or int32 row ids, any dims",
                              "the rows, Ids' dims plus D"));
TIDE_REGISTER_OP(LookupGradSchema("lookup_table_v2_grad"));
TIDE_REGISTER_KERNEL("lookup_table", "cpu", LookupKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lookup_table_grad", "cpu", LookupGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lookup_table_v2", "cpu", LookupKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lookup_table_v2_grad", "cpu", LookupGradKernel, OPS_NN_FLOAT_TYPES);
