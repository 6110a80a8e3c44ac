// multiclass_nms3_op.cc: Paddle's multiclass_nms3 (the last op of an exported PaddleDetection
// model): per image and class (but background_label), the boxes scoring above score_threshold,
// the nms_top_k best, greedy NMS (IoU above nms_threshold drops a box; nms_eta < 1 shrinks the
// threshold after each kept box while it is above 0.5); then the keep_top_k best of the image
// over all classes. Out [K, 6]: label, score, xmin, ymin, xmax, ymax, image by image, class by
// class; Index [K, 1] int32: each row's box in the flattened input; NmsRoisNum [N] int32: rows
// per image. Two layouts, as Paddle's:
//  - BBoxes [N, M, 4], Scores [N, C, M]: each image's M boxes shared by its C classes;
//  - BBoxes [M, C, 4], Scores [M, C]: a box per class, the images' rows given by RoisNum or
//    BBoxes' LoD (a two-stage detector's RoIs).
// Ties keep the earlier box (stable sorts on float scores, as Paddle's). No gradient.
#include <map>

#include "common.h"

namespace ops_detection {
namespace {

struct NmsArgs {
  float score_threshold, nms_threshold, nms_eta;
  int nms_top_k, keep_top_k, background_label;
  bool normalized;
};

NmsArgs GetNmsArgs(const KernelContext& ctx) {
  return {ctx.Attr<float>("score_threshold"), ctx.Attr<float>("nms_threshold"),
          ctx.Attr<float>("nms_eta"),         ctx.Attr<int32_t>("nms_top_k"),
          ctx.Attr<int32_t>("keep_top_k"),    ctx.Attr<int32_t>("background_label"),
          ctx.Attr<bool>("normalized")};
}

// One class's candidates of one image: box i at boxes + i * box_stride, score i at
// scores[i * score_stride].
template <typename T>
struct ClassView {
  const T* boxes;
  int64_t box_stride;
  const T* scores;
  int64_t score_stride;
  int64_t count;
  T score(int64_t i) const { return scores[i * score_stride]; }
  const T* box(int64_t i) const { return boxes + i * box_stride; }
};

// Paddle's NMSFast: the kept boxes' indices, best first.
template <typename T>
std::vector<int> NmsFast(const ClassView<T>& v, const NmsArgs& a) {
  std::vector<std::pair<float, int>> order;
  for (int64_t i = 0; i < v.count; ++i)
    if (v.score(i) > static_cast<T>(a.score_threshold))
      order.emplace_back(static_cast<float>(v.score(i)), static_cast<int>(i));
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  if (a.nms_top_k > -1 && a.nms_top_k < static_cast<int>(order.size())) order.resize(a.nms_top_k);
  std::vector<int> kept;
  T threshold = static_cast<T>(a.nms_threshold);
  const T eta = static_cast<T>(a.nms_eta);
  for (const auto& o : order) {
    bool keep = true;
    for (int k : kept) {
      if (BoxIoU(v.box(o.second), v.box(k), a.normalized) > threshold) {
        keep = false;
        break;
      }
    }
    if (!keep) continue;
    kept.push_back(o.second);
    if (eta < 1 && threshold > T(0.5)) threshold *= eta;
  }
  return kept;
}

// The kept boxes of one image, {label: indices}, and their count.
template <typename T, typename ViewOf>
std::map<int, std::vector<int>> ImageNms(int classes, const NmsArgs& a, bool per_class_boxes,
                                         ViewOf view_of, int64_t* count) {
  std::map<int, std::vector<int>> kept;
  int64_t n = 0;
  for (int c = 0; c < classes; ++c) {
    if (c == a.background_label) continue;
    std::vector<int>& k = kept[c] = NmsFast(view_of(c), a);
    if (per_class_boxes) std::stable_sort(k.begin(), k.end());
    n += static_cast<int64_t>(k.size());
  }
  if (a.keep_top_k > -1 && n > a.keep_top_k) {
    std::vector<std::pair<float, std::pair<int, int>>> all;
    for (const auto& [label, indices] : kept)
      for (int i : indices)
        all.push_back({static_cast<float>(view_of(label).score(i)), {label, i}});
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    all.resize(a.keep_top_k);
    std::map<int, std::vector<int>> top;
    for (const auto& s : all) top[s.second.first].push_back(s.second.second);
    if (per_class_boxes)
      for (auto& [label, indices] : top) std::stable_sort(indices.begin(), indices.end());
    kept.swap(top);
    n = a.keep_top_k;
  }
  *count = n;
  return kept;
}

void MulticlassNms3InferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims b = ctx.InputDims("BBoxes"), s = ctx.InputDims("Scores");
  CheckRank(op, "BBoxes", b, 3);
  TIDE_CHECK(s.size() == 2 || s.size() == 3, "op '", op,
             "': Scores must be [N, C, M] (with BBoxes [N, M, 4]) or [M, C] (with BBoxes "
             "[M, C, 4]), got ",
             tide::ToString(s));
  CheckDim(op, "BBoxes", b, 2, 4, "xmin, ymin, xmax, ymax: polygon boxes are not supported");
  if (s.size() == 3) {
    CheckDim(op, "BBoxes", b, 0, s[0], "Scores' batch");
    CheckDim(op, "BBoxes", b, 1, s[2], "Scores' boxes, dim 2");
  } else {
    CheckDim(op, "BBoxes", b, 0, s[0], "Scores' boxes, dim 0");
    CheckDim(op, "BBoxes", b, 1, s[1], "Scores' classes");
  }
  TIDE_CHECK(ctx.InputDataType("BBoxes") == ctx.InputDataType("Scores"), "op '", op,
             "': BBoxes is ", tide::DataTypeName(ctx.InputDataType("BBoxes")), " but Scores is ",
             tide::DataTypeName(ctx.InputDataType("Scores")));
  // Without Index, nothing kept is one -1 (a [1, 1] Out).
  ctx.SetOutputDims("Out", {-1, ctx.HasOutput("Index") ? 6 : -1});
  ctx.SetOutputDataType("Out", ctx.InputDataType("BBoxes"));
  if (ctx.HasOutput("Index")) {
    ctx.SetOutputDims("Index", {-1, 1});
    ctx.SetOutputDataType("Index", TIDE_INT32);
  }
  if (ctx.HasOutput("NmsRoisNum")) {
    ctx.SetOutputDims("NmsRoisNum", {-1});
    ctx.SetOutputDataType("NmsRoisNum", TIDE_INT32);
  }
}

template <typename T>
void MulticlassNms3Kernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor bboxes = ctx.Input("BBoxes"), scores = ctx.Input("Scores");
  const Dims bd = bboxes.dims(), sd = scores.dims();
  const NmsArgs a = GetNmsArgs(ctx);
  CheckRank(op, "BBoxes", bd, 3);
  CheckDim(op, "BBoxes", bd, 2, 4, "xmin, ymin, xmax, ymax: polygon boxes are not supported");
  const bool shared_boxes = sd.size() == 3;  // [N, C, M] scores of [N, M, 4] boxes
  TIDE_CHECK(shared_boxes || sd.size() == 2, "op '", op,
             "': Scores must be [N, C, M] or [M, C], got ", tide::ToString(sd));
  TIDE_CHECK(shared_boxes ? bd[0] == sd[0] && bd[1] == sd[2] : bd[0] == sd[0] && bd[1] == sd[1],
             "op '", op, "': BBoxes ", tide::ToString(bd), " does not fit Scores ",
             tide::ToString(sd),
             shared_boxes ? " (want BBoxes [N, M, 4] for Scores [N, C, M])"
                          : " (want BBoxes [M, C, 4] for Scores [M, C])");
  const T* b = bboxes.data<T>();
  const T* s = scores.data<T>();
  const int classes = static_cast<int>(sd[1]);
  // Each image's first row (of BBoxes [M, C, 4]) or image index (of [N, M, 4]).
  std::vector<int64_t> starts;
  if (shared_boxes) {
    for (int64_t i = 0; i <= bd[0]; ++i) starts.push_back(i);
  } else {
    starts = ImageOffsets(ctx, "RoisNum", "BBoxes", bd[0]);
  }
  const int64_t images = static_cast<int64_t>(starts.size()) - 1;
  const int64_t m = shared_boxes ? bd[1] : 0;
  // The candidates of class c in image i.
  auto view = [&](int64_t i, int c) {
    if (shared_boxes) return ClassView<T>{b + i * m * 4, 4, s + (i * classes + c) * m, 1, m};
    return ClassView<T>{b + (starts[i] * classes + c) * 4, classes * 4, s + starts[i] * classes + c,
                        classes, starts[i + 1] - starts[i]};
  };
  std::vector<std::map<int, std::vector<int>>> kept(images);
  std::vector<int64_t> rows{0};
  for (int64_t i = 0; i < images; ++i) {
    int64_t count = 0;
    if (shared_boxes || starts[i + 1] > starts[i])
      kept[i] = ImageNms<T>(
          classes, a, !shared_boxes, [&](int c) { return view(i, c); }, &count);
    rows.push_back(rows.back() + count);
  }
  const int64_t total = rows.back();
  const bool with_index = ctx.HasOutput("Index");
  Tensor out = ctx.Output("Out");
  // Nothing kept: an empty Out, or (without Index, as Paddle's) one row holding -1.
  const bool minus_one_row = total == 0 && !with_index;
  T* o = out.mutable_data<T>({minus_one_row ? 1 : total, minus_one_row ? 1 : 6}, ctx.place());
  if (minus_one_row) o[0] = T(-1);
  int32_t* index =
      with_index ? ctx.Output("Index").mutable_data<int32_t>({total, 1}, ctx.place()) : nullptr;
  int64_t r = 0;
  for (int64_t i = 0; i < images; ++i) {
    for (const auto& [label, indices] : kept[i]) {
      const ClassView<T> v = view(i, label);
      for (int k : indices) {
        T* row = o + r * 6;
        row[0] = static_cast<T>(label);
        row[1] = v.score(k);
        std::copy(v.box(k), v.box(k) + 4, row + 2);
        if (index)
          index[r] =
              static_cast<int32_t>(shared_boxes ? i * m + k : (starts[i] + k) * classes + label);
        ++r;
      }
    }
  }
  tide::LoD lod{std::vector<uint64_t>(rows.begin(), rows.end())};
  if (minus_one_row) lod = {{0, 1}};
  out.set_lod(lod);
  if (ctx.HasOutput("NmsRoisNum")) {
    int32_t* num = ctx.Output("NmsRoisNum").mutable_data<int32_t>({images}, ctx.place());
    for (int64_t i = 0; i < images; ++i) num[i] = static_cast<int32_t>(rows[i + 1] - rows[i]);
  }
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("multiclass_nms3")
        .Comment("Per-class NMS and the best keep_top_k boxes per image (PaddleDetection's "
                 "last op).")
        .Input("BBoxes", "[N, M, 4] boxes of each image, or [M, C, 4]: a box per class")
        .Input("Scores", "[N, C, M] (with [N, M, 4] boxes) or [M, C]")
        .Input("RoisNum", "int32/int64 [N]: rows per image of [M, C] scores (else BBoxes' LoD)")
        .AsDispensable()
        .Output("Out", "[K, 6]: label, score, xmin, ymin, xmax, ymax")
        .Output("Index", "int32 [K, 1]: each row's box in the flattened input")
        .Output("NmsRoisNum", "int32 [N]: rows per image")
        .AsDispensable()
        .RequiredAttr("score_threshold", TIDE_ATTR_FLOAT, "boxes must score above this")
        .RequiredAttr("nms_top_k", TIDE_ATTR_INT, "candidates per class before NMS (-1: all)")
        .RequiredAttr("keep_top_k", TIDE_ATTR_INT, "boxes per image after NMS (-1: all)")
        .Attr("nms_threshold", 0.3f, "IoU above which a box is dropped")
        .Attr("normalized", true, "boxes in [0, 1]; false: pixel boxes, sides + 1")
        .Attr("nms_eta", 1.0f, "the threshold's factor after each kept box (while > 0.5)")
        .Attr("background_label", int32_t{0}, "the class left out (-1: none)")
        .InferShape(MulticlassNms3InferShape)
        .NoGradient());
