// generate_proposals_op.cc: Paddle's generate_proposals_v2 (PIR pd_op.generate_proposals; the
// RPN of Faster / Mask R-CNN): per image, the anchors' scores (Scores [N, A, H, W]) best first
// (the pre_nms_topN best by std::nth_element when fewer than all, as Paddle's kernel), each
// anchor (Anchors [H, W, A, 4]) moved by its deltas (BboxDeltas [N, 4 A, H, W], times
// Variances, the log sizes capped at log(1000 / 16)), clipped to the image (ImShape [N, 2]:
// height, width), boxes smaller than min_size (at least 1) or centred outside the image dropped,
// greedy NMS (nms_thresh, eta; pixel boxes with pixel_offset), the post_nms_topN first kept.
// RpnRois [R, 4] and RpnRoiProbs [R, 1] image by image (a LoD), RpnRoisNum int32 [N]; an image
// left with no box gives one zero box of score 0, as Paddle's. No gradient.
#include <cmath>
#include <numeric>

#include "common.h"

namespace ops_detection {
namespace {

struct ProposalArgs {
  int pre_top_n, post_top_n;
  float nms_thresh, min_size, eta;
  bool pixel_offset;
};

void CheckProposalInputs(const char* op, const Dims& s, const Dims& d, const Dims& im,
                         const Dims& anchors, const Dims& var) {
  CheckRank(op, "Scores", s, 4);
  CheckRank(op, "BboxDeltas", d, 4);
  CheckRank(op, "ImShape", im, 2);
  CheckDim(op, "BboxDeltas", d, 0, s[0], "Scores' batch");
  CheckDim(op, "BboxDeltas", d, 1, s[1] < 0 ? -1 : 4 * s[1], "4 per anchor of Scores");
  CheckDim(op, "BboxDeltas", d, 2, s[2], "Scores' height");
  CheckDim(op, "BboxDeltas", d, 3, s[3], "Scores' width");
  CheckDim(op, "ImShape", im, 0, s[0], "Scores' batch");
  TIDE_CHECK(im[1] < 0 || im[1] == 2 || im[1] == 3, "op '", op,
             "': ImShape must be [N, 2] (height, width), got ", tide::ToString(im));
  TIDE_CHECK(anchors.back() == 4 || anchors.back() < 0, "op '", op,
             "': Anchors must end in 4 (xmin, ymin, xmax, ymax), got ", tide::ToString(anchors));
  TIDE_CHECK(var == anchors, "op '", op, "': Variances ", tide::ToString(var),
             " must have Anchors' dims ", tide::ToString(anchors));
  const int64_t n = DimsProduct(anchors) / 4, want = s[1] * s[2] * s[3];
  TIDE_CHECK(!Known(anchors) || !Known(s) || n == want, "op '", op, "': Anchors ",
             tide::ToString(anchors), " must hold H W A = ", want, " boxes, got ", n);
}

void GenerateProposalsInferShape(tide::InferShapeContext& ctx) {
  CheckProposalInputs(ctx.op_type(), ctx.InputDims("Scores"), ctx.InputDims("BboxDeltas"),
                      ctx.InputDims("ImShape"), ctx.InputDims("Anchors"),
                      ctx.InputDims("Variances"));
  ctx.SetOutputDims("RpnRois", {-1, 4});
  ctx.SetOutputDataType("RpnRois", ctx.InputDataType("Scores"));
  ctx.SetOutputLoDLevel("RpnRois", 1);
  ctx.SetOutputDims("RpnRoiProbs", {-1, 1});
  ctx.SetOutputDataType("RpnRoiProbs", ctx.InputDataType("Scores"));
  ctx.SetOutputLoDLevel("RpnRoiProbs", 1);
  if (ctx.HasOutput("RpnRoisNum")) {
    ctx.SetOutputDims("RpnRoisNum", {ctx.InputDims("Scores")[0]});
    ctx.SetOutputDataType("RpnRoisNum", TIDE_INT32);
  }
}

// One image: its proposals (4 values each) and scores, Paddle's ProposalForOneImage.
template <typename T>
void OneImage(const T* scores, const T* deltas, const T* anchors, const T* var, int64_t m,
              const T* im, const ProposalArgs& a, std::vector<T>* rois, std::vector<T>* probs) {
  std::vector<int> index(m);
  std::iota(index.begin(), index.end(), 0);
  auto better = [&](int64_t i, int64_t j) { return scores[i] > scores[j]; };
  if (a.pre_top_n <= 0 || a.pre_top_n >= m) {
    std::sort(index.begin(), index.end(), better);
  } else {
    std::nth_element(index.begin(), index.begin() + a.pre_top_n, index.end(), better);
    index.resize(a.pre_top_n);
  }
  const T offset = a.pixel_offset ? T(1) : T(0);
  const T clip_log = static_cast<T>(std::log(1000.0 / 16.0));
  const T im_h = im[0], im_w = im[1];
  const T min_size = static_cast<T>(std::max(a.min_size, 1.0f));
  std::vector<T> boxes, kept_scores;
  for (int i : index) {
    const T* an = anchors + i * 4;
    const T* d = deltas + i * 4;
    const T* v = var + i * 4;
    const T aw = an[2] - an[0] + offset, ah = an[3] - an[1] + offset;
    const T acx = an[0] + T(0.5) * aw, acy = an[1] + T(0.5) * ah;
    const T cx = v[0] * d[0] * aw + acx, cy = v[1] * d[1] * ah + acy;
    const T w = std::exp(std::min<T>(v[2] * d[2], clip_log)) * aw;
    const T h = std::exp(std::min<T>(v[3] * d[3], clip_log)) * ah;
    T b[4] = {cx - w / 2, cy - h / 2, cx + w / 2 - offset, cy + h / 2 - offset};
    for (int k = 0; k < 4; ++k)
      b[k] = std::max(std::min(b[k], (k % 2 == 0 ? im_w : im_h) - offset), T(0));
    const T ws = b[2] - b[0] + offset, hs = b[3] - b[1] + offset;
    bool keep = ws >= min_size && hs >= min_size;
    if (a.pixel_offset) keep = keep && b[0] + ws / 2 <= im_w && b[1] + hs / 2 <= im_h;
    if (!keep) continue;
    boxes.insert(boxes.end(), b, b + 4);
    kept_scores.push_back(scores[i]);
  }
  if (kept_scores.empty()) {  // one zero box of score 0
    rois->insert(rois->end(), 4, T(0));
    probs->push_back(T(0));
    return;
  }
  if (a.nms_thresh <= 0) {
    rois->insert(rois->end(), boxes.begin(), boxes.end());
    probs->insert(probs->end(), kept_scores.begin(), kept_scores.end());
    return;
  }
  // Paddle's NMS: ascending stable sort, taken from the back (the best, the later of equals).
  std::vector<int> order(kept_scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int i, int j) { return kept_scores[i] < kept_scores[j]; });
  std::vector<int> selected;
  T threshold = static_cast<T>(a.nms_thresh);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    bool keep = true;
    for (int s : selected)
      if (BoxIoU(&boxes[*it * 4], &boxes[s * 4], !a.pixel_offset) > threshold) {
        keep = false;
        break;
      }
    if (!keep) continue;
    selected.push_back(*it);
    if (a.eta < 1 && threshold > T(0.5)) threshold *= static_cast<T>(a.eta);
  }
  if (a.post_top_n > 0 && a.post_top_n < static_cast<int>(selected.size()))
    selected.resize(a.post_top_n);
  for (int s : selected) {
    rois->insert(rois->end(), &boxes[s * 4], &boxes[s * 4] + 4);
    probs->push_back(kept_scores[s]);
  }
}

