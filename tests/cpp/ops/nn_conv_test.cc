// nn_conv_test.cc: conv2d / depthwise_conv2d against a direct float64 loop (strides, paddings,
// dilations, groups, 1x1), their grads against finite differences, compile-time shapes and errors.
#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

struct ConvCase {
  const char* name;
  int64_t n, c, h, w, m, kh, kw;
  int32_t sh, sw, ph, pw, dh, dw, groups;
};

const ConvCase kCases[] = {
    {"plain3x3", 2, 3, 6, 5, 4, 3, 3, 1, 1, 0, 0, 1, 1, 1},
    {"stride2_pad1", 2, 3, 7, 6, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1},
    {"asymmetric", 1, 2, 7, 8, 3, 2, 3, 1, 2, 1, 0, 1, 1, 1},
    {"dilation2", 1, 2, 8, 7, 3, 3, 2, 1, 1, 2, 1, 2, 2, 1},
    {"groups2", 2, 4, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2},
    {"depthwise", 1, 3, 5, 6, 3, 3, 3, 2, 1, 1, 1, 1, 1, 3},
    {"pointwise", 2, 4, 3, 4, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1},
    {"pointwise_groups", 1, 4, 3, 3, 2, 1, 1, 1, 1, 0, 0, 1, 1, 2},
    {"all", 2, 4, 9, 8, 4, 3, 2, 2, 3, 2, 1, 2, 1, 2},
    // Big enough for the GEMM to run as a contraction on the CPU pool.
    {"large", 2, 16, 16, 16, 32, 3, 3, 1, 1, 0, 0, 1, 1, 1},
};

// Direct convolution: out[n][m][y][x] = sum_{c in group, i, j} in[n][c][y*sh-ph+i*dh][x*sw-pw+j*dw]
// * f[m][c - group offset][i][j].
std::vector<double> RefConv(const ConvCase& k, const TestTensor& in, const TestTensor& f,
                            std::vector<int64_t>* dims) {
  int64_t oh = (k.h + 2 * k.ph - (k.dh * (k.kh - 1) + 1)) / k.sh + 1;
  int64_t ow = (k.w + 2 * k.pw - (k.dw * (k.kw - 1) + 1)) / k.sw + 1;
  *dims = {k.n, k.m, oh, ow};
  int64_t cg = k.c / k.groups, mg = k.m / k.groups;
  std::vector<double> out(static_cast<size_t>(k.n * k.m * oh * ow), 0.0);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double s = 0;
          int64_t g = m / mg;
          for (int64_t cc = 0; cc < cg; ++cc)
            for (int64_t i = 0; i < k.kh; ++i)
              for (int64_t j = 0; j < k.kw; ++j) {
                int64_t iy = y * k.sh - k.ph + i * k.dh, ix = x * k.sw - k.pw + j * k.dw;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                int64_t c = g * cg + cc;
                s += in.data[((n * k.c + c) * k.h + iy) * k.w + ix] *
                     f.data[((m * cg + cc) * k.kh + i) * k.kw + j];
              }
          out[((n * k.m + m) * oh + y) * ow + x] = s;
        }
  return out;
}

NnOp ConvOp(const char* type, const ConvCase& k, TideDataType dt) {
  return NnOp(type)
      .In("Input", "input", Random({k.n, k.c, k.h, k.w}, dt, -1, 1, 3))
      .In("Filter", "filter", Random({k.m, k.c / k.groups, k.kh, k.kw}, dt, -1, 1, 4))
      .Out("Output", "output")
      .Attr("strides", std::vector<int32_t>{k.sh, k.sw})
      .Attr("paddings", std::vector<int32_t>{k.ph, k.pw})
      .Attr("dilations", std::vector<int32_t>{k.dh, k.dw})
      .Attr("groups", int32_t(k.groups));
}

class NnConv2dTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnConv2dTest, ForwardMatchesDirectLoop) {
  for (const auto& k : kCases) {
    SCOPED_TRACE(k.name);
    NnOp op = ConvOp("conv2d", k, GetParam());
    auto out = op.Run();
    std::vector<int64_t> dims;
    auto want = RefConv(k, op.feeds().at("input"), op.feeds().at("filter"), &dims);
    EXPECT_EQ(out["output"].dims, dims);
    EXPECT_EQ(out["output"].dtype, GetParam());
    ExpectNear(out["output"], want, FwdTol(GetParam()), FwdTol(GetParam()));
  }
}

TEST_P(NnConv2dTest, DepthwiseConv2dIsTheSameConvolution) {
  const ConvCase& k = kCases[5];
  NnOp op = ConvOp("depthwise_conv2d", k, GetParam());
  std::vector<int64_t> dims;
  auto want = RefConv(k, op.feeds().at("input"), op.feeds().at("filter"), &dims);
  auto out = op.Run();
  EXPECT_EQ(out["output"].dims, dims);
  ExpectNear(out["output"], want, FwdTol(GetParam()), FwdTol(GetParam()));
}

