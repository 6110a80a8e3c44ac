// layer_norm_kernels.cc: Fluid's layer_norm and layer_norm_grad (plugins/ops_nn/norm_ops.cc) on
// oneDNN layer normalization: X flattened at begin_norm_axis to [left, right]
// (tide/ops/norm.hpp), each row normalised with its mean and biased variance, then Scale and Bias
// (each optional: oneDNN's use_scale / use_shift) of `right` values. Mean and Variance are
// oneDNN's statistics, [left] each. The grad op gets no statistics, so the grad recomputes them
// with a forward pass, as the plain grad does. Everything is read and written plain. In bfloat16,
// X, Y, Mean, Variance and the grads of X are bfloat16 (oneDNN's statistics are float32, rounded
// into Mean and Variance), Scale and Bias and their grads float32 (TIDE_ARG_FLOAT32_PARAM).
#include <cstring>
#include <tide/ops/norm.hpp>

#include "plain_as.h"

namespace tide_mkldnn {
namespace {

using dnnl::normalization_flags;
using dnnl::prop_kind;
constexpr auto f32 = memory::data_type::f32;  // the statistics, Scale and Bias

// Fewer elements than this run faster on the plain kernel (README.md, "Speed").
constexpr int64_t kMinElements = 4096;

struct LnParams {
  int64_t left, right;
  float eps;
  bool scale, shift;
  normalization_flags flags;
  memory::desc data, stat;  // X's type; float32
  memory::data_type dt;
};

int64_t Bits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof(i));
  return i;
}

// The [left, right] view of X, the flags of the given Scale / Bias. Declines (before anything is
// written) the shapes the plain kernel runs faster.
LnParams GetParams(const KernelContext& ctx, const Dims& x, TideDataType dtype) {
  const char* op = ctx.op_type();
  const tide::ops::NormGroups g =
      tide::ops::LayerNormGroups(op, x, ctx.Attr<int32_t>("begin_norm_axis"));
  LnParams p;
  p.left = g.groups;
  p.right = g.size;
  p.eps = ctx.Attr<float>("epsilon");
  p.scale = ctx.HasInput("Scale");
  p.shift = ctx.HasInput("Bias");
  for (const char* param : {"Scale", "Bias"}) {
    if (!ctx.HasInput(param)) continue;
    const int64_t n = ctx.Input(param).numel();
    TIDE_CHECK(n == p.right, "op '", op, "': ", param, " ('", ctx.InputName(param), "') has ", n,
               " elements, expected ", p.right, " (X ", tide::ToString(x),
               " from begin_norm_axis)");
  }
  // Empty X is the plain kernel's to judge.
  if (dtype == TIDE_FP32 && p.left * p.right < kMinElements)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(x),
               " has fewer than ", kMinElements, " elements (the plain kernel runs it faster)");
  p.flags = normalization_flags::none;
  if (p.scale) p.flags = p.flags | normalization_flags::use_scale;
  if (p.shift) p.flags = p.flags | normalization_flags::use_shift;
  p.dt = ToDnnlType(dtype);
  p.data = memory::desc({p.left, p.right}, p.dt, Tag::ab);
  p.stat = memory::desc({p.left}, f32, Tag::a);
  return p;
}

Key& KeyOf(Key& key, const LnParams& p) {
  return key(p.left)(p.right)(Bits(p.eps))(int64_t(p.scale))(int64_t(p.shift))(int64_t(p.dt));
}

memory::desc Vec(int64_t n) { return memory::desc({n}, f32, Tag::a); }

// Scale / Bias arguments for the flags.
void AddAffine(Exec& e, const KernelContext& ctx, const LnParams& p,
               std::unordered_map<int, memory>* args) {
  const char* op = ctx.op_type();
  if (p.scale)
    (*args)[DNNL_ARG_SCALE] = PlainInputAs(e, ctx.Input("Scale"), Vec(p.right), op, "Scale");
  if (p.shift)
    (*args)[DNNL_ARG_SHIFT] = PlainInputAs(e, ctx.Input("Bias"), Vec(p.right), op, "Bias");
}

struct LnFwd {
  dnnl::layer_normalization_forward::primitive_desc pd;
  dnnl::layer_normalization_forward prim;
};

dnnl::layer_normalization_forward::primitive_desc FwdPd(Exec& e, const LnParams& p,
                                                        prop_kind kind) {
  return dnnl::layer_normalization_forward::primitive_desc(
      dnnl::layer_normalization_forward::desc(kind, p.data, p.stat, p.eps, p.flags), DefaultAttr(),
      e.engine());
}

// A statistic's output: `out` itself when it is float32, else a float32 temporary that
// StoreStat rounds into it.
memory StatOut(Exec& e, Tensor& out, const LnParams& p, const tide::Place& place) {
  if (p.dt == f32) return PlainOutputAs(e, out, {p.left}, p.stat, place);
  return e.TempMemory(p.stat);
}
void StoreStat(Exec& e, const memory& stat, Tensor& out, const LnParams& p,
               const tide::Place& place) {
  if (p.dt == f32) return;
  e.Reorder(stat, PlainOutputAs(e, out, {p.left}, memory::desc({p.left}, p.dt, Tag::a), place));
}

