// lrn_kernel.cc: Fluid's lrn (local response normalisation across channels) on oneDNN LRN:
// Out = X / (k + alpha * sum over the n channels [c - (n - 1) / 2, c - (n - 1) / 2 + n) of
// X^2)^beta. Fluid's alpha is not divided by n; oneDNN's is, so oneDNN gets alpha * n. NCHW: Out
// keeps X's format; NHWC (data_format): X is oneDNN's nhwc tag, Out written plain [N, H, W, C].
// MidOut (k + alpha * the sum, what the plain lrn_grad reads) is computed plain
// (tide/ops/lrn.hpp).
#include <cstring>
#include <tide/ops/lrn.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

struct LrnFwd {
  dnnl::lrn_forward::primitive_desc pd;
  dnnl::lrn_forward prim;
};

int64_t Bits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof(i));
  return i;
}

template <typename T>
void LrnKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    const Dims d = x.dims();
    const tide::ops::LrnParams p = tide::ops::GetLrnParams(ctx, d);
    const int64_t n = p.size;
    const float k = static_cast<float>(p.k), alpha = static_cast<float>(p.alpha),
                beta = static_cast<float>(p.beta);
    TIDE_CHECK(n > 0, "op '", op, "': n must be > 0, got ", n);
    Exec e(ctx);
    // NHWC: oneDNN's logical NCHW in tag nhwc (X is plain); NCHW: X plain or blocked.
    const Dims logical = p.nhwc ? Dims{d[0], d[3], d[1], d[2]} : d;
    memory src = p.nhwc ? NhwcView(e, x, op, "X") : e.View(x, op, "X");
    if (!p.nhwc && StorableTag(src.get_desc(), ToDnnlDims(d)) == Tag::undef)
      src = PlainView(e, x, op, "X");
    const memory::desc md = src.get_desc();
    Key key(op);
    key(logical)(int64_t(StorableTag(md, ToDnnlDims(logical))))(int64_t(p.nhwc))(n)(Bits(k))(
        Bits(alpha))(Bits(beta));
    auto entry = e.cache().GetOrCreate<LrnFwd>(key.str(), [&] {
      dnnl::lrn_forward::primitive_desc pd(
          dnnl::lrn_forward::desc(dnnl::prop_kind::forward_inference,
                                  dnnl::algorithm::lrn_across_channels, md, n,
                                  alpha * static_cast<float>(n), beta, k),
          DefaultAttr(), e.engine());
      return LrnFwd{pd, dnnl::lrn_forward(pd)};
    });
    memory dst = p.nhwc ? e.TempMemory(md) : TryOutput(e, out, d, md, ctx.place());
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    if (p.nhwc) StoreNhwc(e, dst, out, d, ctx.place());
    e.Wait();

    Tensor mid = ctx.OptionalOutput("MidOut");
    if (!mid) return;
    memory xm = PlainView(e, x, op, "X");
    e.Wait();
    const float* xd = static_cast<const float*>(xm.get_data_handle());
    mid.Resize(d);
    float* md_out = mid.mutable_data<float>(ctx.place());
    mid.set_layout(TIDE_LAYOUT_ANY);
    mid.set_format(0);
    for (int64_t i = 0, count = x.numel(); i < count; ++i)
      md_out[i] = tide::ops::LrnMidAt(p, xd, i);
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("lrn", LrnKernel);
