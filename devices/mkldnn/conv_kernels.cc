// conv_kernels.cc: conv2d / depthwise_conv2d (Fluid: NCHW Input, [M, C/groups, kh, kw] Filter,
// strides, paddings (asymmetric too), padding_algorithm, dilations, groups; Paddle 2.x's NHWC
// data_format through oneDNN's nhwc tag) and their grads on oneDNN convolutions. NCHW outputs and
// Input@GRAD stay in the format oneDNN picks; NHWC outputs and Filter@GRAD are written plain.
// fused_conv2d (Paddle's fusion op, Output = act(conv + Bias + ResidualData)) runs the same
// convolution with a bias and post-ops: sum (ResidualData copied into the output first), then
// the activation's eltwise chain (eltwise.h's FusedActivationChain: any of Paddle's fused
// activations oneDNN 2.6 computes as Fluid does; others are refused with an error).
#include <optional>
#include <tide/ops/conv.hpp>

#include "conv_common.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

// Issue 17's rule (devices/mkldnn/README.md, "Speed"): shapes where the plain kernel measured
// faster decline to it. A 1x1 stride-1 unpadded conv2d of plain NCHW data is one GEMM per image
// there, while oneDNN reorders it in and out (fused_conv2d keeps oneDNN for its post-ops); an
// NCHW backward-data pass into fewer channels than a channel block (an image's 1 or 3) pads them
// to the block and wastes most of its work.
void DeclineWhereThePlainKernelWins(const char* op, const ConvParams& p, const Tensor& x,
                                    bool input_grad) {
  const bool pointwise = p.f[2] == 1 && p.f[3] == 1 && p.d_strides == memory::dims{1, 1} &&
                         p.pad_l == memory::dims{0, 0} && p.pad_r == memory::dims{0, 0} &&
                         p.d_dils == memory::dims{0, 0} && p.groups == 1;
  if (!p.nhwc && pointwise && !IsBlocked(x) && std::string(op) != "fused_conv2d")
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
               "' (oneDNN kernel): a 1x1 convolution of plain "
               "NCHW Input: the plain kernel's GEMM is faster");
  constexpr int64_t kChannelBlock = 8;
  if (input_grad && !p.nhwc && p.groups == 1 && p.x[1] < kChannelBlock)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): Input@GRAD of ", p.x[1],
               " channel(s), fewer than a channel block: the plain kernel is faster");
}

Key ConvKey(const char* what, const Tensor& x, const ConvParams& p) {
  Key k(what);
  k(x)(p.f)(int64_t(p.dt))(p.d_strides)(p.pad_l)(p.pad_r)(p.d_dils)(p.groups)(int64_t(p.nhwc));
  return k;
}

memory::desc Any(const ConvParams& p, const memory::dims& d) {
  return memory::desc(d, p.dt, Tag::any);
}

// Input (or Output@GRAD) as oneDNN memory of logical NCHW dims.
memory ActView(Exec& e, const ConvParams& p, const Tensor& t, const char* op, const char* what) {
  return p.nhwc ? NhwcView(e, t, op, what) : e.View(t, op, what);
}

memory::desc UserWeightsDesc(const ConvParams& p) { return UserWeightsDesc(p, p.dt); }
// Filter in its own type: fused_conv2d's bfloat16 kernel reads a float32 Filter (AsFloat32Param)
// and reorders it into bfloat16 once, with the blocking (ConvertKept).
memory FilterView(Exec& e, const Tensor& f, const ConvParams& p, const char* op) {
  memory plain = PlainView(e, f, op, "Filter");
  return e.View(UserWeightsDesc(p, ToDnnlType(f.dtype())), plain.get_data_handle());
}

// fused_conv2d's Bias: float32 in both kernels (oneDNN's bfloat16 convolutions add a float32
// bias, as Paddle's; the op declares it AsFloat32Param).
memory::desc BiasDesc(const ConvParams& p) {
  return memory::desc({p.f[0]}, memory::data_type::f32, Tag::a);
}

dnnl::convolution_forward::desc FwdDesc(prop_kind pk, const ConvParams& p, const memory::desc& src,
                                        const memory::desc& dst, bool bias = false,
                                        algorithm alg = algorithm::convolution_direct) {
  if (bias)
    return dnnl::convolution_forward::desc(pk, alg, src, Any(p, p.weights), BiasDesc(p), dst,
                                           p.d_strides, p.d_dils, p.pad_l, p.pad_r);
  return dnnl::convolution_forward::desc(pk, alg, src, Any(p, p.weights), dst, p.d_strides,
                                         p.d_dils, p.pad_l, p.pad_r);
}

