// batch_norm_kernels.cc: batch_norm and batch_norm_grad on oneDNN batch normalization with
// Fluid's semantics (plugins/ops_nn/batch_norm_op.cc): training normalises with the batch's
// mean and biased variance and updates the running statistics, MeanOut = Mean * momentum +
// batch mean * (1 - momentum) (likewise VarianceOut); is_test / use_global_stats normalise with
// the running statistics. SavedMean is the mean used, SavedVariance 1 / sqrt(var + epsilon).
// Y keeps X's format (blocked stays blocked); the grads are written plain. Channels are on
// axis 1 (NCHW), or last for a 4-D NHWC X (oneDNN's nhwc tag; Y written plain). As in Paddle,
// trainable_statistics keeps the batch's statistics under is_test, and a MomentumTensor input
// overrides the momentum.
#include <cmath>
#include <cstring>
#include <tide/ops/batch_norm.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

using dnnl::normalization_flags;
using dnnl::prop_kind;
constexpr auto f32 = memory::data_type::f32;

struct BnParams {
  bool nhwc = false;  // X is [N, H, W, C]; x below is its NCHW dims
  Dims x;
  int64_t c;
  float eps, momentum;
  bool global;
};

// The statistics and the momentum are read as tide/ops/batch_norm.hpp reads them for every kernel.
BnParams GetParams(const KernelContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  const std::string layout = ctx.Attr<std::string>("data_layout");
  tide::ops::GetBnView(op, x, layout);  // checks X's rank
  if (layout == "NHWC" && (x.size() == 3 || x.size() == 5))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): data_layout NHWC of rank ",
               x.size(), " is not supported; run it without use_mkldnn");
  BnParams p;
  p.nhwc = layout == "NHWC" && x.size() == 4;
  p.x = p.nhwc ? Dims{x[0], x[3], x[1], x[2]} : x;
  p.c = p.x[1];
  p.eps = ctx.Attr<float>("epsilon");
  p.momentum = tide::ops::BnMomentum<float>(ctx);
  p.global = tide::ops::BnUsesGlobalStats(ctx);
  return p;
}

normalization_flags Flags(bool global) {
  normalization_flags f = normalization_flags::use_scale | normalization_flags::use_shift;
  if (global) f = f | normalization_flags::use_global_stats;
  return f;
}

memory::desc Vec(int64_t c) { return memory::desc({c}, f32, Tag::a); }

// A [C] parameter tensor's values.
memory ParamView(Exec& e, const Tensor& t, int64_t c, const char* op, const char* what) {
  TIDE_CHECK(t.numel() == c, "op '", op, "': ", what, " must hold C = ", c, " values, got dims ",
             tide::ToString(t.dims()));
  memory m = PlainView(e, t, op, what);
  return e.View(Vec(c), m.get_data_handle());
}

float* VecOut(Tensor& t, int64_t c, const tide::Place& place) {
  t.Resize({c});
  float* p = t.mutable_data<float>(place);
  t.set_layout(TIDE_LAYOUT_ANY);
  t.set_format(0);
  return p;
}

int64_t Bits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof(i));
  return i;
}

struct BnFwd {
  dnnl::batch_normalization_forward::primitive_desc pd;
  dnnl::batch_normalization_forward prim;
};

