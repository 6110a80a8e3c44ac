// tensor_ops.cc: the two data ops the distribute transpiler needs besides RPC: split_byref (row
// blocks of a tensor, to initialise a sliced parameter on its pserver) and merge_sparse_grads (the
// trainers' SelectedRows gradients of one round as one, scaled: sum + scale for sparse grads).
#include <cstring>

#include "common.h"

namespace tide_zmq {
namespace {

tide::Variable OutVar(tide::OpRunContext& ctx, const std::string& name) {
  tide::Variable v = ctx.scope().FindVar(name);
  return v ? v : ctx.scope().Var(name);
}

void SplitByrefRun(tide::OpRunContext& ctx) {
  const std::string x = ctx.Inputs("X").at(0);
  tide::Variable xv = ctx.scope().FindVar(x);
  TIDE_CHECK(xv && xv.IsTensor(), "op 'split_byref': X ('", x,
             "') is not a LoDTensor in the scope");
  tide::Tensor t = xv.GetTensor();
  TIDE_CHECK(t.initialized() && t.rank() >= 1, "op 'split_byref': X ('", x, "') holds no data");
  TIDE_CHECK(IsHostPlace(t.place()), "op 'split_byref': X ('", x, "') is on ", t.place().ToString(),
             "; only host tensors are split");
  const auto outs = ctx.Outputs("Out");
  auto sections = ctx.Attr<std::vector<int64_t>>("sections");
  if (sections.empty()) {
    TIDE_CHECK(t.dim(0) % static_cast<int64_t>(outs.size()) == 0, "op 'split_byref': ", t.dim(0),
               " rows of '", x, "' do not split evenly ", outs.size(), " ways");
    sections.assign(outs.size(), t.dim(0) / static_cast<int64_t>(outs.size()));
  }
  TIDE_CHECK(sections.size() == outs.size(), "op 'split_byref': ", sections.size(),
             " sections for ", outs.size(), " outputs");
  int64_t total = 0;
  for (int64_t s : sections) total += s;
  TIDE_CHECK(total == t.dim(0), "op 'split_byref': sections cover ", total, " rows, '", x, "' has ",
             t.dim(0));
  const size_t row_bytes =
      static_cast<size_t>(t.numel() / t.dim(0)) * tide::DataTypeSize(t.dtype());
  const char* src = static_cast<const char*>(t.raw_data());
  for (size_t i = 0; i < outs.size(); ++i) {
    tide::Tensor o = OutVar(ctx, outs[i]).GetTensor();
    tide::Dims d = t.dims();
    d[0] = sections[i];
    o.Resize(d);
    void* p = o.mutable_data(t.dtype(), t.place());
    std::memcpy(p, src, static_cast<size_t>(sections[i]) * row_bytes);
    src += static_cast<size_t>(sections[i]) * row_bytes;
  }
}

template <typename T>
void Scale(void* data, int64_t n, float s) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] * s);
}

void MergeSparseGradsRun(tide::OpRunContext& ctx) {
  const auto xs = ctx.Inputs("X");
  const std::string out = ctx.Outputs("Out").at(0);
  const float scale = ctx.Attr<float>("scale");
  std::vector<tide::SelectedRows> parts;
  for (const auto& x : xs) {
    tide::Variable v = ctx.scope().FindVar(x);
    TIDE_CHECK(v && v.IsSelectedRows(), "op 'merge_sparse_grads': X ('", x,
               "') is not a SelectedRows");
    TIDE_CHECK(x != out, "op 'merge_sparse_grads': Out may not be one of X ('", x, "')");
    parts.push_back(v.GetSelectedRows());
  }
  TIDE_CHECK(!parts.empty(), "op 'merge_sparse_grads' needs at least one X");
  tide::Tensor v0 = parts[0].value();
  TIDE_CHECK(v0.initialized() && v0.rank() >= 1, "op 'merge_sparse_grads': '", xs[0],
             "' holds no data");
  TIDE_CHECK(IsHostPlace(v0.place()), "op 'merge_sparse_grads' runs on host tensors only");
  std::vector<int64_t> rows;
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    tide::Tensor v = parts[i].value();
    tide::Dims a = v.dims(), b = v0.dims();
    a[0] = b[0] = 0;
    TIDE_CHECK(v.dtype() == v0.dtype() && a == b && parts[i].height() == parts[0].height(),
               "op 'merge_sparse_grads': '", xs[i], "' does not match '", xs[0],
               "' (dtype, row "
               "shape or height)");
    auto r = parts[i].rows();
    rows.insert(rows.end(), r.begin(), r.end());
    total += v.dim(0);
  }
  tide::SelectedRows o = OutVar(ctx, out).GetSelectedRows();
  o.set_height(parts[0].height());
  o.set_rows(rows);
  tide::Tensor ov = o.value();
  tide::Dims d = v0.dims();
  d[0] = total;
  ov.Resize(d);
  char* p = static_cast<char*>(ov.mutable_data(v0.dtype(), v0.place()));
  for (auto& part : parts) {
    tide::Tensor v = part.value();
    size_t bytes = static_cast<size_t>(v.numel()) * tide::DataTypeSize(v.dtype());
    if (bytes) std::memcpy(p, v.raw_data(), bytes);
    p += bytes;
  }
  if (scale != 1.0f) {
    if (v0.dtype() == TIDE_FP32)
      Scale<float>(ov.mutable_data(v0.dtype(), v0.place()), ov.numel(), scale);
    else if (v0.dtype() == TIDE_FP64)
      Scale<double>(ov.mutable_data(v0.dtype(), v0.place()), ov.numel(), scale);
    else
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op 'merge_sparse_grads': cannot scale ",
                 tide::DataTypeName(v0.dtype()));
  }
}

}  // namespace
}  // namespace tide_zmq

TIDE_REGISTER_OP(tide::OpSchema("split_byref")
                     .Comment("Splits X along dim 0 into the Out tensors (rows copied: the SDK has "
                              "no sliced views).")
                     .Input("X", "the tensor to split")
                     .Output("Out", "its row blocks")
                     .AsDuplicable()
                     .Attr("sections", std::vector<int32_t>{},
                           "rows of each Out; empty: equal parts")
                     .Run(tide_zmq::SplitByrefRun));

TIDE_REGISTER_OP(tide::OpSchema("merge_sparse_grads")
                     .Comment("Out = the SelectedRows X concatenated (rows and values), values * "
                              "scale: the sum of sparse gradients, then the 1/trainers scale.")
                     .Input("X", "SelectedRows gradients")
                     .AsDuplicable()
                     .Output("Out", "their merged SelectedRows")
                     .Attr("scale", 1.0f, "multiplies the merged values")
                     .Run(tide_zmq::MergeSparseGradsRun));