// Post-ops in Paddle's order: the residual sum over what dst holds (ResidualData, copied there
// unless Output is ResidualData's own variable), then the activation. (oneDNN 2.6's brgconv
// takes no full-tensor binary add: it would fall back to the reference convolution.)
dnnl::primitive_attr FusionAttr(const Fusion& fu) {
  dnnl::primitive_attr a = DefaultAttr();
  dnnl::post_ops ops;
  if (fu.residual) ops.append_sum(1.0f);
  for (const EltwiseAlgo& e : fu.act) ops.append_eltwise(1.0f, e.algo, e.alpha, e.beta);
  a.set_post_ops(ops);
  return a;
}

struct ConvFwd {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
};

// Winograd F(2x2, 3x3) pays once the output has this many 2x2 tiles to share among the threads
// (ResNet-50's 14x14 maps at batch 1 have 49; its 7x7 ones, 16, ran slower than direct).
constexpr int64_t kMinWinogradTiles = 48;

bool WinogradShape(const ConvParams& p) {
  const int64_t tiles = p.out[0] * ((p.out[2] + 1) / 2) * ((p.out[3] + 1) / 2);
  return p.f[2] == 3 && p.f[3] == 3 && p.d_strides == memory::dims{1, 1} &&
         p.d_dils == memory::dims{0, 0} && p.groups == 1 && tiles >= kMinWinogradTiles;
}

// fused_conv2d's forward is inference's (the InferenceTranspiler's; fuse_conv_bias_act's while
// training reads no workspace of it), so it may take what oneDNN offers for inference alone. Where
// oneDNN has AVX-512 kernels, its activations stay in 16-channel blocks (nChw16c: oneDNN's direct
// AVX-512 kernels and its Winograd both read and write them, so one convolution hands them to the
// next without a reorder), and 3x3 stride-1 convolutions with enough output tiles run Winograd.
// ResNet-50 on 2 AVX-512 cores: batch 16 476-520 -> 417-428 ms, convolutions at batch 1 34.8
// -> 32.0 ms (devices/mkldnn/README.md, "Inference convolutions"). Elsewhere (AVX2: oneDNN 2.6 has
// no float32 Winograd there), or when oneDNN declines these formats, the caller's choice stands:
// none is returned. So with AMX in bfloat16: its brgemm kernels take channels-last (what oneDNN
// picks given `any`), nChw16c only AVX-512's direct ones (AMP's ResNet-ish net, 10 training
// convolutions of 32-64 channels at batch 32: 21.7 ms in nChw16c, 2.5 ms with AMX). fused_conv2d
// also runs while training (fuse_conv_bias_act).
bool InferenceBlocked(const ConvParams& p) {
  if (p.dt == memory::data_type::bf16 && Bf16Isa() == "AMX") return false;
  return !p.nhwc && p.groups == 1 && p.f[0] % 16 == 0 && HasAvx512();
}
std::optional<dnnl::convolution_forward::primitive_desc> InferenceBlockedPd(
    const ConvParams& p, bool bias, const dnnl::primitive_attr& attr, const dnnl::engine& engine) {
  const memory::desc src =
      p.x[1] % 16 == 0 ? memory::desc(p.src, p.dt, Tag::aBcd16b) : Any(p, p.src);
  const memory::desc dst(p.dst, p.dt, Tag::aBcd16b);
  for (algorithm alg : {algorithm::convolution_winograd, algorithm::convolution_direct}) {
    if (alg == algorithm::convolution_winograd && !WinogradShape(p)) continue;
    try {
      dnnl::convolution_forward::primitive_desc pd(
          FwdDesc(prop_kind::forward_inference, p, src, dst, bias, alg), attr, engine);
      if (!IsReferenceImpl(pd)) return pd;
    } catch (const dnnl::error&) {  // no implementation takes it: try the next
    }
  }
  return std::nullopt;
}

int64_t FormatOf(const Tensor& t) { return IsBlocked(t) ? t.format() : 0; }

