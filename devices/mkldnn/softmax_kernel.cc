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

SoftmaxFwd MakeSoftmaxFwd(Exec& e, const memory::desc& md, int axis) {
  dnnl::softmax_forward::primitive_desc pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, axis), DefaultAttr(),
      e.engine());
  return SoftmaxFwd{pd, dnnl::softmax_forward(pd)};
}

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
    auto entry =
        e.cache().GetOrCreate<SoftmaxFwd>(key.str(), [&] { return MakeSoftmaxFwd(e, md, axis); });
    memory dst = TryOutput(e, out, d, md, ctx.place());
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

// fused_softmax_mask_upper_triangle, a chunk of rows at a time: X's rows plus their mask
// (tide::kernels::AddUpperTriangleMask) into plain Out, oneDNN's float32 softmax over them in
// place. bfloat16 X (bf16 inference, between bfloat16 products) goes through a chunk-sized
// float32 buffer, each probability rounded once as a float32 softmax between two casts (oneDNN's
// bfloat16 softmax was up to 1.75 bfloat16 ulps off: 0.7% against 0.2%); a buffer of the whole
// scores (a 1024-token prompt's [16, 1024, 1024]) took 27 ms an op, the chunks 13, as float32
// (oneDNN's softmax alone on those scores: 10 ms).
constexpr int64_t kMaskedSoftmaxChunkFloats = int64_t(1) << 18;  // 1 MiB of float32 rows

template <typename T>
void SoftmaxMaskUpperTriangleKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    const Dims d = x.dims();
    const tide::kernels::UpperTriangleMask m = tide::kernels::GetUpperTriangleMask(ctx, d);
    Exec e(ctx);
    memory src = PlainView(e, x, op, "X");
    T* od = out.mutable_data<T>(d, ctx.place());
    out.set_layout(TIDE_LAYOUT_ANY);
    if (m.rows == 0 || m.k == 0) return;
    const int64_t chunk = std::min(m.rows, std::max<int64_t>(1, kMaskedSoftmaxChunkFloats / m.k));
    constexpr bool kFloat = std::is_same_v<T, float>;
    float* buf = kFloat ? nullptr : static_cast<float*>(e.Temp(chunk * m.k * sizeof(float)));
    const T* xd = static_cast<const T*>(src.get_data_handle());
    for (int64_t r0 = 0; r0 < m.rows; r0 += chunk) {
      const int64_t rows = std::min(chunk, m.rows - r0), n = rows * m.k;
      float* c = nullptr;
      if constexpr (kFloat) {
        c = od + r0 * m.k;
        tide::kernels::AddUpperTriangleMask<float>(ctx, xd + r0 * m.k, c, rows, m.q, m.k,
                                                   float(m.value), m.diagonal, r0);
      } else {
        c = buf;
        tide::ParallelFor(ctx, n, 1, [&](int64_t b, int64_t f) {
          tide::Bfloat16BitsToFloat(tide::Bits(xd + r0 * m.k) + b, c + b, f - b);
        });
        tide::kernels::AddUpperTriangleMask<float>(ctx, c, c, rows, m.q, m.k, float(m.value),
                                                   m.diagonal, r0);
      }
      const memory::desc md({rows, m.k}, memory::data_type::f32, memory::format_tag::ab);
      Key key(op);
      key(rows)(m.k);
      auto entry =
          e.cache().GetOrCreate<SoftmaxFwd>(key.str(), [&] { return MakeSoftmaxFwd(e, md, 1); });
      memory inout(md, e.engine(), c);
      e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, inout}, {DNNL_ARG_DST, inout}});
      e.Wait();
      if constexpr (!kFloat) {
        tide::ParallelFor(ctx, n, 1, [&](int64_t b, int64_t f) {
          tide::FloatToBfloat16Bits(c + b, tide::Bits(od + r0 * m.k) + b, f - b);
        });
      }
    }
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
TIDE_MKLDNN_KERNEL_F32_BF16("fused_softmax_mask_upper_triangle", SoftmaxMaskUpperTriangleKernel);
// The grad in bfloat16 only (the float32 plain kernel is the measured float32 one).
TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.Kernel("softmax_grad", "cpu", TIDE_BF16,
           &tide_mkldnn::OnBf16Isa<&SoftmaxGradKernel<tide::bfloat16>>, TIDE_LAYOUT_ONEDNN,
           "mkldnn", 0);
});
