// common.cc: the per-image row offsets the RoI and NMS ops read from RoisNum or a LoD.
#include "common.h"

#include <tide/ops/int_inputs.hpp>

namespace ops_detection {

std::vector<int64_t> ImageOffsets(const KernelContext& ctx, const char* rois_num_param,
                                  const char* boxes_param, int64_t rows) {
  std::vector<int64_t> offsets{0};
  if (ctx.HasInput(rois_num_param)) {
    for (int64_t n : tide::ops::IntValues(ctx, rois_num_param)) {
      TIDE_CHECK(n >= 0, "op '", ctx.op_type(), "': ", rois_num_param, " ('",
                 ctx.InputName(rois_num_param), "') holds a negative count ", n);
      offsets.push_back(offsets.back() + n);
    }
    TIDE_CHECK(offsets.back() == rows, "op '", ctx.op_type(), "': ", rois_num_param, " ('",
               ctx.InputName(rois_num_param), "') counts ", offsets.back(), " boxes but ",
               boxes_param, " has ", rows, " rows");
    return offsets;
  }
  const tide::LoD lod = ctx.Input(boxes_param).lod();
  TIDE_CHECK(!lod.empty(), "op '", ctx.op_type(), "': ", boxes_param, " ('",
             ctx.InputName(boxes_param), "') needs a LoD (its boxes per image) or the ",
             rois_num_param, " input, and has neither");
  const auto& level = lod.back();
  TIDE_CHECK(!level.empty() && level.front() == 0 && static_cast<int64_t>(level.back()) == rows,
             "op '", ctx.op_type(), "': ", boxes_param, " ('", ctx.InputName(boxes_param),
             "') has ", rows, " rows but its LoD's last level ends at ",
             level.empty() ? 0 : level.back());
  for (size_t i = 1; i < level.size(); ++i) offsets.push_back(static_cast<int64_t>(level[i]));
  return offsets;
}

std::vector<int64_t> RoiImages(const KernelContext& ctx, int64_t rois, int64_t batch) {
  const std::vector<int64_t> offsets = ImageOffsets(ctx, "RoisNum", "ROIs", rois);
  TIDE_CHECK(static_cast<int64_t>(offsets.size()) - 1 == batch, "op '", ctx.op_type(),
             "': the RoIs are given for ", offsets.size() - 1, " images but X has ", batch);
  std::vector<int64_t> image(rois);
  for (size_t i = 0; i + 1 < offsets.size(); ++i)
    std::fill(image.begin() + offsets[i], image.begin() + offsets[i + 1], i);
  return image;
}

}  // namespace ops_detection
