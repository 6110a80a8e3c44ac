// resampling_test.cc: the oneDNN bilinear_interp / nearest_interp kernels and nearest's grad
// (resampling_kernel.cc) against float64 loops of Fluid's coordinate rules, for the attributes
// and sizes where oneDNN's rule is Fluid's (bilinear: align_corners = false, align_mode = 0;
// nearest: integer upscales, or the same size), fed plain and blocked, out size from out_h /
// out_w, scale or OutSize; NHWC; every other attribute value or size runs the plain kernel.
#include "mkldnn_test_util.h"

namespace tide::test::mkldnn {
namespace {

struct InterpCase {
  const char* name;
  std::string op;
  std::vector<int64_t> x;
  int32_t out_h, out_w;
  float scale;
  bool align_corners;
  int32_t align_mode;
  bool out_size_input = false;
};

std::ostream& operator<<(std::ostream& os, const InterpCase& c) { return os << c.name; }

// Fluid's source coordinate of output index k (interp_pad2d_ops.cc's rule, written out here):
// the two taps and the weight of the upper one.
struct Taps {
  int64_t lo, hi;
  double w;
};

Taps TapsOf(const InterpCase& c, int64_t k, int64_t in, int64_t out) {
  const double ratio =
      out > 1 ? (c.align_corners ? (in - 1.0) / (out - 1.0) : double(in) / out) : 0.0;
  if (c.op == "nearest_interp") {
    const double src = ratio * k;
    int64_t i =
        c.align_corners ? static_cast<int64_t>(std::floor(src + 0.5)) : static_cast<int64_t>(src);
    i = std::min(i, in - 1);
    return {i, i, 0};
  }
  double src = c.align_mode == 0 && !c.align_corners ? ratio * (k + 0.5) - 0.5 : ratio * k;
  src = std::max(src, 0.0);
  const int64_t lo = std::min(static_cast<int64_t>(src), in - 1);
  return {lo, std::min(lo + 1, in - 1), src - lo};
}

std::pair<int64_t, int64_t> OutHw(const InterpCase& c) {
  if (c.scale > 0)
    return {static_cast<int64_t>(c.x[2] * c.scale), static_cast<int64_t>(c.x[3] * c.scale)};
  return {c.out_h, c.out_w};
}

// Out, or (with dout) the X@GRAD the transposed taps give.
TestTensor Reference(const InterpCase& c, const TestTensor& x, const TestTensor* dout = nullptr) {
  const auto [oh, ow] = OutHw(c);
  const int64_t planes = c.x[0] * c.x[1], ih = c.x[2], iw = c.x[3];
  TestTensor out = Values({c.x[0], c.x[1], oh, ow}, std::vector<double>(planes * oh * ow));
  TestTensor dx = x;
  std::fill(dx.data.begin(), dx.data.end(), 0.0);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const Taps th = TapsOf(c, i, ih, oh), tw = TapsOf(c, j, iw, ow);
        const int64_t o = (p * oh + i) * ow + j;
        const std::pair<int64_t, double> taps[4] = {{th.lo * iw + tw.lo, (1 - th.w) * (1 - tw.w)},
                                                    {th.lo * iw + tw.hi, (1 - th.w) * tw.w},
                                                    {th.hi * iw + tw.lo, th.w * (1 - tw.w)},
                                                    {th.hi * iw + tw.hi, th.w * tw.w}};
        for (const auto& [at, w] : taps) {
          out.data[o] += w * x.data[p * ih * iw + at];
          if (dout) dx.data[p * ih * iw + at] += w * dout->data[o];
        }
      }
  return dout ? dx : out;
}

Net InterpNet(const InterpCase& c, const TestTensor& x) {
  Net net;
  net.Feed("x", x);
  core::VariableNameMap ins = {{"X", {"x"}}};
  if (c.out_size_input) {
    const auto [oh, ow] = OutHw(c);
    net.Feed("out_size", Values({2}, {double(oh), double(ow)}, TIDE_INT32), false);
    ins["OutSize"] = {"out_size"};
  }
  core::AttributeMap attrs = {{"out_h", c.out_size_input ? 1 : c.out_h},
                              {"out_w", c.out_size_input ? 1 : c.out_w},
                              {"scale", c.scale},
                              {"align_corners", c.align_corners},
                              {"align_mode", c.align_mode}};
  net.Op(c.op, ins, {{"Out", {"out"}}}, attrs);
  return net;
}

const InterpCase kCases[] = {
    {"bilinear_up", "bilinear_interp", {2, 16, 16, 16}, 24, 40, 0, false, 0},
    {"bilinear_down", "bilinear_interp", {1, 16, 64, 64}, 32, 24, 0, false, 0},
    {"bilinear_c3", "bilinear_interp", {2, 3, 40, 30}, 60, 45, 0, false, 0},
    {"bilinear_scale", "bilinear_interp", {1, 8, 20, 24}, -1, -1, 2.5f, false, 0},
    {"bilinear_out_size", "bilinear_interp", {2, 8, 16, 16}, 40, 28, 0, false, 0, true},
    {"nearest_x2", "nearest_interp", {2, 16, 16, 16}, 32, 32, 0, false, 1},
    {"nearest_x2_x3", "nearest_interp", {1, 8, 16, 16}, 32, 48, 0, false, 1},
    {"nearest_same_size_align_corners", "nearest_interp", {2, 16, 32, 32}, 32, 32, 0, true, 1},
    {"nearest_out_size", "nearest_interp", {1, 16, 16, 16}, 64, 32, 0, false, 1, true},
};

class MkldnnInterp : public ::testing::TestWithParam<InterpCase> {};

TEST_P(MkldnnInterp, ForwardMatchesFloat64Reference) {
  const InterpCase& c = GetParam();
  const TestTensor x = Random(c.x, TIDE_FP32, -1, 1, 61);
  const TestTensor want = Reference(c, x);
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Result got = InterpNet(c, x).Run({"out"}, /*mkldnn=*/true, feed);
    EXPECT_TRUE(RanMkldnn(got, c.op));
    // oneDNN computes the source coordinate in float32 (Fluid in double): a bilinear weight is
    // off by up to ~1e-6 relative to the input size.
    EXPECT_TRUE(Close(got.values.at("out"), want, 1e-5, c.op == "bilinear_interp" ? 1e-5 : 1e-6));
    if (feed == InputLayout::kBlocked && c.x[1] % 8 == 0)
      EXPECT_EQ(got.layouts.at("out"), TIDE_LAYOUT_ONEDNN) << "Out keeps a blocked X's format";
  }
}

