// tide/ops/loss.hpp: the shape rules of the standard losses: softmax_with_cross_entropy (Logits
// seen as [pre, K, post] around the class axis; Label fits Logits) and cross_entropy (X [..., D];
// Label fits X), unknown (-1) dims passing at compile time; the labels' data (int64 class ids or
// a distribution), and softmax_with_cross_entropy and its grad as every kernel reads them.
#ifndef TIDE_OPS_LOSS_HPP_
#define TIDE_OPS_LOSS_HPP_

#include <cstddef>
#include <cstdint>
#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// Logits viewed as [pre, K, post] around the class axis (-1 where unknown).
struct ClassView {
  int64_t pre, k, post;
};

// softmax_with_cross_entropy's view of Logits; the normalised class axis in `axis`.
inline ClassView GetClassView(const char* op, const Dims& logits, int axis_attr, int* axis) {
  TIDE_CHECK(logits.size() >= 1, "op '", op, "': Logits must have rank >= 1");
  *axis = NormAxis(op, axis_attr, logits.size());
  return {DimsProductOrUnknown(logits, 0, *axis), logits[*axis],
          DimsProductOrUnknown(logits, *axis + 1, logits.size())};
}

// softmax_with_cross_entropy: soft labels have Logits' dims, hard ones 1 on the class axis.
inline void CheckSoftmaxLabel(const char* op, const Dims& logits, const Dims& label, int axis,
                              bool soft) {
  bool ok = label.size() == logits.size();
  for (size_t i = 0; ok && i < label.size(); ++i) {
    int64_t want = (static_cast<int>(i) == axis && !soft) ? 1 : logits[i];
    ok = DimsCompatible(label[i], want);
  }
  TIDE_CHECK(ok, "op '", op, "': Label ", ToString(label), " does not fit Logits ",
             ToString(logits),
             soft ? ": soft labels have Logits' dims"
                  : ": hard labels have Logits' dims with 1 on the class axis");
}

// cross_entropy: X is [..., D] (rank >= 2); soft labels have X's dims, hard ones X's dims with
// a last dim of 1, or X's dims without the last (rank(X) - 1, as Fluid accepts).
inline void CheckCrossEntropyLabel(const char* op, const Dims& x, const Dims& label, bool soft) {
  TIDE_CHECK(x.size() >= 2, "op '", op, "': X must have rank >= 2 ([N, D]), got ", ToString(x));
  bool ok = label.size() == x.size() || (!soft && label.size() + 1 == x.size());
  for (size_t i = 0; ok && i < label.size(); ++i)
    ok = DimsCompatible(label[i], (i + 1 == x.size() && !soft) ? 1 : x[i]);
  TIDE_CHECK(ok, "op '", op, "': Label ", ToString(label), " does not fit X ", ToString(x),
             soft ? ": soft labels have X's dims"
                  : ": hard labels have X's dims with a last dim of 1 (or without the last dim)");
}

// A Label's data: int64 class ids (`hard`) or, with soft_label, a distribution of X's type
// (`soft`); the other is null.
template <typename T>
struct LabelData {
  const T* soft = nullptr;
  const int64_t* hard = nullptr;
};

template <typename T>
LabelData<T> GetLabelData(const KernelContext& ctx, const Tensor& label, bool soft) {
  LabelData<T> l;
  if (soft) {
    l.soft = label.data<T>();
    return l;
  }
  TIDE_CHECK(label.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': Label ('",
             ctx.InputName("Label"), "') must be int64 with soft_label = false, got ",
             DataTypeName(label.dtype()));
  l.hard = label.data<int64_t>();
  return l;
}

// Checks hard labels on the host: each a class in [0, k) or ignore_index.
inline void CheckHardLabels(const KernelContext& ctx, const int64_t* label, int64_t n, int64_t k,
                            int64_t ignore) {
  for (int64_t i = 0; i < n; ++i)
    TIDE_CHECK(label[i] == ignore || (label[i] >= 0 && label[i] < k), "op '", ctx.op_type(),
               "': Label ('", ctx.InputName("Label"), "')[", i, "] = ", label[i],
               " is not a class in [0, ", k, ") nor ignore_index (", ignore, ")");
}

// softmax_with_cross_entropy: Logits as [pre, K, post] rows, Label, and Softmax (Logits' dims)
// and Loss (1 on the class axis) allocated on the kernel's place. Rows with no classes (K = 0)
// have no softmax: an error.
template <typename T>
struct SwceArgs {
  ClassView v;
  int axis;
  int64_t ignore;
  const T* logits;
  LabelData<T> label;
  T* softmax;
  T* loss;
  int64_t rows() const { return v.pre * v.post; }
};