// The op's kernel state (KernelContext::State): the last run's primitive and the memories it
// ran on. A run with the same Input dims and format and the same Filter bytes (data pointer and
// content version), whose residual (if any) is already in Output, only points the memories at
// this run's tensors and runs: no attribute parsing, cache keys, lookups or descriptor queries
// (ResNet-50 at batch 1: the median gap between two convolution primitives 38 -> 22 us).
struct ConvFwdState {
  Dims x_dims, filter_dims, out_dims;
  int64_t x_format = 0;
  const void* filter = nullptr;
  uint64_t filter_version = 0;
  bool bias = false, residual = false;
  Tag dst_tag = Tag::undef;
  std::shared_ptr<ConvFwd> entry;
  std::shared_ptr<ConvertedCopy> filter_copy;  // the reordered Filter `args` reads, if any
  memory src, dst, bias_mem;
  KeptArgs kept;
};

bool RunPrepared(KernelContext& ctx, ConvFwdState& st) {
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  if (x.dims() != st.x_dims || FormatOf(x) != st.x_format || f.raw_data() != st.filter ||
      f.content_version() != st.filter_version || f.dims() != st.filter_dims ||
      ctx.HasInput("Bias") != st.bias)
    return false;
  Tensor out = ctx.Output("Output");
  if (st.residual) {  // ResidualData's variable must be Output's, already in dst's format
    Tensor r = ctx.Input("ResidualData");
    if (r.raw_data() != out.raw_data() || r.dims() != st.out_dims ||
        FormatOf(r) != (st.dst_tag == PlainTag(st.out_dims.size()) ? 0 : int64_t(st.dst_tag)))
      return false;
  }
  Tensor bias;
  if (st.bias) {
    bias = ctx.Input("Bias");
    if (bias.numel() != st.out_dims[1]) return false;  // the slow path names the error
  }
  out.Resize(st.out_dims);
  void* o = out.mutable_data(x.dtype(), ctx.place());
  SetLayoutFor(out, st.dst_tag, st.out_dims.size());
  st.src.set_data_handle(const_cast<void*>(x.raw_data()));
  st.dst.set_data_handle(o);
  if (st.bias) st.bias_mem.set_data_handle(const_cast<void*>(bias.raw_data()));
  Exec e(ctx);
  st.kept.Run(e, st.entry->prim);
  return true;
}

// Whether a bfloat16 convolution computes in float32 on widened values: without AMX, NCHW.
// oneDNN 2.7's bfloat16 kernels took 2.2x-2.5x float32's time on a Xeon with AVX-512 BF16 (3x3
// convs of 32 and 64 channels at batch 32: forward 8.75 ms against 3.43, backward data 8.2
// against 3.6, backward weights 10.2 against 4.5, and 215 against 3.0 on a stride-2 one). A
// product of two bfloat16s is exact in float32 and the bf16 kernels accumulate in float32 too, so
// the results, rounded to bfloat16, are theirs up to the order of the additions.
bool WidenedBf16(const ConvParams& p) {
  return p.dt == memory::data_type::bf16 && !p.nhwc && Bf16Isa() != "AMX";
}

// `p` computed in float32.
ConvParams Widened(ConvParams p) {
  p.dt = memory::data_type::f32;
  return p;
}

// conv2d's forward (training's: no fusion) in float32 on widened bfloat16 values (WidenedBf16);
// Output in bfloat16, in the float32 result's format where it can be stored (the next oneDNN
// kernel reads it as it is), else plain.
void WidenedBf16Forward(KernelContext& ctx, Exec& e, const Tensor& x, const Tensor& f, Tensor& out,
                        const ConvParams& p, const char* op) {
  const ConvParams wide = Widened(p);
  auto entry = e.cache().GetOrCreate<ConvFwd>(ConvKey("conv2d widened", x, p).str(), [&] {
    dnnl::convolution_forward::primitive_desc pd(
        FwdDesc(prop_kind::forward_inference, wide, Any(wide, p.src), Any(wide, p.dst)),
        DefaultAttr(), e.engine());
    return ConvFwd{pd, dnnl::convolution_forward(pd)};
  });
  const auto& pd = entry->pd;
  memory src = e.Convert(ActView(e, p, x, op, "Input"), pd.src_desc());
  memory w = e.ConvertKept(f, FilterView(e, f, p, op), pd.weights_desc());
  memory result = e.TempMemory(pd.dst_desc());
  e.Run(entry->prim, pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, result}});
  const Tag tag = StorableTag(pd.dst_desc(), p.dst);
  const memory::desc out_md(p.dst, p.dt, tag != Tag::undef ? tag : PlainTag(p.out.size()));
  memory dst = TryOutput(e, out, p.out, out_md, ctx.place());
  TIDE_CHECK(dst, "op '", op, "': oneDNN chose an output format Tide cannot store");
  e.Reorder(result, dst);
  e.Wait();
}

