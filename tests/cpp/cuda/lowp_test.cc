// lowp_test.cc: the 16-bit kernels (issue 32): bfloat16 wherever float16 is taken (elementwise
// ops, activations and grads, scale, sum, fills, assign, casts; half_test.cc has float16's), and
// the GEMMs (mul, matmul, matmul_v2 + grads, cuBLAS) and convolutions (conv2d, depthwise_conv2d +
// grads, cuDNN), softmax and pool2d (+ grads) in float16 and bfloat16. Float32 data cast to the
// 16-bit type on the GPU, the op, cast back, against the float32 op on the CPU. The GEMMs and
// convolutions are bilinear, so the bound of each element's error is computed too: the same float32
// op on the inputs' absolute values gives sum |x_k| |y_k|, and each input's rounding (u each) and
// the output's (u) make the error at most 3u of it (u = 2^-8 bfloat16, 2^-11 float16: twice the
// unit roundoff, a margin for the float32 accumulation). Under TIDE_CUDA_TEST_PLACE=cpu:0, where
// the CPU lacks a 16-bit kernel a case needs (it has few), the case runs in float32 there (its
// shapes, attributes and bounds checked) and the test then skips, saying which kernels were
// missing.
#include <algorithm>
#include <cmath>
#include <set>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

using Io = std::vector<std::pair<std::string, std::string>>;  // param -> var

const char* LowName(TideDataType t) {
  return t == TIDE_BF16 ? "bfloat16" : t == TIDE_FP16 ? "float16" : "float32";
}
// Twice the unit roundoff (round to nearest: half an ulp at 1); float32 for a stand-in run.
double LowU(TideDataType t) {
  return std::ldexp(1.0, t == TIDE_BF16 ? -8 : t == TIDE_FP16 ? -11 : -22);
}
// Elementwise results: a few roundings of inputs in [-2, 2] and the result's own.
Tolerance LowTol(TideDataType t) {
  return t == TIDE_BF16   ? Tolerance{2e-2, 2e-2}
         : t == TIDE_FP16 ? Tolerance{5e-3, 5e-3}
                          : Tolerance{1e-5, 1e-5};
}

// Under TIDE_CUDA_TEST_PLACE: the ops of `ops` the replacing place has no `dtype` kernel of
// ("" when it has them all, and always on a real GPU, where a missing kernel is a failure).
std::string MissingKernels(const std::vector<std::string>& ops, TideDataType dtype) {
  if (!PlaceOverride()) return "";
  const core::Place place = Gpu();
  std::string missing;
  for (const std::string& op : ops) {
    bool found = false;
    for (const core::KernelEntry* k : core::Registry::Global().Kernels(op))
      found |= k->key.place_kind == place.kind && k->key.dtype == dtype;
    if (!found) missing += (missing.empty() ? "" : ", ") + op;
  }
  if (missing.empty()) return "";
  return std::string(place.ToString()) + " (TIDE_CUDA_TEST_PLACE) has no " + LowName(dtype) +
         " kernel of " + missing;
}

// `type` in `dtype` on the GPU: each input fed in float32 and cast there, each output cast back;
// the variables in `keep32` (float32 parameters and statistics) are fed and fetched as they are.
std::map<std::string, TestTensor> RunLow(const std::string& type, const Io& ins, const Io& outs,
                                         const std::map<std::string, TestTensor>& feeds,
                                         const core::AttributeMap& attrs, TideDataType dtype,
                                         const std::set<std::string>& keep32 = {}) {
  core::VariableNameMap in, out;
  std::vector<core::OpDesc> ops;
  std::vector<std::string> fetch;
  for (const auto& [param, var] : ins) {
    if (keep32.count(var)) {
      in[param].push_back(var);
      continue;
    }
    in[param].push_back(var + "_low");
    ops.push_back(CastOp(var, var + "_low", TIDE_FP32, dtype));
  }
  for (const auto& [param, var] : outs)
    out[param].push_back(keep32.count(var) ? var : var + "_low");
  ops.push_back(core::OpDesc(type, in, out, attrs));
  for (const auto& [param, var] : outs) {
    if (!keep32.count(var)) ops.push_back(CastOp(var + "_low", var, dtype, TIDE_FP32));
    fetch.push_back(var);
  }
  return RunOps(Gpu(), ops, feeds, fetch);
}

