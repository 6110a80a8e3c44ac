// deconv_kernel.cc: conv2d_transpose (plugins/ops_nn/conv_transpose_op.cc; geometry from
// tide/ops/conv_transpose.hpp) on oneDNN's deconvolution: NCHW, strides, paddings, dilations,
// groups; Paddle's Filter [C, M / groups, kh, kw] is oneDNN's iohw (giohw with groups) over the
// same bytes. Output stays in the format oneDNN picks. An output that output_padding /
// output_size enlarges (oneDNN's size has no such term), an output size given at run time
// (OutputSize / OutputSizeTensor) and NHWC decline to the plain kernel, and
// so does the grad (no oneDNN kernel: the plain one trains).
#include <tide/ops/conv_transpose.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
constexpr auto f32 = memory::data_type::f32;

struct DeconvFwd {
  dnnl::deconvolution_forward::primitive_desc pd;
  dnnl::deconvolution_forward prim;
};

template <typename T>
void DeconvKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
    if (DataFormatNhwc(ctx))
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
                 "' (oneDNN kernel): NHWC runs on the plain kernel");
    if (ctx.HasInput("OutputSize") || ctx.HasInput("OutputSizeTensor"))
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
                 "' (oneDNN kernel): an output size computed at run time (OutputSize / "
                 "OutputSizeTensor) runs on the plain kernel");
    const tide::ops::ConvGeom g = tide::ops::GetConvTransposeGeom(ctx, op, x.dims(), f.dims());
    const Dims out_dims = tide::ops::ConvTransposeOutDims(g);
    auto base = [](int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, int64_t d) {
      return (in - 1) * s - pb - pe + d * (k - 1) + 1;
    };
    if (base(g.oh, g.kh, g.sh, g.ph, g.ph_end, g.dh) != g.h ||
        base(g.ow, g.kw, g.sw, g.pw, g.pw_end, g.dw) != g.w)
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
                 "' (oneDNN kernel): an output enlarged by output_padding / output_size (",
                 tide::ToString(out_dims), ") runs on the plain kernel");
    const memory::dims src = ToDnnlDims(x.dims()), dst = ToDnnlDims(out_dims);
    const memory::dims weights =
        g.groups > 1 ? memory::dims{g.groups, g.c / g.groups, g.m / g.groups, g.kh, g.kw}
                     : memory::dims{g.c, g.m, g.kh, g.kw};
    const memory::dims strides{g.sh, g.sw}, dils{g.dh - 1, g.dw - 1};  // oneDNN counts the gaps
    const memory::dims pad_l{g.ph, g.pw}, pad_r{g.ph_end, g.pw_end};
    Exec e(ctx);
    Key key(op);
    key(x)(f.dims())(strides)(pad_l)(pad_r)(dils)(g.groups);
    auto entry = e.cache().GetOrCreate<DeconvFwd>(key.str(), [&] {
      auto make = [&](const memory::desc& dst_md) {
        return dnnl::deconvolution_forward::primitive_desc(
            dnnl::deconvolution_forward::desc(
                prop_kind::forward_inference, algorithm::deconvolution_direct,
                memory::desc(src, f32, Tag::any), memory::desc(weights, f32, Tag::any), dst_md,
                strides, dils, pad_l, pad_r),
            DefaultAttr(), e.engine());
      };
      auto pd = make(memory::desc(dst, f32, Tag::any));
      if (StorableTag(pd.dst_desc(), dst) == Tag::undef)  // e.g. padded channel blocks
        pd = make(memory::desc(dst, f32, Tag::nchw));
      return DeconvFwd{pd, dnnl::deconvolution_forward(pd)};
    });
    const auto& pd = entry->pd;
    memory s = e.Convert(e.View(x, op, "Input"), pd.src_desc());
    memory plain = PlainView(e, f, op, "Filter");
    const memory::desc user_w(weights, f32, g.groups > 1 ? Tag::giohw : Tag::iohw);
    std::shared_ptr<ConvertedCopy> filter_copy;  // the reordered Filter, kept per content version
    memory w =
        e.ConvertKept(f, e.View(user_w, plain.get_data_handle()), pd.weights_desc(), &filter_copy);
    memory d = TryOutput(e, out, out_dims, pd.dst_desc(), ctx.place());
    TIDE_CHECK(d, "op '", op, "': oneDNN chose an output format Tide cannot store");
    e.Run(entry->prim, pd, {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, d}});
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("conv2d_transpose", DeconvKernel);
TIDE_MKLDNN_KERNEL("depthwise_conv2d_transpose", DeconvKernel);
