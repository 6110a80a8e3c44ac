// resampling_kernel.cc: Fluid's bilinear_interp / nearest_interp, their v2 (plugins/ops_nn/
// interp_pad2d_ops.cc) and the nearest grads on oneDNN resampling, for the sizes and attributes
// where oneDNN's coordinate rule is Fluid's (tide/ops/interp_pad2d.hpp), declining the rest:
// - bilinear: oneDNN's linear samples at half-pixel centres, src = (dst + 0.5) * in / out - 0.5,
//   clamped to the edges: Fluid's align_corners = false with align_mode = 0, except an output
//   of 1 (Fluid's ratio is then 0: it reads index 0, oneDNN the middle of the input).
// - nearest: oneDNN rounds (dst + 0.5) * in / out - 0.5, Fluid truncates dst * in / out (or
//   rounds dst * (in - 1) / (out - 1) with align_corners): the same index when out is in (any
//   align_corners) or a multiple of it without align_corners; other sizes are declined.
// data_layout NCHW (Out keeps X's format) or NHWC (oneDNN's nhwc tag on the plain data). Outputs
// of fewer than 8192 elements run faster on the plain kernel and are declined too (README.md,
// "Speed"). Only nearest has a grad kernel: oneDNN 2.6's linear backward was never faster than
// the plain kernel.
#include <cmath>
#include <tide/ops/int_inputs.hpp>
#include <tide/ops/interp_pad2d.hpp>

#include "plain_as.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

// Smaller outputs run faster on the plain kernel (README.md, "Speed").
constexpr int64_t kMinOutElements = 8192;

struct Resample {
  algorithm algo;
  tide::ops::InterpGeom g;  // X's and Out's sizes, NCHW or NHWC (data_layout)
  memory::dims src, dst;    // oneDNN's logical [N, C, H, W] of X and Out
  Tag NhwcOr(Tag t) const { return g.nhwc ? Tag::acdb : t; }
};

// Whether oneDNN's index rule is Fluid's along a dim of `in` resized to `out`.
bool SameRule(bool bilinear, int64_t in, int64_t out, bool align_corners) {
  if (bilinear) return out > 1 || in == 1;
  return out == in || (!align_corners && out % in == 0);
}

// The resampling for the op's attributes and size inputs, or an UNIMPLEMENTED error (before
// anything is written) where oneDNN's rule is not Fluid's.
Resample GetResample(const KernelContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  // A 5-D X (nearest_interp_v2's volumes, interp3d.h) is the plain kernel's.
  if (x.size() == 5)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): a 5-D X ", tide::ToString(x),
               " (the plain kernel resizes volumes)");
  // Out's size by the plain kernel's rule (SizeTensor, OutSize, Scale, the attributes).
  const tide::ops::InterpGeom g = tide::ops::InterpGeomFromInputs(
      ctx, x, [&](const char* p) { return tide::ops::IntValues(ctx, p); },
      [&](const char* p) { return tide::ops::IntScalars(ctx, p); },
      [&](const char* p) { return tide::ops::FloatScalar(ctx, p); });
  const bool bilinear = std::string(op).rfind("bilinear", 0) == 0;
  const bool align_corners = ctx.Attr<bool>("align_corners");
  const int32_t align_mode = ctx.Attr<int32_t>("align_mode");
  if (bilinear && (align_corners || align_mode != 0))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): align_corners = ", align_corners,
               ", align_mode = ", align_mode,
               " is not oneDNN's half-pixel rule (align_corners = false, align_mode = 0)");
  // The v2 ops' step 1 / scale is oneDNN's out / in only where the scale is (nearly) exact.
  auto same_step = [&](double ratio, int64_t in, int64_t out) {
    const double fluid = tide::ops::InterpRatio(in, out, align_corners);
    return std::abs(ratio - fluid) <= 1e-6 * fluid;
  };
  if (!SameRule(bilinear, g.ih, g.oh, align_corners) ||
      !SameRule(bilinear, g.iw, g.ow, align_corners) || !same_step(g.rh, g.ih, g.oh) ||
      !same_step(g.rw, g.iw, g.ow))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): resizing ", g.ih, " x ", g.iw,
               " to ", g.oh, " x ", g.ow, " with align_corners = ", align_corners,
               " picks other source pixels than oneDNN's rule");
  if (g.n * g.c * g.oh * g.ow < kMinOutElements)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): Out ",
               tide::ToString(g.OutDims()), " has fewer than ", kMinOutElements,
               " elements (the plain kernel runs it faster)");
  return {bilinear ? algorithm::resampling_linear : algorithm::resampling_nearest,
          g,
          {g.n, g.c, g.ih, g.iw},
          {g.n, g.c, g.oh, g.ow}};
}