template <typename T>
void BnKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X");
    DeclineEmpty(op, {&x});
    BnParams p = GetParams(ctx, x.dims());
    const int64_t c = p.c;
    Exec e(ctx);
    memory src = p.nhwc ? NhwcView(e, x, op, "X") : e.View(x, op, "X");
    if (!p.nhwc && StorableTag(src.get_desc(), ToDnnlDims(p.x)) == Tag::undef)
      src = PlainView(e, x, op, "X");
    const memory::desc md = src.get_desc();
    memory scale = ParamView(e, ctx.Input("Scale"), c, op, "Scale");
    memory shift = ParamView(e, ctx.Input("Bias"), c, op, "Bias");
    // Copies of the running statistics: MeanOut / VarianceOut are usually the same variables.
    memory run_mean_in = ParamView(e, ctx.Input("Mean"), c, op, "Mean");
    memory run_var_in = ParamView(e, ctx.Input("Variance"), c, op, "Variance");
    e.Wait();
    std::vector<float> run_mean(c), run_var(c);
    std::memcpy(run_mean.data(), run_mean_in.get_data_handle(), c * sizeof(float));
    std::memcpy(run_var.data(), run_var_in.get_data_handle(), c * sizeof(float));

    Key key(op);
    key(p.x)(int64_t(StorableTag(md, ToDnnlDims(p.x))))(Bits(p.eps))(int64_t(p.global))(
        int64_t(p.nhwc))(int64_t(x.dtype()));
    auto entry = e.cache().GetOrCreate<BnFwd>(key.str(), [&] {
      dnnl::batch_normalization_forward::primitive_desc pd(
          dnnl::batch_normalization_forward::desc(
              p.global ? prop_kind::forward_inference : prop_kind::forward_training, md, p.eps,
              Flags(p.global)),
          DefaultAttr(), e.engine());
      return BnFwd{pd, dnnl::batch_normalization_forward(pd)};
    });
    memory mean = p.global ? e.View(Vec(c), run_mean.data()) : e.TempMemory(Vec(c));
    memory var = p.global ? e.View(Vec(c), run_var.data()) : e.TempMemory(Vec(c));
    Tensor y = ctx.Output("Y");
    memory dst = p.nhwc ? e.TempMemory(md) : TryOutput(e, y, p.x, md, ctx.place());
    e.Run(entry->prim, entry->pd,
          {{DNNL_ARG_SRC, src},
           {DNNL_ARG_DST, dst},
           {DNNL_ARG_SCALE, scale},
           {DNNL_ARG_SHIFT, shift},
           {DNNL_ARG_MEAN, mean},
           {DNNL_ARG_VARIANCE, var}});
    if (p.nhwc) StoreNhwc(e, dst, y, x.dims(), ctx.place());
    e.Wait();

    const float* mu = static_cast<const float*>(mean.get_data_handle());
    const float* v = static_cast<const float*>(var.get_data_handle());
    const float mom = p.momentum;
    if (Tensor mo = ctx.OptionalOutput("MeanOut")) {
      float* d = VecOut(mo, c, ctx.place());
      for (int64_t i = 0; i < c; ++i)
        d[i] = p.global ? run_mean[i] : run_mean[i] * mom + mu[i] * (1.0f - mom);
    }
    if (Tensor vo = ctx.OptionalOutput("VarianceOut")) {
      float* d = VecOut(vo, c, ctx.place());
      for (int64_t i = 0; i < c; ++i)
        d[i] = p.global ? run_var[i] : run_var[i] * mom + v[i] * (1.0f - mom);
    }
    if (Tensor sm = ctx.OptionalOutput("SavedMean"))
      std::memcpy(VecOut(sm, c, ctx.place()), mu, c * sizeof(float));
    if (Tensor sv = ctx.OptionalOutput("SavedVariance")) {
      float* d = VecOut(sv, c, ctx.place());
      for (int64_t i = 0; i < c; ++i) d[i] = 1.0f / std::sqrt(v[i] + p.eps);
    }
  });
}

struct BnBwd {
  dnnl::batch_normalization_forward::primitive_desc fwd;
  dnnl::batch_normalization_backward::primitive_desc pd;
  dnnl::batch_normalization_backward prim;
};

