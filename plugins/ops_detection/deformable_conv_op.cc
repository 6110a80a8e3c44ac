// deformable_conv_op.cc: Paddle's deformable_conv (paddle.vision.ops.deform_conv2d, DCNv2) and
// deformable_conv_v1 (DCNv1: no Mask): a conv2d whose kernel taps sample Input at learned
// fractional offsets, each sample scaled by its Mask value. Offset [N, 2 dg kh kw, Ho, Wo]
// holds (dy, dx) per deformable group dg and tap (group g's channels are g C/dg ... ); Mask
// [N, dg kh kw, Ho, Wo]. A sample at (h, w) outside (-1, H) x (-1, W) reads 0; inside, the
// bilinear mean of its 4 neighbours, those outside Input counting 0 (Paddle's
// DmcnIm2colBilinear). Per image: the sampled columns [C kh kw, Ho Wo] times Filter per group.
// The grad op gives Input, Offset, Filter and Mask gradients (the bilinear's derivatives).
#include <cmath>
#include <tide/gemm.hpp>

#include "common.h"

namespace ops_detection {
namespace {

struct DeformGeom {
  int64_t n, c, h, w, m, kh, kw, ho, wo, groups, dgroups;
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t taps() const { return kh * kw; }
  int64_t plane() const { return ho * wo; }
};

int64_t ConvOut(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  return (in + 2 * pad - (dil * (k - 1) + 1)) / stride + 1;
}

// The geometry from the dims and attributes, every dim checked (unknown -1 dims pass).
template <typename Ctx>
DeformGeom GetDeformGeom(const Ctx& ctx, const Dims& in, const Dims& filter, const Dims& offset,
                         const Dims* mask) {
  const char* op = ctx.op_type();
  const auto strides = ctx.template Attr<std::vector<int32_t>>("strides");
  const auto paddings = ctx.template Attr<std::vector<int32_t>>("paddings");
  const auto dilations = ctx.template Attr<std::vector<int32_t>>("dilations");
  for (const auto* v : {&strides, &paddings, &dilations})
    TIDE_CHECK(v->size() == 2, "op '", op,
               "': strides, paddings and dilations must hold 2 values"
               " (height, width), got ",
               v->size());
  CheckRank(op, "Input", in, 4);
  CheckRank(op, "Filter", filter, 4);
  CheckRank(op, "Offset", offset, 4);
  DeformGeom g{in[0],
               in[1],
               in[2],
               in[3],
               filter[0],
               filter[2],
               filter[3],
               0,
               0,
               ctx.template Attr<int32_t>("groups"),
               ctx.template Attr<int32_t>("deformable_groups"),
               strides[0],
               strides[1],
               paddings[0],
               paddings[1],
               dilations[0],
               dilations[1]};
  TIDE_CHECK(g.sh > 0 && g.sw > 0 && g.dh > 0 && g.dw > 0 && g.ph >= 0 && g.pw >= 0, "op '", op,
             "': strides and dilations must be > 0 and paddings >= 0");
  TIDE_CHECK(g.groups > 0 && g.dgroups > 0, "op '", op,
             "': groups and deformable_groups must be > 0, got ", g.groups, " and ", g.dgroups);
  TIDE_CHECK(g.c < 0 || (g.c % g.groups == 0 && g.c % g.dgroups == 0), "op '", op, "': Input ",
             tide::ToString(in), " has ", g.c, " channels, not divisible by groups ", g.groups,
             " and deformable_groups ", g.dgroups);
  TIDE_CHECK(g.m < 0 || g.m % g.groups == 0, "op '", op, "': Filter ", tide::ToString(filter),
             " has ", g.m, " output channels, not divisible by groups ", g.groups);
  CheckDim(op, "Filter", filter, 1, g.c < 0 ? -1 : g.c / g.groups, "Input's channels / groups");
  g.ho = g.h < 0 ? -1 : ConvOut(g.h, g.kh, g.sh, g.ph, g.dh);
  g.wo = g.w < 0 ? -1 : ConvOut(g.w, g.kw, g.sw, g.pw, g.dw);
  TIDE_CHECK(g.ho != 0 && g.wo != 0 && g.ho >= -1 && g.wo >= -1, "op '", op, "': Input ",
             tide::ToString(in), " is smaller than Filter ", tide::ToString(filter),
             "'s dilated kernel");
  CheckDim(op, "Offset", offset, 0, g.n, "Input's batch");
  CheckDim(op, "Offset", offset, 1, 2 * g.dgroups * g.taps(), "2 deformable_groups kh kw");
  CheckDim(op, "Offset", offset, 2, g.ho, "the output height");
  CheckDim(op, "Offset", offset, 3, g.wo, "the output width");
  if (mask) {
    CheckRank(op, "Mask", *mask, 4);
    CheckDim(op, "Mask", *mask, 0, g.n, "Input's batch");
    CheckDim(op, "Mask", *mask, 1, g.dgroups * g.taps(), "deformable_groups kh kw");
    CheckDim(op, "Mask", *mask, 2, g.ho, "the output height");
    CheckDim(op, "Mask", *mask, 3, g.wo, "the output width");
  }
  return g;
}

void DeformableConvInferShape(tide::InferShapeContext& ctx) {
  const Dims mask = ctx.HasInput("Mask") ? ctx.InputDims("Mask") : Dims{};
  const DeformGeom g =
      GetDeformGeom(ctx, ctx.InputDims("Input"), ctx.InputDims("Filter"), ctx.InputDims("Offset"),
                    ctx.HasInput("Mask") ? &mask : nullptr);
  ctx.SetOutputDims("Output", {g.n, g.m, g.ho, g.wo});
  ctx.SetOutputDataType("Output", ctx.InputDataType("Input"));
}

// Input's plane at (h, w) by Paddle's DmcnIm2colBilinear, with the weights' derivatives along h
// and w when asked.
template <typename T>
T Bilinear(const T* p, int64_t height, int64_t width, T h, T w, T* dh = nullptr, T* dw = nullptr) {
  const int64_t h0 = static_cast<int64_t>(std::floor(h)), w0 = static_cast<int64_t>(std::floor(w));
  const int64_t h1 = h0 + 1, w1 = w0 + 1;
  const T lh = h - h0, lw = w - w0, hh = 1 - lh, hw = 1 - lw;
  const T v1 = h0 >= 0 && w0 >= 0 ? p[h0 * width + w0] : T(0);
  const T v2 = h0 >= 0 && w1 <= width - 1 ? p[h0 * width + w1] : T(0);
  const T v3 = h1 <= height - 1 && w0 >= 0 ? p[h1 * width + w0] : T(0);
  const T v4 = h1 <= height - 1 && w1 <= width - 1 ? p[h1 * width + w1] : T(0);
  if (dh) *dh = -hw * v1 - lw * v2 + hw * v3 + lw * v4;
  if (dw) *dw = -hh * v1 + hh * v2 - lh * v3 + lh * v4;
  return hh * hw * v1 + hh * lw * v2 + lh * hw * v3 + lh * lw * v4;
}

// Adds g times the bilinear weights of (h, w) to the 4 neighbours inside the plane.
template <typename T>
void BilinearScatter(T* p, int64_t height, int64_t width, T h, T w, T g) {
  const int64_t h0 = static_cast<int64_t>(std::floor(h)), w0 = static_cast<int64_t>(std::floor(w));
  const T lh = h - h0, lw = w - w0;
  const int64_t hs[2] = {h0, h0 + 1}, ws[2] = {w0, w0 + 1};
  const T wh[2] = {1 - lh, lh}, ww[2] = {1 - lw, lw};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      if (hs[a] >= 0 && hs[a] < height && ws[b] >= 0 && ws[b] < width)
        p[hs[a] * width + ws[b]] += g * wh[a] * ww[b];
}

// Visits every sample of image `b`: fn(channel, tap, output pixel, h, w, inside, mask value,
// Offset's (dy, dx) index, Mask's index).
template <typename T, typename Fn>
void ForEachSample(const DeformGeom& g, int64_t b, const T* offset, const T* mask, Fn fn) {
  const int64_t per_dgroup = g.c / g.dgroups, plane = g.plane();
  for (int64_t c = 0; c < g.c; ++c) {
    const int64_t dg = c / per_dgroup;
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t tap = i * g.kw + j;
        const int64_t off_base = ((b * g.dgroups + dg) * 2 * g.taps() + 2 * tap) * plane;
        const int64_t mask_base = ((b * g.dgroups + dg) * g.taps() + tap) * plane;
        for (int64_t y = 0; y < g.ho; ++y) {
          for (int64_t x = 0; x < g.wo; ++x) {
            const int64_t p = y * g.wo + x;
            const T h = static_cast<T>(y * g.sh - g.ph + i * g.dh) + offset[off_base + p];
            const T w = static_cast<T>(x * g.sw - g.pw + j * g.dw) + offset[off_base + plane + p];
            const bool inside = h > -1 && w > -1 && h < g.h && w < g.w;
            fn(c, tap, p, h, w, inside, mask ? mask[mask_base + p] : T(1), off_base + p,
               mask_base + p);
          }
        }
      }
    }
  }
}

