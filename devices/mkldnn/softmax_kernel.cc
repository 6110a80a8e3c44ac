// softmax_kernel.cc: softmax along `axis` (Fluid: default -1) on oneDNN softmax, output in the
// input's format; in bfloat16 also its grad (dX = (dOut - sum(dOut * Out)) * Out along the axis).
#include <tide/kernels/softmax.hpp>
#include <tide/ops/axis.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

struct SoftmaxFwd {
  dnnl::softmax_forward::primitive_desc pd;
  dnnl::softmax_forward prim;
};

struct SoftmaxBwd {
  dnnl::softmax_backward::primitive_desc pd;
  dnnl::softmax_backward prim;
};

template <typename T>
void SoftmaxKernel(KernelContext& ctx) {
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
    key(d)(int64_t(StorableTag(md, ToDnnlDims(d))))(axis)(int64_t(x.dtype()));
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

// fused_softmax_mask_upper_triangle: X plus its mask written into plain Out
// (tide::kernels::AddUpperTriangleMask), then oneDNN's softmax along the last dim in place.
template <typename T>
void SoftmaxMaskUpperTriangleKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    const Dims d = x.dims();
    const tide::kernels::UpperTriangleMask m = tide::kernels::GetUpperTriangleMask(ctx, d);
    Exec e(ctx);
    memory src = PlainView(e, x, op, "X");
    const memory::desc md = src.get_desc();
    const int axis = static_cast<int>(d.size()) - 1;
    Key key(op);
    key(d)(axis)(int64_t(x.dtype()));
    auto entry = e.cache().GetOrCreate<SoftmaxFwd>(key.str(), [&] {
      dnnl::softmax_forward::primitive_desc pd(
          dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, axis), DefaultAttr(),
          e.engine());
      return SoftmaxFwd{pd, dnnl::softmax_forward(pd)};
    });
    T* od = out.mutable_data<T>(d, ctx.place());
    out.set_layout(TIDE_LAYOUT_ANY);
    tide::kernels::AddUpperTriangleMask<T>(ctx, static_cast<const T*>(src.get_data_handle()), od,
                                           m.rows, m.q, m.k, static_cast<T>(m.value), m.diagonal);
    memory dst(md, e.engine(), od);
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

template <typename T>
void SoftmaxGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor y = ctx.Input("Out"), dy = ctx.Input(tide::GradVarName("Out").c_str());
    Tensor dx = ctx.Output(tide::GradVarName("X").c_str());
    const Dims d = y.dims();
    tide::ops::CheckGradDims(op, "Out@GRAD", dy.dims(), d);
    const int axis = tide::ops::SplitAt(op, d, ctx.Attr<int32_t>("axis")).axis;
    Exec e(ctx);
    memory dst = PlainView(e, y, op, "Out");
    memory diff_dst = PlainView(e, dy, op, "Out@GRAD");
    const memory::desc md = dst.get_desc();
    Key key(op);
    key(d)(axis)(int64_t(y.dtype()));
    auto entry = e.cache().GetOrCreate<SoftmaxBwd>(key.str(), [&] {
      dnnl::softmax_forward::primitive_desc hint(
          dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, md, axis), DefaultAttr(),
          e.engine());
      dnnl::softmax_backward::primitive_desc pd(dnnl::softmax_backward::desc(md, md, axis),
                                                DefaultAttr(), e.engine(), hint);
      return SoftmaxBwd{pd, dnnl::softmax_backward(pd)};
    });
    bool direct = false;
    memory diff_src = PlainOutputOrTemp(e, dx, d, md, ctx.place(), &direct);
    e.Run(entry->prim, entry->pd,
          {{DNNL_ARG_DST, dst}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, diff_src}});
    if (!direct) StorePlain(e, diff_src, dx, d, ctx.place());
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL_F32_BF16("softmax", SoftmaxKernel);
TIDE_MKLDNN_KERNEL("fused_softmax_mask_upper_triangle", SoftmaxMaskUpperTriangleKernel);
// The grad in bfloat16 only (the float32 plain kernel is the measured float32 one).
TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.Kernel("softmax_grad", "cpu", TIDE_BF16,
           &tide_mkldnn::OnBf16Isa<&SoftmaxGradKernel<tide::bfloat16>>, TIDE_LAYOUT_ONEDNN,
           "mkldnn", 0);
});
