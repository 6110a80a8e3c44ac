// prelu_kernel.cc: Fluid's prelu and prelu_grad (plugins/ops_math/prelu_op.cc) on oneDNN PReLU:
// Out = X > 0 ? X : Alpha * X, Alpha's index rule and checks from tide/ops/prelu.hpp. oneDNN 2.6
// runs PReLU with its jit only when the weights broadcast along dim 1 or not at all (a scalar,
// or weights on the trailing dims, fall to a reference loop 6x slower than the plain kernel), so
// every mode is given to oneDNN as one of those:
// - "channel": X as it is (blocked or plain), weights [1, C, 1, ...] in the format oneDNN picks;
// - "all": the same with Alpha repeated C times (dAlpha sums the C values oneDNN returns);
//   a 1-D X is [N, 1];
// - "element": X as [N, S] (S = its elements per sample), weights [1, S] (Alpha's values).
// Out keeps a blocked X's format; the grads are written plain.
#include <algorithm>
#include <tide/ops/prelu.hpp>

#include "plain_as.h"

namespace tide_mkldnn {
namespace {

using dnnl::prop_kind;
constexpr auto f32 = memory::data_type::f32;

// Fewer elements than this run faster on the plain kernel (README.md, "Speed").
constexpr int64_t kMinElements = 8192;

// How X and Alpha are given to oneDNN.
struct PreluView {
  bool element = false, all = false;
  bool direct = false;      // X's own descriptor (a blocked or plain 3-D to 5-D tensor)
  memory::desc src;         // X's view
  memory::dims alpha_dims;  // Alpha's plain view: [1, C, 1, ...] or [1, S]
  memory::desc weights;     // the weights as the primitive is asked for (format any or plain)
  int64_t count = 1;        // Alpha's values as oneDNN sees them (C, or S)
};

// Checks Alpha (tide/ops/prelu.hpp) and declines (before anything is written) what the plain
// kernel runs faster.
PreluView ViewOf(const KernelContext& ctx, const Tensor& x, int64_t alpha_numel) {
  const char* op = ctx.op_type();
  const Dims d = x.dims();
  const std::string mode = ctx.Attr<std::string>("mode");
  tide::ops::GetPreluAlphaIndex(op, mode, d, alpha_numel, ctx.InputName("Alpha"));
  if (mode == "channel" && ctx.HasAttr("data_format") &&
      ctx.Attr<std::string>("data_format") == "NHWC")
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
               "' (oneDNN kernel): data_format NHWC (channels last) is the plain kernel's");
  const int64_t n = DimsProduct(d);
  if (n < kMinElements)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(d),
               " has fewer than ", kMinElements, " elements (the plain kernel runs it faster)");
  PreluView v;
  v.element = mode == "element";
  v.all = mode == "all";
  if (v.element) {
    v.count = n / d[0];
    v.src = memory::desc({d[0], v.count}, f32, Tag::ab);
    v.alpha_dims = {1, v.count};
    v.weights = memory::desc(v.alpha_dims, f32, Tag::ab);
    return v;
  }
  v.count = d.size() >= 2 ? d[1] : 1;
  v.direct = IsBlocked(x) && d.size() >= 3 && d.size() <= 5;
  const memory::dims src_dims =
      v.direct ? ToDnnlDims(d) : memory::dims{d[0], v.count, n / (d[0] * v.count)};
  v.src = v.direct ? DescOf(x, op, "X") : memory::desc(src_dims, f32, Tag::abc);
  v.alpha_dims.assign(src_dims.size(), 1);
  v.alpha_dims[1] = v.count;
  v.weights = memory::desc(v.alpha_dims, f32, Tag::any);
  return v;
}

// X's data in the view's descriptor.
memory SourceOf(Exec& e, const Tensor& x, const PreluView& v, const char* op) {
  return v.direct ? e.View(x, op, "X") : PlainInputAs(e, x, v.src, op, "X");
}

// Alpha as the primitive's weights `want`: repeated C times for mode "all".
memory WeightsOf(Exec& e, const Tensor& alpha, const PreluView& v, const memory::desc& want,
                 const char* op) {
  const memory::desc plain(v.alpha_dims, f32, PlainTag(v.alpha_dims.size()));
  memory values = v.all ? e.TempMemory(plain) : PlainInputAs(e, alpha, plain, op, "Alpha");
  if (v.all) {
    memory a = PlainView(e, alpha, op, "Alpha");
    e.Wait();
    const float value = *static_cast<const float*>(a.get_data_handle());
    float* rep = static_cast<float*>(values.get_data_handle());
    std::fill(rep, rep + v.count, value);
  }
  return e.Convert(values, want);
}