struct ResampleFwd {
  dnnl::resampling_forward::primitive_desc pd;
  dnnl::resampling_forward prim;
};

dnnl::resampling_forward::primitive_desc FwdPd(Exec& e, const Resample& r, prop_kind kind,
                                               const memory::desc& src, const memory::desc& dst) {
  return dnnl::resampling_forward::primitive_desc(
      dnnl::resampling_forward::desc(kind, r.algo, src, dst), DefaultAttr(), e.engine());
}

template <typename T>
void InterpKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    const Resample r = GetResample(ctx, x.dims());
    Exec e(ctx);
    // NHWC: oneDNN's nhwc tag on the plain data; NCHW: X's own format when Out can keep it.
    memory src = r.g.nhwc ? NhwcView(e, x, op, "X") : e.View(x, op, "X");
    Tag tag = StorableTag(src.get_desc(), r.src);
    if (!r.g.nhwc && tag == Tag::undef) {
      src = PlainView(e, x, op, "X");
      tag = PlainTag(4);
    }
    const memory::desc md = src.get_desc();
    const memory::desc out_md(r.dst, memory::data_type::f32, r.NhwcOr(tag));
    Key key(op);
    key(r.src)(int64_t(r.NhwcOr(tag)))(r.dst);
    auto entry = e.cache().GetOrCreate<ResampleFwd>(key.str(), [&] {
      auto pd = FwdPd(e, r, prop_kind::forward_inference, md, out_md);
      return ResampleFwd{pd, dnnl::resampling_forward(pd)};
    });
    memory dst = r.g.nhwc ? PlainOutputAs(e, out, r.g.OutDims(), out_md, ctx.place())
                          : TryOutput(e, out, r.g.OutDims(), out_md, ctx.place());
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

struct ResampleBwd {
  dnnl::resampling_backward::primitive_desc pd;
  dnnl::resampling_backward prim;
};

// Always on nhwc data: oneDNN 2.6's backward on NCHW is a reference loop slower than the plain
// kernel, on nhwc a jit (for NCHW tensors faster than the plain kernel even with the two
// reorders; README.md, "Speed").
template <typename T>
void InterpGradKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), dout = ctx.Input(tide::GradVarName("Out").c_str());
    const Resample r = GetResample(ctx, x.dims());
    tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), r.g.OutDims());
    Tensor dx = ctx.Output(tide::GradVarName("X").c_str());
    Exec e(ctx);
    const memory::desc md(r.src, memory::data_type::f32, Tag::acdb);
    const memory::desc out_md(r.dst, memory::data_type::f32, Tag::acdb);
    Key key(op);
    key(r.src)(r.dst);
    auto entry = e.cache().GetOrCreate<ResampleBwd>(key.str(), [&] {
      auto hint = FwdPd(e, r, prop_kind::forward_training, md, out_md);
      dnnl::resampling_backward::primitive_desc pd(
          dnnl::resampling_backward::desc(r.algo, md, out_md), DefaultAttr(), e.engine(), hint);
      return ResampleBwd{pd, dnnl::resampling_backward(pd)};
    });
    memory diff_dst = r.g.nhwc ? NhwcView(e, dout, op, "Out@GRAD")
                               : e.Convert(e.View(dout, op, "Out@GRAD"), out_md);
    memory diff_src = r.g.nhwc ? PlainOutputAs(e, dx, x.dims(), md, ctx.place()) : e.TempMemory(md);
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, diff_src}});
    if (!r.g.nhwc) StorePlain(e, diff_src, dx, x.dims(), ctx.place());
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("bilinear_interp", InterpKernel);
TIDE_MKLDNN_KERNEL("nearest_interp", InterpKernel);
TIDE_MKLDNN_KERNEL("nearest_interp_grad", InterpGradKernel);
TIDE_MKLDNN_KERNEL("bilinear_interp_v2", InterpKernel);
TIDE_MKLDNN_KERNEL("nearest_interp_v2", InterpKernel);
TIDE_MKLDNN_KERNEL("nearest_interp_v2_grad", InterpGradKernel);
