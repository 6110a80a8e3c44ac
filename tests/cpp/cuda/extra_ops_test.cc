// extra_ops_test.cc: the CUDA kernels of argsort, range, shape, where_index, crop, cos_sim, norm
// and cross_entropy2 against the same ops on the CPU (outputs and grads, float32 and float64, the
// integer types the CPU kernels take, every attribute mode), argsort's order on ties, NaN and -0
// against hand-written indices, and their errors: the CPU's messages, or on the GPU the device
// error naming the op.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <tide/ops/argsort.hpp>
#include <vector>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

using Ints = std::vector<int32_t>;
using DimsList = std::vector<std::vector<int64_t>>;

// A bool tensor, each element true with probability `p`.
TestTensor Bools(std::vector<int64_t> dims, double p, unsigned seed) {
  TestTensor t = Random(std::move(dims), TIDE_FP64, 0, 1, seed);
  for (double& v : t.data) v = v < p ? 1 : 0;
  t.dtype = TIDE_BOOL;
  return t;
}

// Integers in [lo, hi] with many ties.
TestTensor Ties(std::vector<int64_t> dims, TideDataType t, int lo, int hi, unsigned seed) {
  TestTensor r = Random(std::move(dims), TIDE_FP64, lo, hi, seed);
  for (double& v : r.data) v = std::round(v);
  r.dtype = t;
  return r;
}

