// nms_op.cc: Paddle's nms (paddle.vision.ops.nms's kernel, legacy op "nms"): greedy
// non-maximum suppression over Boxes [N, 4] taken in their given order (the Python API sorts by
// score first): a box is dropped when its IoU with an earlier kept box exceeds iou_threshold.
// KeepBoxesIdxs: the kept rows' indices, int64, in order. IoU of plain boxes (no +1), as
// Paddle's CalculateIoU. No gradient.
#include "common.h"

namespace ops_detection {
namespace {

void NmsInferShape(tide::InferShapeContext& ctx) {
  const Dims b = ctx.InputDims("Boxes");
  CheckRank(ctx.op_type(), "Boxes", b, 2);
  CheckDim(ctx.op_type(), "Boxes", b, 1, 4, "xmin, ymin, xmax, ymax");
  ctx.SetOutputDims("KeepBoxesIdxs", {-1});
  ctx.SetOutputDataType("KeepBoxesIdxs", TIDE_INT64);
}

// IoU > threshold of two boxes, in T as Paddle's CalculateIoU.
template <typename T>
bool Overlaps(const T* a, const T* b, float threshold) {
  const T iw = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), T(0));
  const T ih = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), T(0));
  const T inter = iw * ih;
  const T uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return inter / uni > threshold;
}

template <typename T>
void NmsKernel(KernelContext& ctx) {
  Tensor boxes = ctx.Input("Boxes");
  const Dims d = boxes.dims();
  CheckRank(ctx.op_type(), "Boxes", d, 2);
  CheckDim(ctx.op_type(), "Boxes", d, 1, 4, "xmin, ymin, xmax, ymax");
  const float threshold = ctx.Attr<float>("iou_threshold");
  const T* b = boxes.data<T>();
  std::vector<char> dropped(d[0], 0);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < d[0]; ++i) {
    if (dropped[i]) continue;
    keep.push_back(i);
    for (int64_t j = i + 1; j < d[0]; ++j)
      if (!dropped[j] && Overlaps(b + 4 * i, b + 4 * j, threshold)) dropped[j] = 1;
  }
  const int64_t kept = static_cast<int64_t>(keep.size());
  int64_t* out = ctx.Output("KeepBoxesIdxs").mutable_data<int64_t>({kept}, ctx.place());
  std::copy(keep.begin(), keep.end(), out);
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("nms")
                     .Comment("Greedy NMS over boxes in their given order (paddle.vision.ops.nms).")
                     .Input("Boxes", "[N, 4]: xmin, ymin, xmax, ymax, best first")
                     .Output("KeepBoxesIdxs", "int64 [K]: the kept boxes' rows, in order")
                     .Attr("iou_threshold", 1.0f,
                           "a box whose IoU with a kept one exceeds this "
                           "is dropped")
                     .InferShape(NmsInferShape)
                     .NoGradient());
TIDE_REGISTER_KERNEL("nms", "cpu", NmsKernel, OPS_DETECTION_FLOAT_TYPES);
