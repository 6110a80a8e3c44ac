// pool_kernels.cc: pool2d and pool2d_grad on oneDNN pooling, with Fluid 1.x's window rules (see
// plugins/ops_nn/pool_op.cc): max never picks padding; an exclusive avg divides by the window's
// cells inside the image, a non-exclusive one by kh * kw; ceil_mode widens the right padding;
// global pooling is one window; adaptive pooling is a plain pooling when the sizes divide.
// What oneDNN cannot express (uneven adaptive windows, windows wholly in the padding) runs as a
// loop over plain data, with the same results as the plain kernel. Paddle 2.x's NHWC data_format
// runs through oneDNN's nhwc tag (the loop on an NCHW copy); NHWC outputs are written plain, NCHW
// ones (Out, X@GRAD) in the format oneDNN picks.
#include <algorithm>
#include <tide/kernels/pool.hpp>

#include "pool.h"
#include "pool_channels_last.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
constexpr auto f32 = memory::data_type::f32;  // the loop fallback's data

// The loop fallback computes in float32: a bfloat16 run of such a window declines to the float32
// kernel on widened data, which runs the same loop.
template <typename T>
void DeclineLoopInBf16(const char* op) {
  if (!kFloat32Kernel<T>)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
               "' (oneDNN bfloat16 kernel): uneven adaptive windows or windows wholly in the "
               "padding run as a float32 loop");
}

// [N, H, W, C] <-> [N, C, H, W].
Dims ToNchw(const Dims& d) { return d.size() == 4 ? Dims{d[0], d[3], d[1], d[2]} : d; }
Dims ToNhwc(const Dims& d) { return {d[0], d[2], d[3], d[1]}; }

}  // namespace

PoolParams GetPoolParams(const KernelContext& ctx, const Dims& x_dims) {
  PoolParams p;
  const bool nhwc = DataFormatNhwc(ctx);
  const Dims x = nhwc ? ToNchw(x_dims) : x_dims;
  static_cast<tide::ops::PoolGeom&>(p) = tide::ops::GetPoolGeom(ctx, ctx.op_type(), x);
  p.nhwc = nhwc;
  if (ctx.Attr<bool>("global_pooling")) return p;
  if (p.adaptive) {
    if (p.h % p.oh == 0 && p.w % p.ow == 0) {  // even windows: a plain pooling
      p.kh = p.sh = p.h / p.oh;
      p.kw = p.sw = p.w / p.ow;
      p.ph = p.pw = 0;
    } else {
      p.onednn = false;
    }
    return p;
  }
  // The right padding that makes oneDNN's window count equal Fluid's: the given (bottom, right)
  // one under floor rounding, wider under ceil_mode.
  p.pr_h = std::max(p.ph_end, (p.oh - 1) * p.sh + p.kh - p.h - p.ph);
  p.pr_w = std::max(p.pw_end, (p.ow - 1) * p.sw + p.kw - p.w - p.pw);
  // A window wholly in the padding (Fluid: output 0, no gradient) is beyond oneDNN's rules.
  if (p.ph >= p.kh || p.pw >= p.kw || (p.oh - 1) * p.sh - p.ph >= p.h ||
      (p.ow - 1) * p.sw - p.pw >= p.w)
    p.onednn = false;
  return p;
}

algorithm PoolAlgo(const PoolParams& p) {
  if (p.max) return algorithm::pooling_max;
  return p.exclusive ? algorithm::pooling_avg_exclude_padding
                     : algorithm::pooling_avg_include_padding;
}

Key PoolKey(const char* what, const Tensor& x, const PoolParams& p) {
  Key k(what);
  k(x)(p.kh)(p.kw)(p.sh)(p.sw)(p.ph)(p.pw)(p.pr_h)(p.pr_w)(p.oh)(p.ow)(int64_t(PoolAlgo(p)))(
      int64_t(p.nhwc));
  return k;
}

dnnl::pooling_forward::desc PoolFwdDesc(prop_kind pk, const PoolParams& p, const memory::desc& src,
                                        const memory::desc& dst) {
  return dnnl::pooling_forward::desc(pk, PoolAlgo(p), src, dst, {p.sh, p.sw}, {p.kh, p.kw},
                                     {p.ph, p.pw}, {p.pr_h, p.pr_w});
}