// Runs `c` on `place` and expects an error naming the op and holding `what`.
void ExpectError(const OpCase& c, const core::Place& place, const std::string& what) {
  try {
    c.Run(place);
    ADD_FAILURE() << c.type() << " on " << place.ToString() << ": no error";
  } catch (const core::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + c.type() + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

// The CPU's error, and on the GPU one naming the op (`gpu_what`: the CPU's message where the
// GPU kernel finds it on the host; a device error's otherwise).
void ExpectErrors(const OpCase& c, const std::string& cpu_what, const std::string& gpu_what) {
  SCOPED_TRACE(c.type());
  ExpectError(c, Cpu(), cpu_what);
  ExpectError(c, Gpu(), PlaceOverride() ? cpu_what : gpu_what);
}

class GpuExtraTest : public GpuDtypeTest {};

// ---------------------------------------------------------------------------------------------
TEST_P(GpuExtraTest, ArgsortAndGradMatchCpu) {
  TIDE_REQUIRE_OP("argsort");
  unsigned seed = 1;
  for (int32_t axis : {0, 1, 2, -1})
    for (bool desc : {false, true}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + (desc ? " descending" : ""));
      OpCase c("argsort");
      c.In("X", "x", Ties({3, 5, 4}, t(), -3, 3, seed++))
          .Out("Out", "out")
          .Out("Indices", "ind")
          .Attr("axis", axis)
          .Attr("descending", desc);
      ExpectGpuMatchesCpu(c, {0, 0});
      ExpectGpuGradsMatchCpu(c, {"x"}, {"out"}, {0, 0});
    }
  // Long lines (CUB sorts them apart from short ones) and a line of one.
  for (const auto& dims : DimsList{{2, 3000}, {5000}, {4, 1}, {0, 3}}) {
    SCOPED_TRACE(DimsStr(dims));
    for (bool desc : {false, true}) {
      OpCase c("argsort");
      c.In("X", "x", Ties(dims, t(), -200, 200, seed++))
          .Out("Out", "out")
          .Out("Indices", "ind")
          .Attr("descending", desc);
      ExpectGpuMatchesCpu(c, {0, 0});
    }
  }
}

// The order itself, on both places: ties in X's order (also descending), NaN after every number
// (first when descending), -0 equal to 0.
TEST_P(GpuExtraTest, ArgsortOrdersTiesNanAndZerosAsTheSdkSays) {
  TIDE_REQUIRE_OP("argsort");
  const TestTensor x = Values({7}, {3, NAN, -0.0, 1, 0, NAN, 1}, t());
  struct Want {
    bool desc;
    std::vector<double> ind;
  };
  for (const Want& w : {Want{false, {2, 4, 3, 6, 0, 1, 5}}, Want{true, {1, 5, 0, 3, 6, 2, 4}}}) {
    OpCase c("argsort");
    c.In("X", "x", x).Out("Out", "out").Out("Indices", "ind").Attr("descending", w.desc);
    for (const core::Place& p : {Cpu(), Gpu()}) {
      SCOPED_TRACE(p.ToString() + (w.desc ? " descending" : ""));
      auto got = c.Run(p);
      EXPECT_EQ(got["ind"].data, w.ind);
      for (size_t j = 0; j < w.ind.size(); ++j) {
        const double v = x.data[size_t(w.ind[j])], o = got["out"].data[j];
        EXPECT_TRUE(std::isnan(v) ? std::isnan(o) : (o == v && std::signbit(o) == std::signbit(v)))
            << "Out[" << j << "] = " << o;
      }
    }
  }
}

// The GPU sorts tide/ops/argsort.hpp's integer keys: on the host (no GPU needed), a stable sort
// of the keys gives the same order as a stable sort by ArgsortBefore, NaNs of either sign, zeros,
// infinities and denormals included.
template <typename T>
void ExpectKeysOrderAsArgsort() {
  const T inf = std::numeric_limits<T>::infinity();
  const T tiny = std::numeric_limits<T>::denorm_min(), nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> v = {T(1),
                      -nan,
                      T(-0.0),
                      inf,
                      T(0),
                      -inf,
                      nan,
                      T(-2),
                      tiny,
                      T(1),
                      T(-0.0),
                      -tiny,
                      std::numeric_limits<T>::lowest()};
  const TestTensor r = Random({200}, TIDE_FP64, -3, 3, 7);
  for (double x : r.data) v.push_back(static_cast<T>(std::round(x)));  // ties
  for (bool desc : {false, true}) {
    SCOPED_TRACE(desc ? "descending" : "ascending");
    std::vector<size_t> by_rule(v.size()), by_key(v.size());
    std::iota(by_rule.begin(), by_rule.end(), 0);
    std::iota(by_key.begin(), by_key.end(), 0);
    std::stable_sort(by_rule.begin(), by_rule.end(), [&](size_t a, size_t b) {
      return tide::ops::ArgsortBefore(v[a], v[b], desc);
    });
    std::stable_sort(by_key.begin(), by_key.end(), [&](size_t a, size_t b) {
      const auto ka = tide::ops::ArgsortKey(v[a]), kb = tide::ops::ArgsortKey(v[b]);
      return desc ? kb < ka : ka < kb;
    });
    EXPECT_EQ(by_key, by_rule);
  }
}

TEST(ArgsortKey, OrdersAsArgsortOnTheHost) {
  ExpectKeysOrderAsArgsort<float>();
  ExpectKeysOrderAsArgsort<double>();
}

TEST(GpuExtraInt, ArgsortRangeTakeIntegersAsTheCpu) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("argsort");
  for (TideDataType it : {TIDE_INT32, TIDE_INT64}) {
    SCOPED_TRACE(it == TIDE_INT32 ? "int32" : "int64");
    for (bool desc : {false, true}) {
      OpCase c("argsort");
      c.In("X", "x", Ties({3, 700}, it, -50, 50, 3))
          .Out("Out", "out")
          .Out("Indices", "ind")
          .Attr("axis", int32_t(0))
          .Attr("descending", desc);
      ExpectGpuMatchesCpu(c, {0, 0});
    }
    struct Case {
      double start, end, step;
    };
    for (Case k : {Case{0, 10, 3}, Case{10, 0, -3}, Case{-4, 5, 1}, Case{5, 5, 1}, Case{0, -1, 2},
                   Case{7, 8, 100}}) {
      OpCase c("range");
      c.In("Start", "s", Values({1}, {k.start}, it))
          .In("End", "e", Values({1}, {k.end}, it))
          .In("Step", "st", Values({1}, {k.step}, it))
          .Out("Out", "out");
      ExpectGpuMatchesCpu(c, {0, 0});
    }
  }
}

// ---------------------------------------------------------------------------------------------
TEST_P(GpuExtraTest, RangeMatchesCpu) {
  TIDE_REQUIRE_OP("range");
  struct Case {
    double start, end, step;
  };
  for (Case k : {Case{0, 1, 0.1}, Case{0.5, 2.0, 0.3}, Case{2, -1, -0.25}, Case{1, 1, 0.5},
                 Case{1, 0, 0.5}, Case{-3, 1000, 1.5}}) {
    SCOPED_TRACE(std::to_string(k.start) + ":" + std::to_string(k.end) + ":" +
                 std::to_string(k.step));
    OpCase c("range");
    c.In("Start", "s", Values({1}, {k.start}, t()))
        .In("End", "e", Values({1}, {k.end}, t()))
        .In("Step", "st", Values({1}, {k.step}, t()))
        .Out("Out", "out");
    ExpectGpuMatchesCpu(c, {0, 0});
  }
}

