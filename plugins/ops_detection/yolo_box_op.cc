// yolo_box_op.cc: Paddle's yolo_box (paddle.vision.ops.yolo_box): decodes a YOLOv3 head's
// [N, A * (5 + C), H, W] map (A anchors, C classes; with iou_aware, A IoU channels first) into
// Boxes [N, A H W, 4] (xmin, ymin, xmax, ymax in the ImgSize image) and Scores [N, A H W, C]
// (objectness * class sigmoid). Boxes whose objectness is below conf_thresh stay all 0, as
// Paddle writes them. No gradient: Paddle has none.
#include <cmath>
#include <tide/ops/int_inputs.hpp>

#include "common.h"

namespace ops_detection {
namespace {

struct YoloArgs {
  std::vector<int32_t> anchors;
  int64_t class_num, downsample, anchor_num, box_num;
  bool iou_aware;
};

// The attributes' checks and the output rows, from X's dims (-1 while a dim is unknown).
template <typename Ctx>
YoloArgs GetYoloArgs(const Ctx& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  YoloArgs a;
  a.anchors = ctx.template Attr<std::vector<int32_t>>("anchors");
  a.class_num = ctx.template Attr<int32_t>("class_num");
  a.downsample = ctx.template Attr<int32_t>("downsample_ratio");
  a.iou_aware = ctx.template Attr<bool>("iou_aware");
  TIDE_CHECK(!a.anchors.empty() && a.anchors.size() % 2 == 0, "op '", op,
             "': anchors must hold (width, height) pairs, got ", a.anchors.size(), " values");
  TIDE_CHECK(a.class_num > 0, "op '", op, "': class_num must be > 0, got ", a.class_num);
  TIDE_CHECK(a.downsample > 0, "op '", op, "': downsample_ratio must be > 0, got ", a.downsample);
  a.anchor_num = static_cast<int64_t>(a.anchors.size() / 2);
  CheckRank(op, "X", x, 4);
  const int64_t per_anchor = a.class_num + (a.iou_aware ? 6 : 5);
  TIDE_CHECK(x[1] < 0 || x[1] == a.anchor_num * per_anchor, "op '", op, "': X ", tide::ToString(x),
             " must have ", a.anchor_num, " anchors * (", a.iou_aware ? "6" : "5", " + class_num ",
             a.class_num, ") = ", a.anchor_num * per_anchor, " channels, got ", x[1]);
  a.box_num = x[2] < 0 || x[3] < 0 ? -1 : a.anchor_num * x[2] * x[3];
  return a;
}

void YoloBoxInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), img = ctx.InputDims("ImgSize");
  const YoloArgs a = GetYoloArgs(ctx, x);
  CheckRank(ctx.op_type(), "ImgSize", img, 2);
  CheckDim(ctx.op_type(), "ImgSize", img, 0, x[0], "X's batch");
  CheckDim(ctx.op_type(), "ImgSize", img, 1, 2, "height, width");
  const TideDataType it = ctx.InputDataType("ImgSize");
  TIDE_CHECK(it == TIDE_INT32 || it == TIDE_INT64, "op '", ctx.op_type(),
             "': ImgSize must be int32 or int64, got ", tide::DataTypeName(it));
  ctx.SetOutputDims("Boxes", {x[0], a.box_num, 4});
  ctx.SetOutputDims("Scores", {x[0], a.box_num, a.class_num});
  ctx.SetOutputDataType("Boxes", ctx.InputDataType("X"));
  ctx.SetOutputDataType("Scores", ctx.InputDataType("X"));
}

template <typename T>
T Sigmoid(T v) {
  return T(1) / (T(1) + std::exp(-v));
}

