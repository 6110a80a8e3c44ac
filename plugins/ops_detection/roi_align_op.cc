// roi_align_op.cc: Paddle's roi_align (paddle.vision.ops.roi_align, Mask R-CNN's RoIAlign):
// each RoI [xmin, ymin, xmax, ymax] of ROIs (scaled by spatial_scale; aligned: shifted by half
// a pixel) split into pooled_height x pooled_width bins, each the mean of a grid of bilinear
// samples (sampling_ratio per side, or ceil(bin size) when <= 0) of its image's X. Out
// [R, C, pooled_height, pooled_width]; the RoIs' images from RoisNum or ROIs' LoD. Samples
// outside [-1, size] read 0, others clamp to the border, as Paddle's kernel. The grad op scatters
// Out@GRAD back through the same samples (X@GRAD; the RoIs take none, as Paddle's).
#include <cmath>

#include "common.h"

namespace ops_detection {
namespace {

struct RoiAlignArgs : RoiGrid {
  int sampling_ratio;
  bool aligned;
};

template <typename Ctx>
RoiAlignArgs GetRoiAlignArgs(const Ctx& ctx) {
  return {GetRoiGrid(ctx), ctx.template Attr<int32_t>("sampling_ratio"),
          ctx.template Attr<bool>("aligned")};
}

void RoiAlignInferShape(tide::InferShapeContext& ctx) { RoiInferOut(ctx); }

// One bilinear sample: 4 pixel offsets in an H x W plane and their weights (all 0 outside).
template <typename T>
struct Sample {
  int64_t at[4] = {0, 0, 0, 0};
  T w[4] = {0, 0, 0, 0};
};

// The samples of one RoI, bin by bin (row-major), `per_bin` each, and 1 / per_bin.
template <typename T>
struct RoiSamples {
  std::vector<Sample<T>> samples;
  int64_t per_bin;
  T scale;
};

template <typename T>
RoiSamples<T> SampleRoi(const T* roi, const RoiAlignArgs& a, int64_t height, int64_t width) {
  const T offset = a.aligned ? T(0.5) : T(0);
  const T scale = static_cast<T>(a.spatial_scale);
  const T xmin = roi[0] * scale - offset, ymin = roi[1] * scale - offset;
  T roi_w = roi[2] * scale - offset - xmin, roi_h = roi[3] * scale - offset - ymin;
  if (!a.aligned) {
    roi_w = std::max(roi_w, T(1));
    roi_h = std::max(roi_h, T(1));
  }
  const int64_t grid_h =
      a.sampling_ratio > 0 ? a.sampling_ratio : static_cast<int64_t>(std::ceil(roi_h / a.ph));
  const int64_t grid_w =
      a.sampling_ratio > 0 ? a.sampling_ratio : static_cast<int64_t>(std::ceil(roi_w / a.pw));
  const T bin_w = roi_w / static_cast<T>(a.pw), bin_h = roi_h / static_cast<T>(a.ph);
  RoiSamples<T> r;
  r.per_bin = grid_h * grid_w;
  r.scale = T(1) / static_cast<T>(r.per_bin);
  r.samples.reserve(a.ph * a.pw * r.per_bin);
  for (int64_t py = 0; py < a.ph; ++py) {
    for (int64_t px = 0; px < a.pw; ++px) {
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        T y = ymin + bin_h * (py + static_cast<T>(iy + .5f) / static_cast<T>(grid_h));
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          T x = xmin + bin_w * (px + static_cast<T>(ix + .5f) / static_cast<T>(grid_w));
          Sample<T>& s = r.samples.emplace_back();
          if (y < -1.0 || y > height || x < -1.0 || x > width) continue;  // reads 0
          y = y <= 0 ? T(0) : y;
          x = x <= 0 ? T(0) : x;
          int64_t x0 = static_cast<int64_t>(x), y0 = static_cast<int64_t>(y), x1, y1;
          if (x0 >= width - 1) {
            x1 = x0 = width - 1;
            x = static_cast<T>(x0);
          } else {
            x1 = x0 + 1;
          }
          if (y0 >= height - 1) {
            y1 = y0 = height - 1;
            y = static_cast<T>(y0);
          } else {
            y1 = y0 + 1;
          }
          const T lx = x1 - x, ly = y1 - y;  // the low pixels' weights along x and y
          s.at[0] = y0 * width + x0;
          s.at[1] = y1 * width + x0;
          s.at[2] = y0 * width + x1;
          s.at[3] = y1 * width + x1;
          s.w[0] = lx * ly;
          s.w[1] = lx * (1 - ly);
          s.w[2] = (1 - lx) * ly;
          s.w[3] = (1 - lx) * (1 - ly);
        }
      }
    }
  }
  return r;
}