template <typename T>
struct DeformInputs {
  Tensor input, filter, offset, mask;
  DeformGeom g;
};

template <typename T>
DeformInputs<T> ReadDeformInputs(const KernelContext& ctx) {
  DeformInputs<T> d{ctx.Input("Input"),
                    ctx.Input("Filter"),
                    ctx.Input("Offset"),
                    ctx.HasInput("Mask") ? ctx.Input("Mask") : Tensor(),
                    {}};
  const Dims mask = d.mask ? d.mask.dims() : Dims{};
  d.g = GetDeformGeom(ctx, d.input.dims(), d.filter.dims(), d.offset.dims(),
                      d.mask ? &mask : nullptr);
  return d;
}

template <typename T>
void DeformableConvKernel(KernelContext& ctx) {
  const DeformInputs<T> d = ReadDeformInputs<T>(ctx);
  const DeformGeom& g = d.g;
  T* out = ctx.Output("Output").mutable_data<T>({g.n, g.m, g.ho, g.wo}, ctx.place());
  const T* in = d.input.template data<T>();
  const T* filter = d.filter.template data<T>();
  const T* offset = d.offset.template data<T>();
  const T* mask = d.mask ? d.mask.template data<T>() : nullptr;
  const int64_t plane = g.plane(), rows = g.c * g.taps();
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, k = cg * g.taps();
  std::vector<T> col(rows * plane);
  for (int64_t b = 0; b < g.n; ++b) {
    ForEachSample(
        g, b, offset, mask,
        [&](int64_t c, int64_t tap, int64_t p, T h, T w, bool inside, T m, int64_t, int64_t) {
          const T* im = in + (b * g.c + c) * g.h * g.w;
          col[(c * g.taps() + tap) * plane + p] = inside ? m * Bilinear(im, g.h, g.w, h, w) : T(0);
        });
    for (int64_t gr = 0; gr < g.groups; ++gr)
      tide::Gemm<T>(ctx, false, false, mg, plane, k, T(1), filter + gr * mg * k,
                    col.data() + gr * k * plane, T(0), out + (b * g.m + gr * mg) * plane);
  }
}

