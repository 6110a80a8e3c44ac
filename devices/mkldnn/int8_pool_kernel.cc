// int8_pool_kernel.cc: pool2d on u8 / s8 data (issue 32), so that a pooling between int8
// convolutions stays in int8 (python/tide/contrib/quantization/post_training.py): Out has X's
// type and X's scale (max: the window's largest level; avg: the mean, rounded half to even and
// saturated by oneDNN), in the format oneDNN picks. Fluid's windows as pool_kernels.cc's (pool.h);
// what oneDNN cannot express there (its float32 loop) and NHWC data are refused, naming the op.
#include "pool.h"

namespace tide_mkldnn {
namespace {

struct Int8PoolPrim {
  dnnl::pooling_forward::primitive_desc pd;
  dnnl::pooling_forward prim;
};

void Int8PoolKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    const PoolParams p = GetPoolParams(ctx, x.dims());
    TIDE_CHECK(!p.nhwc, "op '", op, "' (int8): data_format NHWC is not supported");
    TIDE_CHECK(p.onednn, "op '", op,
               "' (int8): uneven adaptive windows or windows wholly in the padding are not "
               "supported (they pool in float32)");
    Exec e(ctx);
    const memory src = e.View(DescOfAnyType(x, op, "X"), x.raw_data());
    const memory::desc src_md = src.get_desc();
    const memory::dims dst_dims = ToDnnlDims(p.out_dims());
    auto entry = e.cache().GetOrCreate<Int8PoolPrim>(PoolKey("pool2d int8", x, p).str(), [&] {
      const auto dt = src_md.data_type();
      auto make = [&](Tag tag) {
        return dnnl::pooling_forward::primitive_desc(
            PoolFwdDesc(dnnl::prop_kind::forward_inference, p, src_md,
                        memory::desc(dst_dims, dt, tag)),
            DefaultAttr(), e.engine());
      };
      auto pd = make(Tag::any);
      if (StorableTag(pd.dst_desc(), dst_dims) == Tag::undef) pd = make(Tag::nchw);
      return Int8PoolPrim{pd, dnnl::pooling_forward(pd)};
    });
    memory dst = TryOutput(e, out, p.out_dims(), entry->pd.dst_desc(), ctx.place());
    TIDE_CHECK(dst, "op '", op, "': oneDNN chose an output format Tide cannot store");
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

// u8 / s8 X picks these under use_mkldnn; plugins/ops_nn/int8_ops.cc has the plain ones.
TIDE_ON_REGISTER([](tide::Registrar& r) {
  for (TideDataType t : {TIDE_UINT8, TIDE_INT8})
    r.Kernel("pool2d", "cpu", t, &Int8PoolKernel, TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
});