TEST_P(MkldnnInterp, GradMatchesFloat64Reference) {
  const InterpCase& c = GetParam();
  const auto [oh, ow] = OutHw(c);
  const TestTensor x = Random(c.x, TIDE_FP32, -1, 1, 62);
  const TestTensor dout = Random({c.x[0], c.x[1], oh, ow}, TIDE_FP32, -1, 1, 63);
  const TestTensor want = Reference(c, x, &dout);
  for (InputLayout feed : {InputLayout::kPlain, InputLayout::kBlocked}) {
    SCOPED_TRACE(FeedName(feed));
    Net net = InterpNet(c, x);
    net.Backward("out", dout);
    Result got = net.Run({"x@GRAD"}, /*mkldnn=*/true, feed);
    // oneDNN 2.6's linear backward is never faster than the plain kernel: none is registered.
    EXPECT_TRUE(c.op == "nearest_interp" ? RanMkldnn(got, c.op + "_grad")
                                         : RanPlain(got, c.op + "_grad"));
    EXPECT_EQ(got.layouts.at("x@GRAD"), TIDE_LAYOUT_ANY);
    EXPECT_TRUE(Close(got.values.at("x@GRAD"), want, 1e-5, 1e-5));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, MkldnnInterp, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<InterpCase>& i) {
                           return std::string(i.param.name);
                         });