Key& KeyOf(Key& key, const PreluView& v) {
  return key(v.src.dims())(v.direct ? int64_t(StorableTag(v.src, v.src.dims())) : 0)(v.alpha_dims);
}

struct PreluFwd {
  dnnl::prelu_forward::primitive_desc pd;
  dnnl::prelu_forward prim;
};

template <typename T>
void PreluKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), alpha = ctx.Input("Alpha"), out = ctx.Output("Out");
    const PreluView v = ViewOf(ctx, x, alpha.numel());
    Exec e(ctx);
    Key key(op);
    KeyOf(key, v);
    auto entry = e.cache().GetOrCreate<PreluFwd>(key.str(), [&] {
      dnnl::prelu_forward::primitive_desc pd(
          dnnl::prelu_forward::desc(prop_kind::forward_inference, v.src, v.weights), DefaultAttr(),
          e.engine());
      return PreluFwd{pd, dnnl::prelu_forward(pd)};
    });
    memory src = SourceOf(e, x, v, op);
    memory weights = WeightsOf(e, alpha, v, entry->pd.weights_desc(), op);
    memory dst = v.direct ? TryOutput(e, out, x.dims(), v.src, ctx.place())
                          : PlainOutputAs(e, out, x.dims(), v.src, ctx.place());
    e.Run(entry->prim, entry->pd,
          {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

struct PreluBwd {
  dnnl::prelu_backward::primitive_desc pd;
  dnnl::prelu_backward prim;
};

template <typename T>
void PreluGradKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), alpha = ctx.Input("Alpha");
    Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
    const Dims d = x.dims();
    tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), d);
    const PreluView v = ViewOf(ctx, x, alpha.numel());
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
    Tensor dalpha = ctx.OptionalOutput(tide::GradVarName("Alpha").c_str());
    if (!dx && !dalpha) return;
    Exec e(ctx);
    Key key(op);
    KeyOf(key, v);
    auto entry = e.cache().GetOrCreate<PreluBwd>(key.str(), [&] {
      dnnl::prelu_forward::primitive_desc hint(
          dnnl::prelu_forward::desc(prop_kind::forward_training, v.src, v.weights), DefaultAttr(),
          e.engine());
      dnnl::prelu_backward::primitive_desc pd(
          dnnl::prelu_backward::desc(v.src, v.weights, v.src, v.weights), DefaultAttr(), e.engine(),
          hint);
      return PreluBwd{pd, dnnl::prelu_backward(pd)};
    });
    const auto& pd = entry->pd;
    memory src = SourceOf(e, x, v, op);
    memory weights = WeightsOf(e, alpha, v, pd.weights_desc(), op);
    memory diff_dst = v.direct ? e.Convert(e.View(dout, op, "Out@GRAD"), v.src)
                               : PlainInputAs(e, dout, v.src, op, "Out@GRAD");
    memory diff_src =
        dx && !v.direct ? PlainOutputAs(e, dx, d, v.src, ctx.place()) : e.TempMemory(v.src);
    memory diff_weights = e.TempMemory(pd.diff_weights_desc());
    e.Run(entry->prim, pd,
          {{DNNL_ARG_SRC, src},
           {DNNL_ARG_WEIGHTS, weights},
           {DNNL_ARG_DIFF_DST, diff_dst},
           {DNNL_ARG_DIFF_SRC, diff_src},
           {DNNL_ARG_DIFF_WEIGHTS, diff_weights}});
    if (dx && v.direct) StorePlain(e, diff_src, dx, d, ctx.place());
    if (dalpha) {
      const memory::desc plain(v.alpha_dims, f32, PlainTag(v.alpha_dims.size()));
      if (v.all) {  // the sum of the C per-channel values
        memory per_channel = e.Convert(diff_weights, plain);
        memory sum =
            PlainOutputAs(e, dalpha, alpha.dims(), memory::desc({1}, f32, Tag::a), ctx.place());
        e.Wait();
        const float* g = static_cast<const float*>(per_channel.get_data_handle());
        double total = 0;
        for (int64_t c = 0; c < v.count; ++c) total += g[c];
        *static_cast<float*>(sum.get_data_handle()) = static_cast<float>(total);
      } else {
        e.Reorder(diff_weights, PlainOutputAs(e, dalpha, alpha.dims(), plain, ctx.place()));
      }
    }
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("prelu", PreluKernel);
TIDE_MKLDNN_KERNEL("prelu_grad", PreluGradKernel);
