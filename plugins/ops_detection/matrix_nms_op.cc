// matrix_nms_op.cc: Paddle's matrix_nms (paddle.vision.ops.matrix_nms, SOLOv2's Matrix NMS, as
// PP-YOLOv2 / PP-PicoDet heads end): per image and class (but background_label), the nms_top_k
// boxes scoring above score_threshold, best first, each box's score decayed by its IoU with the
// better boxes (linear (1 - iou) / (1 - max_iou of the better box), or gaussian
// exp((max_iou^2 - iou^2) gaussian_sigma)), the minimum decay kept; boxes whose decayed score is
// above post_threshold stay. Then the keep_top_k best of the image. BBoxes [N, M, 4], Scores
// [N, C, M]; Out [K, 6]: label, decayed score, xmin, ymin, xmax, ymax; Index int32 [K, 1];
// RoisNum int32 [N]. The sorts are Paddle's (std::partial_sort, the same order on ties). No
// gradient.
#include <cmath>
#include <numeric>

#include "common.h"

namespace ops_detection {
namespace {

struct MatrixNmsArgs {
  float score_threshold, post_threshold, sigma;
  int nms_top_k, keep_top_k, background_label;
  bool gaussian, normalized;
};

// One class: appends the kept boxes' indices and decayed scores (Paddle's NMSMatrix).
template <typename T>
void MatrixNmsClass(const T* boxes, const T* scores, int64_t m, const MatrixNmsArgs& a,
                    std::vector<int>* kept, std::vector<T>* decayed) {
  std::vector<int32_t> perm(m);
  std::iota(perm.begin(), perm.end(), 0);
  const T score_thr = static_cast<T>(a.score_threshold);
  const T post_thr = static_cast<T>(a.post_threshold);
  auto end =
      std::remove_if(perm.begin(), perm.end(), [&](int32_t i) { return scores[i] <= score_thr; });
  int64_t n = std::distance(perm.begin(), end);
  if (n <= 0) return;
  if (a.nms_top_k > -1 && n > a.nms_top_k) n = a.nms_top_k;
  std::partial_sort(perm.begin(), perm.begin() + n, end,
                    [&](int32_t l, int32_t r) { return scores[l] > scores[r]; });
  // iou[i][j] (j < i) and each box's largest IoU with a better one.
  std::vector<T> iou(n * (n - 1) / 2), iou_max(n, T(0));
  for (int64_t i = 1; i < n; ++i) {
    T best = 0;
    for (int64_t j = 0; j < i; ++j) {
      const T v = BoxIoU(boxes + perm[i] * 4, boxes + perm[j] * 4, a.normalized);
      best = std::max(best, v);
      iou[i * (i - 1) / 2 + j] = v;
    }
    iou_max[i] = best;
  }
  if (scores[perm[0]] > post_thr) {
    kept->push_back(perm[0]);
    decayed->push_back(scores[perm[0]]);
  }
  const T sigma = static_cast<T>(a.sigma);
  for (int64_t i = 1; i < n; ++i) {
    T min_decay = 1;
    for (int64_t j = 0; j < i; ++j) {
      const T v = iou[i * (i - 1) / 2 + j], mx = iou_max[j];
      const T decay = a.gaussian ? std::exp((mx * mx - v * v) * sigma) : (1 - v) / (1 - mx);
      min_decay = std::min(min_decay, decay);
    }
    const T ds = min_decay * scores[perm[i]];
    if (ds <= post_thr) continue;
    kept->push_back(perm[i]);
    decayed->push_back(ds);
  }
}

void MatrixNmsInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims b = ctx.InputDims("BBoxes"), s = ctx.InputDims("Scores");
  CheckRank(op, "BBoxes", b, 3);
  CheckRank(op, "Scores", s, 3);
  CheckDim(op, "BBoxes", b, 2, 4, "xmin, ymin, xmax, ymax");
  CheckDim(op, "BBoxes", b, 0, s[0], "Scores' batch");
  CheckDim(op, "BBoxes", b, 1, s[2], "Scores' boxes, dim 2");
  ctx.SetOutputDims("Out", {-1, 6});
  ctx.SetOutputDataType("Out", ctx.InputDataType("BBoxes"));
  ctx.SetOutputDims("Index", {-1, 1});
  ctx.SetOutputDataType("Index", TIDE_INT32);
  if (ctx.HasOutput("RoisNum")) {
    ctx.SetOutputDims("RoisNum", {s[0]});
    ctx.SetOutputDataType("RoisNum", TIDE_INT32);
  }
}

template <typename T>
void MatrixNmsKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor bboxes = ctx.Input("BBoxes"), scores = ctx.Input("Scores");
  const Dims bd = bboxes.dims(), sd = scores.dims();
  CheckRank(op, "BBoxes", bd, 3);
  CheckRank(op, "Scores", sd, 3);
  CheckDim(op, "BBoxes", bd, 2, 4, "xmin, ymin, xmax, ymax");
  CheckDim(op, "BBoxes", bd, 0, sd[0], "Scores' batch");
  CheckDim(op, "BBoxes", bd, 1, sd[2], "Scores' boxes, dim 2");
  const MatrixNmsArgs a{ctx.Attr<float>("score_threshold"), ctx.Attr<float>("post_threshold"),
                        ctx.Attr<float>("gaussian_sigma"),  ctx.Attr<int32_t>("nms_top_k"),
                        ctx.Attr<int32_t>("keep_top_k"),    ctx.Attr<int32_t>("background_label"),
                        ctx.Attr<bool>("use_gaussian"),     ctx.Attr<bool>("normalized")};
  const int64_t n = sd[0], classes = sd[1], m = sd[2];
  const T* b = bboxes.data<T>();
  const T* s = scores.data<T>();
  std::vector<T> rows;
  std::vector<int32_t> index;
  std::vector<int64_t> counts;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int> kept;
    std::vector<T> decayed, labels;
    for (int64_t c = 0; c < classes; ++c) {
      if (c == a.background_label) continue;
      MatrixNmsClass(b + i * m * 4, s + (i * classes + c) * m, m, a, &kept, &decayed);
      labels.resize(kept.size(), static_cast<T>(c));
    }
    size_t count = kept.size();
    if (a.keep_top_k > -1) count = std::min(count, static_cast<size_t>(a.keep_top_k));
    std::vector<int32_t> perm(kept.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::partial_sort(perm.begin(), perm.begin() + count, perm.end(),
                      [&](int l, int r) { return decayed[l] > decayed[r]; });
    for (size_t k = 0; k < count; ++k) {
      const int p = perm[k];
      const T* box = b + (i * m + kept[p]) * 4;
      rows.insert(rows.end(), {labels[p], decayed[p], box[0], box[1], box[2], box[3]});
      index.push_back(static_cast<int32_t>(i * m + kept[p]));
    }
    counts.push_back(static_cast<int64_t>(count));
  }
  const int64_t total = static_cast<int64_t>(index.size());
  Tensor out = ctx.Output("Out");
  T* o = out.mutable_data<T>({total, 6}, ctx.place());
  std::copy(rows.begin(), rows.end(), o);
  int32_t* idx = ctx.Output("Index").mutable_data<int32_t>({total, 1}, ctx.place());
  std::copy(index.begin(), index.end(), idx);
  std::vector<uint64_t> lod{0};
  for (int64_t c : counts) lod.push_back(lod.back() + static_cast<uint64_t>(c));
  out.set_lod({lod});
  if (ctx.HasOutput("RoisNum")) {
    int32_t* num = ctx.Output("RoisNum").mutable_data<int32_t>({n}, ctx.place());
    for (int64_t i = 0; i < n; ++i) num[i] = static_cast<int32_t>(counts[i]);
  }
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("matrix_nms")
                     .Comment("Matrix NMS: scores decayed by IoU with better boxes "
                              "(paddle.vision.ops.matrix_nms).")
                     .Input("BBoxes", "[N, M, 4] boxes of each image")
                     .Input("Scores", "[N, C, M] each class's scores")
                     .Output("Out", "[K, 6]: label, decayed score, xmin, ymin, xmax, ymax")
                     .Output("Index", "int32 [K, 1]: each row's box in the flattened input")
                     .Output("RoisNum", "int32 [N]: rows per image")
                     .AsDispensable()
                     .RequiredAttr("score_threshold", TIDE_ATTR_FLOAT,
                                   "boxes must score above this")
                     .RequiredAttr("nms_top_k", TIDE_ATTR_INT, "candidates per class (-1: all)")
                     .RequiredAttr("keep_top_k", TIDE_ATTR_INT, "boxes per image (-1: all)")
                     .Attr("post_threshold", 0.0f, "decayed scores must be above this")
                     .Attr("use_gaussian", false, "gaussian decay instead of linear")
                     .Attr("gaussian_sigma", 2.0f, "the gaussian decay's factor")
                     .Attr("background_label", int32_t{0}, "the class left out (-1: none)")
                     .Attr("normalized", true, "boxes in [0, 1]; false: pixel boxes, sides + 1")
                     .InferShape(MatrixNmsInferShape)
                     .NoGradient());
TIDE_REGISTER_KERNEL("matrix_nms", "cpu", MatrixNmsKernel, OPS_DETECTION_FLOAT_TYPES);