namespace {

// ---- The loop fallback: Fluid's windows over plain data. ----
void LoopForward(const PoolParams& g, const float* x, float* out) {
  for (int64_t pl = 0; pl < g.n * g.c; ++pl)
    tide::ops::PoolPlane(g, x + pl * g.h * g.w, out + pl * g.oh * g.ow);
}

void LoopBackward(const PoolParams& g, const float* x, const float* dout, float* dx) {
  for (int64_t pl = 0; pl < g.n * g.c; ++pl)
    tide::ops::PoolGradPlane(g, x + pl * g.h * g.w, dout + pl * g.oh * g.ow, dx + pl * g.h * g.w);
}

float* PlainOut(Tensor& t, const Dims& d, const tide::Place& place) {
  t.Resize(d);
  float* p = t.mutable_data<float>(place);
  t.set_layout(TIDE_LAYOUT_ANY);
  t.set_format(0);
  return p;
}

// X (or Out@GRAD) as oneDNN memory of logical NCHW dims, and as plain NCHW data for the loop.
memory ActView(Exec& e, const PoolParams& p, const Tensor& t, const char* op, const char* what) {
  return p.nhwc ? NhwcView(e, t, op, what) : e.View(t, op, what);
}
const float* PlainNchw(Exec& e, const PoolParams& p, const Tensor& t, const char* op,
                       const char* what) {
  memory m = p.nhwc ? NhwcView(e, t, op, what) : PlainView(e, t, op, what);
  if (p.nhwc) {
    const memory::desc d = m.get_desc();
    m = e.Convert(m, memory::desc(d.dims(), f32, Tag::nchw));
  }
  e.Wait();
  return static_cast<const float*>(m.get_data_handle());
}
// Where a loop writes an output of NCHW dims `d`: `out` itself, or (NHWC) a temporary that
// FinishLoop stores into `out`.
float* LoopOut(Exec& e, const PoolParams& p, Tensor& out, const Dims& d, memory* tmp,
               const tide::Place& place) {
  if (!p.nhwc) return PlainOut(out, d, place);
  *tmp = e.TempMemory(memory::desc(ToDnnlDims(d), f32, Tag::nchw));
  return static_cast<float*>(tmp->get_data_handle());
}
void FinishLoop(Exec& e, const PoolParams& p, Tensor& out, const Dims& d, const memory& tmp,
                const tide::Place& place) {
  if (!p.nhwc) return;
  StoreNhwc(e, tmp, out, ToNhwc(d), place);
  e.Wait();
}

template <typename T>
memory::desc ChannelsLast(const Dims& d) {
  return memory::desc(ToDnnlDims(d), DnnlTypeOf<T>(), Tag::acdb);
}

// X holds channels-last data of the kernel's type (acdb) and the op is a 2x2 / stride-2 max
// pooling: pool_channels_last.h's loops run it.
template <typename T>
bool ChannelsLastMaxPool2x2(const PoolParams& p, const Tensor& x, const char* op) {
  if (p.nhwc || !IsBlocked(x) || !tide::kernels::IsMaxPool2x2(p) || x.dims().size() != 4)
    return false;
  return DescOf(x, op, "X") == ChannelsLast<T>(x.dims());
}

struct PoolFwd {
  dnnl::pooling_forward::primitive_desc pd;
  dnnl::pooling_forward prim;
};

// Training's primitives: the forward that writes max pooling's workspace (each window's argmax)
// and the backward that reads it.
struct PoolBwd {
  dnnl::pooling_forward::primitive_desc fwd_pd;
  dnnl::pooling_forward fwd;
  dnnl::pooling_backward::primitive_desc bwd_pd;
  dnnl::pooling_backward bwd;
};

// The geometry's training primitives, shared by the forward kernel (once a grad has run) and the
// grad kernel, so the workspace one writes is the one the other reads.
std::shared_ptr<PoolBwd> TrainingPrimitives(Exec& e, const std::string& key, const PoolParams& p,
                                            const memory::desc& src_md) {
  return e.cache().GetOrCreate<PoolBwd>(key, [&] {
    const memory::dims dst_dims = ToDnnlDims(p.out_dims());
    dnnl::pooling_forward::primitive_desc fwd_pd(
        PoolFwdDesc(prop_kind::forward_training, p, src_md,
                    memory::desc(dst_dims, src_md.data_type(), Tag::any)),
        DefaultAttr(), e.engine());
    dnnl::pooling_backward::primitive_desc bwd_pd(
        dnnl::pooling_backward::desc(PoolAlgo(p), src_md, fwd_pd.dst_desc(), {p.sh, p.sw},
                                     {p.kh, p.kw}, {p.ph, p.pw}, {p.pr_h, p.pr_w}),
        DefaultAttr(), e.engine(), fwd_pd);
    return PoolBwd{fwd_pd, dnnl::pooling_forward(fwd_pd), bwd_pd, dnnl::pooling_backward(bwd_pd)};
  });
}

// Fluid's pool2d_grad has no workspace input: once a geometry's grad has run, its forward keeps
// the workspace in the place's workspace cache (one per geometry) under X's content version, and
// the grad reuses it while X is unchanged; otherwise the grad runs the forward again to make one.
std::string TrainingKey(const Tensor& x, const PoolParams& p) {
  return PoolKey("pool2d_training", x, p).str();
}
bool KeepsWorkspace(Exec& e, const PoolParams& p, const Tensor& x, const std::string& key) {
  return p.max && !p.nhwc && x.content_version() != 0 &&
         e.context().workspaces_wanted.Contains(key);
}

template <typename T>
void PoolKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    PoolParams p = GetPoolParams(ctx, x.dims());
    Exec e(ctx);
    if (ChannelsLastMaxPool2x2<T>(p, x, op)) {
      memory dst = TryOutput(e, out, p.out_dims(), ChannelsLast<T>(p.out_dims()), ctx.place());
      if (dst) {
        MaxPool2x2ChannelsLast(ctx, p, x.data<T>(), static_cast<T*>(dst.get_data_handle()));
        return;
      }
    }
    if (!p.onednn) {
      DeclineLoopInBf16<T>(op);
      const float* xd = PlainNchw(e, p, x, op, "X");
      memory tmp;
      LoopForward(p, xd, LoopOut(e, p, out, p.out_dims(), &tmp, ctx.place()));
      FinishLoop(e, p, out, p.out_dims(), tmp, ctx.place());
      return;
    }
    memory src = ActView(e, p, x, op, "X");
    memory::desc src_md = src.get_desc();
    const std::string training_key = TrainingKey(x, p);
    auto train = KeepsWorkspace(e, p, x, training_key)
                     ? TrainingPrimitives(e, training_key, p, src_md)
                     : nullptr;
    if (train) DeclineReferenceImpl(op, train->fwd_pd);
    memory kept_dst =
        train ? TryOutput(e, out, p.out_dims(), train->fwd_pd.dst_desc(), ctx.place()) : memory();
    if (kept_dst) {  // else an output format Tide cannot store: the inference forward below
      auto ws = e.NewKept(train->fwd_pd.workspace_desc(), x.content_version());
      e.Run(train->fwd, train->fwd_pd,
            {{DNNL_ARG_SRC, src},
             {DNNL_ARG_DST, kept_dst},
             {DNNL_ARG_WORKSPACE, memory(train->fwd_pd.workspace_desc(), e.engine(), ws->data)}});
      e.Wait();  // complete before the grad, maybe on another thread, reads it
      e.context().workspaces.Put(training_key, ws);
      return;
    }
    const memory::dims dst_dims = ToDnnlDims(p.out_dims());
    auto entry = e.cache().GetOrCreate<PoolFwd>(PoolKey(op, x, p).str(), [&] {
      const auto dt = src_md.data_type();
      dnnl::pooling_forward::primitive_desc pd(PoolFwdDesc(prop_kind::forward_inference, p, src_md,
                                                           memory::desc(dst_dims, dt, Tag::any)),
                                               DefaultAttr(), e.engine());
      if (StorableTag(pd.dst_desc(), dst_dims) == Tag::undef)
        pd = dnnl::pooling_forward::primitive_desc(
            PoolFwdDesc(prop_kind::forward_inference, p, src_md,
                        memory::desc(dst_dims, dt, Tag::nchw)),
            DefaultAttr(), e.engine());
      return PoolFwd{pd, dnnl::pooling_forward(pd)};
    });
    DeclineReferenceImpl(op, entry->pd);
    memory dst = p.nhwc ? e.TempMemory(entry->pd.dst_desc())
                        : TryOutput(e, out, p.out_dims(), entry->pd.dst_desc(), ctx.place());
    TIDE_CHECK(dst, "op '", op, "': oneDNN chose an output format Tide cannot store");
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    if (p.nhwc) StoreNhwc(e, dst, out, ToNhwc(p.out_dims()), ctx.place());
    e.Wait();
  });
}

