// roi_pool_op.cc: Paddle's roi_pool (paddle.vision.ops.roi_pool, Fast R-CNN's RoI max pooling):
// each RoI of ROIs (its corners times spatial_scale, rounded half away from 0; at least 1 x 1)
// split into pooled_height x pooled_width bins [floor(i size / pooled), ceil((i + 1) size /
// pooled)), clipped to X, each the max of its image's X there (0 for an empty bin). Argmax
// (int64): the max's position h W + w in the plane, the first on ties, -1 for an empty bin. The
// grad op adds Out@GRAD at Argmax.
#include <cmath>
#include <limits>

#include "common.h"

namespace ops_detection {
namespace {

void RoiPoolInferShape(tide::InferShapeContext& ctx) {
  const Dims out = RoiInferOut(ctx);
  if (ctx.HasOutput("Argmax")) {
    ctx.SetOutputDims("Argmax", out);
    ctx.SetOutputDataType("Argmax", TIDE_INT64);
  }
}

template <typename T>
void RoiPoolKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), rois = ctx.Input("ROIs");
  const Dims xd = x.dims(), rd = rois.dims();
  CheckRoiInputs(ctx.op_type(), xd, rd);
  const RoiGrid a = GetRoiGrid(ctx);
  const int64_t channels = xd[1], height = xd[2], width = xd[3], bins = a.ph * a.pw;
  const std::vector<int64_t> image = RoiImages(ctx, rd[0], xd[0]);
  const Dims od{rd[0], channels, a.ph, a.pw};
  T* out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  std::vector<int64_t> scratch;
  int64_t* argmax = nullptr;
  if (ctx.HasOutput("Argmax")) {
    argmax = ctx.Output("Argmax").mutable_data<int64_t>(od, ctx.place());
  } else {
    scratch.resize(DimsProduct(od));
    argmax = scratch.data();
  }
  const T* in = x.data<T>();
  const T* r = rois.data<T>();
  for (int64_t n = 0; n < rd[0]; ++n) {
    const T* roi = r + n * 4;
    const int64_t x0 = static_cast<int64_t>(std::round(roi[0] * a.spatial_scale));
    const int64_t y0 = static_cast<int64_t>(std::round(roi[1] * a.spatial_scale));
    const int64_t x1 = static_cast<int64_t>(std::round(roi[2] * a.spatial_scale));
    const int64_t y1 = static_cast<int64_t>(std::round(roi[3] * a.spatial_scale));
    const float bin_h = static_cast<float>(std::max<int64_t>(y1 - y0 + 1, 1)) / a.ph;
    const float bin_w = static_cast<float>(std::max<int64_t>(x1 - x0 + 1, 1)) / a.pw;
    for (int64_t c = 0; c < channels; ++c) {
      const T* p = in + (image[n] * channels + c) * height * width;
      T* o = out + (n * channels + c) * bins;
      int64_t* am = argmax + (n * channels + c) * bins;
      for (int64_t py = 0; py < a.ph; ++py) {
        for (int64_t px = 0; px < a.pw; ++px) {
          auto clip = [](int64_t v, int64_t hi) { return std::min(std::max(v, int64_t{0}), hi); };
          const int64_t hs =
              clip(static_cast<int64_t>(std::floor(static_cast<float>(py) * bin_h)) + y0, height);
          const int64_t he = clip(
              static_cast<int64_t>(std::ceil(static_cast<float>(py + 1) * bin_h)) + y0, height);
          const int64_t ws =
              clip(static_cast<int64_t>(std::floor(static_cast<float>(px) * bin_w)) + x0, width);
          const int64_t we =
              clip(static_cast<int64_t>(std::ceil(static_cast<float>(px + 1) * bin_w)) + x0, width);
          const int64_t b = py * a.pw + px;
          const bool empty = he <= hs || we <= ws;
          o[b] = empty ? T(0) : -std::numeric_limits<T>::max();
          am[b] = -1;
          for (int64_t h = hs; h < he; ++h)
            for (int64_t w = ws; w < we; ++w)
              if (p[h * width + w] > o[b]) {
                o[b] = p[h * width + w];
                am[b] = h * width + w;
              }
        }
      }
    }
  }
}

