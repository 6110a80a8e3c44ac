// tide/ops/norm.hpp: the shape rules of Fluid's layer_norm, group_norm and instance_norm, with
// their errors, for every implementation of them: X seen as `groups` blocks of `size` elements
// normalised on their own (contiguous, but for group_norm's NHWC), and the Scale/Bias element an
// element of X uses (the index functions run on the host and on a device); and the ops and their
// grads as every kernel reads their inputs (checked, outputs allocated on the kernel's place).
#ifndef TIDE_OPS_NORM_HPP_
#define TIDE_OPS_NORM_HPP_

#include <cstdint>
#include <string>
#include <tide/ops/data_layout.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

struct NormGroups {
  int64_t groups = 1, size = 1;  // blocks normalised on their own
  int64_t affine = 1;            // Scale/Bias length
  int64_t inner = 1;             // elements per channel (group/instance norm); 0 for layer_norm
  // group_norm's NHWC: X is [N, ..., C]; group k holds the channels of one group at every pixel
  // of one sample, strided in X.
  bool channels_last = false;

  // The Scale/Bias index of X's element e.
  TIDE_OPS_HOST_DEVICE int64_t AffineIndex(int64_t e) const {
    if (channels_last) return e % affine;
    return inner ? (e / inner) % affine : e % size;
  }
  // The group of X's element e.
  TIDE_OPS_HOST_DEVICE int64_t GroupOf(int64_t e) const {
    if (!channels_last) return e / size;
    const int64_t per = size / inner;  // channels per group
    return e / (inner * affine) * (affine / per) + e % affine / per;
  }
  // X's offset of the j-th element (j in [0, size)) of group k, in the order a group is summed.
  TIDE_OPS_HOST_DEVICE int64_t Offset(int64_t k, int64_t j) const {
    if (!channels_last) return k * size + j;
    const int64_t per = size / inner, per_sample = affine / per;
    return (k / per_sample * inner + j / per) * affine + k % per_sample * per + j % per;
  }
};

// layer_norm: X flattened to [left, right] at begin_norm_axis; each row is a group; Scale and
// Bias have `right` elements.
inline NormGroups LayerNormGroups(const char* op, const Dims& x, int begin_norm_axis) {
  TIDE_CHECK(begin_norm_axis >= 1 && begin_norm_axis <= static_cast<int>(x.size()), "op '", op,
             "': begin_norm_axis ", begin_norm_axis, " must be in [1, rank] for X ", ToString(x));
  NormGroups g;
  g.groups = DimsProductOrUnknown(x, 0, begin_norm_axis);
  g.size = DimsProductOrUnknown(x, begin_norm_axis, x.size());
  g.affine = g.size;
  g.inner = 0;
  return g;
}

// group_norm (groups > 0) and instance_norm (groups = C): X [N, C, ...], or [N, ..., C] when
// channels_last (group_norm's NHWC); each (sample, group) is a group; Scale and Bias have C
// elements.
inline NormGroups ChannelNormGroups(const char* op, const Dims& x, int64_t groups,
                                    bool channels_last = false) {
  TIDE_CHECK(x.size() >= 2, "op '", op, "': X must be ",
             channels_last ? "[N, ..., C]" : "[N, C, ...]", ", got ", ToString(x));
  const int64_t c = channels_last ? x.back() : x[1];
  if (groups <= 0) groups = c;  // instance_norm
  TIDE_CHECK(c < 0 || (groups >= 1 && c % groups == 0), "op '", op, "': groups (", groups,
             ") must divide the channels (", c, ")");
  NormGroups g;
  g.channels_last = channels_last;
  g.inner = channels_last ? DimsProductOrUnknown(x, 1, x.size() - 1)
                          : DimsProductOrUnknown(x, 2, x.size());
  g.affine = c;
  g.groups = x[0] < 0 ? -1 : x[0] * groups;
  g.size = (c < 0 || g.inner < 0) ? -1 : (c / groups) * g.inner;
  return g;
}

// The op's groups from its type and attributes (`ctx` a kernel or shape-inference context).
template <typename Ctx>
NormGroups NormGroupsOf(const Ctx& ctx, const Dims& x) {
  const std::string type = ctx.op_type();
  if (type.rfind("layer_norm", 0) == 0)
    return LayerNormGroups(ctx.op_type(), x, ctx.template Attr<int32_t>("begin_norm_axis"));
  if (type.rfind("group_norm", 0) == 0) {
    const int32_t groups = ctx.template Attr<int32_t>("groups");
    TIDE_CHECK(groups >= 1, "op '", ctx.op_type(), "': groups must be >= 1, got ", groups);
    const bool nhwc =
        ChannelsLast(ctx.op_type(), "data_layout", ctx.template Attr<std::string>("data_layout"));
    return ChannelNormGroups(ctx.op_type(), x, groups, nhwc);
  }
  return ChannelNormGroups(ctx.op_type(), x, 0);
}