TEST(GpuExtraShape, ShapeMatchesCpuForEveryType) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("shape");
  for (TideDataType dt : {TIDE_FP32, TIDE_FP64, TIDE_INT32, TIDE_INT64, TIDE_BOOL})
    for (const auto& dims : DimsList{{2, 5, 1}, {7}, {3, 0, 2}, {}}) {
      SCOPED_TRACE(std::string(core::DataTypeName(dt)) + " " + DimsStr(dims));
      OpCase c("shape");
      c.In("Input", "x", Random(dims, dt, 0, 1, 1)).Out("Out", "out");
      ExpectGpuMatchesCpu(c, {0, 0});
    }
}

// float16 has no CPU kernel: the GPU's shape of a float16 cast of X against X's dims.
TEST(GpuExtraShape, ShapeOfFloat16IsItsDims) {
  TIDE_REQUIRE_REAL_GPU();
  TIDE_REQUIRE_OP("shape");
  core::ProgramDesc prog;
  core::BlockDesc* b = prog.MutableBlock(0);
  const TestTensor x = Random({4, 3, 2}, TIDE_FP32, -1, 1, 2);
  DeclareFeeds(b, {{"x", x}});
  AppendChecked(
      b, core::OpDesc("cast", {{"X", {"x"}}}, {{"Out", {"xh"}}},
                      {{"in_dtype", int32_t(TIDE_FP32)}, {"out_dtype", int32_t(TIDE_FP16)}}));
  AppendChecked(b, core::OpDesc("shape", {{"Input", {"xh"}}}, {{"Out", {"out"}}}, {}));
  auto got = RunProgram(prog, Gpu(), {{"x", x}}, {"out"});
  EXPECT_EQ(got["out"].dtype, TIDE_INT32);
  EXPECT_EQ(got["out"].data, (std::vector<double>{4, 3, 2}));
}

// ---------------------------------------------------------------------------------------------
TEST(GpuExtraWhere, WhereIndexMatchesCpu) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("where_index");
  unsigned seed = 1;
  for (const auto& dims : DimsList{{3, 4, 5}, {7}, {2, 0, 3}, {2, 5000}, {1, 2, 1, 3, 1, 2}})
    for (double p : {0.0, 0.3, 1.0}) {
      SCOPED_TRACE(DimsStr(dims) + " p " + std::to_string(p));
      OpCase c("where_index");
      c.In("Condition", "c", Bools(dims, p, seed++)).Out("Out", "out");
      ExpectGpuMatchesCpu(c, {0, 0});
    }
}

// ---------------------------------------------------------------------------------------------
TEST_P(GpuExtraTest, CropAndGradMatchCpu) {
  TIDE_REQUIRE_OP("crop");
  struct Case {
    Ints offsets, shape;
  };
  for (const Case& k :
       {Case{{1, 0, 2}, {2, 2, 3}}, Case{{}, {3, 4, 5}}, Case{{0, 1, 1}, {-1, 2, -1}},
        Case{{2, 3, 4}, {1, 1, 1}}, Case{{1, 1, 1}, {0, 2, 2}}}) {
    SCOPED_TRACE(DimsStr({k.shape.begin(), k.shape.end()}));
    OpCase c("crop");
    c.In("X", "x", R({3, 4, 5}, 1))
        .Out("Out", "out")
        .Attr("offsets", k.offsets)
        .Attr("shape", k.shape);
    Both(c, {"x"}, {"out"});
  }
  // The box's dims from Y, its offsets from the Offsets tensor.
  OpCase y("crop");
  y.In("X", "x", R({3, 4, 5}, 2))
      .In("Y", "y", R({2, 3, 2}, 3))
      .In("Offsets", "off", Values({3}, {1, 0, 3}, TIDE_INT32))
      .Out("Out", "out");
  Both(y, {"x"}, {"out"});
}