template <typename T>
void ConvKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    if (ConvFwdState* state = ctx.State<ConvFwdState>(); state && RunPrepared(ctx, *state)) return;
    Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
    DeclineEmpty(op, {&x, &f});
    ConvParams p = GetParams(ctx, x, f);
    if (kFloat32Kernel<T>) DeclineWhereThePlainKernelWins(op, p, x, false);
    const Fusion fu = GetFusion(ctx);
    if (fu.bias)
      TIDE_CHECK(fu.bias.numel() == p.f[0], "op '", op, "': Bias must hold M = ", p.f[0],
                 " values, got dims ", tide::ToString(fu.bias.dims()));
    if (fu.residual) {
      const Dims want = p.nhwc ? Nhwc(p.out) : p.out;
      TIDE_CHECK(fu.residual.dims() == want, "op '", op, "': ResidualData must have Output's dims ",
                 tide::ToString(want), ", got ", tide::ToString(fu.residual.dims()));
    }
    Exec e(ctx);
    if (!fu.fused && WidenedBf16(p)) return WidenedBf16Forward(ctx, e, x, f, out, p, op);
    memory residual;
    Key key = ConvKey(op, x, p);
    key(int64_t(bool(fu.bias)))(int64_t(bool(fu.residual)))(int64_t(fu.act.size()));
    for (const EltwiseAlgo& a : fu.act) AddAlgo(key, a);
    if (fu.residual) residual = ActView(e, p, fu.residual, op, "ResidualData");
    auto entry = e.cache().GetOrCreate<ConvFwd>(key.str(), [&] {
      const bool bias = bool(fu.bias);
      auto make = [&](const memory::desc& dst) {
        return dnnl::convolution_forward::primitive_desc(
            FwdDesc(prop_kind::forward_inference, p, Any(p, p.src), dst, bias), FusionAttr(fu),
            e.engine());
      };
      if (fu.fused && InferenceBlocked(p))
        if (auto pd = InferenceBlockedPd(p, bias, FusionAttr(fu), e.engine()))
          return ConvFwd{*pd, dnnl::convolution_forward(*pd)};
      auto pd = make(Any(p, p.dst));
      if (StorableTag(pd.dst_desc(), p.dst) == Tag::undef)  // e.g. padded channel blocks
        pd = make(memory::desc(p.dst, p.dt, Tag::nchw));
      return ConvFwd{pd, dnnl::convolution_forward(pd)};
    });
    const auto& pd = entry->pd;
    memory src = e.Convert(ActView(e, p, x, op, "Input"), pd.src_desc());
    std::shared_ptr<ConvertedCopy> filter_copy;
    memory w = e.ConvertKept(f, FilterView(e, f, p, op), pd.weights_desc(), &filter_copy);
    // Output may be ResidualData's own variable (the transpiler's in-place residual): then the
    // sum reads dst as it is, unless its format changes, which needs a copy first.
    const bool in_place = fu.residual && !p.nhwc && residual.get_data_handle() == out.raw_data();
    if (in_place && residual.get_desc() != pd.dst_desc())
      residual = e.Convert(residual, pd.dst_desc());
    memory dst =
        p.nhwc ? e.TempMemory(pd.dst_desc()) : TryOutput(e, out, p.out, pd.dst_desc(), ctx.place());
    TIDE_CHECK(dst, "op '", op, "': oneDNN chose an output format Tide cannot store");
    TIDE_CHECK(!in_place || residual.get_data_handle() != out.raw_data() ||
                   dst.get_data_handle() == residual.get_data_handle(),
               "op '", op, "': Output, ResidualData's variable, moved when it was written");
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
    if (fu.bias) {
      memory b = PlainView(e, fu.bias, op, "Bias");
      args[DNNL_ARG_BIAS] = e.Convert(
          e.View(memory::desc({p.f[0]}, b.get_desc().data_type(), Tag::a), b.get_data_handle()),
          BiasDesc(p));
    }
    if (fu.residual && residual.get_data_handle() != dst.get_data_handle())
      e.Reorder(residual, dst);  // the sum post-op adds what dst holds
    const bool keep = !p.nhwc && src.get_data_handle() == x.raw_data() &&
                      f.content_version() != 0 && (!fu.residual || in_place);
    if (keep) {  // what the next run with the same inputs reuses (RunPrepared)
      auto st = std::make_unique<ConvFwdState>();
      st->x_dims = x.dims();
      st->filter_dims = f.dims();
      st->out_dims = p.out;
      st->x_format = FormatOf(x);
      st->filter = f.raw_data();
      st->filter_version = f.content_version();
      st->bias = bool(fu.bias);
      st->residual = bool(fu.residual);
      st->dst_tag = StorableTag(pd.dst_desc(), p.dst);
      st->entry = entry;
      st->filter_copy = filter_copy;
      st->src = src;
      st->dst = dst;
      if (fu.bias) st->bias_mem = args[DNNL_ARG_BIAS];
      st->kept.Keep(args, pd, e.engine());
      ctx.SetState(std::move(st));
    }
    e.Run(entry->prim, pd, std::move(args));
    if (p.nhwc) StoreNhwc(e, dst, out, Nhwc(p.out), ctx.place());
    e.Wait();
  });
}

