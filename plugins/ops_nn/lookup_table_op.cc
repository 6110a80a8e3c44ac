// lookup_table_op.cc: lookup_table (embedding rows of W by int64 Ids; padding_idx rows are zero)
// and its grad: a dense W@GRAD, or with is_sparse a SelectedRows (rows = Ids, height = V, value
// = the rows of Out@GRAD) whose variable type shape inference sets at compile time.
// W may be a SelectedRows, as a parameter server's table is (Fluid's distributed lookup table):
// an id is then looked up among W's rows, and an id W does not hold is an error.
#include <cstring>
#include <unordered_map>

#include "common.h"

namespace ops_nn {
namespace {

constexpr int64_t kNoPadding = -1;

// Out's dims: Ids' dims without the trailing 1 (or [N] as is) plus [D].
Dims LookupOutDims(const char* op, const Dims& w, const Dims& ids) {
  TIDE_CHECK(w.size() == 2, "op '", op, "': W must be 2-D [V, D], got ", tide::ToString(w));
  TIDE_CHECK(!ids.empty(), "op '", op, "': Ids must have rank >= 1");
  Dims out = ids;
  if (ids.size() >= 2) {
    TIDE_CHECK(DimsCompatible(ids.back(), 1), "op '", op, "': Ids ", tide::ToString(ids),
               " must be [N] or end in 1 (e.g. [N, 1])");
    out.pop_back();
  }
  out.push_back(w[1]);
  return out;
}

void LookupInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  TideDataType it = ctx.InputDataType("Ids");
  TIDE_CHECK(it == TIDE_INT64 || it == TIDE_UNDEFINED, "op '", op, "': Ids ('",
             ctx.InputName("Ids"), "') must be int64, got ", tide::DataTypeName(it));
  ctx.SetOutputDims("Out", LookupOutDims(op, ctx.InputDims("W"), ctx.InputDims("Ids")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("W"));
  ctx.ShareLoD("Ids", "Out");
}

// Checks every id; returns the ids as a pointer into the tensor.
const int64_t* CheckedIds(const KernelContext& ctx, const Tensor& ids, int64_t rows,
                          int64_t padding) {
  const char* op = ctx.op_type();
  TIDE_CHECK(ids.dtype() == TIDE_INT64, "op '", op, "': Ids ('", ctx.InputName("Ids"),
             "') must be int64, got ", tide::DataTypeName(ids.dtype()));
  const int64_t* id = ids.data<int64_t>();
  for (int64_t i = 0, n = ids.numel(); i < n; ++i) {
    if (padding != kNoPadding && id[i] == padding) continue;
    TIDE_CHECK(id[i] >= 0 && id[i] < rows, "op '", op, "': Ids ('", ctx.InputName("Ids"), "')[", i,
               "] = ", id[i], " is out of range for W ('", ctx.InputName("W"), "') with ", rows,
               " rows");
  }
  return id;
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
  TIDE_CHECK(vd.size() == 2 && vd[0] == int64_t(rows.size()), "op '", op, "': W ('", ctx.InputName("W"),
             "') is a SelectedRows with ", rows.size(), " rows but a value of dims ", tide::ToString(vd));
  const int64_t d = vd[1], n = ids.numel();
  const int64_t* id = CheckedIds(ctx, ids, table.height(), padding);
  std::unordered_map<int64_t, int64_t> index;
  for (size_t r = 0; r < rows.size(); ++r) index.emplace(rows[r], int64_t(r));  // first wins
  const T* wd = value.initialized() ? value.data<T>() : nullptr;
  T* o = out.mutable_data<T>(LookupOutDims(op, {table.height(), d}, ids.dims()), ctx.place());
  for (int64_t i = 0; i < n; ++i) {
    if (padding != kNoPadding && id[i] == padding) {
      std::fill(o + i * d, o + (i + 1) * d, T(0));
      continue;
    }
    auto it = index.find(id[i]);
    TIDE_CHECK(it != index.end(), "op '", op, "': Ids ('", ctx.InputName("Ids"), "')[", i, "] = ", id[i],
               " is not among the ", rows.size(), " rows of W ('", ctx.InputName("W"), "'), a SelectedRows");
    std::memcpy(o + i * d, wd + it->second * d, sizeof(T) * d);
  }
}

template <typename T>
void LookupKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  tide::Variable wv = ctx.InputVar("W");
  if (wv && wv.IsSelectedRows()) return LookupInRows<T>(ctx, wv.GetSelectedRows());
  Tensor w = ctx.Input("W"), ids = ctx.Input("Ids"), out = ctx.Output("Out");
  const int64_t padding = ctx.Attr<int64_t>("padding_idx");
  Dims od = LookupOutDims(op, w.dims(), ids.dims());
  const int64_t v = w.dim(0), d = w.dim(1), n = ids.numel();
  const int64_t* id = CheckedIds(ctx, ids, v, padding);
  const T* wd = w.data<T>();
  T* o = out.mutable_data<T>(od, ctx.place());
  for (int64_t i = 0; i < n; ++i) {
    if (padding != kNoPadding && id[i] == padding)
      std::fill(o + i * d, o + (i + 1) * d, T(0));
    else
      std::memcpy(o + i * d, wd + id[i] * d, sizeof(T) * d);
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
  const char* op = ctx.op_type();
  // W's dims: a SelectedRows W's are [height, D] (its gradient is the dense table's).
  tide::Variable wv = ctx.InputVar("W");
  Dims wd;
  if (wv && wv.IsSelectedRows()) {
    tide::SelectedRows table = wv.GetSelectedRows();
    Tensor value = table.value();
    TIDE_CHECK(value.initialized() && value.dims().size() == 2, "op '", op, "': W ('",
               ctx.InputName("W"), "') is a SelectedRows without a 2-D value");
    wd = {table.height(), value.dim(1)};
  } else {
    wd = ctx.Input("W").dims();
  }
  Tensor ids = ctx.Input("Ids");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const int64_t padding = ctx.Attr<int64_t>("padding_idx");
  TIDE_CHECK(wd.size() == 2, "op '", op, "': W must be 2-D [V, D], got ", tide::ToString(wd));
  const int64_t v = wd[0], d = wd[1], n = ids.numel();
  TIDE_CHECK(dout.numel() == n * d, "op '", op, "': Out@GRAD ", tide::ToString(dout.dims()),
             " does not hold one row of ", d, " per id (", n, " ids)");
  const int64_t* id = CheckedIds(ctx, ids, v, padding);
  const T* gd = dout.data<T>();
  const std::string gname = GradVarName("W");
  tide::Variable var = ctx.OutputVar(gname.c_str());
  if (!var) return;  // W needs no gradient
  if (ctx.Attr<bool>("is_sparse") && !(var.IsTensor() && var.GetTensor().initialized())) {
    tide::SelectedRows sr = var.GetSelectedRows();
    sr.set_rows(std::vector<int64_t>(id, id + n));
    sr.set_height(v);
    Tensor value = sr.value();
    T* vd = value.mutable_data<T>({n, d}, ctx.place());
    std::memcpy(vd, gd, sizeof(T) * n * d);
    if (padding != kNoPadding)
      for (int64_t i = 0; i < n; ++i)
        if (id[i] == padding) std::fill(vd + i * d, vd + (i + 1) * d, T(0));
    return;
  }
  Tensor dw = ctx.Output(gname.c_str());
  T* dd = dw.mutable_data<T>(wd, ctx.place());
  std::fill(dd, dd + v * d, T(0));
  for (int64_t i = 0; i < n; ++i) {
    if (padding != kNoPadding && id[i] == padding) continue;
    T* row = dd + id[i] * d;
    const T* g = gd + i * d;
    for (int64_t j = 0; j < d; ++j) row[j] += g[j];
  }
}

tide::OpSchema LookupAttrs(tide::OpSchema s) {
  return s.Attr("is_sparse", false, "W@GRAD is a SelectedRows (only the looked-up rows)")
      .Attr("is_distributed", false,
            "the table lives on parameter servers (the transpiler's "
            "concern; ignored by the kernel)")
      .Attr("padding_idx", int64_t(kNoPadding),
            "an id whose output row is zeros and which "
            "gets no gradient; -1: none");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(LookupAttrs(tide::OpSchema("lookup_table")
                                 .Comment("Out[i] = W[Ids[i]] (zeros where Ids[i] == padding_idx).")
                                 .Input("W", "the embedding table, [V, D]: a tensor, or a SelectedRows holding some of its rows")
                                 .Input("Ids", "int64 row ids, [N, 1] (or [N], or [..., 1])")
                                 .Output("Out", "the rows, Ids' dims without the last 1, plus D")
                                 .KernelDataTypeFrom("W")
                                 .InferShape(LookupInferShape)
                                 .Grad([](tide::GradMaker& g) {
                                   g.NewOp("lookup_table_grad")
                                       .Input("W", g.Input("W"))
                                       .Input("Ids", g.Input("Ids"))
                                       .Input(GradVarName("Out"), g.OutputGrad("Out"))
                                       .Output(GradVarName("W"), g.InputGrad("W"))
                                       .CopyAttrs();
                                 })));
TIDE_REGISTER_OP(LookupAttrs(tide::OpSchema("lookup_table_grad")
                                 .Comment("W@GRAD of lookup_table: dense (rows summed per id) or, "
                                          "with is_sparse, a SelectedRows.")
                                 .Input("W", "the forward table (for its dims)")
                                 .Input("Ids", "the forward ids")
                                 .Input(GradVarName("Out"), "gradient of Out")
                                 .Output(GradVarName("W"), "gradient of W")
                                 .KernelDataTypeFrom("W")
                                 .InferShape(LookupGradInferShape)));
TIDE_REGISTER_KERNEL("lookup_table", "cpu", LookupKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lookup_table_grad", "cpu", LookupGradKernel, OPS_NN_FLOAT_TYPES);