// Where oneDNN's coordinate rule is not Fluid's (or the output is small, README.md "Speed"), the
// oneDNN kernel declines and the plain kernel gives Fluid's values.
TEST(MkldnnInterp, OtherRulesRunThePlainKernel) {
  const InterpCase declined[] = {
      {"bilinear_align_corners", "bilinear_interp", {1, 16, 16, 16}, 40, 40, 0, true, 1},
      {"bilinear_align_mode_1", "bilinear_interp", {1, 16, 16, 16}, 40, 40, 0, false, 1},
      {"bilinear_out_1", "bilinear_interp", {1, 16, 16, 16}, 1, 512, 0, false, 0},
      {"nearest_not_a_multiple", "nearest_interp", {1, 16, 16, 16}, 40, 40, 0, false, 1},
      {"nearest_downscale", "nearest_interp", {1, 16, 64, 64}, 32, 32, 0, false, 1},
      {"nearest_x2_align_corners", "nearest_interp", {1, 16, 16, 16}, 32, 32, 0, true, 1},
      {"small", "bilinear_interp", {1, 3, 8, 8}, 16, 16, 0, false, 0},
  };
  for (const InterpCase& c : declined) {
    SCOPED_TRACE(c.name);
    const TestTensor x = Random(c.x, TIDE_FP32, -1, 1, 64);
    Result got = InterpNet(c, x).Run({"out"}, /*mkldnn=*/true);
    EXPECT_TRUE(RanPlain(got, c.op));
    EXPECT_TRUE(Close(got.values.at("out"), Reference(c, x), 1e-5, 1e-6));
  }
}

// [N, C, H, W] data as [N, H, W, C] and back.
TestTensor Transpose(const TestTensor& t, bool to_nhwc) {
  const auto& d = t.dims;  // the source's dims
  TestTensor r = t;
  r.dims = to_nhwc ? std::vector<int64_t>{d[0], d[2], d[3], d[1]}
                   : std::vector<int64_t>{d[0], d[3], d[1], d[2]};
  const int64_t c = to_nhwc ? d[1] : d[3], h = to_nhwc ? d[2] : d[1], w = to_nhwc ? d[3] : d[2];
  for (int64_t b = 0; b < d[0]; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t nchw = ((b * c + ch) * h + i) * w + j,
                        nhwc = ((b * h + i) * w + j) * c + ch;
          (to_nhwc ? r.data[nhwc] : r.data[nchw]) = to_nhwc ? t.data[nchw] : t.data[nhwc];
        }
  return r;
}

// data_layout NHWC: X [N, H, W, C] on oneDNN's nhwc tag, forward and nearest's grad.
TEST(MkldnnInterp, NhwcMatchesFloat64Reference) {
  const InterpCase cases[] = {
      {"bilinear", "bilinear_interp", {2, 16, 16, 16}, 24, 40, 0, false, 0},
      {"nearest", "nearest_interp", {2, 12, 16, 16}, 32, 48, 0, false, 1},
  };
  for (const InterpCase& c : cases) {
    SCOPED_TRACE(c.name);
    const TestTensor x = Random(c.x, TIDE_FP32, -1, 1, 66);
    const auto [oh, ow] = OutHw(c);
    const TestTensor dout = Random({c.x[0], c.x[1], oh, ow}, TIDE_FP32, -1, 1, 67);
    Net net;
    net.Feed("x", Transpose(x, true))
        .Op(c.op, {{"X", {"x"}}}, {{"Out", {"out"}}},
            {{"out_h", c.out_h},
             {"out_w", c.out_w},
             {"align_corners", c.align_corners},
             {"align_mode", c.align_mode},
             {"data_layout", std::string("NHWC")}});
    net.Backward("out", Transpose(dout, true));
    Result got = net.Run({"out", "x@GRAD"}, /*mkldnn=*/true);
    EXPECT_TRUE(RanMkldnn(got, c.op));
    EXPECT_TRUE(c.op == "nearest_interp" ? RanMkldnn(got, c.op + "_grad")
                                         : RanPlain(got, c.op + "_grad"));
    EXPECT_TRUE(Close(got.values.at("out"), Transpose(Reference(c, x), true), 1e-5, 1e-5));
    EXPECT_TRUE(
        Close(got.values.at("x@GRAD"), Transpose(Reference(c, x, &dout), true), 1e-5, 1e-5));
  }
}

}  // namespace
}  // namespace tide::test::mkldnn
