// int8_kernels.cc: int8 inference on oneDNN (issue 32; the rule is tide/ops/int8.hpp, its
// oneDNN terms int8.h): quantize (float32 -> u8 / s8) and dequantize as scaled reorders, and
// fused_conv2d with u8 / s8 Input: s8 weights per output channel (quantized once, kept), the
// scaled bias, Scale_out and the residual folded into the primitive's attributes, the
// activation's post-ops kept; Output u8 / s8 in the format oneDNN picks (the next int8
// convolution reads it as it is), or float32 with force_fp32_output. fc's int8 kernel is in
// fc_kernel.cc. oneDNN runs int8 on any x86-64 (VNNI makes it fast; without it, slower, same
// results), so nothing here depends on the ISA.
#include <cmath>
#include <cstring>
#include <tide/ops/int8.hpp>

#include "conv_common.h"
#include "int8.h"

namespace tide_mkldnn {

using tide::ops::Int8Scales;

namespace {

// A float's bits, for keys.
int64_t Bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

std::vector<int64_t> BitsOf(const std::vector<float>& v) {
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (float f : v) out.push_back(Bits(f));
  return out;
}

}  // namespace

Int8Residual PlanResidual(const Tensor& residual, memory::data_type dst_type, const Int8Scales& s) {
  Int8Residual r;
  const memory::data_type own = ToDnnlType(residual.dtype());
  r.from_scale = own == memory::data_type::f32 ? 1.0f : s.residual;
  if (dst_type == memory::data_type::f32) {
    r.type = memory::data_type::f32;
    r.scale = 1.0f;
  } else if (own != memory::data_type::f32) {
    r.type = own;
    r.scale = s.residual;
  } else {  // float32 residual, int8 dst: a float32 dst, rounded after
    r.type = memory::data_type::f32;
    r.via_float = true;
  }
  return r;
}

namespace {
// True where Scale_out may be folded into the output scales: act(k v) = k act(v) for k > 0.
bool CommutesWithScale(const std::vector<EltwiseAlgo>& act) {
  return act.empty() || (act.size() == 1 && act[0].algo == dnnl::algorithm::eltwise_relu);
}
}  // namespace

dnnl::primitive_attr Int8Attr(const Int8Scales& s, bool quantized, memory::data_type dst_type,
                              const std::vector<EltwiseAlgo>& act, const Int8Residual& residual,
                              int channel_mask) {
  const bool fold = quantized && CommutesWithScale(act);
  const float post = fold ? s.out : 1.0f;
  std::vector<float> scales(s.weights.size());
  for (size_t c = 0; c < scales.size(); ++c) scales[c] = post / (s.in * s.weights[c]);
  dnnl::primitive_attr a = DefaultAttr();
  a.set_output_scales(channel_mask, scales);
  dnnl::post_ops ops;
  if (residual.type != memory::data_type::undef)
    ops.append_sum(post / residual.scale,
                   residual.type == dst_type ? memory::data_type::undef : residual.type);
  for (size_t i = 0; i < act.size(); ++i) {
    const float scale = quantized && !fold && i + 1 == act.size() ? s.out : 1.0f;
    ops.append_eltwise(scale, act[i].algo, act[i].alpha, act[i].beta);
  }
  a.set_post_ops(ops);
  return a;
}

Key& AddInt8(Key& key, const Int8Scales& s, memory::data_type dst_type,
             const std::vector<EltwiseAlgo>& act, const Int8Residual& residual) {
  key("int8")(Bits(s.in))(Bits(s.out))(BitsOf(s.weights))(int64_t(dst_type));
  key(int64_t(residual.type))(Bits(residual.scale))(int64_t(residual.via_float));
  key(int64_t(act.size()));
  for (const EltwiseAlgo& a : act) AddAlgo(key, a);
  return key;
}

memory QuantizedWeights(Exec& e, const Tensor& w, const memory& plain, const memory::desc& want,
                        const std::vector<float>& scales, int mask,
                        std::shared_ptr<ConvertedCopy>* copy_out) {
  const uint64_t version = w.content_version();
  std::string key("int8 weights:");
  const void* source = w.raw_data();
  key.append(reinterpret_cast<const char*>(&source), sizeof(source));
  key.append(reinterpret_cast<const char*>(&want.data), sizeof(want.data));
  key.append(reinterpret_cast<const char*>(scales.data()), scales.size() * sizeof(float));
  std::shared_ptr<ConvertedCopy> copy;
  if (version != 0) copy = e.FindKept(e.context().converted, key, version);
  if (!copy) {
    copy = e.NewKept(want, version);
    const memory dst(want, e.engine(), copy->data);
    try {
      e.Reorder(plain, dst, scales, mask);
    } catch (const dnnl::error&) {
      // No float32 -> s8 reorder into `want` with its scales (formats with an s8 source's
      // compensation, for one): dense s8 levels first.
      const memory::dims dims = plain.get_desc().dims();
      const memory levels =
          e.TempMemory(memory::desc(dims, memory::data_type::s8, PlainTag(dims.size())));
      e.Reorder(plain, levels, scales, mask);
      e.Reorder(levels, dst);
    }
    e.Wait();  // complete before another thread may read it
    if (version != 0) e.context().converted.Put(key, copy);
  }
  if (copy_out) *copy_out = copy;
  return memory(want, e.engine(), copy->data);
}

memory ScaledBias(Exec& e, const Tensor& bias, const Int8Scales& s, const memory::desc& md,
                  const char* op) {
  const size_t n = s.weights.size();
  TIDE_CHECK(bias.dtype() == TIDE_FP32 && static_cast<size_t>(bias.numel()) == n, "op '", op,
             "' (int8): Bias must be ", n, " float32 values, got ",
             tide::DataTypeName(bias.dtype()), " ", tide::ToString(bias.dims()));
  const float* b = static_cast<const float*>(PlainView(e, bias, op, "Bias").get_data_handle());
  auto* out = static_cast<float*>(e.Temp(n * sizeof(float)));
  for (size_t c = 0; c < n; ++c) out[c] = b[c] * s.in * s.weights[c];
  return e.View(md, out);
}

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

float ScaleAttr(const KernelContext& ctx, const char* op) {
  const float s = ctx.Attr<float>("Scale");
  TIDE_CHECK(std::isfinite(s) && s > 0.0f, "op '", op, "': Scale ", s,
             " is not a positive finite scale");
  TIDE_CHECK(ctx.Attr<float>("Shift") == 0.0f, "op '", op, "': Shift ", ctx.Attr<float>("Shift"),
             " (asymmetric quantization) is not supported; only 0");
  return s;
}

// Output <- Input converted to `type`, each value times `scale`, in Input's format; with
// `int8_nhwc`, plain 4-D data in nhwc, the format oneDNN's int8 convolutions read.
void ScaledCopy(KernelContext& ctx, memory::data_type type, float scale, bool int8_nhwc) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("Input"), out = ctx.Output("Output");
    Exec e(ctx);
    const memory src = e.View(DescOfAnyType(x, op, "Input"), x.raw_data());
    const bool nhwc = int8_nhwc && !IsBlocked(x) && x.dims().size() == 4;
    const Tag tag = IsBlocked(x) ? static_cast<Tag>(x.format())
                    : nhwc       ? Tag::acdb
                                 : PlainTag(x.dims().size());
    const memory::desc md(ToDnnlDims(x.dims()), type, tag);
    out.Resize(x.dims());
    void* o = out.mutable_data(FromDnnlType(type), ctx.place());
    SetLayoutFor(out, tag, x.dims().size());
    e.Reorder(src, memory(md, e.engine(), o), {scale}, 0);
    e.Wait();
  });
}

