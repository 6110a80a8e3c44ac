// prior_box_op.cc: Paddle's prior_box (paddle.vision.ops.prior_box, SSD's anchors): for each
// cell of Input's [H, W] map, a box per min size and aspect ratio (1 first, then each ratio and,
// with flip, its inverse; duplicates within 1e-6 once) plus sqrt(min * max) squares, centred at
// ((w + offset) step_w, (h + offset) step_h) and divided by Image's width and height.
// Boxes [H, W, P, 4] and Variances [H, W, P, 4] (the `variances` everywhere). No gradient.
#include <cmath>

#include "common.h"

namespace ops_detection {
namespace {

// Paddle's ExpandAspectRatios: 1, then each new ratio (and 1 / ratio with flip).
std::vector<float> ExpandAspectRatios(const std::vector<float>& ratios, bool flip) {
  std::vector<float> out{1.0f};
  for (float r : ratios) {
    const bool seen =
        std::any_of(out.begin(), out.end(), [&](float o) { return std::fabs(r - o) < 1e-6; });
    if (seen) continue;
    out.push_back(r);
    if (flip) out.push_back(1.0f / r);
  }
  return out;
}

struct PriorArgs {
  std::vector<float> min_sizes, max_sizes, ratios, variances;
  int64_t priors;
};

template <typename Ctx>
PriorArgs GetPriorArgs(const Ctx& ctx) {
  const char* op = ctx.op_type();
  PriorArgs a;
  a.min_sizes = ctx.template Attr<std::vector<float>>("min_sizes");
  a.max_sizes = ctx.template Attr<std::vector<float>>("max_sizes");
  a.variances = ctx.template Attr<std::vector<float>>("variances");
  a.ratios = ExpandAspectRatios(ctx.template Attr<std::vector<float>>("aspect_ratios"),
                                ctx.template Attr<bool>("flip"));
  TIDE_CHECK(!a.min_sizes.empty(), "op '", op, "': min_sizes must not be empty");
  for (float m : a.min_sizes) TIDE_CHECK(m > 0, "op '", op, "': min_sizes must be > 0, got ", m);
  TIDE_CHECK(a.max_sizes.empty() || a.max_sizes.size() == a.min_sizes.size(), "op '", op,
             "': max_sizes must be empty or hold one size per min size (", a.min_sizes.size(),
             "), got ", a.max_sizes.size());
  for (size_t i = 0; i < a.max_sizes.size(); ++i)
    TIDE_CHECK(a.max_sizes[i] > a.min_sizes[i], "op '", op, "': max_sizes[", i, "] (",
               a.max_sizes[i], ") must be greater than min_sizes[", i, "] (", a.min_sizes[i], ")");
  TIDE_CHECK(a.variances.size() == 4, "op '", op, "': variances must hold 4 values, got ",
             a.variances.size());
  a.priors = static_cast<int64_t>(a.ratios.size() * a.min_sizes.size() + a.max_sizes.size());
  return a;
}

void PriorBoxInferShape(tide::InferShapeContext& ctx) {
  const Dims in = ctx.InputDims("Input"), img = ctx.InputDims("Image");
  CheckRank(ctx.op_type(), "Input", in, 4);
  CheckRank(ctx.op_type(), "Image", img, 4);
  const PriorArgs a = GetPriorArgs(ctx);
  for (const char* out : {"Boxes", "Variances"}) {
    ctx.SetOutputDims(out, {in[2], in[3], a.priors, 4});
    ctx.SetOutputDataType(out, ctx.InputDataType("Input"));
  }
}

template <typename T>
void PriorBoxKernel(KernelContext& ctx) {
  Tensor input = ctx.Input("Input"), image = ctx.Input("Image");
  const Dims in = input.dims(), im = image.dims();
  CheckRank(ctx.op_type(), "Input", in, 4);
  CheckRank(ctx.op_type(), "Image", im, 4);
  const PriorArgs a = GetPriorArgs(ctx);
  const int64_t fh = in[2], fw = in[3];
  const T img_h = static_cast<T>(im[2]), img_w = static_cast<T>(im[3]);
  const T step_w_attr = static_cast<T>(ctx.Attr<float>("step_w"));
  const T step_h_attr = static_cast<T>(ctx.Attr<float>("step_h"));
  const T offset = static_cast<T>(ctx.Attr<float>("offset"));
  const bool min_max_order = ctx.Attr<bool>("min_max_aspect_ratios_order");
  // Either step 0: the image's size over the map's, both ways.
  const bool auto_step = step_w_attr == 0 || step_h_attr == 0;
  const T step_w = auto_step ? img_w / static_cast<T>(fw) : step_w_attr;
  const T step_h = auto_step ? img_h / static_cast<T>(fh) : step_h_attr;
  const Dims od{fh, fw, a.priors, 4};
  T* b = ctx.Output("Boxes").mutable_data<T>(od, ctx.place());
  T* v = ctx.Output("Variances").mutable_data<T>(od, ctx.place());
  T* box = b;
  for (int64_t h = 0; h < fh; ++h) {
    for (int64_t w = 0; w < fw; ++w) {
      const T cx = (static_cast<T>(w) + offset) * step_w;
      const T cy = (static_cast<T>(h) + offset) * step_h;
      // Half width and height: float sizes and ratios, double arithmetic, as Paddle's kernel.
      auto put = [&](T half_w, T half_h) {
        box[0] = (cx - half_w) / img_w;
        box[1] = (cy - half_h) / img_h;
        box[2] = (cx + half_w) / img_w;
        box[3] = (cy + half_h) / img_h;
        box += 4;
      };
      for (size_t s = 0; s < a.min_sizes.size(); ++s) {
        const float min_size = a.min_sizes[s];
        auto square_max = [&] {
          if (a.max_sizes.empty()) return;
          // The product in float, its root in double, as Paddle's kernel.
          const float area = min_size * a.max_sizes[s];
          const T half = static_cast<T>(std::sqrt(static_cast<double>(area)) / 2.);
          put(half, half);
        };
        if (min_max_order) {
          put(static_cast<T>(min_size / 2.), static_cast<T>(min_size / 2.));
          square_max();
          for (float ar : a.ratios) {
            if (std::fabs(ar - 1.) < 1e-6) continue;
            put(static_cast<T>(min_size * std::sqrt(double{ar}) / 2.),
                static_cast<T>(min_size / std::sqrt(double{ar}) / 2.));
          }
        } else {
          for (float ar : a.ratios)
            put(static_cast<T>(min_size * std::sqrt(double{ar}) / 2.),
                static_cast<T>(min_size / std::sqrt(double{ar}) / 2.));
          square_max();
        }
      }
    }
  }
  const int64_t n = fh * fw * a.priors;
  if (ctx.Attr<bool>("clip"))
    for (int64_t i = 0; i < n * 4; ++i) b[i] = std::min<T>(std::max<T>(b[i], T(0)), T(1));
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < 4; ++k) v[i * 4 + k] = static_cast<T>(a.variances[k]);
}

}  // namespace
}  // namespace ops_detection

