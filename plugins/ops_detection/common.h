// common.h: helpers shared by the ops_detection kernels: the dims checks every detection op
// makes (an error names the op, the variable, what was expected and what was found) and the box
// geometry of Paddle's detection kernels (area and IoU, +1 on pixel boxes when not normalized).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace ops_detection {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::Tensor;
using tide::ops::DimsProduct;

// Kernels for float and double (what Paddle registers for its detection ops).
#define OPS_DETECTION_FLOAT_TYPES float, double

// True when every dim of `d` is known (shape inference sees -1 for a batch dim fed later).
inline bool Known(const Dims& d) {
  return std::none_of(d.begin(), d.end(), [](int64_t v) { return v < 0; });
}

// Checks that input `param` has `rank` dims.
inline void CheckRank(const char* op, const char* param, const Dims& d, size_t rank) {
  TIDE_CHECK(d.size() == rank, "op '", op, "': ", param, " must have ", rank, " dims, got ",
             tide::ToString(d));
}

// Checks that dim `i` of input `param` is `want` (skipped while either is unknown).
inline void CheckDim(const char* op, const char* param, const Dims& d, size_t i, int64_t want,
                     const char* what) {
  TIDE_CHECK(d[i] < 0 || want < 0 || d[i] == want, "op '", op, "': ", param, " ", tide::ToString(d),
             " must have ", want, " (", what, ") at dim ", i, ", got ", d[i]);
}

// The pooled grid of the RoI ops (roi_align, roi_pool): their shared attributes, checked.
struct RoiGrid {
  int64_t ph, pw;
  float spatial_scale;
};

template <typename Ctx>
RoiGrid GetRoiGrid(const Ctx& ctx) {
  RoiGrid g{ctx.template Attr<int32_t>("pooled_height"), ctx.template Attr<int32_t>("pooled_width"),
            ctx.template Attr<float>("spatial_scale")};
  TIDE_CHECK(g.ph > 0 && g.pw > 0, "op '", ctx.op_type(),
             "': pooled_height and pooled_width must be > 0, got ", g.ph, " and ", g.pw);
  TIDE_CHECK(g.spatial_scale > 0, "op '", ctx.op_type(), "': spatial_scale must be > 0, got ",
             g.spatial_scale);
  return g;
}

// A RoI op's X [N, C, H, W] and ROIs [R, 4].
inline void CheckRoiInputs(const char* op, const Dims& x, const Dims& rois) {
  CheckRank(op, "X", x, 4);
  CheckRank(op, "ROIs", rois, 2);
  CheckDim(op, "ROIs", rois, 1, 4, "xmin, ymin, xmax, ymax");
}

// A RoI op's Out [R, C, pooled_height, pooled_width] in X's type (ROIs must share it); its dims.
inline Dims RoiInferOut(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), rois = ctx.InputDims("ROIs");
  CheckRoiInputs(ctx.op_type(), x, rois);
  const RoiGrid g = GetRoiGrid(ctx);
  TIDE_CHECK(ctx.InputDataType("ROIs") == ctx.InputDataType("X"), "op '", ctx.op_type(),
             "': ROIs is ", tide::DataTypeName(ctx.InputDataType("ROIs")), " but X is ",
             tide::DataTypeName(ctx.InputDataType("X")));
  const Dims out{rois[0], x[1], g.ph, g.pw};
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  return out;
}

// A box's area: 0 when xmax < xmin or ymax < ymin; pixel boxes (normalized false) count both
// end pixels, (w + 1) (h + 1), as Paddle's BBoxArea.
template <typename T>
T BoxArea(const T* b, bool normalized) {
  if (b[2] < b[0] || b[3] < b[1]) return T(0);
  const T w = b[2] - b[0], h = b[3] - b[1];
  return normalized ? w * h : (w + 1) * (h + 1);
}

// Intersection over union of two [xmin, ymin, xmax, ymax] boxes (Paddle's JaccardOverlap).
template <typename T>
T BoxIoU(const T* a, const T* b, bool normalized) {
  if (b[0] > a[2] || b[2] < a[0] || b[1] > a[3] || b[3] < a[1]) return T(0);
  const T pad = normalized ? T(0) : T(1);
  const T iw = std::min(a[2], b[2]) - std::max(a[0], b[0]) + pad;
  const T ih = std::min(a[3], b[3]) - std::max(a[1], b[1]) + pad;
  const T inter = iw * ih;
  return inter / (BoxArea(a, normalized) + BoxArea(b, normalized) - inter);
}

// The per-image box counts of an optional RoisNum input (int32 or int64), else the last LoD
// level of `boxes_param`: the offsets [0, n0, n0 + n1, ...] of each image's rows.
std::vector<int64_t> ImageOffsets(const KernelContext& ctx, const char* rois_num_param,
                                  const char* boxes_param, int64_t rows);

// Each RoI's image (RoisNum or ROIs' LoD), checked against X's batch: the RoI ops' pairing.
std::vector<int64_t> RoiImages(const KernelContext& ctx, int64_t rois, int64_t batch);

}  // namespace ops_detection