void QuantizeKernel(KernelContext& ctx) {
  const float scale = ScaleAttr(ctx, ctx.op_type());
  ScaledCopy(ctx,
             ctx.Attr<bool>("is_negative_input") ? memory::data_type::s8 : memory::data_type::u8,
             scale, true);
}

void DequantizeKernel(KernelContext& ctx) {
  ScaledCopy(ctx, memory::data_type::f32, 1.0f / ScaleAttr(ctx, ctx.op_type()), false);
}

struct Int8ConvPrim {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
};

int64_t FormatOf(const Tensor& t) { return IsBlocked(t) ? t.format() : 0; }

// The op's kernel state (as conv_kernels.cc's ConvFwdState): the last run's primitive, its
// quantized weights, scaled bias and memories. A run with the same Input (dims, format, type:
// no conversion), Filter and Bias bytes, whose residual (if any) lies in Output already, only
// points the memories at this run's tensors: no attribute parsing, no keys holding every
// channel's scale, no lookups (they cost ResNet-50 at batch 1 a few ms per run).
struct Int8ConvState {
  Dims x_dims, out_dims;
  int64_t x_format = 0;
  TideDataType x_type = TIDE_UNDEFINED, out_type = TIDE_UNDEFINED;
  const void* filter = nullptr;
  uint64_t filter_version = 0;
  const void* bias = nullptr;
  uint64_t bias_version = 0;
  bool residual = false;  // summed in place (Output is its variable)
  Tag dst_tag = Tag::undef;
  std::shared_ptr<Int8ConvPrim> entry;
  std::shared_ptr<ConvertedCopy> weights_copy;  // what args' weights view, kept alive
  std::vector<float> scaled_bias;
  memory src, dst;
  KeptArgs kept;
};