// With global statistics the running mean / variance are used (dX = dY * scale * inv_std);
// otherwise the forward's SavedMean and SavedVariance (1 / sqrt(var + eps), turned back into the
// variance oneDNN wants).
template <typename T>
void BnGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), dy = ctx.Input(tide::GradVarName("Y").c_str());
    DeclineEmpty(op, {&x, &dy});
    BnParams p = GetParams(ctx, x.dims());
    const int64_t c = p.c;
    TIDE_CHECK(dy.dims() == x.dims(), "op '", op, "': Y@GRAD has dims ", tide::ToString(dy.dims()),
               ", expected X's ", tide::ToString(x.dims()));
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
    Tensor dscale = ctx.OptionalOutput(tide::GradVarName("Scale").c_str());
    Tensor dbias = ctx.OptionalOutput(tide::GradVarName("Bias").c_str());
    if (!dx && !dscale && !dbias) return;
    Exec e(ctx);
    memory src = p.nhwc ? NhwcView(e, x, op, "X") : e.View(x, op, "X");
    if (!p.nhwc && StorableTag(src.get_desc(), ToDnnlDims(p.x)) == Tag::undef)
      src = PlainView(e, x, op, "X");
    const memory::desc md = src.get_desc();
    memory scale = ParamView(e, ctx.Input("Scale"), c, op, "Scale");
    memory shift = e.TempMemory(Vec(c));  // unused by the backward pass, but part of its args
    memory mean, var;
    if (p.global) {
      mean = ParamView(e, ctx.Input("Mean"), c, op, "Mean");
      var = ParamView(e, ctx.Input("Variance"), c, op, "Variance");
    } else {
      mean = ParamView(e, ctx.Input("SavedMean"), c, op, "SavedMean");
      memory inv_std = ParamView(e, ctx.Input("SavedVariance"), c, op, "SavedVariance");
      var = e.TempMemory(Vec(c));
      e.Wait();
      const float* is = static_cast<const float*>(inv_std.get_data_handle());
      float* vd = static_cast<float*>(var.get_data_handle());
      for (int64_t i = 0; i < c; ++i) vd[i] = 1.0f / (is[i] * is[i]) - p.eps;
    }
    Key key(op);
    key(p.x)(int64_t(StorableTag(md, ToDnnlDims(p.x))))(Bits(p.eps))(int64_t(p.global))(
        int64_t(x.dtype()));
    auto entry = e.cache().GetOrCreate<BnBwd>(key.str(), [&] {
      dnnl::batch_normalization_forward::primitive_desc fwd(
          dnnl::batch_normalization_forward::desc(prop_kind::forward_training, md, p.eps,
                                                  Flags(p.global)),
          DefaultAttr(), e.engine());
      dnnl::batch_normalization_backward::primitive_desc pd(
          dnnl::batch_normalization_backward::desc(prop_kind::backward, md, md, p.eps,
                                                   Flags(p.global)),
          DefaultAttr(), e.engine(), fwd);
      return BnBwd{fwd, pd, dnnl::batch_normalization_backward(pd)};
    });
    const auto& pd = entry->pd;
    memory diff_dst = e.Convert(p.nhwc ? NhwcView(e, dy, op, "Y@GRAD") : e.View(dy, op, "Y@GRAD"),
                                pd.diff_dst_desc());
    bool direct = false;
    memory diff_src = dx && p.nhwc ? e.TempMemory(pd.diff_src_desc())
                      : dx ? PlainOutputOrTemp(e, dx, p.x, pd.diff_src_desc(), ctx.place(), &direct)
                           : e.TempMemory(pd.diff_src_desc());
    memory diff_scale =
        dscale ? e.View(Vec(c), VecOut(dscale, c, ctx.place())) : e.TempMemory(Vec(c));
    memory diff_shift =
        dbias ? e.View(Vec(c), VecOut(dbias, c, ctx.place())) : e.TempMemory(Vec(c));
    e.Run(entry->prim, pd,
          {{DNNL_ARG_SRC, src},
           {DNNL_ARG_MEAN, mean},
           {DNNL_ARG_VARIANCE, var},
           {DNNL_ARG_DIFF_DST, diff_dst},
           {DNNL_ARG_SCALE, scale},
           {DNNL_ARG_SHIFT, shift},
           {DNNL_ARG_DIFF_SRC, diff_src},
           {DNNL_ARG_DIFF_SCALE, diff_scale},
           {DNNL_ARG_DIFF_SHIFT, diff_shift}});
    if (dx && p.nhwc)
      StoreNhwc(e, diff_src, dx, x.dims(), ctx.place());
    else if (dx && !direct)
      StorePlain(e, diff_src, dx, p.x, ctx.place());
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

// bfloat16: X, Y and their grads in bfloat16; Scale, Bias, the statistics and their grads in
// float32 (the op declares them TIDE_ARG_FLOAT32_PARAM, as Paddle's bf16 batch_norm has them).
TIDE_MKLDNN_KERNEL_F32_BF16("batch_norm", BnKernel);
TIDE_MKLDNN_KERNEL_F32_BF16("batch_norm_grad", BnGradKernel);