// `type` in float32 on the CPU.
std::map<std::string, TestTensor> RunCpu32(const std::string& type, const Io& ins, const Io& outs,
                                           const std::map<std::string, TestTensor>& feeds,
                                           const core::AttributeMap& attrs) {
  core::VariableNameMap in, out;
  std::vector<std::string> fetch;
  for (const auto& [param, var] : ins) in[param].push_back(var);
  for (const auto& [param, var] : outs) {
    out[param].push_back(var);
    fetch.push_back(var);
  }
  return RunOps(Cpu(), {core::OpDesc(type, in, out, attrs)}, feeds, fetch);
}

// An elementwise op (or activation, or its grad) in `dtype` against float32 within LowTol.
void ExpectLowMatches(const std::string& type, const Io& ins, const Io& outs,
                      const std::map<std::string, TestTensor>& feeds, TideDataType dtype,
                      const core::AttributeMap& attrs = {}) {
  SCOPED_TRACE(type + " in " + LowName(dtype));
  auto low = RunLow(type, ins, outs, feeds, attrs, dtype);
  auto ref = RunCpu32(type, ins, outs, feeds, attrs);
  for (const auto& [param, var] : outs)
    ExpectClose(low[var], ref[var], LowTol(dtype), type + " " + param + " in " + LowName(dtype));
}

// Values k / 32 for integers |k| < 64: exact in float16 and bfloat16, so a 16-bit run's inputs
// are the float32 run's and only its own arithmetic (float32) and rounding of results differ.
TestTensor Dyadic(std::vector<int64_t> dims, unsigned seed) {
  TestTensor t = Random(std::move(dims), TIDE_FP32, -2, 2, seed);
  for (double& v : t.data) v = std::round(v * 32 > 63 ? 63 : v * 32 < -63 ? -63 : v * 32) / 32;
  return t;
}

// An op on such exact inputs (those in `keep32` fed and fetched float32): each 16-bit output within
// its own rounding (u relative, twice the unit roundoff) of the float32 op's, plus `atol`; the
// float32 ones within 1e-4.
void ExpectExactInputsMatch(const std::string& type, const Io& ins, const Io& outs,
                            const std::map<std::string, TestTensor>& feeds, TideDataType dtype,
                            const core::AttributeMap& attrs, const std::set<std::string>& keep32,
                            double atol = 1e-4) {
  SCOPED_TRACE(type + " in " + LowName(dtype));
  auto low = RunLow(type, ins, outs, feeds, attrs, dtype, keep32);
  auto ref = RunCpu32(type, ins, outs, feeds, attrs);
  for (const auto& [param, var] : outs) {
    const Tolerance tol =
        keep32.count(var) ? Tolerance{1e-4, 1e-4} : Tolerance{std::max(LowU(dtype), 1e-5), atol};
    ExpectClose(low[var], ref[var], tol, type + " " + param + " in " + LowName(dtype));
  }
}

// A bilinear op (GEMM, convolution, or a grad of one) in `dtype` against float32: each element
// within 3u of the same op on the inputs' absolute values (`attrs_abs`: its attributes there,
// e.g. |alpha|), plus 1e-5.
void ExpectBilinearMatches(const std::string& type, const Io& ins, const Io& outs,
                           const std::map<std::string, TestTensor>& feeds, TideDataType dtype,
                           const core::AttributeMap& attrs, const core::AttributeMap& attrs_abs) {
  SCOPED_TRACE(type + " in " + LowName(dtype));
  auto low = RunLow(type, ins, outs, feeds, attrs, dtype);
  auto ref = RunCpu32(type, ins, outs, feeds, attrs);
  std::map<std::string, TestTensor> abs_feeds = feeds;
  for (auto& [var, t] : abs_feeds)
    for (double& v : t.data) v = std::fabs(v);
  auto bound = RunCpu32(type, ins, outs, abs_feeds, attrs_abs);
  const double u = LowU(dtype);
  for (const auto& [param, var] : outs) {
    const TestTensor &got = low[var], &want = ref[var], &b = bound[var];
    ASSERT_EQ(got.dims, want.dims) << type << " " << param;
    ASSERT_EQ(got.data.size(), want.data.size()) << type << " " << param;
    for (size_t i = 0; i < want.data.size(); ++i)
      ASSERT_NEAR(got.data[i], want.data[i], 3 * u * b.data[i] + 1e-5)
          << type << " " << param << " in " << LowName(dtype) << ": element " << i << " of "
          << want.data.size() << " (sum of |terms| " << b.data[i] << ")";
  }
}
void ExpectBilinearMatches(const std::string& type, const Io& ins, const Io& outs,
                           const std::map<std::string, TestTensor>& feeds, TideDataType dtype,
                           const core::AttributeMap& attrs = {}) {
  ExpectBilinearMatches(type, ins, outs, feeds, dtype, attrs, attrs);
}