bool RunPrepared(KernelContext& ctx, Int8ConvState& st) {
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  if (x.dims() != st.x_dims || FormatOf(x) != st.x_format || x.dtype() != st.x_type ||
      f.raw_data() != st.filter || f.content_version() != st.filter_version ||
      ctx.HasInput("Bias") != (st.bias != nullptr))
    return false;
  if (st.bias) {
    Tensor b = ctx.Input("Bias");
    if (b.raw_data() != st.bias || b.content_version() != st.bias_version) return false;
  }
  Tensor out = ctx.Output("Output");
  if (x.raw_data() == out.raw_data()) return false;  // Input is Output's variable: a copy first
  if (st.residual) {  // ResidualData's variable must be Output's, in dst's type and format
    Tensor r = ctx.Input("ResidualData");
    if (r.raw_data() != out.raw_data() || r.dims() != st.out_dims || r.dtype() != st.out_type ||
        FormatOf(r) != (st.dst_tag == PlainTag(st.out_dims.size()) ? 0 : int64_t(st.dst_tag)))
      return false;
  }
  const void* before = out.raw_data();
  out.Resize(st.out_dims);
  void* o = out.mutable_data(st.out_type, ctx.place());
  if (st.residual && o != before) return false;  // the slow path copies it
  SetLayoutFor(out, st.dst_tag, st.out_dims.size());
  st.src.set_data_handle(const_cast<void*>(x.raw_data()));
  st.dst.set_data_handle(o);
  Exec e(ctx);
  st.kept.Run(e, st.entry->prim);
  return true;
}