struct ConvBwd {
  dnnl::convolution_backward_data::primitive_desc data_pd;
  dnnl::convolution_backward_data data;
  dnnl::convolution_backward_weights::primitive_desc weights_pd;
  dnnl::convolution_backward_weights weights;
};

// The backward passes in the activation format the forward kernel's convolution keeps (oneDNN
// picks per ISA: nhwc for AVX-512's brgconv, nChw8c/16c blocks for the jit kernels), so they
// read the forward's data and write what the next oneDNN grad kernel reads without reorders;
// where oneDNN has no backward for that format (or only its reference loop), the formats it
// prefers ("any").
ConvBwd MakeConvBwd(const ConvParams& p, const dnnl::engine& eng) {
  auto make_with = [&](const ConvParams& q, const memory::desc& src, const memory::desc& dst) {
    dnnl::convolution_forward::primitive_desc fwd(FwdDesc(prop_kind::forward_training, q, src, dst),
                                                  DefaultAttr(), eng);
    dnnl::convolution_backward_data::primitive_desc data_pd(
        dnnl::convolution_backward_data::desc(algorithm::convolution_direct, src, Any(q, q.weights),
                                              dst, q.d_strides, q.d_dils, q.pad_l, q.pad_r),
        DefaultAttr(), eng, fwd);
    dnnl::convolution_backward_weights::primitive_desc weights_pd(
        dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, src,
                                                 Any(q, q.weights), dst, q.d_strides, q.d_dils,
                                                 q.pad_l, q.pad_r),
        DefaultAttr(), eng, fwd);
    return ConvBwd{data_pd, dnnl::convolution_backward_data(data_pd), weights_pd,
                   dnnl::convolution_backward_weights(weights_pd)};
  };
  auto make = [&](const memory::desc& src, const memory::desc& dst) {
    return make_with(p, src, dst);
  };
  // bfloat16 without AMX: both passes in float32 on the widened values (WidenedBf16).
  if (WidenedBf16(p)) {
    const ConvParams wide = Widened(p);
    return make_with(wide, Any(wide, wide.src), Any(wide, wide.dst));
  }
  // bfloat16: oneDNN 2.6's backward-weights pass on the forward's nhwc (jit_bf16) took 330-370 ms
  // where the formats it prefers take ~10 (a 3-channel stem and a stride-2 conv of the ResNet-ish
  // net in benchmarks/amp.py, batch 32): there the backward passes take oneDNN's formats.
  if (!p.nhwc && p.dt == memory::data_type::f32) {
    dnnl::convolution_forward::primitive_desc inference(
        FwdDesc(prop_kind::forward_inference, p, Any(p, p.src), Any(p, p.dst)), DefaultAttr(), eng);
    if (StorableTag(inference.src_desc(), p.src) != Tag::undef &&
        StorableTag(inference.dst_desc(), p.dst) != Tag::undef) {
      try {
        ConvBwd b = make(inference.src_desc(), inference.dst_desc());
        if (!IsReferenceImpl(b.data_pd) && !IsReferenceImpl(b.weights_pd)) return b;
      } catch (const dnnl::error&) {  // no backward implementation for that format
      }
    }
  }
  return make(Any(p, p.src), Any(p, p.dst));
}