template <typename T>
void RoiAlignKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), rois = ctx.Input("ROIs");
  const Dims xd = x.dims(), rd = rois.dims();
  CheckRoiInputs(ctx.op_type(), xd, rd);
  const RoiAlignArgs a = GetRoiAlignArgs(ctx);
  const int64_t channels = xd[1], plane = xd[2] * xd[3], bins = a.ph * a.pw;
  const std::vector<int64_t> image = RoiImages(ctx, rd[0], xd[0]);
  T* out = ctx.Output("Out").mutable_data<T>({rd[0], channels, a.ph, a.pw}, ctx.place());
  const T* in = x.data<T>();
  const T* r = rois.data<T>();
  for (int64_t n = 0; n < rd[0]; ++n) {
    const RoiSamples<T> rs = SampleRoi(r + n * 4, a, xd[2], xd[3]);
    for (int64_t c = 0; c < channels; ++c) {
      const T* p = in + (image[n] * channels + c) * plane;
      T* o = out + (n * channels + c) * bins;
      for (int64_t b = 0; b < bins; ++b) {
        T sum = 0;
        for (int64_t k = b * rs.per_bin; k < (b + 1) * rs.per_bin; ++k) {
          const Sample<T>& s = rs.samples[k];
          sum +=
              s.w[0] * p[s.at[0]] + s.w[2] * p[s.at[2]] + s.w[1] * p[s.at[1]] + s.w[3] * p[s.at[3]];
        }
        o[b] = sum * rs.scale;
      }
    }
  }
}

void RoiAlignGradInferShape(tide::InferShapeContext& ctx) {
  const std::string dx = GradVarName("X");
  if (!ctx.HasOutput(dx.c_str())) return;
  ctx.SetOutputDims(dx.c_str(), ctx.InputDims("X"));
  ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType("X"));
}

template <typename T>
void RoiAlignGradKernel(KernelContext& ctx) {
  const std::string dx_name = GradVarName("X");
  if (!ctx.HasOutput(dx_name.c_str())) return;
  Tensor x = ctx.Input("X"), rois = ctx.Input("ROIs");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const Dims xd = x.dims(), rd = rois.dims();
  CheckRoiInputs(ctx.op_type(), xd, rd);
  const RoiAlignArgs a = GetRoiAlignArgs(ctx);
  const int64_t channels = xd[1], plane = xd[2] * xd[3], bins = a.ph * a.pw;
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), {rd[0], channels, a.ph, a.pw});
  const std::vector<int64_t> image = RoiImages(ctx, rd[0], xd[0]);
  T* dx = ctx.Output(dx_name.c_str()).mutable_data<T>(xd, ctx.place());
  std::fill(dx, dx + DimsProduct(xd), T(0));
  const T* g = dout.data<T>();
  const T* r = rois.data<T>();
  for (int64_t n = 0; n < rd[0]; ++n) {
    const RoiSamples<T> rs = SampleRoi(r + n * 4, a, xd[2], xd[3]);
    for (int64_t c = 0; c < channels; ++c) {
      T* p = dx + (image[n] * channels + c) * plane;
      const T* go = g + (n * channels + c) * bins;
      for (int64_t b = 0; b < bins; ++b) {
        const T gb = go[b] * rs.scale;
        for (int64_t k = b * rs.per_bin; k < (b + 1) * rs.per_bin; ++k) {
          const Sample<T>& s = rs.samples[k];
          for (int q = 0; q < 4; ++q) p[s.at[q]] += gb * s.w[q];
        }
      }
    }
  }
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("roi_align")
        .Comment("RoIAlign: bilinear-sampled mean of each RoI's bins "
                 "(paddle.vision.ops.roi_align).")
        .Input("X", "[N, C, H, W] feature map")
        .Input("ROIs", "[R, 4] RoIs: xmin, ymin, xmax, ymax in X's image's pixels")
        .Input("RoisNum", "int32/int64 [N]: RoIs per image (else ROIs' LoD)")
        .AsDispensable()
        .Output("Out", "[R, C, pooled_height, pooled_width]")
        .Attr("pooled_height", int32_t{1}, "bins per RoI, vertically")
        .Attr("pooled_width", int32_t{1}, "bins per RoI, horizontally")
        .Attr("spatial_scale", 1.0f, "X's size over the image's (RoI coordinates are scaled)")
        .Attr("sampling_ratio", int32_t{-1}, "samples per bin side (<= 0: ceil(bin size))")
        .Attr("aligned", false, "shift the RoIs by half a pixel (and keep sizes under 1)")
        .InferShape(RoiAlignInferShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("roi_align_grad")
              .Input("X", g.Input("X"))
              .Input("ROIs", g.Input("ROIs"))
              .Input("RoisNum", g.Input("RoisNum"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("roi_align_grad")
                     .Input("X")
                     .Input("ROIs")
                     .Input("RoisNum")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Attr("pooled_height", int32_t{1})
                     .Attr("pooled_width", int32_t{1})
                     .Attr("spatial_scale", 1.0f)
                     .Attr("sampling_ratio", int32_t{-1})
                     .Attr("aligned", false)
                     .KernelDataTypeFrom("X")
                     .InferShape(RoiAlignGradInferShape));
TIDE_REGISTER_KERNEL("roi_align", "cpu", RoiAlignKernel, OPS_DETECTION_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("roi_align_grad", "cpu", RoiAlignGradKernel, OPS_DETECTION_FLOAT_TYPES);
