// common.h: helpers shared by the ops_sequence kernels: reading and checking a tensor's LoD
// (an error names the op, the variable, the LoD and why), row widths, and grad shape rules.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace ops_sequence {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::LoD;
using tide::Tensor;
using tide::ops::DimsProduct;
using Level = std::vector<uint64_t>;

inline std::string LoDString(const LoD& lod) {
  std::string s = "[";
  for (size_t l = 0; l < lod.size(); ++l) {
    s += l ? ", [" : "[";
    for (size_t i = 0; i < lod[l].size(); ++i) s += (i ? ", " : "") + std::to_string(lod[l][i]);
    s += "]";
  }
  return s + "]";
}
inline std::string LevelString(const Level& level) { return LoDString(LoD{level}); }

// Why `lod` is not a valid LoD for a tensor with `rows` rows (each level starts at 0, never
// decreases, and ends where the next level / the rows end); empty when it is valid.
inline std::string LoDError(const LoD& lod, int64_t rows) {
  for (size_t l = 0; l < lod.size(); ++l) {
    const Level& v = lod[l];
    if (v.size() < 2 || v[0] != 0)
      return "level " + std::to_string(l) + " must start at 0 and have at least 2 offsets";
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i] < v[i - 1])
        return "level " + std::to_string(l) + " decreases at position " + std::to_string(i);
  }
  for (size_t l = 0; l < lod.size(); ++l) {
    const bool last = l + 1 == lod.size();
    const uint64_t end = last ? static_cast<uint64_t>(rows) : lod[l + 1].size() - 1;
    if (lod[l].back() != end)
      return "level " + std::to_string(l) + " ends at " + std::to_string(lod[l].back()) + " but " +
             (last ? "the tensor has " : "the next level has ") + std::to_string(end) +
             (last ? " rows" : " sequences");
  }
  return "";
}

// Checks that input `param` ('name') has a valid `lod` for its `rows` rows.
inline void CheckLoD(const KernelContext& ctx, const char* param, const std::string& name,
                     const LoD& lod, int64_t rows) {
  const std::string err = LoDError(lod, rows);
  TIDE_CHECK(err.empty(), "op '", ctx.op_type(), "': ", param, " ('", name, "') has LoD ",
             LoDString(lod), " that does not fit its ", rows, " rows: ", err);
}

// The LoD of input `param`, checked against its rows; at least 1 and at most `max_levels` levels.
inline LoD InputLoD(const KernelContext& ctx, const char* param, size_t max_levels, size_t i = 0) {
  Tensor t = ctx.Input(param, i);
  LoD lod = t.lod();
  const std::string name = ctx.InputName(param, i);
  TIDE_CHECK(!lod.empty(), "op '", ctx.op_type(), "': ", param, " ('", name, "', dims ",
             tide::ToString(t.dims()), ") has no LoD; the op needs a LoDTensor of sequences");
  TIDE_CHECK(lod.size() <= max_levels, "op '", ctx.op_type(), "': ", param, " ('", name,
             "') has a ", lod.size(), "-level LoD ", LoDString(lod), "; the op supports at most ",
             max_levels, " level", max_levels > 1 ? "s" : "");
  TIDE_CHECK(t.rank() >= 1, "op '", ctx.op_type(), "': ", param, " ('", name,
             "') must have rank >= 1");
  CheckLoD(ctx, param, name, lod, t.dim(0));
  return lod;
}

// Elements per row (the product of dims after the first).
inline int64_t RowWidth(const Dims& d) { return d.empty() ? 1 : DimsProduct(d, 1, d.size()); }

// Dims `d` with the first replaced by `rows`.
inline Dims WithRows(Dims d, int64_t rows) {
  if (d.empty())
    d.push_back(rows);
  else
    d[0] = rows;
  return d;
}

// For each forward input `p` whose gradient the grad op outputs: p@GRAD gets p's dims, dtype
// and LoD level.
inline void GradLikeInputs(tide::InferShapeContext& ctx,
                           std::initializer_list<const char*> params) {
  tide::ops::GradsLikeInputs(ctx, params, /*share_lod=*/true);
}

// At run time, a grad output p@GRAD takes p's LoD (the kernel resized it first).
inline void SetGradLoD(const KernelContext& ctx, Tensor& grad, const Tensor& fwd) {
  (void)ctx;
  grad.set_lod(fwd.lod());
}

// X@GRAD = Out@GRAD with X's dims and LoD: the gradient of an op that only relabels X's
// elements (sequence_reshape, lod_reset).
template <typename T>
void RelabelGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  TIDE_CHECK(dout.numel() == x.numel(), "op '", op, "': Out@GRAD ", tide::ToString(dout.dims()),
             " does not have X's ", x.numel(), " elements");
  const T* g = dout.data<T>();
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  if (d != g) std::copy(g, g + x.numel(), d);
  SetGradLoD(ctx, dx, x);
}

// Kernels for float and double.
#define OPS_SEQUENCE_FLOAT_TYPES float, double
// Kernels for data moves (no arithmetic).
#define OPS_SEQUENCE_MOVE_TYPES float, double, int32_t, int64_t

}  // namespace ops_sequence
