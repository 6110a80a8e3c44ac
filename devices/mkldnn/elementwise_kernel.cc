// elementwise_kernel.cc: elementwise_add on the oneDNN binary primitive, with Fluid's broadcast
// (tide/ops/broadcast.hpp): Y becomes a same-rank operand with 1s on the broadcast dims, which
// oneDNN broadcasts. Out keeps X's format (the bias add of Fluid's fc, or a residual add of blocked
// feature maps, stays blocked).
#include <tide/ops/broadcast.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

constexpr auto f32 = memory::data_type::f32;

struct Binary {
  dnnl::binary::primitive_desc pd;
  dnnl::binary prim;
};

template <typename T>
void AddKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
    const Dims xd = x.dims(), yd = y.dims();
    Exec e(ctx);
    memory src0 = e.View(x, op, "X");
    if (StorableTag(src0.get_desc(), ToDnnlDims(xd)) == Tag::undef) src0 = PlainView(e, x, op, "X");
    memory src1;
    if (xd == yd) {
      src1 = e.View(y, op, "Y");
    } else {
      const Dims bd = tide::ops::BroadcastYDims(op, xd, yd, ctx.Attr<int32_t>("axis"));
      memory plain = PlainView(e, y, op, "Y");
      src1 = e.View(memory::desc(ToDnnlDims(bd), f32, PlainTag(bd.size())),
                    plain.get_data_handle());
    }
    const memory::desc md0 = src0.get_desc(), md1 = src1.get_desc();
    Key key(op);
    key(xd)(int64_t(StorableTag(md0, ToDnnlDims(xd))))(md1.dims());
    key(IsBlocked(y) && xd == yd ? y.format() : int64_t(0));
    auto entry = e.cache().GetOrCreate<Binary>(key.str(), [&] {
      dnnl::binary::primitive_desc pd(
          dnnl::binary::desc(dnnl::algorithm::binary_add, md0, md1, md0), DefaultAttr(),
          e.engine());
      return Binary{pd, dnnl::binary(pd)};
    });
    memory dst = TryOutput(e, out, xd, md0, ctx.place());
    e.Run(entry->prim, entry->pd,
          {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("elementwise_add", AddKernel);