template <typename T>
T* GradOut(KernelContext& ctx, const char* param, const Dims& dims) {
  const std::string name = GradVarName(param);
  if (!ctx.HasOutput(name.c_str())) return nullptr;
  T* p = ctx.Output(name.c_str()).mutable_data<T>(dims, ctx.place());
  std::fill(p, p + DimsProduct(dims), T(0));
  return p;
}

template <typename T>
void DeformableConvGradKernel(KernelContext& ctx) {
  const DeformInputs<T> d = ReadDeformInputs<T>(ctx);
  const DeformGeom& g = d.g;
  Tensor dout_t = ctx.Input(GradVarName("Output").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Output@GRAD", dout_t.dims(), {g.n, g.m, g.ho, g.wo});
  T* dinput = GradOut<T>(ctx, "Input", d.input.dims());
  T* dfilter = GradOut<T>(ctx, "Filter", d.filter.dims());
  T* doffset = GradOut<T>(ctx, "Offset", d.offset.dims());
  T* dmask = d.mask ? GradOut<T>(ctx, "Mask", d.mask.dims()) : nullptr;
  const T* in = d.input.template data<T>();
  const T* filter = d.filter.template data<T>();
  const T* offset = d.offset.template data<T>();
  const T* mask = d.mask ? d.mask.template data<T>() : nullptr;
  const T* dout = dout_t.data<T>();
  const int64_t plane = g.plane(), rows = g.c * g.taps();
  const int64_t cg = g.c / g.groups, mg = g.m / g.groups, k = cg * g.taps();
  std::vector<T> col(dfilter ? rows * plane : 0), dcol(rows * plane);
  for (int64_t b = 0; b < g.n; ++b) {
    const T* dob = dout + b * g.m * plane;
    // dcol = Filter^T Output@GRAD, per group.
    for (int64_t gr = 0; gr < g.groups; ++gr)
      tide::Gemm<T>(ctx, true, false, k, plane, mg, T(1), filter + gr * mg * k,
                    dob + gr * mg * plane, T(0), dcol.data() + gr * k * plane);
    ForEachSample(g, b, offset, mask,
                  [&](int64_t c, int64_t tap, int64_t p, T h, T w, bool inside, T m, int64_t off_at,
                      int64_t mask_at) {
                    const int64_t row = (c * g.taps() + tap) * plane + p;
                    if (!inside) {
                      if (dfilter) col[row] = T(0);
                      return;
                    }
                    const T* im = in + (b * g.c + c) * g.h * g.w;
                    T vh = 0, vw = 0;
                    const T v = Bilinear(im, g.h, g.w, h, w, &vh, &vw);
                    if (dfilter) col[row] = m * v;
                    const T gc = dcol[row];
                    if (dmask) dmask[mask_at] += gc * v;
                    if (doffset) {
                      doffset[off_at] += gc * m * vh;
                      doffset[off_at + plane] += gc * m * vw;
                    }
                    if (dinput)
                      BilinearScatter(dinput + (b * g.c + c) * g.h * g.w, g.h, g.w, h, w, gc * m);
                  });
    // Filter@GRAD += Output@GRAD col^T, per group.
    if (dfilter)
      for (int64_t gr = 0; gr < g.groups; ++gr)
        tide::Gemm<T>(ctx, false, true, mg, k, plane, T(1), dob + gr * mg * plane,
                      col.data() + gr * k * plane, T(1), dfilter + gr * mg * k);
  }
}

void DeformableConvGradInferShape(tide::InferShapeContext& ctx) {
  for (const char* p : {"Input", "Filter", "Offset", "Mask"}) {
    const std::string gn = GradVarName(p);
    if (!ctx.HasOutput(gn.c_str()) || !ctx.HasInput(p)) continue;
    ctx.SetOutputDims(gn.c_str(), ctx.InputDims(p));
    ctx.SetOutputDataType(gn.c_str(), ctx.InputDataType(p));
  }
}

tide::OpSchema DeformableConvSchema(const char* type, bool with_mask) {
  tide::OpSchema s(type);
  s.Comment(with_mask ? "Modulated deformable conv2d (DCNv2, paddle.vision.ops.deform_conv2d)."
                      : "Deformable conv2d (DCNv1): deformable_conv without Mask.")
      .Input("Input", "[N, C, H, W]")
      .Input("Offset", "[N, 2 deformable_groups kh kw, Ho, Wo]: (dy, dx) per tap and pixel")
      .Input("Filter", "[M, C / groups, kh, kw]");
  if (with_mask)
    s.Input("Mask", "[N, deformable_groups kh kw, Ho, Wo]: each sample's factor").AsDispensable();
  s.Output("Output", "[N, M, Ho, Wo]")
      .Attr("strides", std::vector<int32_t>{1, 1}, "(height, width)")
      .Attr("paddings", std::vector<int32_t>{0, 0}, "(height, width), both sides")
      .Attr("dilations", std::vector<int32_t>{1, 1}, "(height, width)")
      .Attr("groups", int32_t{1}, "convolution groups")
      .Attr("deformable_groups", int32_t{1}, "channel groups sharing an offset map")
      .Attr("im2col_step", int32_t{64}, "images per column buffer in Paddle (no effect here)")
      .InferShape(DeformableConvInferShape)
      .Grad([type, with_mask](tide::GradMaker& gm) {
        auto op = gm.NewOp(std::string(type) + "_grad");
        op.Input("Input", gm.Input("Input"))
            .Input("Offset", gm.Input("Offset"))
            .Input("Filter", gm.Input("Filter"))
            .Input(GradVarName("Output"), gm.OutputGrad("Output"))
            .Output(GradVarName("Input"), gm.InputGrad("Input"))
            .Output(GradVarName("Offset"), gm.InputGrad("Offset"))
            .Output(GradVarName("Filter"), gm.InputGrad("Filter"))
            .CopyAttrs();
        if (with_mask)
          op.Input("Mask", gm.Input("Mask")).Output(GradVarName("Mask"), gm.InputGrad("Mask"));
      });
  return s;
}

tide::OpSchema DeformableConvGradSchema(const char* type, bool with_mask) {
  tide::OpSchema s(type);
  s.Input("Input").Input("Offset").Input("Filter");
  if (with_mask) s.Input("Mask").AsDispensable();
  s.Input(GradVarName("Output"));
  for (const char* p : {"Input", "Offset", "Filter"}) s.Output(GradVarName(p)).AsDispensable();
  if (with_mask) s.Output(GradVarName("Mask")).AsDispensable();
  s.Attr("strides", std::vector<int32_t>{1, 1})
      .Attr("paddings", std::vector<int32_t>{0, 0})
      .Attr("dilations", std::vector<int32_t>{1, 1})
      .Attr("groups", int32_t{1})
      .Attr("deformable_groups", int32_t{1})
      .Attr("im2col_step", int32_t{64})
      .KernelDataTypeFrom("Input")
      .InferShape(DeformableConvGradInferShape);
  return s;
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(DeformableConvSchema("deformable_conv", true));
TIDE_REGISTER_OP(DeformableConvGradSchema("deformable_conv_grad", true));
TIDE_REGISTER_OP(DeformableConvSchema("deformable_conv_v1", false));
TIDE_REGISTER_OP(DeformableConvGradSchema("deformable_conv_v1_grad", false));
TIDE_REGISTER_KERNEL("deformable_conv", "cpu", DeformableConvKernel, OPS_DETECTION_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("deformable_conv_grad", "cpu", DeformableConvGradKernel,
                     OPS_DETECTION_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("deformable_conv_v1", "cpu", DeformableConvKernel, OPS_DETECTION_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("deformable_conv_v1_grad", "cpu", DeformableConvGradKernel,
                     OPS_DETECTION_FLOAT_TYPES);