using namespace ops_detection;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("prior_box")
        .Comment("SSD's prior boxes of a feature map (paddle.vision.ops.prior_box).")
        .Input("Input", "[N, C, H, W] feature map (its H and W are used)")
        .Input("Image", "[N, C, IH, IW] input image (its IH and IW are used)")
        .Output("Boxes", "[H, W, P, 4]: xmin, ymin, xmax, ymax over the image's size")
        .Output("Variances", "[H, W, P, 4]: `variances` for every prior")
        .RequiredAttr("min_sizes", TIDE_ATTR_FLOATS, "the priors' sizes, in pixels")
        .Attr("max_sizes", std::vector<float>{}, "adds a sqrt(min * max) square per min size")
        .Attr("aspect_ratios", std::vector<float>{}, "width / height ratios besides 1")
        .Attr("variances", std::vector<float>{}, "4 variances, copied to every prior")
        .Attr("flip", true, "adds each ratio's inverse")
        .Attr("clip", true, "clips the boxes to [0, 1]")
        .Attr("step_w", 0.0f, "cell width in pixels (0: image width / W)")
        .Attr("step_h", 0.0f, "cell height in pixels (0: image height / H)")
        .Attr("offset", 0.5f, "the centre's offset in a cell")
        .Attr("min_max_aspect_ratios_order", false,
              "per min size: the square, the max square, then the ratios (Caffe's order)")
        .InferShape(PriorBoxInferShape)
        .NoGradient());
TIDE_REGISTER_KERNEL("prior_box", "cpu", PriorBoxKernel, OPS_DETECTION_FLOAT_TYPES);
