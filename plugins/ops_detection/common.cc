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

}  // namespace ops_detection
