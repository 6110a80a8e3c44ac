// tide/ops/lookup_table.hpp: lookup_table (Fluid's embedding), lookup_table_v2 (Paddle 2.x's
// nn.Embedding: Ids of any dims, int32 or int64) and their grads as every implementation reads
// them: Out's dims from W [V, D] and Ids, the Ids, padding_idx, and the
// grad's W dims (also of a SelectedRows W, a parameter server's table), Out@GRAD check and choice
// of a dense or SelectedRows W@GRAD. Each id's range is the kernel's to check where the ids are.
#ifndef TIDE_OPS_LOOKUP_TABLE_HPP_
#define TIDE_OPS_LOOKUP_TABLE_HPP_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// padding_idx's "none".
constexpr int64_t kNoPaddingIdx = -1;

// lookup_table_v2 and its grad: Out is Ids' dims plus [D] (nothing dropped), and int32 Ids are
// taken too.
inline bool IsLookupV2(const char* op) { return std::strncmp(op, "lookup_table_v2", 15) == 0; }

// Out's dims: Ids' dims without the trailing 1 (or [N] as is) plus [D]; for lookup_table_v2 Ids'
// dims plus [D]. Unknown (-1) dims pass at compile time.
inline Dims LookupOutDims(const char* op, const Dims& w, const Dims& ids) {
  TIDE_CHECK(w.size() == 2, "op '", op, "': W must be 2-D [V, D], got ", ToString(w));
  Dims out = ids;
  if (IsLookupV2(op)) {
    out.push_back(w[1]);
    return out;
  }
  TIDE_CHECK(!ids.empty(), "op '", op, "': Ids must have rank >= 1");
  if (ids.size() >= 2) {
    TIDE_CHECK(DimsCompatible(ids.back(), 1), "op '", op, "': Ids ", ToString(ids),
               " must be [N] or end in 1 (e.g. [N, 1])");
    out.pop_back();
  }
  out.push_back(w[1]);
  return out;
}

// The Ids input's data as int64 row ids. lookup_table_v2's int32 ids are widened into `*widened`
// where a kernel reads them on the host (it passes a holder); a device kernel passes none and
// takes int64 only.
inline const int64_t* LookupIds(const KernelContext& ctx, const Tensor& ids,
                                std::shared_ptr<std::vector<int64_t>>* widened = nullptr) {
  if (ids.dtype() == TIDE_INT32 && IsLookupV2(ctx.op_type()) && widened) {
    const int32_t* p = ids.data<int32_t>();
    *widened = std::make_shared<std::vector<int64_t>>(p, p + ids.numel());
    return (*widened)->data();
  }
  TIDE_CHECK(ids.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': Ids ('", ctx.InputName("Ids"),
             "') must be int64", IsLookupV2(ctx.op_type()) && !widened ? " on this device" : "",
             IsLookupV2(ctx.op_type()) && widened ? " or int32" : "", ", got ",
             DataTypeName(ids.dtype()));
  return ids.data<int64_t>();
}

// Checks ids on the host: each in [0, rows) unless it is padding_idx.
inline void CheckLookupIds(const KernelContext& ctx, const int64_t* ids, int64_t n, int64_t rows,
                           int64_t padding) {
  for (int64_t i = 0; i < n; ++i) {
    if (padding != kNoPaddingIdx && ids[i] == padding) continue;
    TIDE_CHECK(ids[i] >= 0 && ids[i] < rows, "op '", ctx.op_type(), "': Ids ('",
               ctx.InputName("Ids"), "')[", i, "] = ", ids[i], " is out of range for W ('",
               ctx.InputName("W"), "') with ", rows, " rows");
  }
}

// lookup_table over a dense W: the inputs, and Out allocated on the kernel's place.
template <typename T>
struct LookupArgs {
  const T* w;
  const int64_t* ids;
  T* out;
  int64_t v, d, n;                                    // W's rows and width, the number of ids
  int64_t padding;                                    // padding_idx, or kNoPaddingIdx
  std::shared_ptr<std::vector<int64_t>> widened_ids;  // int32 ids read on the host, widened
};

// `host_ids`: the kernel reads the ids on the host, and they are checked (CheckLookupIds) before
// Out is allocated, so a run that fails leaves no output behind; a device kernel checks them
// where they are.
template <typename T>
LookupArgs<T> GetLookupArgs(const KernelContext& ctx, bool host_ids) {
  Tensor w = ctx.Input("W"), ids = ctx.Input("Ids");
  const Dims od = LookupOutDims(ctx.op_type(), w.dims(), ids.dims());
  LookupArgs<T> a;
  a.v = w.dim(0);
  a.d = w.dim(1);
  a.n = ids.numel();
  a.padding = ctx.Attr<int64_t>("padding_idx");
  a.ids = LookupIds(ctx, ids, host_ids ? &a.widened_ids : nullptr);
  if (host_ids) CheckLookupIds(ctx, a.ids, a.n, a.v, a.padding);
  a.w = w.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  return a;
}

// W's dims [V, D] in a grad kernel: a SelectedRows W's are [height, D] (its gradient is the dense
// table's).
inline Dims LookupTableDims(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Variable wv = ctx.InputVar("W");
  Dims wd;
  if (wv && wv.IsSelectedRows()) {
    SelectedRows table = wv.GetSelectedRows();
    Tensor value = table.value();
    TIDE_CHECK(value.initialized() && value.dims().size() == 2, "op '", op, "': W ('",
               ctx.InputName("W"), "') is a SelectedRows without a 2-D value");
    wd = {table.height(), value.dim(1)};
  } else {
    wd = ctx.Input("W").dims();
  }
  TIDE_CHECK(wd.size() == 2, "op '", op, "': W must be 2-D [V, D], got ", ToString(wd));
  return wd;
}

// The grad's inputs; `host_ids` as for GetLookupArgs (int32 ids widened on the host). `dw` is
// W@GRAD's variable (null when W needs no gradient); `sparse` says it is to be a SelectedRows
// (is_sparse, unless it already holds a tensor, e.g. a dense gradient another op started).
template <typename T>
struct LookupGradArgs {
  Dims w_dims;
  const int64_t* ids;
  const T* dout;
  int64_t v, d, n;
  int64_t padding;
  Variable dw{nullptr};
  bool sparse;
  std::shared_ptr<std::vector<int64_t>> widened_ids;
};

template <typename T>
LookupGradArgs<T> GetLookupGradArgs(const KernelContext& ctx, bool host_ids = true) {
  const char* op = ctx.op_type();
  LookupGradArgs<T> a;
  a.w_dims = LookupTableDims(ctx);
  Tensor ids = ctx.Input("Ids"), dout = ctx.Input(GradVarName("Out").c_str());
  a.v = a.w_dims[0];
  a.d = a.w_dims[1];
  a.n = ids.numel();
  a.padding = ctx.Attr<int64_t>("padding_idx");
  TIDE_CHECK(dout.numel() == a.n * a.d, "op '", op, "': Out@GRAD ", ToString(dout.dims()),
             " does not hold one row of ", a.d, " per id (", a.n, " ids)");
  a.ids = LookupIds(ctx, ids, host_ids ? &a.widened_ids : nullptr);
  a.dout = dout.data<T>();
  a.dw = ctx.OutputVar(GradVarName("W").c_str());
  a.sparse =
      a.dw && ctx.Attr<bool>("is_sparse") && !(a.dw.IsTensor() && a.dw.GetTensor().initialized());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_LOOKUP_TABLE_HPP_