// ---------------------------------------------------------------------------------------------
TEST_P(GpuExtraTest, CosSimAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("cos_sim");
  struct Case {
    std::vector<int64_t> x, y;
  };
  unsigned seed = 1;
  for (const Case& k : {Case{{4, 5}, {4, 5}}, Case{{4, 5}, {1, 5}}, Case{{3, 2, 3}, {1, 2, 3}},
                        Case{{3, 2, 3}, {3, 2, 3}}, Case{{1, 6}, {1, 6}},
                        Case{{3, 2000}, {3, 2000}}, Case{{300, 40}, {1, 40}}}) {
    SCOPED_TRACE("X " + DimsStr(k.x) + " Y " + DimsStr(k.y));
    OpCase c("cos_sim");
    c.In("X", "x", R(k.x, seed++))
        .In("Y", "y", R(k.y, seed++))
        .Out("Out", "out")
        .Out("XNorm", "xn")
        .Out("YNorm", "yn");
    Both(c, {"x", "y"}, {"out"});
    ExpectGpuGradsMatchCpu(c, {"y"}, {"out"}, Loose());  // X@GRAD unwanted
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"}, Loose());  // Y@GRAD unwanted
  }
}

TEST_P(GpuExtraTest, NormAndGradMatchCpu) {
  TIDE_REQUIRE_OP("norm");
  for (int32_t axis : {0, 1, 2, -1})
    for (float eps : {1e-10f, 0.5f}) {
      SCOPED_TRACE("axis " + std::to_string(axis) + " epsilon " + std::to_string(eps));
      OpCase c("norm");
      c.In("X", "x", R({3, 4, 5}, 1))
          .Out("Out", "out")
          .Out("Norm", "norm")
          .Attr("axis", axis)
          .Attr("epsilon", eps);
      Both(c, {"x"}, {"out"});
    }
  OpCase l("norm");  // long lines
  l.In("X", "x", R({2, 3000}, 2)).Out("Out", "out").Out("Norm", "norm").Attr("axis", int32_t(1));
  Both(l, {"x"}, {"out"});
}