// A GEMM op and its grad on random X [x], Y [y] and Out@GRAD [out] (seeds from *seed on), each
// output within its bilinear bound (attrs_abs: the attributes of the bound's run).
void ExpectGemmAndGradMatch(const std::string& type, const std::vector<int64_t>& x,
                            const std::vector<int64_t>& y, const std::vector<int64_t>& out,
                            unsigned* seed, TideDataType dtype, const core::AttributeMap& attrs,
                            const core::AttributeMap& attrs_abs) {
  const std::map<std::string, TestTensor> feeds = {{"x", Random(x, TIDE_FP32, -1, 1, (*seed)++)},
                                                   {"y", Random(y, TIDE_FP32, -1, 1, (*seed)++)},
                                                   {"g", Random(out, TIDE_FP32, -1, 1, (*seed)++)}};
  ExpectBilinearMatches(type, {{"X", "x"}, {"Y", "y"}}, {{"Out", "out"}}, feeds, dtype, attrs,
                        attrs_abs);
  ExpectBilinearMatches(type + "_grad", {{"X", "x"}, {"Y", "y"}, {core::GradVarName("Out"), "g"}},
                        {{core::GradVarName("X"), "dx"}, {core::GradVarName("Y"), "dy"}}, feeds,
                        dtype, attrs, attrs_abs);
}

class GpuLowpTest : public ::testing::TestWithParam<TideDataType> {
 protected:
  void SetUp() override { TIDE_REQUIRE_GPU(); }
  TideDataType t() const { return GetParam(); }
  // The type the case runs in: t(), or float32 where the replacing place lacks a t() kernel of
  // one of `ops` (then StandInSkip says so at the end).
  TideDataType RunType(const std::vector<std::string>& ops) {
    stand_in_ = MissingKernels(ops, t());
    return stand_in_.empty() ? t() : TIDE_FP32;
  }
  std::string stand_in_;
};
// At the end of a test whose case ran in float32 for want of 16-bit kernels: skipped, saying so.
#define TIDE_STAND_IN_SKIP()                                                            \
  do {                                                                                  \
    if (!stand_in_.empty())                                                             \
      GTEST_SKIP() << stand_in_ << ": the case ran in float32 there (checks the case, " \
                   << "not a 16-bit kernel)";                                           \
  } while (0)

std::string LowParam(const ::testing::TestParamInfo<TideDataType>& info) {
  return info.param == TIDE_BF16 ? "bf16" : "fp16";
}

// ---------------------------------------------------------------------------------------------
// bfloat16 where float16 is taken (float16 too: half_test.cc checks it, this adds nothing
// there but the same cases).
TEST_P(GpuLowpTest, ElementwiseOpsMatchFloat32) {
  const TideDataType dt =
      RunType({"elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div",
               "elementwise_max", "elementwise_min", "cast"});
  for (const char* op : {"elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div",
                         "elementwise_max", "elementwise_min"})
    ExpectLowMatches(
        op, {{"X", "x"}, {"Y", "y"}}, {{"Out", "out"}},
        {{"x", Random({4, 8}, TIDE_FP32, -2, 2, 1)}, {"y", Random({8}, TIDE_FP32, 0.5, 2, 2)}}, dt);
  TIDE_STAND_IN_SKIP();
}