// Fluid's output names: the mean and the variance (layer/group norm) or the inverse std
// (instance_norm's SavedVariance).
inline bool IsInstanceNorm(const char* op) {
  return std::string(op).rfind("instance_norm", 0) == 0;
}
inline const char* NormMeanName(const char* op) {
  return IsInstanceNorm(op) ? "SavedMean" : "Mean";
}
inline const char* NormVarName(const char* op) {
  return IsInstanceNorm(op) ? "SavedVariance" : "Variance";
}

// Mean/Variance dims: [N, groups] for group_norm, one per group otherwise.
template <typename Ctx>
Dims NormStatDims(const Ctx& ctx, const Dims& x, const NormGroups& g) {
  if (std::string(ctx.op_type()) == "group_norm")
    return {x[0], static_cast<int64_t>(ctx.template Attr<int32_t>("groups"))};
  return {g.groups};
}

// Scale or Bias, when given: `affine` values (else null).
template <typename T>
const T* NormAffine(const KernelContext& ctx, const NormGroups& g, const char* param) {
  if (!ctx.HasInput(param)) return nullptr;
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == g.affine, "op '", ctx.op_type(), "': ", param, " ('",
             ctx.InputName(param), "') has ", t.numel(), " elements, expected ", g.affine);
  return t.data<T>();
}

// layer_norm / group_norm / instance_norm: X, Scale and Bias (optional), epsilon; Y allocated. The
// kernel allocates the statistics it is asked for (NormMeanName, NormVarName; NormStatDims). X and
// Y are T; Scale and Bias P: T, or float32 for a float16 / bfloat16 X (AsFloat32Param, as Paddle).
template <typename T, typename P = T>
struct NormArgs {
  NormGroups g;
  Dims x_dims;
  double eps;
  const T* x;
  const P* scale;
  const P* bias;
  T* y;
};

template <typename T, typename P = T>
NormArgs<T, P> GetNormArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  NormArgs<T, P> a;
  a.x_dims = x.dims();
  a.g = NormGroupsOf(ctx, a.x_dims);
  a.scale = NormAffine<P>(ctx, a.g, "Scale");
  a.bias = NormAffine<P>(ctx, a.g, "Bias");
  a.eps = ctx.Attr<float>("epsilon");
  a.x = x.data<T>();
  a.y = ctx.Output("Y").mutable_data<T>(a.x_dims, ctx.place());
  return a;
}

// The grads: X, Y@GRAD (X's dims), Scale and Bias (checked as the forward's), and X@GRAD,
// Scale@GRAD and Bias@GRAD where wanted (null else). Scale, Bias and their grads are P (as
// NormArgs).
template <typename T, typename P = T>
struct NormGradArgs {
  NormGroups g;
  Dims x_dims;
  double eps;
  const T* x;
  const T* dy;
  const P* scale;
  T* dx;
  P* dscale;
  P* dbias;
};

template <typename T, typename P = T>
NormGradArgs<T, P> GetNormGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dy = ctx.Input(GradVarName("Y").c_str());
  NormGradArgs<T, P> a;
  a.x_dims = x.dims();
  a.g = NormGroupsOf(ctx, a.x_dims);
  CheckGradDims(ctx.op_type(), "Y@GRAD", dy.dims(), a.x_dims);
  a.eps = ctx.Attr<float>("epsilon");
  a.scale = NormAffine<P>(ctx, a.g, "Scale");
  NormAffine<P>(ctx, a.g, "Bias");
  a.x = x.data<T>();
  a.dy = dy.data<T>();
  a.dx = OptionalGrad<T>(ctx, "X", a.x_dims);
  auto grad_of = [&](const char* p) -> P* {  // Scale@GRAD / Bias@GRAD: only with Scale / Bias
    Tensor t = ctx.OptionalOutput(GradVarName(p).c_str());
    return t ? t.template mutable_data<P>(ctx.Input(p).dims(), ctx.place()) : nullptr;
  };
  a.dscale = grad_of("Scale");
  a.dbias = grad_of("Bias");
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_NORM_HPP_