template <typename T>
void GenerateProposalsKernel(KernelContext& ctx) {
  Tensor scores_t = ctx.Input("Scores"), deltas_t = ctx.Input("BboxDeltas");
  Tensor im_t = ctx.Input("ImShape"), anchors_t = ctx.Input("Anchors");
  Tensor var_t = ctx.Input("Variances");
  const Dims sd = scores_t.dims(), imd = im_t.dims();
  CheckProposalInputs(ctx.op_type(), sd, deltas_t.dims(), imd, anchors_t.dims(), var_t.dims());
  const ProposalArgs a{ctx.Attr<int32_t>("pre_nms_topN"),
                       ctx.Attr<int32_t>("post_nms_topN"),
                       ctx.Attr<float>("nms_thresh"),
                       ctx.Attr<float>("min_size"),
                       ctx.Attr<float>("eta"),
                       ctx.Attr<bool>("pixel_offset")};
  const int64_t n = sd[0], na = sd[1], hw = sd[2] * sd[3], m = na * hw;
  const T* s = scores_t.data<T>();
  const T* d = deltas_t.data<T>();
  std::vector<T> scores(m), deltas(m * 4), rois, probs;
  std::vector<int64_t> counts;
  for (int64_t i = 0; i < n; ++i) {
    // [A, H, W] -> [H W A] and [4 A, H, W] -> [H W A, 4], the anchors' order.
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t k = 0; k < na; ++k) {
        scores[p * na + k] = s[(i * na + k) * hw + p];
        for (int c = 0; c < 4; ++c)
          deltas[(p * na + k) * 4 + c] = d[((i * na + k) * 4 + c) * hw + p];
      }
    const size_t before = probs.size();
    OneImage(scores.data(), deltas.data(), anchors_t.data<T>(), var_t.data<T>(), m,
             im_t.data<T>() + i * imd[1], a, &rois, &probs);
    counts.push_back(static_cast<int64_t>(probs.size() - before));
  }
  const int64_t total = static_cast<int64_t>(probs.size());
  Tensor rois_out = ctx.Output("RpnRois"), probs_out = ctx.Output("RpnRoiProbs");
  std::copy(rois.begin(), rois.end(), rois_out.mutable_data<T>({total, 4}, ctx.place()));
  std::copy(probs.begin(), probs.end(), probs_out.mutable_data<T>({total, 1}, ctx.place()));
  std::vector<uint64_t> lod{0};
  for (int64_t c : counts) lod.push_back(lod.back() + static_cast<uint64_t>(c));
  rois_out.set_lod({lod});
  probs_out.set_lod({lod});
  if (ctx.HasOutput("RpnRoisNum")) {
    int32_t* num = ctx.Output("RpnRoisNum").mutable_data<int32_t>({n}, ctx.place());
    for (int64_t i = 0; i < n; ++i) num[i] = static_cast<int32_t>(counts[i]);
  }
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("generate_proposals_v2")
                     .Comment("RPN proposals: anchors moved by deltas, clipped, filtered, NMS "
                              "(paddle.vision.ops.generate_proposals).")
                     .Input("Scores", "[N, A, H, W] objectness per anchor")
                     .Input("BboxDeltas", "[N, 4 A, H, W] (dx, dy, dw, dh) per anchor")
                     .Input("ImShape", "[N, 2] each image's height and width")
                     .Input("Anchors", "[H, W, A, 4] anchors: xmin, ymin, xmax, ymax")
                     .Input("Variances", "[H, W, A, 4] each anchor's variances")
                     .Output("RpnRois", "[R, 4] proposals, image by image")
                     .Output("RpnRoiProbs", "[R, 1] their scores")
                     .Output("RpnRoisNum", "int32 [N]: proposals per image")
                     .AsDispensable()
                     .RequiredAttr("pre_nms_topN", TIDE_ATTR_INT,
                                   "best anchors per image before NMS")
                     .RequiredAttr("post_nms_topN", TIDE_ATTR_INT, "proposals per image after NMS")
                     .RequiredAttr("nms_thresh", TIDE_ATTR_FLOAT,
                                   "IoU above which a box is dropped (<= 0: no NMS)")
                     .RequiredAttr("min_size", TIDE_ATTR_FLOAT, "smallest side kept (at least 1)")
                     .RequiredAttr("eta", TIDE_ATTR_FLOAT,
                                   "the NMS threshold's factor after each kept box")
                     .Attr("pixel_offset", true, "pixel boxes: sides + 1")
                     .InferShape(GenerateProposalsInferShape)
                     .NoGradient());
TIDE_REGISTER_KERNEL("generate_proposals_v2", "cpu", GenerateProposalsKernel,
                     OPS_DETECTION_FLOAT_TYPES);