// Both ops' view of Logits (or Softmax, its dims) and their Label, checked; the class axis in
// `axis`, and a's view and ignore_index set.
template <typename Args>
void ReadSwceView(const KernelContext& ctx, const Dims& x, const Dims& label, int* axis, Args* a) {
  const char* op = ctx.op_type();
  a->v = GetClassView(op, x, ctx.Attr<int32_t>("axis"), axis);
  CheckSoftmaxLabel(op, x, label, *axis, ctx.Attr<bool>("soft_label"));
  a->ignore = ctx.Attr<int32_t>("ignore_index");
}

// The check-only half of GetSwceArgs (nothing allocated; a kernel that may decline by shape reads
// this first): the view of Logits, the class axis, ignore_index and Loss's dims.
struct SwceShape {
  ClassView v;
  int axis = 0;
  int64_t ignore = 0;
  Dims loss_dims;
  int64_t rows() const { return v.pre * v.post; }
};

inline SwceShape GetSwceShape(const KernelContext& ctx) {
  const Dims logits = ctx.Input("Logits").dims();
  SwceShape s;
  ReadSwceView(ctx, logits, ctx.Input("Label").dims(), &s.axis, &s);
  TIDE_CHECK(s.v.k > 0 || s.rows() == 0, "op '", ctx.op_type(), "': Logits ", ToString(logits),
             " has no classes on axis ", s.axis);
  s.loss_dims = logits;
  s.loss_dims[s.axis] = 1;
  return s;
}

template <typename T>
SwceArgs<T> GetSwceArgs(const KernelContext& ctx, const SwceShape& s) {
  Tensor logits = ctx.Input("Logits"), label = ctx.Input("Label");
  SwceArgs<T> a;
  a.v = s.v;
  a.axis = s.axis;
  a.ignore = s.ignore;
  a.logits = logits.data<T>();
  a.label = GetLabelData<T>(ctx, label, ctx.Attr<bool>("soft_label"));
  a.softmax = ctx.Output("Softmax").mutable_data<T>(logits.dims(), ctx.place());
  a.loss = ctx.Output("Loss").mutable_data<T>(s.loss_dims, ctx.place());
  return a;
}
template <typename T>
SwceArgs<T> GetSwceArgs(const KernelContext& ctx) {
  return GetSwceArgs<T>(ctx, GetSwceShape(ctx));
}

// softmax_with_cross_entropy_grad: Softmax, Label, Loss@GRAD (one value per row), and
// Logits@GRAD allocated with Softmax's dims.
template <typename T>
struct SwceGradArgs {
  ClassView v;
  int64_t ignore;
  const T* softmax;
  LabelData<T> label;
  const T* dloss;
  T* dlogits;
  int64_t rows() const { return v.pre * v.post; }
};

// The check-only half of GetSwceGradArgs: the view of Softmax, ignore_index, and Loss@GRAD checked
// to hold one value per row.
struct SwceGradShape {
  ClassView v;
  int64_t ignore = 0;
  int64_t rows() const { return v.pre * v.post; }
};

inline SwceGradShape GetSwceGradShape(const KernelContext& ctx) {
  const Dims softmax = ctx.Input("Softmax").dims();
  Tensor dloss = ctx.Input(GradVarName("Loss").c_str());
  SwceGradShape s;
  int axis = 0;
  ReadSwceView(ctx, softmax, ctx.Input("Label").dims(), &axis, &s);
  TIDE_CHECK(dloss.numel() == s.rows(), "op '", ctx.op_type(), "': Loss@GRAD ",
             ToString(dloss.dims()), " does not hold one value per row of Softmax ",
             ToString(softmax));
  return s;
}

template <typename T>
SwceGradArgs<T> GetSwceGradArgs(const KernelContext& ctx, const SwceGradShape& s) {
  Tensor softmax = ctx.Input("Softmax"), label = ctx.Input("Label");
  Tensor dloss = ctx.Input(GradVarName("Loss").c_str());
  SwceGradArgs<T> a;
  a.v = s.v;
  a.ignore = s.ignore;
  a.softmax = softmax.data<T>();
  a.dloss = dloss.data<T>();
  a.dlogits =
      ctx.Output(GradVarName("Logits").c_str()).mutable_data<T>(softmax.dims(), ctx.place());
  a.label = GetLabelData<T>(ctx, label, ctx.Attr<bool>("soft_label"));
  return a;
}
template <typename T>
SwceGradArgs<T> GetSwceGradArgs(const KernelContext& ctx) {
  return GetSwceGradArgs<T>(ctx, GetSwceGradShape(ctx));
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_LOSS_HPP_