template <typename T>
void YoloBoxKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims xd = x.dims();
  const YoloArgs a = GetYoloArgs(ctx, xd);
  const int64_t n = xd[0], h = xd[2], w = xd[3], hw = h * w;
  const std::vector<int64_t> img = tide::ops::IntValues(ctx, "ImgSize");
  TIDE_CHECK(static_cast<int64_t>(img.size()) == 2 * n, "op '", ctx.op_type(), "': ImgSize ",
             tide::ToString(ctx.Input("ImgSize").dims()), " must be [", n,
             ", 2] (X's batch, height and width), got ", img.size(), " values");
  const float conf_thresh = ctx.Attr<float>("conf_thresh");
  const bool clip = ctx.Attr<bool>("clip_bbox");
  const T scale = static_cast<T>(ctx.Attr<float>("scale_x_y"));
  const T bias = static_cast<T>(-0.5f * (ctx.Attr<float>("scale_x_y") - 1.f));
  const T iou_factor = static_cast<T>(ctx.Attr<float>("iou_aware_factor"));
  T* boxes = ctx.Output("Boxes").mutable_data<T>({n, a.box_num, 4}, ctx.place());
  T* scores = ctx.Output("Scores").mutable_data<T>({n, a.box_num, a.class_num}, ctx.place());
  std::fill(boxes, boxes + n * a.box_num * 4, T(0));
  std::fill(scores, scores + n * a.box_num * a.class_num, T(0));
  const T* in = x.data<T>();
  // Channel layout per image: with iou_aware, A IoU channels, then per anchor
  // [x, y, w, h, objectness, C class logits] (each an H * W plane).
  const int64_t per_anchor = a.class_num + 5;
  const int64_t image_stride = a.anchor_num * (per_anchor + (a.iou_aware ? 1 : 0)) * hw;
  const int64_t input_h = a.downsample * h, input_w = a.downsample * w;
  for (int64_t i = 0; i < n; ++i) {
    const T img_h = static_cast<T>(img[2 * i]), img_w = static_cast<T>(img[2 * i + 1]);
    const T* image = in + i * image_stride;
    const T* head = image + (a.iou_aware ? a.anchor_num * hw : 0);
    for (int64_t j = 0; j < a.anchor_num; ++j) {
      const T* anchor = head + j * per_anchor * hw;
      for (int64_t k = 0; k < h; ++k) {
        for (int64_t l = 0; l < w; ++l) {
          const int64_t p = k * w + l;
          T conf = Sigmoid(anchor[4 * hw + p]);
          if (a.iou_aware) {
            const T iou = Sigmoid(image[j * hw + p]);
            conf = std::pow(conf, T(1) - iou_factor) * std::pow(iou, iou_factor);
          }
          if (conf < conf_thresh) continue;
          const T cx = (l + Sigmoid(anchor[p]) * scale + bias) * img_w / w;
          const T cy = (k + Sigmoid(anchor[hw + p]) * scale + bias) * img_h / h;
          const T bw = std::exp(anchor[2 * hw + p]) * a.anchors[2 * j] * img_w / input_w;
          const T bh = std::exp(anchor[3 * hw + p]) * a.anchors[2 * j + 1] * img_h / input_h;
          const int64_t row = i * a.box_num + j * hw + p;
          T* b = boxes + row * 4;
          b[0] = cx - bw / 2;
          b[1] = cy - bh / 2;
          b[2] = cx + bw / 2;
          b[3] = cy + bh / 2;
          if (clip) {
            b[0] = b[0] > 0 ? b[0] : T(0);
            b[1] = b[1] > 0 ? b[1] : T(0);
            b[2] = b[2] < img_w - 1 ? b[2] : img_w - 1;
            b[3] = b[3] < img_h - 1 ? b[3] : img_h - 1;
          }
          T* s = scores + row * a.class_num;
          for (int64_t c = 0; c < a.class_num; ++c) s[c] = conf * Sigmoid(anchor[(5 + c) * hw + p]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("yolo_box")
        .Comment("Decodes a YOLOv3 head into boxes and class scores (paddle.vision.ops.yolo_box).")
        .Input("X", "[N, A * (5 + class_num), H, W] (A * (6 + class_num) with iou_aware)")
        .Input("ImgSize", "[N, 2] int32: each image's height and width")
        .Output("Boxes", "[N, A H W, 4]: xmin, ymin, xmax, ymax; 0 below conf_thresh")
        .Output("Scores", "[N, A H W, class_num]: objectness * class probability")
        .Attr("anchors", std::vector<int32_t>{}, "(width, height) of each anchor, in pixels")
        .Attr("class_num", int32_t{1}, "classes")
        .Attr("conf_thresh", 0.01f, "objectness below which a box stays 0")
        .Attr("downsample_ratio", int32_t{32}, "input pixels per X cell")
        .Attr("clip_bbox", true, "clip boxes to [0, img_w - 1] x [0, img_h - 1]")
        .Attr("scale_x_y", 1.0f, "scales the centre offsets (YOLOv4's grid sensitivity)")
        .Attr("iou_aware", false, "X has A IoU channels first (PP-YOLO)")
        .Attr("iou_aware_factor", 0.5f, "objectness^(1 - f) * iou^f")
        .InferShape(YoloBoxInferShape)
        .NoGradient());
TIDE_REGISTER_KERNEL("yolo_box", "cpu", YoloBoxKernel, OPS_DETECTION_FLOAT_TYPES);
