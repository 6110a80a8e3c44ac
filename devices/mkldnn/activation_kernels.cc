// activation_kernels.cc: relu, tanh, sigmoid (oneDNN eltwise, output in the input's format, so a
// blocked conv output stays blocked) and relu_grad (from Out, as Fluid's; written plain).
// gelu has no plain kernel in ops_math / ops_nn, so it has no oneDNN kernel either.
#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

struct EltwiseFwd {
  dnnl::eltwise_forward::primitive_desc pd;
  dnnl::eltwise_forward prim;
};

template <algorithm kAlgo>
void EltwiseKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    Exec e(ctx);
    const Dims d = x.dims();
    memory src = e.View(x, op, "X");
    // A format Tide cannot store the output in (none of ours): compute on plain data.
    if (StorableTag(src.get_desc(), ToDnnlDims(d)) == Tag::undef) src = PlainView(e, x, op, "X");
    const memory::desc md = src.get_desc();
    Key key(op);
    key(d)(int64_t(StorableTag(md, ToDnnlDims(d))));
    auto entry = e.cache().GetOrCreate<EltwiseFwd>(key.str(), [&] {
      dnnl::eltwise_forward::primitive_desc pd(
          dnnl::eltwise_forward::desc(prop_kind::forward_inference, kAlgo, md, 0.0f, 0.0f),
          DefaultAttr(), e.engine());
      return EltwiseFwd{pd, dnnl::eltwise_forward(pd)};
    });
    memory dst = TryOutput(e, out, d, md, ctx.place());
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

template <typename T>
void ReluKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  EltwiseKernel<algorithm::eltwise_relu>(ctx);
}
template <typename T>
void TanhKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  EltwiseKernel<algorithm::eltwise_tanh>(ctx);
}
template <typename T>
void SigmoidKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  EltwiseKernel<algorithm::eltwise_logistic>(ctx);
}

struct EltwiseBwd {
  dnnl::eltwise_backward::primitive_desc pd;
  dnnl::eltwise_backward prim;
};

// X@GRAD = Out@GRAD where Out > 0, else 0 (oneDNN's relu backward from dst).
template <typename T>
void ReluGradKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor out = ctx.Input("Out"), dout = ctx.Input(tide::GradVarName("Out").c_str());
    Tensor dx = ctx.Output(tide::GradVarName("X").c_str());
    const Dims d = out.dims();
    TIDE_CHECK(dout.dims() == d, "op '", op, "': Out@GRAD has dims ", tide::ToString(dout.dims()),
               ", Out has ", tide::ToString(d));
    Exec e(ctx);
    memory dst = e.View(out, op, "Out");
    const memory::desc md = dst.get_desc();
    Key key(op);
    key(out);
    auto entry = e.cache().GetOrCreate<EltwiseBwd>(key.str(), [&] {
      constexpr auto algo = algorithm::eltwise_relu_use_dst_for_bwd;
      dnnl::eltwise_forward::primitive_desc hint(
          dnnl::eltwise_forward::desc(prop_kind::forward_training, algo, md, 0.0f, 0.0f),
          DefaultAttr(), e.engine());
      dnnl::eltwise_backward::primitive_desc pd(
          dnnl::eltwise_backward::desc(algo, md, md, 0.0f, 0.0f), DefaultAttr(), e.engine(),
          hint);
      return EltwiseBwd{pd, dnnl::eltwise_backward(pd)};
    });
    memory diff_dst = e.Convert(e.View(dout, op, "Out@GRAD"), entry->pd.diff_dst_desc());
    bool direct = false;
    memory diff_src =
        PlainOutputOrTemp(e, dx, d, entry->pd.diff_src_desc(), ctx.place(), &direct);
    e.Run(entry->prim, entry->pd,
          {{DNNL_ARG_DST, dst}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, diff_src}});
    if (!direct) StorePlain(e, diff_src, dx, d, ctx.place());
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("relu", ReluKernel);
TIDE_MKLDNN_KERNEL("tanh", TanhKernel);
TIDE_MKLDNN_KERNEL("sigmoid", SigmoidKernel);
TIDE_MKLDNN_KERNEL("relu_grad", ReluGradKernel);