TEST_P(NnConv2dTest, GradsMatchFiniteDifferences) {
  GradTolerances t = GradTols(GetParam());
  for (int i : {1, 3, 4, 7, 8}) {
    const ConvCase& k = kCases[i];
    SCOPED_TRACE(k.name);
    // Smaller batch keeps the finite differences quick.
    ConvCase small = k;
    small.n = 1;
    ConvOp("conv2d", small, GetParam())
        .CheckGrad({"input", "filter"}, {"output"}, t.rtol, t.atol, t.delta);
  }
  ConvOp("depthwise_conv2d", kCases[5], GetParam())
      .CheckGrad({"input", "filter"}, {"output"}, t.rtol, t.atol, t.delta);
}

TEST_P(NnConv2dTest, FilterGradAloneMatchesDirectLoop) {
  // Filter@GRAD alone (Input in the no-grad set): the kernel must skip Input@GRAD.
  for (int c : {1, 8, 9}) {
    const ConvCase& k = kCases[c];
    SCOPED_TRACE(k.name);
    core::OpDesc fwd;
    NnOp op = ConvOp("conv2d", k, GetParam());
    core::ProgramDesc prog = op.Build(&fwd);
    auto grads = core::MakeGradOps(fwd, {"input"});
    ASSERT_EQ(grads.size(), 1u);
    EXPECT_EQ(grads[0].Output("Input@GRAD"), std::vector<std::string>{core::kEmptyVarName});
    core::BlockDesc* b = prog.MutableBlock(0);
    core::VarDesc* dv = b->Var("output@GRAD");
    dv->set_dtype(GetParam());
    std::vector<int64_t> dims;
    RefConv(k, op.feeds().at("input"), op.feeds().at("filter"), &dims);
    dv->set_shape(dims);
    AppendChecked(b, grads[0]);
    auto feeds = op.feeds();
    TestTensor ones;
    ones.dims = dims;
    ones.dtype = GetParam();
    ones.data.assign(static_cast<size_t>(ones.numel()), 1.0);
    feeds["output@GRAD"] = ones;
    auto got = RunProgram(prog, feeds, {"filter@GRAD"});
    // With dOut = 1: dF[m][c][i][j] = sum over n, y, x of the input tap under (i, j), c taken in
    // m's group.
    const TestTensor& in = op.feeds().at("input");
    int64_t oh = dims[2], ow = dims[3], cg = k.c / k.groups, mg = k.m / k.groups;
    std::vector<double> want(static_cast<size_t>(k.m * cg * k.kh * k.kw), 0.0);
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t cc = 0; cc < cg; ++cc)
        for (int64_t i = 0; i < k.kh; ++i)
          for (int64_t j = 0; j < k.kw; ++j) {
            double s = 0;
            for (int64_t n = 0; n < k.n; ++n)
              for (int64_t y = 0; y < oh; ++y)
                for (int64_t x = 0; x < ow; ++x) {
                  int64_t iy = y * k.sh - k.ph + i * k.dh, ix = x * k.sw - k.pw + j * k.dw;
                  if (iy >= 0 && iy < k.h && ix >= 0 && ix < k.w)
                    s += in.data[((n * k.c + (m / mg) * cg + cc) * k.h + iy) * k.w + ix];
                }
            want[((m * cg + cc) * k.kh + i) * k.kw + j] = s;
          }
    ExpectNear(got["filter@GRAD"], want, FwdTol(GetParam()), FwdTol(GetParam()));
  }
}

// Batches big enough that the plain kernel cuts them into a chunk per CPU thread, several
// images per GEMM, the chunks uneven (9 images): forward and both grads against direct loops.
const ConvCase kBatchCases[] = {
    {"chunks", 9, 8, 14, 14, 16, 5, 5, 1, 1, 0, 0, 1, 1, 1},
    {"chunks_all", 9, 16, 15, 14, 32, 3, 3, 2, 1, 1, 2, 1, 2, 2},
    {"chunks_pointwise", 9, 32, 16, 16, 32, 1, 1, 1, 1, 0, 0, 1, 1, 1},
};