void RoiPoolGradInferShape(tide::InferShapeContext& ctx) {
  const std::string dx = GradVarName("X");
  if (!ctx.HasOutput(dx.c_str())) return;
  ctx.SetOutputDims(dx.c_str(), ctx.InputDims("X"));
  ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType("X"));
}

template <typename T>
void RoiPoolGradKernel(KernelContext& ctx) {
  const std::string dx_name = GradVarName("X");
  if (!ctx.HasOutput(dx_name.c_str())) return;
  Tensor x = ctx.Input("X"), rois = ctx.Input("ROIs"), argmax_t = ctx.Input("Argmax");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const Dims xd = x.dims(), rd = rois.dims();
  CheckRoiInputs(ctx.op_type(), xd, rd);
  const RoiGrid a = GetRoiGrid(ctx);
  const Dims od{rd[0], xd[1], a.ph, a.pw};
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  tide::ops::CheckGradDims(ctx.op_type(), "Argmax", argmax_t.dims(), od);
  const std::vector<int64_t> image = RoiImages(ctx, rd[0], xd[0]);
  T* dx = ctx.Output(dx_name.c_str()).mutable_data<T>(xd, ctx.place());
  std::fill(dx, dx + DimsProduct(xd), T(0));
  const int64_t plane = xd[2] * xd[3], bins = a.ph * a.pw;
  const T* g = dout.data<T>();
  const int64_t* am = argmax_t.data<int64_t>();
  for (int64_t n = 0; n < rd[0]; ++n)
    for (int64_t c = 0; c < xd[1]; ++c) {
      T* p = dx + (image[n] * xd[1] + c) * plane;
      const int64_t base = (n * xd[1] + c) * bins;
      for (int64_t b = 0; b < bins; ++b)
        if (am[base + b] >= 0) p[am[base + b]] += g[base + b];
    }
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("roi_pool")
                     .Comment("RoI max pooling (paddle.vision.ops.roi_pool).")
                     .Input("X", "[N, C, H, W] feature map")
                     .Input("ROIs", "[R, 4] RoIs: xmin, ymin, xmax, ymax in the image's pixels")
                     .Input("RoisNum", "int32/int64 [N]: RoIs per image (else ROIs' LoD)")
                     .AsDispensable()
                     .Output("Out", "[R, C, pooled_height, pooled_width]")
                     .Output("Argmax",
                             "int64, Out's dims: each max's position in its plane (-1: empty bin)")
                     .AsIntermediate()
                     .Attr("pooled_height", int32_t{1}, "bins per RoI, vertically")
                     .Attr("pooled_width", int32_t{1}, "bins per RoI, horizontally")
                     .Attr("spatial_scale", 1.0f,
                           "X's size over the image's (RoI coordinates are scaled)")
                     .InferShape(RoiPoolInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("roi_pool_grad")
                           .Input("X", g.Input("X"))
                           .Input("ROIs", g.Input("ROIs"))
                           .Input("RoisNum", g.Input("RoisNum"))
                           .Input("Argmax", g.Output("Argmax"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("roi_pool_grad")
                     .Input("X")
                     .Input("ROIs")
                     .Input("RoisNum")
                     .AsDispensable()
                     .Input("Argmax")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Attr("pooled_height", int32_t{1})
                     .Attr("pooled_width", int32_t{1})
                     .Attr("spatial_scale", 1.0f)
                     .KernelDataTypeFrom("X")
                     .InferShape(RoiPoolGradInferShape));
TIDE_REGISTER_KERNEL("roi_pool", "cpu", RoiPoolKernel, OPS_DETECTION_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("roi_pool_grad", "cpu", RoiPoolGradKernel, OPS_DETECTION_FLOAT_TYPES);
