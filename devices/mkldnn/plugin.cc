// plugin.cc: the device_mkldnn plugin's entry points and its layout transforms (oneDNN
// reorders): cpu ONEDNN -> NCHW, ONEDNN -> ANY (what a plain kernel reads) and NCHW -> ONEDNN.
// The kernels register themselves from their own files.
#include <cstring>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

// out <- in as dense row-major data, for a plain kernel. `in` is blocked oneDNN data (any data
// type oneDNN knows); plain data is copied as it is.
void ToPlain(const Tensor& in, Tensor& out, TideDeviceContext* dctx, TideLayout to) {
  Exec e(dctx);
  const Dims d = in.dims();
  const TideDataType dtype = in.dtype();
  tide::Place place(tide::Host().DeviceContext_Place(dctx));
  out.Resize(d);
  void* dst = out.mutable_data(dtype, place);
  if (!IsBlocked(in) || d.empty()) {
    std::memcpy(dst, in.raw_data(), static_cast<size_t>(in.numel()) * tide::DataTypeSize(dtype));
  } else {
    const int64_t f = in.format();
    TIDE_CHECK(f > 0 && f < static_cast<int64_t>(dnnl_format_tag_last),
               "layout transform ONEDNN -> plain: the tensor has no valid oneDNN format tag (", f,
               ")");
    const auto dt = ToDnnlType(dtype);
    memory src(memory::desc(ToDnnlDims(d), dt, static_cast<Tag>(f)), e.engine(),
               const_cast<void*>(in.raw_data()));
    memory out_m(memory::desc(ToDnnlDims(d), dt, PlainTag(d.size())), e.engine(), dst);
    Guarded("layout transform ONEDNN -> plain", [&] {
      e.Reorder(src, out_m);
      e.Wait();
    });
  }
  out.set_layout(to);
  out.set_format(0);
}

void OnednnToNchw(const Tensor& in, Tensor& out, TideDeviceContext* dctx) {
  ToPlain(in, out, dctx, TIDE_LAYOUT_NCHW);
}
void OnednnToAny(const Tensor& in, Tensor& out, TideDeviceContext* dctx) {
  ToPlain(in, out, dctx, TIDE_LAYOUT_ANY);
}

// out <- in in a channel-blocked format (nChw16c / nChw8c and their 3-D and 5-D kin) when the
// channel count allows one, else dense row-major; either way out is in layout ONEDNN with the
// format tag as its format code, which every oneDNN kernel here reads.
void NchwToOnednn(const Tensor& in, Tensor& out, TideDeviceContext* dctx) {
  Exec e(dctx);
  const Dims d = in.dims();
  const TideDataType dtype = in.dtype();
  tide::Place place(tide::Host().DeviceContext_Place(dctx));
  const auto dt = ToDnnlType(dtype);
  memory::desc src_md = IsBlocked(in)
                            ? memory::desc(ToDnnlDims(d), dt, static_cast<Tag>(in.format()))
                            : memory::desc(ToDnnlDims(d), dt, PlainTag(d.size()));
  const Tag tag = DefaultBlockedTag(ToDnnlDims(d));
  out.Resize(d);
  void* dst = out.mutable_data(dtype, place);
  memory out_m(memory::desc(ToDnnlDims(d), dt, tag), e.engine(), dst);
  Guarded("layout transform NCHW -> ONEDNN", [&] {
    e.Reorder(memory(src_md, e.engine(), const_cast<void*>(in.raw_data())), out_m);
    e.Wait();
  });
  out.set_layout(TIDE_LAYOUT_ONEDNN);
  out.set_format(static_cast<int64_t>(tag));
}

}  // namespace
}  // namespace tide_mkldnn

TIDE_ON_REGISTER([](tide::Registrar& r) {
  using namespace tide_mkldnn;  // NOLINT
  // Ops ask for these kernels with use_mkldnn=True, or all at once with --use_mkldnn.
  r.AddLibrary("mkldnn", "use_mkldnn", "use_mkldnn",
               "prefer oneDNN (MKLDNN) kernels where the library has them");
  r.LayoutTransform("cpu", TIDE_LAYOUT_ONEDNN, TIDE_LAYOUT_NCHW, &OnednnToNchw);
  r.LayoutTransform("cpu", TIDE_LAYOUT_ONEDNN, TIDE_LAYOUT_ANY, &OnednnToAny);
  r.LayoutTransform("cpu", TIDE_LAYOUT_NCHW, TIDE_LAYOUT_ONEDNN, &NchwToOnednn);
});

TIDE_PLUGIN_REQUIRES("device_mkldnn", "0.1.0",
                     "oneDNN (MKLDNN) kernels and blocked layouts on the cpu place: conv2d, "
                     "pool2d, activations (eltwise), softmax, batch_norm, lrn, elementwise_add, "
                     "concat, layer_norm, prelu, reduce_*, bilinear/nearest_interp and grads; int8 "
                     "fused_conv2d, fc, quantize, dequantize",
                     "device_cpu");