void Int8ConvKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    if (Int8ConvState* state = ctx.State<Int8ConvState>(); state && RunPrepared(ctx, *state))
      return;
    Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
    const ConvParams p = GetParams(ctx, x, f);
    TIDE_CHECK(!p.nhwc, "op '", op, "' (int8): data_format NHWC is not supported");
    TIDE_CHECK(f.dtype() == TIDE_FP32, "op '", op, "' (int8): Filter must be float32, got ",
               tide::DataTypeName(f.dtype()));
    const Fusion fu = GetFusion(ctx);
    const Int8Scales s = tide::ops::GetInt8Scales(ctx, op, p.f[0]);
    const memory::data_type dst_type = ToDnnlType(tide::ops::Int8OutputTypeOf(ctx));
    Int8Residual res;
    if (fu.residual) {
      TIDE_CHECK(fu.residual.dims() == p.out, "op '", op,
                 "': ResidualData must have Output's dims ", tide::ToString(p.out), ", got ",
                 tide::ToString(fu.residual.dims()));
      res = PlanResidual(fu.residual, dst_type, s);
    }
    const memory::data_type prim_type = res.via_float ? memory::data_type::f32 : dst_type;
    const int weights_mask = p.groups > 1 ? 3 : 1;
    Key key("fused_conv2d int8");
    key(x)(p.f)(p.d_strides)(p.pad_l)(p.pad_r)(p.d_dils)(p.groups)(int64_t(bool(fu.bias)));
    AddInt8(key, s, dst_type, fu.act, res);
    Exec e(ctx);
    const memory::desc bias_md({p.f[0]}, memory::data_type::f32, Tag::a);
    auto entry = e.cache().GetOrCreate<Int8ConvPrim>(key.str(), [&] {
      const dnnl::primitive_attr attr =
          Int8Attr(s, dst_type != memory::data_type::f32, prim_type, fu.act, res, 1 << 1);
      auto make = [&](const memory::desc& dst) {
        const memory::desc src(p.src, p.dt, Tag::any);
        const memory::desc w(p.weights, memory::data_type::s8, Tag::any);
        auto d = fu.bias ? dnnl::convolution_forward::desc(
                               prop_kind::forward_inference, algorithm::convolution_direct, src, w,
                               bias_md, dst, p.d_strides, p.d_dils, p.pad_l, p.pad_r)
                         : dnnl::convolution_forward::desc(
                               prop_kind::forward_inference, algorithm::convolution_direct, src, w,
                               dst, p.d_strides, p.d_dils, p.pad_l, p.pad_r);
        return dnnl::convolution_forward::primitive_desc(d, attr, e.engine());
      };
      auto pd = make(memory::desc(p.dst, prim_type, Tag::any));
      if (StorableTag(pd.dst_desc(), p.dst) == Tag::undef)
        pd = make(memory::desc(p.dst, prim_type, Tag::nchw));
      return Int8ConvPrim{pd, dnnl::convolution_forward(pd)};
    });
    const auto& pd = entry->pd;
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] =
        e.Convert(e.View(DescOfAnyType(x, op, "Input"), x.raw_data()), pd.src_desc());
    // Input may be Output's own variable (a program writing a conv's result over its input): the
    // primitive must not read what it is writing, so it reads a copy.
    if (args[DNNL_ARG_SRC].get_data_handle() == out.raw_data()) {
      memory copy = e.TempMemory(args[DNNL_ARG_SRC].get_desc());
      e.Reorder(args[DNNL_ARG_SRC], copy);
      args[DNNL_ARG_SRC] = copy;
    }
    const memory plain_w = e.View(UserWeightsDesc(p, memory::data_type::f32),
                                  PlainView(e, f, op, "Filter").get_data_handle());
    std::shared_ptr<ConvertedCopy> weights_copy;
    args[DNNL_ARG_WEIGHTS] =
        QuantizedWeights(e, f, plain_w, pd.weights_desc(), s.weights, weights_mask, &weights_copy);
    if (fu.bias) args[DNNL_ARG_BIAS] = ScaledBias(e, fu.bias, s, bias_md, op);
    const Tag dst_tag = StorableTag(pd.dst_desc(), p.dst);
    const memory::desc out_md(p.dst, dst_type, dst_tag);
    memory residual;
    bool in_place = false;  // Output is ResidualData's variable, which already holds what the sum
                            // adds: its type, format and scale
    if (fu.residual) {
      residual = e.View(DescOfAnyType(fu.residual, op, "ResidualData"), fu.residual.raw_data());
      if (fu.residual.raw_data() == out.raw_data()) {
        in_place = residual.get_desc() == out_md && res.type == dst_type && !res.via_float;
        if (!in_place) {  // copied before Output is written
          memory copy = e.TempMemory(residual.get_desc());
          e.Reorder(residual, copy);
          residual = copy;
        }
      }
    }
    memory dst = TryOutput(e, out, p.out, out_md, ctx.place());
    TIDE_CHECK(dst, "op '", op, "': oneDNN chose an output format Tide cannot store");
    TIDE_CHECK(!in_place || dst.get_data_handle() == residual.get_data_handle(), "op '", op,
               "': Output, ResidualData's variable, moved when it was written");
    memory result = res.via_float ? e.TempMemory(pd.dst_desc()) : dst;
    if (fu.residual && !in_place) {  // the sum post-op adds what dst holds
      const memory::desc as(p.dst, res.type, dst_tag);
      const float scale = res.scale / res.from_scale;
      e.Reorder(residual, memory(as, e.engine(), result.get_data_handle()),
                scale == 1.0f ? std::vector<float>{} : std::vector<float>{scale}, 0);
    }
    args[DNNL_ARG_DST] = result;
    const bool keep = args[DNNL_ARG_SRC].get_data_handle() == x.raw_data() &&
                      f.content_version() != 0 && (!fu.bias || fu.bias.content_version() != 0) &&
                      (!fu.residual || in_place) && !res.via_float;
    if (keep) {  // what the next run with the same inputs reuses (RunPrepared)
      auto st = std::make_unique<Int8ConvState>();
      st->x_dims = x.dims();
      st->out_dims = p.out;
      st->x_format = FormatOf(x);
      st->x_type = x.dtype();
      st->out_type = FromDnnlType(dst_type);
      st->filter = f.raw_data();
      st->filter_version = f.content_version();
      if (fu.bias) {
        st->bias = fu.bias.raw_data();
        st->bias_version = fu.bias.content_version();
        const float* b = static_cast<const float*>(args[DNNL_ARG_BIAS].get_data_handle());
        st->scaled_bias.assign(b, b + p.f[0]);
        args[DNNL_ARG_BIAS] = e.View(bias_md, st->scaled_bias.data());
      }
      st->residual = bool(fu.residual);
      st->dst_tag = dst_tag;
      st->entry = entry;
      st->weights_copy = weights_copy;
      st->src = args[DNNL_ARG_SRC];
      st->dst = dst;
      st->kept.Keep(args, pd, e.engine());
      ctx.SetState(std::move(st));
    }
    e.Run(entry->prim, pd, std::move(args));
    if (res.via_float) e.Reorder(result, dst);  // rounded half to even, saturated
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

// u8 / s8 data picks these under use_mkldnn (the int8 rewrite sets it where they are registered);
// plugins/ops_nn/int8_ops.cc has the plain kernels of the same ops.
TIDE_ON_REGISTER([](tide::Registrar& r) {
  for (TideDataType t : {TIDE_UINT8, TIDE_INT8}) {
    r.Kernel("fused_conv2d", "cpu", t, &Int8ConvKernel, TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
    r.Kernel("dequantize", "cpu", t, &DequantizeKernel, TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
  }
  r.Kernel("quantize", "cpu", TIDE_FP32, &QuantizeKernel, TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
});