TEST_P(GpuLowpTest, ActivationsAndGradsMatchFloat32) {
  const TideDataType dt = RunType({"relu", "sigmoid", "tanh", "square", "gelu", "relu_grad",
                                   "sigmoid_grad", "tanh_grad", "square_grad", "cast"});
  for (const char* op : {"relu", "sigmoid", "tanh", "square", "gelu"})
    ExpectLowMatches(op, {{"X", "x"}}, {{"Out", "out"}},
                     {{"x", Random({5, 7}, TIDE_FP32, -2, 2, 3)}}, dt);
  const std::string dout = core::GradVarName("Out"), dx = core::GradVarName("X");
  for (const char* op : {"relu_grad", "sigmoid_grad", "tanh_grad"})
    ExpectLowMatches(op, {{"Out", "o"}, {dout, "g"}}, {{dx, "dx"}},
                     {{"o", Random({5, 7}, TIDE_FP32, 0.05, 0.95, 4)},
                      {"g", Random({5, 7}, TIDE_FP32, -1, 1, 5)}},
                     dt);
  ExpectLowMatches(
      "square_grad", {{"X", "x"}, {dout, "g"}}, {{dx, "dx"}},
      {{"x", Random({5, 7}, TIDE_FP32, -2, 2, 6)}, {"g", Random({5, 7}, TIDE_FP32, -1, 1, 7)}}, dt);
  TIDE_STAND_IN_SKIP();
}