// Fluid's multiclass_nms: the same without Index and RoisNum (nothing kept: Out is one -1 row).
TIDE_REGISTER_OP(
    tide::OpSchema("multiclass_nms")
        .Comment("Per-class NMS and the best keep_top_k boxes per image (Fluid 1.x).")
        .Input("BBoxes", "[N, M, 4] boxes of each image, or [M, C, 4] with a LoD")
        .Input("Scores", "[N, C, M] (with [N, M, 4] boxes) or [M, C]")
        .Output("Out", "[K, 6]: label, score, xmin, ymin, xmax, ymax; [1, 1] -1 when none")
        .RequiredAttr("score_threshold", TIDE_ATTR_FLOAT, "boxes must score above this")
        .RequiredAttr("nms_top_k", TIDE_ATTR_INT, "candidates per class before NMS (-1: all)")
        .RequiredAttr("keep_top_k", TIDE_ATTR_INT, "boxes per image after NMS (-1: all)")
        .Attr("nms_threshold", 0.3f, "IoU above which a box is dropped")
        .Attr("normalized", true, "boxes in [0, 1]; false: pixel boxes, sides + 1")
        .Attr("nms_eta", 1.0f, "the threshold's factor after each kept box (while > 0.5)")
        .Attr("background_label", int32_t{0}, "the class left out (-1: none)")
        .InferShape(MulticlassNms3InferShape)
        .NoGradient());
TIDE_REGISTER_KERNEL("multiclass_nms3", "cpu", MulticlassNms3Kernel, OPS_DETECTION_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("multiclass_nms", "cpu", MulticlassNms3Kernel, OPS_DETECTION_FLOAT_TYPES);