// ---------------------------------------------------------------------------------------------
TEST_P(GpuExtraTest, CrossEntropy2AndGradMatchCpu) {
  TIDE_REQUIRE_OP("cross_entropy2");
  struct Case {
    std::vector<int64_t> x, label;
    std::vector<double> labels;
    int32_t ignore;
  };
  for (const Case& k : {Case{{5, 4}, {5, 1}, {0, 3, 1, 2, 3}, -100},
                        Case{{5, 4}, {5}, {2, 2, 0, 1, 3}, 2},  // label rank(X) - 1, ignored 2
                        Case{{2, 3, 4}, {2, 3, 1}, {0, 1, 2, 3, 3, -1}, -1}}) {
    SCOPED_TRACE("X " + DimsStr(k.x) + " ignore " + std::to_string(k.ignore));
    TestTensor x = R(k.x, 1, 0.05, 1);
    x.data[0] = 0;  // row 0's label 0 (but where ignored): log(0) is -1e20, the grad / 1e-20
    OpCase c("cross_entropy2");
    c.In("X", "x", x)
        .In("Label", "label", Values(k.label, k.labels, TIDE_INT64))
        .Out("Y", "y")
        .Out("MatchX", "match")
        .Out("XShape", "xs", false)
        .Attr("ignore_index", k.ignore);
    Both(c, {"x"}, {"y"});
    auto got = c.Run(Gpu());  // Y has Label's dims (Fluid's; [5] for Label [5]), MatchX X's, last 1
    EXPECT_EQ(got["y"].dims, k.label);
    std::vector<int64_t> match = k.x;
    match.back() = 1;
    EXPECT_EQ(got["match"].dims, match);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuExtraTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeParam);

// ---------------------------------------------------------------------------------------------
// Bad input: the CPU kernels' errors; on the GPU the same where the kernel checks on the host, a
// device error naming the op where it can only see it on the device. The place works after.
TEST(GpuExtraErrors, BadInputNamesTheOp) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("argsort");
  const std::string dout = core::GradVarName("Out"), dx = core::GradVarName("X");
  OpCase ag("argsort_grad");
  ag.In("X", "x", Random({2, 3}, TIDE_FP32, -1, 1, 1))
      .In("Indices", "ind", Values({2, 3}, {0, 1, 2, 2, 3, 0}, TIDE_INT64))
      .In(dout, "dout", Random({2, 3}, TIDE_FP32, -1, 1, 2))
      .Out(dx, "dx");
  ExpectErrors(ag, "outside [0, 3)", "Indices value outside");

  OpCase xe("cross_entropy2");
  xe.In("X", "x", Random({3, 4}, TIDE_FP32, 0.1, 1, 1))
      .In("Label", "label", Values({3, 1}, {0, 4, 1}, TIDE_INT64))
      .Out("Y", "y")
      .Out("MatchX", "match")
      .Out("XShape", "xs", false);
  ExpectErrors(xe, "is not a class in [0, 4)", "found a Label outside");

  OpCase xg("cross_entropy2_grad");
  xg.In("Label", "label", Values({3, 1}, {0, -2, 1}, TIDE_INT64))
      .In("MatchX", "match", Random({3, 1}, TIDE_FP32, 0.1, 1, 2))
      .In("XShape", "xs", Values({0, 3, 4}, {}, TIDE_FP32))
      .In(core::GradVarName("Y"), "dy", Random({3, 1}, TIDE_FP32, -1, 1, 3))
      .Out(dx, "dx");
  ExpectErrors(xg, "is not a class in [0, 4)", "found a Label outside");

  // Found on the host by both.
  std::vector<std::pair<OpCase, std::string>> host;
  host.emplace_back(OpCase("range"), "Step ('st') is 0");
  host.back()
      .first.In("Start", "s", Values({1}, {0}, TIDE_INT64))
      .In("End", "e", Values({1}, {5}, TIDE_INT64))
      .In("Step", "st", Values({1}, {0}, TIDE_INT64))
      .Out("Out", "out");
  host.emplace_back(OpCase("range"), "give no finite number of elements");
  host.back()
      .first.In("Start", "s", Values({1}, {0}, TIDE_FP32))
      .In("End", "e", Values({1}, {NAN}, TIDE_FP32))
      .In("Step", "st", Values({1}, {1}, TIDE_FP32))
      .Out("Out", "out");
  host.emplace_back(OpCase("range"), "End ('e') must hold one element");
  host.back()
      .first.In("Start", "s", Values({1}, {0}, TIDE_FP32))
      .In("End", "e", Values({2}, {3, 4}, TIDE_FP32))
      .In("Step", "st", Values({1}, {1}, TIDE_FP32))
      .Out("Out", "out");
  host.emplace_back(OpCase("crop"), "leaves X's dim 2");
  host.back()
      .first.In("X", "x", Random({2, 3, 4}, TIDE_FP32, -1, 1, 1))
      .Out("Out", "out")
      .Attr("offsets", Ints{0, 0, 3})
      .Attr("shape", Ints{1, 1, 2});
  host.emplace_back(OpCase("crop"), "of size -2 leaves X's dim 1");
  host.back()
      .first.In("X", "x", Random({2, 3, 4}, TIDE_FP32, -1, 1, 1))
      .Out("Out", "out")
      .Attr("offsets", Ints{0, 5, 0})
      .Attr("shape", Ints{1, -1, 2});
  host.emplace_back(OpCase("crop"), "Offsets must be int32");
  host.back()
      .first.In("X", "x", Random({2, 3, 4}, TIDE_FP32, -1, 1, 1))
      .In("Offsets", "off", Values({3}, {0, 0, 0}, TIDE_INT64))
      .Out("Out", "out")
      .Attr("shape", Ints{1, 1, 1});
  host.emplace_back(OpCase("norm_grad"), "Norm has dims [2, 3], expected [2, 1]");
  host.back()
      .first.In("X", "x", Random({2, 3}, TIDE_FP32, -1, 1, 1))
      .In("Norm", "norm", Random({2, 3}, TIDE_FP32, 1, 2, 2))
      .In(dout, "dout", Random({2, 3}, TIDE_FP32, -1, 1, 3))
      .Out(dx, "dx");
  host.emplace_back(OpCase("cos_sim_grad"), "must hold one value per row of X (3)");
  host.back()
      .first.In("X", "x", Random({3, 4}, TIDE_FP32, -1, 1, 1))
      .In("Y", "y", Random({3, 4}, TIDE_FP32, -1, 1, 2))
      .In("Out", "out", Random({2, 1}, TIDE_FP32, -1, 1, 3))
      .In("XNorm", "xn", Random({3, 1}, TIDE_FP32, 1, 2, 4))
      .In("YNorm", "yn", Random({3, 1}, TIDE_FP32, 1, 2, 5))
      .In(dout, "dout", Random({3, 1}, TIDE_FP32, -1, 1, 6))
      .Out(dx, "dx")
      .Out(core::GradVarName("Y"), "dy");
  for (auto& [c, what] : host) ExpectErrors(c, what, what);

  OpCase ok("argsort");
  ok.In("X", "x", Random({3, 4}, TIDE_FP32, -1, 1, 1)).Out("Out", "out").Out("Indices", "ind");
  ExpectGpuMatchesCpu(ok, {0, 0});
}

}  // namespace
}  // namespace tide::test::cuda