TEST_P(GpuLowpTest, ScaleSumAssignMatchFloat32) {
  const TideDataType dt = RunType({"scale", "assign", "sum", "cast"});
  ExpectLowMatches("scale", {{"X", "x"}}, {{"Out", "out"}},
                   {{"x", Random({9}, TIDE_FP32, -2, 2, 8)}}, dt,
                   {{"scale", 1.5f}, {"bias", 0.25f}});
  ExpectLowMatches("scale", {{"X", "x"}}, {{"Out", "out"}},
                   {{"x", Random({9}, TIDE_FP32, -2, 2, 8)}}, dt,
                   {{"scale", -0.75f}, {"bias", 0.5f}, {"bias_after_scale", false}});
  ExpectLowMatches("assign", {{"X", "x"}}, {{"Out", "out"}},
                   {{"x", Random({9}, TIDE_FP32, -2, 2, 9)}}, dt);
  // sum takes a list: built by hand (three inputs).
  std::vector<core::OpDesc> ops;
  std::vector<std::string> low;
  for (const char* v : {"a", "b", "c"}) {
    ops.push_back(CastOp(v, std::string(v) + "_low", TIDE_FP32, dt));
    low.push_back(std::string(v) + "_low");
  }
  ops.push_back(core::OpDesc("sum", {{"X", low}}, {{"Out", {"s_low"}}}, {}));
  ops.push_back(CastOp("s_low", "s", dt, TIDE_FP32));
  std::map<std::string, TestTensor> feeds{{"a", Random({6}, TIDE_FP32, -1, 1, 10)},
                                          {"b", Random({6}, TIDE_FP32, -1, 1, 11)},
                                          {"c", Random({6}, TIDE_FP32, -1, 1, 12)}};
  auto got = RunOps(Gpu(), ops, feeds, {"s"});
  for (size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(got["s"].data[i], feeds["a"].data[i] + feeds["b"].data[i] + feeds["c"].data[i],
                LowTol(dt).atol * 2)
        << "sum in " << LowName(dt) << ": element " << i;
  TIDE_STAND_IN_SKIP();
}

TEST_P(GpuLowpTest, FillsAndCastsRoundTrip) {
  const TideDataType dt = RunType({"fill_constant", "fill_any_like", "fill_zeros_like", "cast"});
  // Values exact in both 16-bit types: fills and casts through every float type give them back.
  std::vector<core::OpDesc> ops = {
      core::OpDesc(
          "fill_constant", {}, {{"Out", {"f_low"}}},
          {{"shape", std::vector<int64_t>{2, 3}}, {"value", 0.375f}, {"dtype", int32_t(dt)}}),
      CastOp("f_low", "f", dt, TIDE_FP64),
      core::OpDesc("fill_any_like", {{"X", {"f_low"}}}, {{"Out", {"a_low"}}}, {{"value", -2.5f}}),
      CastOp("a_low", "a", dt, TIDE_FP32),
      core::OpDesc("fill_zeros_like", {{"X", {"f_low"}}}, {{"Out", {"z_low"}}}, {}),
      CastOp("z_low", "z", dt, TIDE_FP32)};
  auto got = RunOps(Gpu(), ops, {}, {"f", "a", "z"});
  ASSERT_EQ(got["f"].data.size(), 6u);
  for (double v : got["f"].data) EXPECT_EQ(v, 0.375);
  ASSERT_EQ(got["a"].data.size(), 6u);
  for (double v : got["a"].data) EXPECT_EQ(v, -2.5);
  ASSERT_EQ(got["z"].data.size(), 6u);
  for (double v : got["z"].data) EXPECT_EQ(v, 0.0);
  TIDE_STAND_IN_SKIP();
}

// cast between every pair of float32, float64, float16 and bfloat16 (the CPU's cast takes them
// all): from float32 through the 16-bit type under test to each other type and back to float32.
TEST_P(GpuLowpTest, CastsBetweenEveryFloatPair) {
  const TideDataType other = t() == TIDE_BF16 ? TIDE_FP16 : TIDE_BF16;
  for (TideDataType via : {TIDE_FP32, TIDE_FP64, other}) {
    SCOPED_TRACE(std::string(LowName(t())) + " -> " + tide::DataTypeName(via));
    if (via == other && PlaceOverride() && !MissingKernels({"cast"}, other).empty()) continue;
    std::vector<core::OpDesc> ops = {
        CastOp("x", "x_low", TIDE_FP32, t()), CastOp("x_low", "x_via", t(), via),
        CastOp("x_via", "x_back", via, t()), CastOp("x_back", "y", t(), TIDE_FP32)};
    std::map<std::string, TestTensor> feeds{{"x", Random({17}, TIDE_FP32, -3, 3, 13)}};
    auto got = RunOps(Gpu(), ops, feeds, {"y"});
    ASSERT_EQ(got["y"].data.size(), 17u);
    // float16 <-> bfloat16 rounds twice: float16's 11 bits hold a bfloat16 (8 bits) exactly
    // only within its range, so the round trip is within the coarser type's rounding.
    const double u = LowU(TIDE_BF16);
    for (size_t i = 0; i < 17; ++i)
      EXPECT_NEAR(got["y"].data[i], feeds["x"].data[i], u * std::fabs(feeds["x"].data[i]) + 1e-7)
          << "element " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// GEMMs: cuBLAS on tensor cores, float32 accumulation.
TEST_P(GpuLowpTest, MulAndGradMatchFloat32) {
  const TideDataType dt = RunType({"mul", "mul_grad", "cast"});
  const core::AttributeMap attrs = {{"x_num_col_dims", int32_t(2)}};
  unsigned seed = 20;
  ExpectGemmAndGradMatch("mul", {3, 4, 64}, {64, 5}, {3, 4, 5}, &seed, dt, attrs, attrs);
  TIDE_STAND_IN_SKIP();
}

TEST_P(GpuLowpTest, MatmulAndGradMatchFloat32) {
  const TideDataType dt = RunType({"matmul", "matmul_grad", "cast"});
  struct Case {
    std::vector<int64_t> x, y, out;
    bool tx, ty;
  };
  const Case cases[] = {
      {{2, 3, 48}, {48, 5}, {2, 3, 5}, false, false},    // a shared Y: dY sums the batches
      {{48, 3}, {2, 48, 5}, {2, 3, 5}, true, false},     // a shared X, transposed
      {{2, 3, 40}, {2, 5, 40}, {2, 3, 5}, false, true},  // both batched
      {{40}, {40}, {1}, false, false},                   // vectors
  };
  unsigned seed = 30;
  for (const Case& k : cases) {
    SCOPED_TRACE("X " + DimsStr(k.x) + " Y " + DimsStr(k.y));
    const core::AttributeMap attrs = {
        {"transpose_X", k.tx}, {"transpose_Y", k.ty}, {"alpha", -1.3f}};
    const core::AttributeMap abs = {{"transpose_X", k.tx}, {"transpose_Y", k.ty}, {"alpha", 1.3f}};
    ExpectGemmAndGradMatch("matmul", k.x, k.y, k.out, &seed, dt, attrs, abs);
  }
  TIDE_STAND_IN_SKIP();
}

TEST_P(GpuLowpTest, MatmulV2AndGradMatchFloat32) {
  const TideDataType dt = RunType({"matmul_v2", "matmul_v2_grad", "cast"});
  struct Case {
    std::vector<int64_t> x, y, out;
    bool tx, ty;
  };
  const Case cases[] = {
      {{2, 1, 3, 32}, {3, 32, 4}, {2, 3, 3, 4}, false, false},  // broadcast inside the batch
      {{2, 32, 3}, {32, 4}, {2, 3, 4}, true, false},            // a shared Y
      {{3, 32}, {2, 4, 32}, {2, 3, 4}, false, true},            // a shared X
      {{2, 3, 32}, {2, 32, 4}, {2, 3, 4}, false, false},        // per batch: one GEMM
  };
  unsigned seed = 50;
  for (const Case& k : cases) {
    SCOPED_TRACE("X " + DimsStr(k.x) + " Y " + DimsStr(k.y));
    const core::AttributeMap attrs = {{"trans_x", k.tx}, {"trans_y", k.ty}};
    ExpectGemmAndGradMatch("matmul_v2", k.x, k.y, k.out, &seed, dt, attrs, attrs);
  }
  TIDE_STAND_IN_SKIP();
}

// ---------------------------------------------------------------------------------------------
// Convolutions: cuDNN, 16-bit data with float32 compute, tensor-core math.
TEST_P(GpuLowpTest, ConvolutionsAndGradsMatchFloat32) {
  const TideDataType dt =
      RunType({"conv2d", "conv2d_grad", "depthwise_conv2d", "depthwise_conv2d_grad", "cast"});
  struct Case {
    const char* op;
    std::vector<int64_t> x, f;
    std::vector<int32_t> strides, pads, dils;
    int32_t groups;
    const char* format;
  };
  const Case cases[] = {
      {"conv2d", {2, 8, 7, 7}, {6, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, "NCHW"},
      {"conv2d", {2, 8, 8, 9}, {5, 8, 3, 2}, {2, 1}, {1, 2}, {1, 1}, 1, "NCHW"},
      {"conv2d", {1, 8, 9, 9}, {4, 4, 3, 3}, {1, 2}, {0, 1, 1, 2}, {2, 1}, 2, "NCHW"},
      {"conv2d", {2, 7, 7, 8}, {6, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, "NHWC"},
      {"depthwise_conv2d", {2, 4, 6, 6}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, "NCHW"},
  };
  unsigned seed = 70;
  const std::string dout = core::GradVarName("Output");
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.op) + " X " + DimsStr(k.x) + " F " + DimsStr(k.f) + " " + k.format);
    const core::AttributeMap attrs = {{"strides", k.strides},
                                      {"paddings", k.pads},
                                      {"dilations", k.dils},
                                      {"groups", k.groups},
                                      {"data_format", std::string(k.format)}};
    std::map<std::string, TestTensor> feeds = {{"x", Random(k.x, TIDE_FP32, -1, 1, seed++)},
                                               {"f", Random(k.f, TIDE_FP32, -1, 1, seed++)}};
    ExpectBilinearMatches(k.op, {{"Input", "x"}, {"Filter", "f"}}, {{"Output", "out"}}, feeds, dt,
                          attrs);
    const auto out =
        RunCpu32(k.op, {{"Input", "x"}, {"Filter", "f"}}, {{"Output", "out"}}, feeds, attrs)["out"];
    feeds["g"] = Random(out.dims, TIDE_FP32, -1, 1, seed++);
    ExpectBilinearMatches(std::string(k.op) + "_grad",
                          {{"Input", "x"}, {"Filter", "f"}, {dout, "g"}},
                          {{core::GradVarName("Input"), "dx"}, {core::GradVarName("Filter"), "df"}},
                          feeds, dt, attrs);
  }
  TIDE_STAND_IN_SKIP();
}

// ---------------------------------------------------------------------------------------------
// softmax and pool2d: computed in float, rounded once.
TEST_P(GpuLowpTest, SoftmaxAndGradMatchFloat32) {
  const TideDataType dt = RunType({"softmax", "softmax_grad", "cast"});
  const std::string dout = core::GradVarName("Out"), dx = core::GradVarName("X");
  for (int32_t axis : {-1, 1}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const core::AttributeMap attrs = {{"axis", axis}};
    ExpectLowMatches("softmax", {{"X", "x"}}, {{"Out", "out"}},
                     {{"x", Random({3, 5, 40}, TIDE_FP32, -4, 4, 90)}}, dt, attrs);
    // Out: rows of a softmax (positive, summing to 1) from the float32 kernel.
    auto out = RunCpu32("softmax", {{"X", "x"}}, {{"Out", "o"}},
                        {{"x", Random({3, 5, 40}, TIDE_FP32, -4, 4, 91)}}, attrs)["o"];
    ExpectLowMatches("softmax_grad", {{"Out", "o"}, {dout, "g"}}, {{dx, "dx"}},
                     {{"o", out}, {"g", Random({3, 5, 40}, TIDE_FP32, -1, 1, 92)}}, dt, attrs);
  }
  TIDE_STAND_IN_SKIP();
}

TEST_P(GpuLowpTest, PoolingAndGradMatchFloat32) {
  const TideDataType dt = RunType({"pool2d", "pool2d_grad", "cast"});
  const std::string dout = core::GradVarName("Out"), dx = core::GradVarName("X");
  struct Case {
    const char* type;
    std::vector<int64_t> x;
    std::vector<int32_t> k, s, p;
    bool global, adaptive;
    const char* format;
  };
  const Case cases[] = {
      {"max", {2, 3, 8, 8}, {3, 3}, {2, 2}, {1, 1}, false, false, "NCHW"},
      {"avg", {2, 3, 8, 8}, {3, 3}, {2, 2}, {1, 1}, false, false, "NCHW"},
      {"max", {2, 8, 8, 3}, {2, 2}, {2, 2}, {0, 0}, false, false, "NHWC"},
      {"avg", {2, 9, 9, 3}, {1, 1}, {1, 1}, {0, 0}, true, false, "NHWC"},
      {"max", {2, 3, 9, 9}, {1, 1}, {1, 1}, {0, 0}, true, false, "NCHW"},   // scatter (81 > 64)
      {"max", {1, 2, 10, 7}, {3, 2}, {1, 1}, {0, 0}, false, true, "NCHW"},  // adaptive: scatter
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.type) + " X " + DimsStr(k.x) + " " + k.format +
                 (k.global ? " global" : "") + (k.adaptive ? " adaptive" : ""));
    const core::AttributeMap attrs = {{"pooling_type", std::string(k.type)},
                                      {"ksize", k.k},
                                      {"strides", k.s},
                                      {"paddings", k.p},
                                      {"global_pooling", k.global},
                                      {"adaptive", k.adaptive},
                                      {"data_format", std::string(k.format)}};
    // Distinct values, exact in both 16-bit types (multiples of 1/32 below 2 in magnitude), so
    // rounding moves no window's maximum.
    TestTensor x = Random(k.x, TIDE_FP32, -1, 1, 95);
    for (size_t i = 0; i < x.data.size(); ++i)
      x.data[i] = static_cast<double>(static_cast<int64_t>(i * 37 % 127) - 63) / 32;
    ExpectLowMatches("pool2d", {{"X", "x"}}, {{"Out", "out"}}, {{"x", x}}, dt, attrs);
    auto out = RunCpu32("pool2d", {{"X", "x"}}, {{"Out", "o"}}, {{"x", x}}, attrs)["o"];
    ExpectLowMatches("pool2d_grad", {{"X", "x"}, {"Out", "o"}, {dout, "g"}}, {{dx, "dx"}},
                     {{"x", x}, {"o", out}, {"g", Random(out.dims, TIDE_FP32, -1, 1, 96)}}, dt,
                     attrs);
  }
  TIDE_STAND_IN_SKIP();
}