template <typename T>
void LayerNormKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X");
    const Dims d = x.dims();
    const LnParams p = GetParams(ctx, d, x.dtype());
    Tensor mean_out = ctx.OptionalOutput("Mean"), var_out = ctx.OptionalOutput("Variance");
    // forward_training is the kind that writes the statistics out.
    const bool stats = mean_out || var_out;
    Exec e(ctx);
    Key key(op);
    KeyOf(key, p)(int64_t(stats));
    auto entry = e.cache().GetOrCreate<LnFwd>(key.str(), [&] {
      auto pd = FwdPd(e, p, stats ? prop_kind::forward_training : prop_kind::forward_inference);
      return LnFwd{pd, dnnl::layer_normalization_forward(pd)};
    });
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = PlainInputAs(e, x, p.data, op, "X");
    AddAffine(e, ctx, p, &args);
    Tensor y = ctx.Output("Y");
    args[DNNL_ARG_DST] = PlainOutputAs(e, y, d, p.data, ctx.place());
    if (stats) {
      args[DNNL_ARG_MEAN] = mean_out ? StatOut(e, mean_out, p, ctx.place()) : e.TempMemory(p.stat);
      args[DNNL_ARG_VARIANCE] =
          var_out ? StatOut(e, var_out, p, ctx.place()) : e.TempMemory(p.stat);
    }
    const memory mean = stats ? args[DNNL_ARG_MEAN] : memory();
    const memory var = stats ? args[DNNL_ARG_VARIANCE] : memory();
    e.Run(entry->prim, entry->pd, std::move(args));
    if (mean_out) StoreStat(e, mean, mean_out, p, ctx.place());
    if (var_out) StoreStat(e, var, var_out, p, ctx.place());
    e.Wait();
  });
}

struct LnBwd {
  dnnl::layer_normalization_forward::primitive_desc fwd_pd;
  dnnl::layer_normalization_forward fwd;
  dnnl::layer_normalization_backward::primitive_desc pd;
  dnnl::layer_normalization_backward prim;
};

template <typename T>
void LayerNormGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), dy = ctx.Input(tide::GradVarName("Y").c_str());
    const Dims d = x.dims();
    const LnParams p = GetParams(ctx, d, x.dtype());
    tide::ops::CheckGradDims(op, "Y@GRAD", dy.dims(), d);
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
    Tensor dscale = ctx.OptionalOutput(tide::GradVarName("Scale").c_str());
    Tensor dbias = ctx.OptionalOutput(tide::GradVarName("Bias").c_str());
    if (!dx && !dscale && !dbias) return;
    Exec e(ctx);
    Key key(op);
    KeyOf(key, p);
    auto entry = e.cache().GetOrCreate<LnBwd>(key.str(), [&] {
      auto fwd_pd = FwdPd(e, p, prop_kind::forward_training);
      // backward_data when there is no Scale / Bias to differentiate.
      const prop_kind kind = p.scale || p.shift ? prop_kind::backward : prop_kind::backward_data;
      dnnl::layer_normalization_backward::primitive_desc pd(
          dnnl::layer_normalization_backward::desc(kind, p.data, p.data, p.stat, p.eps, p.flags),
          DefaultAttr(), e.engine(), fwd_pd);
      return LnBwd{fwd_pd, dnnl::layer_normalization_forward(fwd_pd), pd,
                   dnnl::layer_normalization_backward(pd)};
    });
    // The statistics, recomputed (the normalised X it writes is not needed).
    memory src = PlainInputAs(e, x, p.data, op, "X");
    memory mean = e.TempMemory(p.stat), var = e.TempMemory(p.stat);
    std::unordered_map<int, memory> fwd_args{{DNNL_ARG_SRC, src},
                                             {DNNL_ARG_DST, e.TempMemory(p.data)},
                                             {DNNL_ARG_MEAN, mean},
                                             {DNNL_ARG_VARIANCE, var}};
    AddAffine(e, ctx, p, &fwd_args);
    e.Run(entry->fwd, entry->fwd_pd, fwd_args);

    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_MEAN, mean},
        {DNNL_ARG_VARIANCE, var},
        {DNNL_ARG_DIFF_DST, PlainInputAs(e, dy, p.data, op, "Y@GRAD")}};
    AddAffine(e, ctx, p, &args);
    args[DNNL_ARG_DIFF_SRC] =
        dx ? PlainOutputAs(e, dx, d, p.data, ctx.place()) : e.TempMemory(p.data);
    if (p.scale)
      args[DNNL_ARG_DIFF_SCALE] =
          dscale ? PlainOutputAs(e, dscale, ctx.Input("Scale").dims(), Vec(p.right), ctx.place())
                 : e.TempMemory(Vec(p.right));
    if (p.shift)
      args[DNNL_ARG_DIFF_SHIFT] =
          dbias ? PlainOutputAs(e, dbias, ctx.Input("Bias").dims(), Vec(p.right), ctx.place())
                : e.TempMemory(Vec(p.right));
    e.Run(entry->prim, entry->pd, std::move(args));
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL_F32_BF16("layer_norm", LayerNormKernel);
TIDE_MKLDNN_KERNEL_F32_BF16("layer_norm_grad", LayerNormGradKernel);