// oneDNN's max-pooling backward needs the forward's workspace (the argmax of each window): the
// one the forward kept (above), or the forward run again here.
template <typename T>
void PoolGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), dout = ctx.Input(tide::GradVarName("Out").c_str());
    Tensor dx = ctx.Output(tide::GradVarName("X").c_str());
    PoolParams p = GetPoolParams(ctx, x.dims());
    tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(),
                             p.nhwc ? ToNhwc(p.out_dims()) : p.out_dims());
    const Dims x_nchw = p.nhwc ? ToNchw(x.dims()) : x.dims();
    Exec e(ctx);
    if (ChannelsLastMaxPool2x2<T>(p, x, op)) {
      memory d = TryOutput(e, dx, x.dims(), ChannelsLast<T>(x.dims()), ctx.place());
      if (d) {
        memory g = e.Convert(e.View(dout, op, "Out@GRAD"), ChannelsLast<T>(p.out_dims()));
        e.Wait();
        MaxPool2x2GradChannelsLast(ctx, p, x.data<T>(), static_cast<const T*>(g.get_data_handle()),
                                   static_cast<T*>(d.get_data_handle()));
        return;
      }
    }
    if (!p.onednn) {
      DeclineLoopInBf16<T>(op);
      const float* xd = PlainNchw(e, p, x, op, "X");
      const float* gd = PlainNchw(e, p, dout, op, "Out@GRAD");
      memory tmp;
      LoopBackward(p, xd, gd, LoopOut(e, p, dx, x_nchw, &tmp, ctx.place()));
      FinishLoop(e, p, dx, x_nchw, tmp, ctx.place());
      return;
    }
    memory src = ActView(e, p, x, op, "X");
    const std::string training_key = TrainingKey(x, p);
    auto entry = TrainingPrimitives(e, training_key, p, src.get_desc());
    DeclineReferenceImpl(op, entry->fwd_pd);  // it may run again, for the workspace
    DeclineReferenceImpl(op, entry->bwd_pd);
    std::unordered_map<int, memory> bwd_args;
    const memory::desc ws_md = entry->fwd_pd.workspace_desc();
    if (ws_md.get_size() > 0) {
      if (p.max && !p.nhwc) e.context().workspaces_wanted.Insert(training_key);
      auto kept = x.content_version() != 0
                      ? e.FindKept(e.context().workspaces, training_key, x.content_version())
                      : nullptr;
      memory ws = kept ? memory(ws_md, e.engine(), kept->data) : e.TempMemory(ws_md);
      if (!kept) {
        memory dst = e.TempMemory(entry->fwd_pd.dst_desc());
        e.Run(entry->fwd, entry->fwd_pd,
              {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_WORKSPACE, ws}});
      }
      bwd_args[DNNL_ARG_WORKSPACE] = ws;
    }
    bwd_args[DNNL_ARG_DIFF_DST] =
        e.Convert(ActView(e, p, dout, op, "Out@GRAD"), entry->bwd_pd.diff_dst_desc());
    bool direct = false;
    memory diff_src = p.nhwc ? e.TempMemory(entry->bwd_pd.diff_src_desc())
                             : StorableOutputOrTemp(e, dx, x.dims(), entry->bwd_pd.diff_src_desc(),
                                                    ctx.place(), &direct);
    bwd_args[DNNL_ARG_DIFF_SRC] = diff_src;
    e.Run(entry->bwd, entry->bwd_pd, bwd_args);
    if (p.nhwc)
      StoreNhwc(e, diff_src, dx, x.dims(), ctx.place());
    else if (!direct)
      StorePlain(e, diff_src, dx, x.dims(), ctx.place());
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL_F32_BF16("pool2d", PoolKernel);
TIDE_MKLDNN_KERNEL_F32_BF16("pool2d_grad", PoolGradKernel);