TEST_P(NnConv2dTest, BatchesCutIntoChunksMatchDirectLoops) {
  for (const auto& k : kBatchCases) {
    SCOPED_TRACE(k.name);
    core::OpDesc fwd;
    NnOp op = ConvOp("conv2d", k, GetParam());
    core::ProgramDesc prog = op.Build(&fwd);
    const TestTensor& in = op.feeds().at("input");
    const TestTensor& f = op.feeds().at("filter");
    std::vector<int64_t> dims;
    const std::vector<double> want_out = RefConv(k, in, f, &dims);
    auto grads = core::MakeGradOps(fwd, {});
    ASSERT_EQ(grads.size(), 1u);
    core::BlockDesc* b = prog.MutableBlock(0);
    core::VarDesc* dv = b->Var("output@GRAD");
    dv->set_dtype(GetParam());
    dv->set_shape(dims);
    AppendChecked(b, grads[0]);
    auto feeds = op.feeds();
    const TestTensor dout = Random(dims, GetParam(), -1, 1, 5);
    feeds["output@GRAD"] = dout;
    auto got = RunProgram(prog, feeds, {"output", "input@GRAD", "filter@GRAD"});
    // dIn[n][c][iy][ix] += dOut[n][m][y][x] * F[m][cc][i][j]; dF[m][cc][i][j] += dOut * In.
    const int64_t oh = dims[2], ow = dims[3], cg = k.c / k.groups, mg = k.m / k.groups;
    std::vector<double> want_din(in.data.size(), 0.0), want_df(f.data.size(), 0.0);
    for (int64_t n = 0; n < k.n; ++n)
      for (int64_t m = 0; m < k.m; ++m)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            const double d = dout.data[((n * k.m + m) * oh + y) * ow + x];
            for (int64_t cc = 0; cc < cg; ++cc)
              for (int64_t i = 0; i < k.kh; ++i)
                for (int64_t j = 0; j < k.kw; ++j) {
                  const int64_t iy = y * k.sh - k.ph + i * k.dh, ix = x * k.sw - k.pw + j * k.dw;
                  if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                  const size_t xi = ((n * k.c + (m / mg) * cg + cc) * k.h + iy) * k.w + ix;
                  const size_t fi = ((m * cg + cc) * k.kh + i) * k.kw + j;
                  want_din[xi] += d * f.data[fi];
                  want_df[fi] += d * in.data[xi];
                }
          }
    const double tol = GetParam() == TIDE_FP32 ? 1e-4 : 1e-10;
    ExpectNear(got["output"], want_out, tol, tol);
    ExpectNear(got["input@GRAD"], want_din, tol, tol);
    ExpectNear(got["filter@GRAD"], want_df, tol, tol);
  }
}

INSTANTIATE_TEST_SUITE_P(Nn, NnConv2dTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnConv2dShape, UnknownBatchAndSizesPropagate) {
  core::AttributeMap attrs{{"strides", std::vector<int32_t>{2, 2}},
                           {"paddings", std::vector<int32_t>{1, 1}}};
  auto got =
      CompileInfer("conv2d", {{"Input", "x", {-1, 3, 32, -1}}, {"Filter", "f", {8, 3, 3, 3}}},
                   {{"Output", "y"}}, attrs);
  EXPECT_EQ(got["y"].dims, (std::vector<int64_t>{-1, 8, 16, -1}));
  EXPECT_EQ(got["y"].dtype, TIDE_FP32);
  auto g2 = CompileInfer(
      "conv2d",
      {{"Input", "x", {4, 6, 10, 10}, TIDE_FP64}, {"Filter", "f", {4, 3, 3, 3}, TIDE_FP64}},
      {{"Output", "y"}}, {{"groups", int32_t(2)}, {"dilations", std::vector<int32_t>{2, 2}}});
  EXPECT_EQ(g2["y"].dims, (std::vector<int64_t>{4, 4, 6, 6}));
  EXPECT_EQ(g2["y"].dtype, TIDE_FP64);
}

TEST(NnConv2dShape, ErrorsNameTheOpAndDims) {
  ExpectThrows(
      [] {
        CompileInfer("conv2d", {{"Input", "x", {1, 4, 8, 8}}, {"Filter", "f", {2, 3, 3, 3}}},
                     {{"Output", "y"}});
      },
      {"conv2d", "Input [1, 4, 8, 8]", "4 channels", "Filter [2, 3, 3, 3]"});
  ExpectThrows(
      [] {
        CompileInfer("conv2d", {{"Input", "x", {1, 4, 8, 8}}, {"Filter", "f", {3, 2, 3, 3}}},
                     {{"Output", "y"}}, {{"groups", int32_t(2)}});
      },
      {"conv2d", "3 output channels", "groups = 2"});
  ExpectThrows(
      [] {
        CompileInfer("conv2d", {{"Input", "x", {1, 1, 2, 2}}, {"Filter", "f", {1, 1, 3, 3}}},
                     {{"Output", "y"}});
      },
      {"conv2d", "empty", "Input [1, 1, 2, 2]"});
  ExpectThrows(
      [] {
        CompileInfer("conv2d", {{"Input", "x", {1, 1, 8}}, {"Filter", "f", {1, 1, 3, 3}}},
                     {{"Output", "y"}});
      },
      {"conv2d", "Input must be 4-D", "[1, 1, 8]"});
  ExpectThrows(
      [] {
        CompileInfer("conv2d", {{"Input", "x", {1, 1, 8, 8}}, {"Filter", "f", {1, 1, 3, 3}}},
                     {{"Output", "y"}}, {{"strides", std::vector<int32_t>{1, 0}}});
      },
      {"conv2d", "strides"});
  ExpectThrows(
      [] {
        CompileInfer("conv2d", {{"Input", "x", {1, 1, 8, 8}}, {"Filter", "f", {1, 1, 3, 3}}},
                     {{"Output", "y"}}, {{"data_format", std::string("NCDHW")}});
      },
      {"conv2d", "data_format", "NCDHW"});
}

}  // namespace
}  // namespace tide::test::nn
