// distribute_fpn_proposals_op.cc: Paddle's distribute_fpn_proposals (FPN two-stage detectors:
// Faster / Mask R-CNN with FPN): each RoI of FpnRois [R, 4] goes to level floor(log2(sqrt(area)
// / refer_scale + 1e-6) + refer_level), clipped to [min_level, max_level] (area with + 1 sides
// when pixel_offset). MultiFpnRois: one output per level, its RoIs image by image in input order
// (with a LoD per image); MultiLevelRoIsNum: per level, int32 RoIs per image; RestoreIndex int32
// [R, 1]: where each input RoI went in the levels' concatenation. The images from RoisNum or
// FpnRois' LoD. No gradient.
#include <cmath>

#include "common.h"

namespace ops_detection {
namespace {

struct FpnArgs {
  int min_level, max_level, refer_level, refer_scale;
  bool pixel_offset;
  int levels() const { return max_level - min_level + 1; }
};

template <typename Ctx>
FpnArgs GetFpnArgs(const Ctx& ctx) {
  FpnArgs a{ctx.template Attr<int32_t>("min_level"), ctx.template Attr<int32_t>("max_level"),
            ctx.template Attr<int32_t>("refer_level"), ctx.template Attr<int32_t>("refer_scale"),
            ctx.template Attr<bool>("pixel_offset")};
  TIDE_CHECK(a.min_level >= 0 && a.max_level >= a.min_level, "op '", ctx.op_type(),
             "': min_level must be >= 0 and max_level >= min_level, got ", a.min_level, " and ",
             a.max_level);
  TIDE_CHECK(a.refer_scale > 0, "op '", ctx.op_type(), "': refer_scale must be > 0, got ",
             a.refer_scale);
  return a;
}

template <typename Ctx>
void CheckLevelOutputs(const Ctx& ctx, const FpnArgs& a) {
  TIDE_CHECK(static_cast<int>(ctx.OutputCount("MultiFpnRois")) == a.levels(), "op '", ctx.op_type(),
             "': MultiFpnRois must have one variable per level (max_level ", a.max_level,
             " - min_level ", a.min_level, " + 1 = ", a.levels(), "), got ",
             ctx.OutputCount("MultiFpnRois"));
  const size_t nums = ctx.OutputCount("MultiLevelRoIsNum");
  TIDE_CHECK(nums == 0 || static_cast<int>(nums) == a.levels(), "op '", ctx.op_type(),
             "': MultiLevelRoIsNum must have one variable per level (", a.levels(), "), got ",
             nums);
}

void DistributeFpnInferShape(tide::InferShapeContext& ctx) {
  const Dims rois = ctx.InputDims("FpnRois");
  CheckRank(ctx.op_type(), "FpnRois", rois, 2);
  CheckDim(ctx.op_type(), "FpnRois", rois, 1, 4, "xmin, ymin, xmax, ymax");
  const FpnArgs a = GetFpnArgs(ctx);
  CheckLevelOutputs(ctx, a);
  for (int l = 0; l < a.levels(); ++l) {
    ctx.SetOutputDims("MultiFpnRois", {-1, 4}, l);
    ctx.SetOutputDataType("MultiFpnRois", ctx.InputDataType("FpnRois"), l);
    ctx.SetOutputLoDLevel("MultiFpnRois", 1, l);
    if (ctx.HasOutput("MultiLevelRoIsNum")) {
      ctx.SetOutputDims("MultiLevelRoIsNum", {-1}, l);
      ctx.SetOutputDataType("MultiLevelRoIsNum", TIDE_INT32, l);
    }
  }
  ctx.SetOutputDims("RestoreIndex", {rois[0], 1});
  ctx.SetOutputDataType("RestoreIndex", TIDE_INT32);
}

template <typename T>
void DistributeFpnKernel(KernelContext& ctx) {
  Tensor rois_t = ctx.Input("FpnRois");
  const Dims rd = rois_t.dims();
  CheckRank(ctx.op_type(), "FpnRois", rd, 2);
  CheckDim(ctx.op_type(), "FpnRois", rd, 1, 4, "xmin, ymin, xmax, ymax");
  const FpnArgs a = GetFpnArgs(ctx);
  CheckLevelOutputs(ctx, a);
  const std::vector<int64_t> offsets = ImageOffsets(ctx, "RoisNum", "FpnRois", rd[0]);
  const int64_t images = static_cast<int64_t>(offsets.size()) - 1, levels = a.levels();
  const T* rois = rois_t.data<T>();
  std::vector<int> level(rd[0]);
  // per level, per image: the RoIs' rows
  std::vector<std::vector<std::vector<int64_t>>> rows(levels,
                                                      std::vector<std::vector<int64_t>>(images));
  for (int64_t i = 0; i < images; ++i) {
    for (int64_t r = offsets[i]; r < offsets[i + 1]; ++r) {
      const T scale = std::sqrt(BoxArea(rois + r * 4, !a.pixel_offset));
      int l = static_cast<int>(
          std::floor(std::log2(scale / a.refer_scale + static_cast<T>(1e-6)) + a.refer_level));
      l = std::min(a.max_level, std::max(l, a.min_level));
      rows[l - a.min_level][i].push_back(r);
    }
  }
  int32_t* restore = ctx.Output("RestoreIndex").mutable_data<int32_t>({rd[0], 1}, ctx.place());
  int64_t at = 0;
  for (int64_t l = 0; l < levels; ++l) {
    int64_t count = 0;
    for (const auto& v : rows[l]) count += static_cast<int64_t>(v.size());
    Tensor out = ctx.Output("MultiFpnRois", l);
    T* o = out.mutable_data<T>({count, 4}, ctx.place());
    std::vector<uint64_t> lod{0};
    for (int64_t i = 0; i < images; ++i) {
      for (int64_t r : rows[l][i]) {
        std::copy(rois + r * 4, rois + r * 4 + 4, o);
        o += 4;
        restore[r] = static_cast<int32_t>(at++);
      }
      lod.push_back(lod.back() + rows[l][i].size());
    }
    out.set_lod({lod});
    if (ctx.HasOutput("MultiLevelRoIsNum", l)) {
      int32_t* num =
          ctx.Output("MultiLevelRoIsNum", l).mutable_data<int32_t>({images}, ctx.place());
      for (int64_t i = 0; i < images; ++i) num[i] = static_cast<int32_t>(rows[l][i].size());
    }
  }
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("distribute_fpn_proposals")
                     .Comment("Distributes RoIs over FPN levels by their size (FPN R-CNN).")
                     .Input("FpnRois", "[R, 4] RoIs: xmin, ymin, xmax, ymax")
                     .Input("RoisNum", "int32/int64 [N]: RoIs per image (else FpnRois' LoD)")
                     .AsDispensable()
                     .Output("MultiFpnRois", "one [R_l, 4] per level, min_level first")
                     .AsDuplicable()
                     .Output("RestoreIndex",
                             "int32 [R, 1]: each RoI's row in the levels' concatenation")
                     .Output("MultiLevelRoIsNum", "int32 [N] per level: RoIs per image")
                     .AsDuplicable()
                     .AsDispensable()
                     .RequiredAttr("min_level", TIDE_ATTR_INT, "the lowest FPN level")
                     .RequiredAttr("max_level", TIDE_ATTR_INT, "the highest FPN level")
                     .RequiredAttr("refer_level", TIDE_ATTR_INT, "the level of a refer_scale RoI")
                     .RequiredAttr("refer_scale", TIDE_ATTR_INT,
                                   "the RoI size (sqrt area) of refer_level")
                     .Attr("pixel_offset", true, "pixel boxes: sides + 1")
                     .InferShape(DistributeFpnInferShape)
                     .NoGradient());
TIDE_REGISTER_KERNEL("distribute_fpn_proposals", "cpu", DistributeFpnKernel,
                     OPS_DETECTION_FLOAT_TYPES);