// ---------------------------------------------------------------------------------------------
// layer_norm and batch_norm: X (and Y@GRAD) in the 16-bit type, Scale, Bias (and batch_norm's
// statistics) float32 (AsFloat32Param); computed in float32. Exact inputs: each result within its
// own rounding.
TEST_P(GpuLowpTest, LayerNormAndGradMatchFloat32) {
  const TideDataType dt = RunType({"layer_norm", "layer_norm_grad", "cast"});
  const std::string dy = core::GradVarName("Y");
  for (int32_t axis : {1, 2}) {
    SCOPED_TRACE("begin_norm_axis " + std::to_string(axis));
    const std::vector<int64_t> x = {3, 4, 6};
    const int64_t right = axis == 1 ? 24 : 6;
    const core::AttributeMap attrs = {{"begin_norm_axis", axis}, {"epsilon", 1e-5f}};
    std::map<std::string, TestTensor> feeds = {{"x", Dyadic(x, 100 + axis)},
                                               {"s", Random({right}, TIDE_FP32, 0.5, 1.5, 102)},
                                               {"b", Random({right}, TIDE_FP32, -1, 1, 103)},
                                               {"g", Dyadic(x, 104 + axis)}};
    ExpectExactInputsMatch("layer_norm", {{"X", "x"}, {"Scale", "s"}, {"Bias", "b"}},
                           {{"Y", "y"}, {"Mean", "mean"}, {"Variance", "var"}}, feeds, dt, attrs,
                           {"s", "b"});
    ExpectExactInputsMatch("layer_norm_grad",
                           {{"X", "x"}, {"Scale", "s"}, {"Bias", "b"}, {dy, "g"}},
                           {{core::GradVarName("X"), "dx"},
                            {core::GradVarName("Scale"), "ds"},
                            {core::GradVarName("Bias"), "db"}},
                           feeds, dt, attrs, {"s", "b", "ds", "db"});
  }
  TIDE_STAND_IN_SKIP();
}

