// box_coder_op.cc: Paddle's box_coder (paddle.vision.ops.box_coder): encodes target boxes
// against prior boxes as centre-size offsets (encode_center_size: TargetBox [N, 4] -> [N, M, 4]
// over PriorBox [M, 4]) or decodes such offsets back to boxes (decode_center_size: TargetBox
// [N, M, 4], the priors along dim `axis`), each offset scaled by the prior's variance
// (PriorBoxVar [M, 4], or the 4 values of `variance`). Pixel boxes (box_normalized false) count
// both end pixels (width + 1), as Paddle's kernel. No gradient: Paddle has none.
#include <cmath>

#include "common.h"

namespace ops_detection {
namespace {

bool IsEncode(const char* op, const std::string& code_type) {
  TIDE_CHECK(code_type == "encode_center_size" || code_type == "decode_center_size", "op '", op,
             "': code_type must be 'encode_center_size' or 'decode_center_size', got '", code_type,
             "'");
  return code_type == "encode_center_size";
}

// TargetBox's expected dims, checked; OutputBox's dims.
Dims BoxCoderOutDims(const char* op, bool encode, int axis, const Dims& prior, const Dims& target,
                     const Dims* var, size_t variance_size) {
  CheckRank(op, "PriorBox", prior, 2);
  CheckDim(op, "PriorBox", prior, 1, 4, "xmin, ymin, xmax, ymax");
  if (var) {
    CheckRank(op, "PriorBoxVar", *var, 2);
    CheckDim(op, "PriorBoxVar", *var, 0, prior[0], "PriorBox's rows");
    CheckDim(op, "PriorBoxVar", *var, 1, 4, "a variance per coordinate");
    TIDE_CHECK(variance_size == 0, "op '", op,
               "': give the variances either as PriorBoxVar or as the variance attribute, not "
               "both");
  }
  TIDE_CHECK(variance_size == 0 || variance_size == 4, "op '", op,
             "': variance must hold 4 values, got ", variance_size);
  if (encode) {
    CheckRank(op, "TargetBox", target, 2);
    CheckDim(op, "TargetBox", target, 1, 4, "xmin, ymin, xmax, ymax");
    return {target[0], prior[0], 4};
  }
  TIDE_CHECK(axis == 0 || axis == 1, "op '", op, "': axis must be 0 or 1, got ", axis);
  CheckRank(op, "TargetBox", target, 3);
  CheckDim(op, "TargetBox", target, axis == 0 ? 1 : 0, prior[0], "PriorBox's rows");
  CheckDim(op, "TargetBox", target, 2, 4, "offsets of x, y, w, h");
  return target;
}

void BoxCoderInferShape(tide::InferShapeContext& ctx) {
  const Dims var = ctx.HasInput("PriorBoxVar") ? ctx.InputDims("PriorBoxVar") : Dims{};
  const Dims out =
      BoxCoderOutDims(ctx.op_type(), IsEncode(ctx.op_type(), ctx.Attr<std::string>("code_type")),
                      ctx.Attr<int32_t>("axis"), ctx.InputDims("PriorBox"),
                      ctx.InputDims("TargetBox"), ctx.HasInput("PriorBoxVar") ? &var : nullptr,
                      ctx.Attr<std::vector<float>>("variance").size());
  ctx.SetOutputDims("OutputBox", out);
  ctx.SetOutputDataType("OutputBox", ctx.InputDataType("PriorBox"));
}

// A box's width, height and centre (pixel boxes: + 1 on the sides).
template <typename T>
struct CenterSize {
  T w, h, cx, cy;
};
template <typename T>
CenterSize<T> PriorCenterSize(const T* b, T pad) {
  const T w = b[2] - b[0] + pad, h = b[3] - b[1] + pad;
  return {w, h, b[0] + w / 2, b[1] + h / 2};
}

template <typename T>
void BoxCoderKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor prior = ctx.Input("PriorBox"), target = ctx.Input("TargetBox");
  const bool has_var = ctx.HasInput("PriorBoxVar");
  Tensor var_t = has_var ? ctx.Input("PriorBoxVar") : Tensor();
  const Dims var_dims = has_var ? var_t.dims() : Dims{};
  const std::vector<float> variance = ctx.Attr<std::vector<float>>("variance");
  const bool encode = IsEncode(op, ctx.Attr<std::string>("code_type"));
  const int axis = ctx.Attr<int32_t>("axis");
  const Dims od = BoxCoderOutDims(op, encode, axis, prior.dims(), target.dims(),
                                  has_var ? &var_dims : nullptr, variance.size());
  const T pad = ctx.Attr<bool>("box_normalized") ? T(0) : T(1);
  const T* p = prior.data<T>();
  const T* t = target.data<T>();
  const T* pv = has_var ? var_t.data<T>() : nullptr;
  Tensor out_t = ctx.Output("OutputBox");
  T* out = out_t.mutable_data<T>(od, ctx.place());
  const int64_t rows = od[0], cols = od[1];
  // The variance of prior j's coordinate k.
  auto var = [&](int64_t j, int k) {
    if (pv) return pv[j * 4 + k];
    return variance.empty() ? T(1) : static_cast<T>(variance[k]);
  };
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      T* o = out + (i * cols + j) * 4;
      if (encode) {
        const CenterSize<T> pr = PriorCenterSize(p + j * 4, pad);
        const T* tb = t + i * 4;
        const T tcx = (tb[2] + tb[0]) / 2, tcy = (tb[3] + tb[1]) / 2;
        const T tw = tb[2] - tb[0] + pad, th = tb[3] - tb[1] + pad;
        o[0] = (tcx - pr.cx) / pr.w;
        o[1] = (tcy - pr.cy) / pr.h;
        o[2] = std::log(std::fabs(tw / pr.w));
        o[3] = std::log(std::fabs(th / pr.h));
        if (pv || !variance.empty())
          for (int k = 0; k < 4; ++k) o[k] /= var(j, k);
      } else {
        const int64_t pj = axis == 0 ? j : i;
        const CenterSize<T> pr = PriorCenterSize(p + pj * 4, pad);
        const T* tb = t + (i * cols + j) * 4;
        const T cx = var(pj, 0) * tb[0] * pr.w + pr.cx;
        const T cy = var(pj, 1) * tb[1] * pr.h + pr.cy;
        const T w = std::exp(var(pj, 2) * tb[2]) * pr.w;
        const T h = std::exp(var(pj, 3) * tb[3]) * pr.h;
        o[0] = cx - w / 2;
        o[1] = cy - h / 2;
        o[2] = cx + w / 2 - pad;
        o[3] = cy + h / 2 - pad;
      }
    }
  }
  out_t.set_lod(target.lod());
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("box_coder")
                     .Comment("Encodes boxes as centre-size offsets from priors, or decodes them "
                              "(paddle.vision.ops.box_coder).")
                     .Input("PriorBox", "[M, 4] prior boxes: xmin, ymin, xmax, ymax")
                     .Input("PriorBoxVar", "[M, 4] each prior's variances")
                     .AsDispensable()
                     .Input("TargetBox", "encode: [N, 4] boxes; decode: [N, M, 4] offsets")
                     .Output("OutputBox", "[N, M, 4]: offsets (encode) or boxes (decode)")
                     .Attr("code_type", std::string("encode_center_size"),
                           "encode_center_size or decode_center_size")
                     .InSet({"encode_center_size", "decode_center_size"})
                     .Attr("box_normalized", true, "boxes in [0, 1]; false: pixel boxes, sides + 1")
                     .Attr("axis", int32_t{0},
                           "decode: the priors lie along TargetBox's dim 1 (0) or 0 (1)")
                     .Attr("variance", std::vector<float>{},
                           "4 variances for every prior (no PriorBoxVar)")
                     .InferShape(BoxCoderInferShape)
                     .NoGradient());
TIDE_REGISTER_KERNEL("box_coder", "cpu", BoxCoderKernel, OPS_DETECTION_FLOAT_TYPES);
