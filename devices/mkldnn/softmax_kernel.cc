// softmax_kernel.cc: softmax along `axis` (Fluid: default -1) on oneDNN softmax, output in the
// input's format.
#include <tide/ops/axis.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

struct SoftmaxFwd {
  dnnl::softmax_forward::primitive_desc pd;
  dnnl::softmax_forward prim;
};

template <typename T>
void SoftmaxKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    const Dims d = x.dims();
    const int axis = tide::ops::SplitAt(op, d, ctx.Attr<int32_t>("axis")).axis;
    Exec e(ctx);
    memory src = e.View(x, op, "X");
    if (StorableTag(src.get_desc(), ToDnnlDims(d)) == Tag::undef) src = PlainView(e, x, op, "X");
    const memory::desc md = src.get_desc();
    Key key(op);
    key(d)(int64_t(StorableTag(md, ToDnnlDims(d))))(axis);
    auto entry = e.cache().GetOrCreate<SoftmaxFwd>(key.str(), [&] {
      dnnl::softmax_forward::primitive_desc pd(
          dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, axis), DefaultAttr(),
          e.engine());
      return SoftmaxFwd{pd, dnnl::softmax_forward(pd)};
    });
    memory dst = TryOutput(e, out, d, md, ctx.place());
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("softmax", SoftmaxKernel);