template <typename T>
void ConvGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
    Tensor dout = ctx.Input(tide::GradVarName("Output").c_str());
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("Input").c_str());
    Tensor df = ctx.OptionalOutput(tide::GradVarName("Filter").c_str());
    DeclineEmpty(op, {&x, &f, &dout});
    ConvParams p = GetParams(ctx, x, f);
    tide::ops::CheckGradDims(op, "Output@GRAD", dout.dims(), p.nhwc ? Nhwc(p.out) : p.out);
    if (kFloat32Kernel<T>) DeclineWhereThePlainKernelWins(op, p, x, bool(dx));
    if (!dx && !df) return;
    Exec e(ctx);
    auto entry = e.cache().GetOrCreate<ConvBwd>(ConvKey(op, x, p)(dout).str(),
                                                [&] { return MakeConvBwd(p, e.engine()); });
    // Channel counts no block divides (AVX2's 8) get padded blocked formats: reorders in and out
    // of padded copies, and work on the padding, made these passes slower than the plain kernel
    // (LeNet's 20 -> 50 channels on AVX2: 7.5 ms against 4.7).
    for (const memory::desc& md : {entry->data_pd.diff_src_desc(), entry->data_pd.diff_dst_desc(),
                                   entry->weights_pd.src_desc(), entry->weights_pd.diff_dst_desc()})
      if (kFloat32Kernel<T> && IsPadded(md))
        TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
                   "' (oneDNN kernel): oneDNN would pad the "
                   "channels (",
                   p.x[1], " in, ", p.out[1],
                   " out) to its blocks; the plain kernel "
                   "is faster");
    memory dout_m = ActView(e, p, dout, op, "Output@GRAD");
    // Viewed before Input@GRAD is written: a view may decline (a layout the kernels do not read).
    memory x_m = df ? ActView(e, p, x, op, "Input") : memory();
    // Output@GRAD in each pass's format, reordered once when both passes want the same one.
    memory diff_dst_data, diff_dst_weights;
    if (dx) diff_dst_data = e.Convert(dout_m, entry->data_pd.diff_dst_desc());
    if (df)
      diff_dst_weights = dx && entry->weights_pd.diff_dst_desc() == diff_dst_data.get_desc()
                             ? diff_dst_data
                             : e.Convert(dout_m, entry->weights_pd.diff_dst_desc());
    if (dx) {
      const auto& pd = entry->data_pd;
      memory diff_dst = diff_dst_data;
      memory w = e.ConvertKept(f, FilterView(e, f, p, op), pd.weights_desc());
      bool direct = false;
      const bool widened = WidenedBf16(p);
      memory diff_src = p.nhwc || widened ? e.TempMemory(pd.diff_src_desc())
                                          : StorableOutputOrTemp(e, dx, p.x, pd.diff_src_desc(),
                                                                 ctx.place(), &direct);
      e.Run(entry->data, pd,
            {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, diff_src}});
      if (p.nhwc)
        StoreNhwc(e, diff_src, dx, Nhwc(p.x), ctx.place());
      else if (!direct)  // in Input's type: a widened result is rounded back to bfloat16
        StorePlain(e, diff_src, dx, p.x, ctx.place(), p.dt);
    }
    if (df) {
      const auto& pd = entry->weights_pd;
      memory src = e.Convert(x_m, pd.src_desc());
      memory diff_dst = diff_dst_weights;
      df.Resize(p.f);
      void* fd = df.mutable_data(x.dtype(), ctx.place());
      df.set_layout(TIDE_LAYOUT_ANY);
      df.set_format(0);
      memory user_dw(UserWeightsDesc(p), e.engine(), fd);
      const bool direct = pd.diff_weights_desc() == UserWeightsDesc(p);
      memory diff_w = direct ? user_dw : e.TempMemory(pd.diff_weights_desc());
      e.Run(entry->weights, pd,
            {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_WEIGHTS, diff_w}});
      if (!direct) e.Reorder(diff_w, user_dw);
    }
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL_F32_BF16("conv2d", ConvKernel);
TIDE_MKLDNN_KERNEL_F32_BF16("conv2d_grad", ConvGradKernel);
// Fluid emits depthwise_conv2d when groups == channels: the same oneDNN convolution serves it.
TIDE_MKLDNN_KERNEL("depthwise_conv2d", ConvKernel);
TIDE_MKLDNN_KERNEL("depthwise_conv2d_grad", ConvGradKernel);
// bfloat16 too: bf16 inference (tide.contrib.mixed_precision.bf16_inference) puts the
// transpiler's fused convolutions in it; Filter and Bias stay float32 (AsFloat32Param).
TIDE_MKLDNN_KERNEL_F32_BF16("fused_conv2d", ConvKernel);