TEST_P(GpuLowpTest, BatchNormAndGradMatchFloat32) {
  const TideDataType dt = RunType({"batch_norm", "batch_norm_grad", "cast"});
  const std::string dy = core::GradVarName("Y");
  for (const char* layout : {"NCHW", "NHWC"})
    for (bool test : {false, true}) {
      SCOPED_TRACE(std::string(layout) + (test ? " is_test" : " training"));
      const std::vector<int64_t> x = std::string(layout) == "NCHW"
                                         ? std::vector<int64_t>{2, 3, 4, 4}
                                         : std::vector<int64_t>{2, 4, 4, 3};
      const core::AttributeMap attrs = {{"data_layout", std::string(layout)},
                                        {"is_test", test},
                                        {"epsilon", 1e-5f},
                                        {"momentum", 0.9f}};
      std::map<std::string, TestTensor> feeds = {{"x", Dyadic(x, 110)},
                                                 {"s", Random({3}, TIDE_FP32, 0.5, 1.5, 111)},
                                                 {"b", Random({3}, TIDE_FP32, -1, 1, 112)},
                                                 {"m", Random({3}, TIDE_FP32, -0.5, 0.5, 113)},
                                                 {"v", Random({3}, TIDE_FP32, 0.5, 1.5, 114)},
                                                 {"g", Dyadic(x, 115)}};
      const Io ins = {{"X", "x"}, {"Scale", "s"}, {"Bias", "b"}, {"Mean", "m"}, {"Variance", "v"}};
      const Io outs = {{"Y", "y"},
                       {"MeanOut", "mo"},
                       {"VarianceOut", "vo"},
                       {"SavedMean", "sm"},
                       {"SavedVariance", "sv"}};
      const std::set<std::string> f32 = {"s", "b", "m", "v", "mo", "vo", "sm", "sv", "ds", "db"};
      ExpectExactInputsMatch("batch_norm", ins, outs, feeds, dt, attrs, f32);
      // The grad reads the forward's SavedMean / SavedVariance (float32, from the CPU's run).
      auto fwd = RunCpu32("batch_norm", ins, outs, feeds, attrs);
      feeds["sm"] = fwd["sm"];
      feeds["sv"] = fwd["sv"];
      Io grad_ins = ins;
      grad_ins.push_back({"SavedMean", "sm"});
      grad_ins.push_back({"SavedVariance", "sv"});
      grad_ins.push_back({dy, "g"});
      ExpectExactInputsMatch("batch_norm_grad", grad_ins,
                             {{core::GradVarName("X"), "dx"},
                              {core::GradVarName("Scale"), "ds"},
                              {core::GradVarName("Bias"), "db"}},
                             feeds, dt, attrs, f32);
    }
  TIDE_STAND_IN_SKIP();
}

INSTANTIATE_TEST_SUITE_P(Lowp, GpuLowpTest, ::testing::Values(TIDE_FP16, TIDE_BF16), LowParam);

}  // namespace
}  // namespace tide::test::cuda
