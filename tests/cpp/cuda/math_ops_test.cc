// math_ops_test.cc: every ops_math kernel of the CUDA plugin against the same op on the CPU,
// outputs and grads, float32 and float64 (integer kernels where the CPU has them): broadcasts
// that take each reduction path, big inputs that split reductions across blocks, empty tensors.
#include <cmath>
#include <numeric>

#include "selected_rows_util.h"

namespace tide::test::cuda {
namespace {

class GpuMathTest : public ::testing::TestWithParam<TideDataType> {
 protected:
  void SetUp() override { TIDE_REQUIRE_GPU(); }
  TideDataType t() const { return GetParam(); }
  TestTensor R(std::vector<int64_t> dims, double lo = -1, double hi = 1, unsigned seed = 1) const {
    return Random(std::move(dims), t(), lo, hi, seed);
  }
};

// ---------------------------------------------------------------------------------------------
// Elementwise ops: the shapes exercise same-shape, column (post = 1), mid (post > 1), scalar and
// split reductions of dY.
struct BroadcastCase {
  std::vector<int64_t> x, y;
  int axis;
};
const BroadcastCase kBroadcasts[] = {
    {{3, 4}, {3, 4}, -1},     {{2, 3, 4, 5}, {3, 4}, 1}, {{4, 5}, {5}, -1},
    {{4, 5}, {1}, -1},        {{6, 7}, {6, 1}, 0},       {{2000, 33}, {33}, -1},
    {{8, 16, 2048}, {16}, 1}, {{3, 40000}, {1}, -1},     {{0, 5}, {5}, -1},
    {{2, 3, 4}, {3, 1}, -1},  // axis -1 aligns Y's full dims, then its trailing 1 is dropped
};
const char* const kBinaryOps[] = {"elementwise_add", "elementwise_sub", "elementwise_mul",
                                  "elementwise_div", "elementwise_max", "elementwise_min"};

TEST_P(GpuMathTest, ElementwiseOpsAndGradsMatchCpu) {
  unsigned seed = 1;
  for (const auto& bc : kBroadcasts)
    for (const char* op : kBinaryOps) {
      SCOPED_TRACE(std::string(op) + " X " + DimsStr(bc.x) + " Y " + DimsStr(bc.y));
      OpCase c(op);
      c.In("X", "x", R(bc.x, -1, 1, seed++))
          .In("Y", "y", R(bc.y, 0.5, 2, seed++))
          .Out("Out", "out")
          .Attr("axis", int32_t(bc.axis));
      ExpectGpuMatchesCpu(c);
      // Sums over thousands of elements: float32 rounding grows with the length.
      Tolerance tol = GpuTol(t());
      if (t() == TIDE_FP32) tol = {1e-4, 1e-3};
      ExpectGpuGradsMatchCpu(c, {"x", "y"}, {"out"}, tol);
    }
}

TEST_P(GpuMathTest, ElementwiseGradOfOneSideOnly) {
  OpCase c("elementwise_mul");
  c.In("X", "x", R({5, 6})).In("Y", "y", R({6}, 0.5, 2, 2)).Out("Out", "out");
  ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
  ExpectGpuGradsMatchCpu(c, {"y"}, {"out"});
}

// ---------------------------------------------------------------------------------------------
// Unary ops.
TEST_P(GpuMathTest, ActivationsAndGradsMatchCpu) {
  for (const char* op : {"relu", "sigmoid", "tanh", "square"}) {
    SCOPED_TRACE(op);
    OpCase c(op);
    c.In("X", "x", R({7, 33}, -3, 3)).Out("Out", "out");
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
  }
  OpCase sq("sqrt");
  sq.In("X", "x", R({5, 9}, 0.1, 4)).Out("Out", "out");
  ExpectGpuMatchesCpu(sq);
  ExpectGpuGradsMatchCpu(sq, {"x"}, {"out"});
  OpCase sign("sign");
  sign.In("X", "x", Values({5}, {-2, 0, 3, -0.5, 1e-30}, t())).Out("Out", "out");
  ExpectGpuMatchesCpu(sign);
}

TEST_P(GpuMathTest, ClipAndScaleMatchCpu) {
  OpCase clip("clip");
  clip.In("X", "x", R({9, 11}, -2, 2)).Out("Out", "out").Attr("min", -0.5f).Attr("max", 0.7f);
  ExpectGpuMatchesCpu(clip);
  ExpectGpuGradsMatchCpu(clip, {"x"}, {"out"});
  for (bool after : {true, false}) {
    OpCase scale("scale");
    scale.In("X", "x", R({4, 6}))
        .Out("Out", "out")
        .Attr("scale", 2.5f)
        .Attr("bias", -0.75f)
        .Attr("bias_after_scale", after);
    ExpectGpuMatchesCpu(scale);
    ExpectGpuGradsMatchCpu(scale, {"x"}, {"out"});
  }
}

// ---------------------------------------------------------------------------------------------
// Reductions.
TEST_P(GpuMathTest, MeanAndGradMatchCpu) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{1}, {7, 3}, {300, 1001}}) {
    SCOPED_TRACE(DimsStr(dims));
    OpCase c("mean");
    c.In("X", "x", R(dims)).Out("Out", "out");
    Tolerance tol = GpuTol(t());
    if (t() == TIDE_FP32) tol = {1e-3, 1e-5};  // 300k float32 terms, other order
    ExpectGpuMatchesCpu(c, tol);
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
  }
}

TEST_P(GpuMathTest, SumOfManyInputsMatchesCpu) {
  for (int inputs : {1, 2, 8, 11}) {
    SCOPED_TRACE(inputs);
    OpCase c("sum");
    for (int i = 0; i < inputs; ++i) c.In("X", "x" + std::to_string(i), R({5, 7}, -1, 1, 10 + i));
    c.Out("Out", "out");
    ExpectGpuMatchesCpu(c);
  }
}

// Out bound to the first input's variable: accumulation in place, beyond one launch's fan-in.
TEST_P(GpuMathTest, SumInPlaceMatchesCpu) {
  for (int inputs : {3, 12}) {
    OpCase c("sum");
    for (int i = 0; i < inputs; ++i) c.In("X", "x" + std::to_string(i), R({4, 9}, -1, 1, 30 + i));
    c.Out("Out", "x0");
    ExpectGpuMatchesCpu(c);
  }
}

TEST_P(GpuMathTest, NormsMatchCpu) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{3, 4}, {200, 513}}) {
    OpCase n("squared_l2_norm");
    n.In("X", "x", R(dims)).Out("Out", "out");
    Tolerance tol = t() == TIDE_FP32 ? Tolerance{1e-3, 1e-5} : GpuTol(t());
    ExpectGpuMatchesCpu(n, tol);
    ExpectGpuGradsMatchCpu(n, {"x"}, {"out"});
    for (float max_norm : {0.5f, 1e6f}) {  // clipped and not
      OpCase c("clip_by_norm");
      c.In("X", "x", R(dims)).Out("Out", "out").Attr("max_norm", max_norm);
      ExpectGpuMatchesCpu(c, tol);
    }
  }
}

TEST_P(GpuMathTest, SoftmaxAndGradMatchCpu) {
  struct Case {
    std::vector<int64_t> dims;
    int axis;
  };
  for (const Case& sc :
       {Case{{4, 10}, -1}, Case{{2, 3, 4}, 1}, Case{{3, 2000}, -1}, Case{{5, 7, 3}, 0}}) {
    SCOPED_TRACE(DimsStr(sc.dims) + " axis " + std::to_string(sc.axis));
    OpCase c("softmax");
    c.In("X", "x", R(sc.dims, -5, 5)).Out("Out", "out").Attr("axis", int32_t(sc.axis));
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
  }
}

// ---------------------------------------------------------------------------------------------
// mul / matmul through cuBLAS.
TEST_P(GpuMathTest, MulAndGradMatchCpu) {
  OpCase c("mul");
  c.In("X", "x", R({2, 3, 4}))
      .In("Y", "y", R({4, 5}, -1, 1, 2))
      .Out("Out", "out")
      .Attr("x_num_col_dims", int32_t(2));
  ExpectGpuMatchesCpu(c);
  ExpectGpuGradsMatchCpu(c, {"x", "y"}, {"out"});
  OpCase fc("mul");  // an fc layer's shape
  fc.In("X", "x", R({64, 784})).In("Y", "y", R({784, 128}, -0.1, 0.1, 3)).Out("Out", "out");
  Tolerance tol = t() == TIDE_FP32 ? Tolerance{1e-4, 1e-4} : GpuTol(t());
  ExpectGpuMatchesCpu(fc, tol);
  ExpectGpuGradsMatchCpu(fc, {"x", "y"}, {"out"}, tol);
}

TEST_P(GpuMathTest, MatmulVariantsAndGradsMatchCpu) {
  struct Case {
    std::vector<int64_t> x, y;
    bool tx, ty;
    float alpha;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}, false, false, 1.0f},
      {{4, 3}, {4, 5}, true, false, 0.5f},
      {{3, 4}, {5, 4}, false, true, 2.0f},
      {{4, 3}, {5, 4}, true, true, 1.0f},
      {{2, 3, 4}, {2, 4, 5}, false, false, 1.0f},
      {{2, 3, 4}, {4, 5}, false, false, 1.0f},
      {{3, 4}, {2, 4, 5}, false, false, 1.5f},
      {{2, 4, 3}, {2, 5, 4}, true, true, 1.0f},
      {{4}, {4}, false, false, 1.0f},
      {{4}, {2, 4, 5}, false, false, 1.0f},
      {{2, 3, 4}, {4}, false, false, 1.0f},
  };
  unsigned seed = 40;
  for (const Case& mc : cases) {
    SCOPED_TRACE("X " + DimsStr(mc.x) + " Y " + DimsStr(mc.y) + (mc.tx ? " tX" : "") +
                 (mc.ty ? " tY" : ""));
    OpCase c("matmul");
    c.In("X", "x", R(mc.x, -1, 1, seed++))
        .In("Y", "y", R(mc.y, -1, 1, seed++))
        .Out("Out", "out")
        .Attr("transpose_X", mc.tx)
        .Attr("transpose_Y", mc.ty)
        .Attr("alpha", mc.alpha);
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"x", "y"}, {"out"});
  }
}

// ---------------------------------------------------------------------------------------------
// Fills, copies, casts.
TEST_P(GpuMathTest, FillsAndAssignMatchCpu) {
  OpCase f("fill_constant");
  f.Out("Out", "out")
      .Attr("shape", std::vector<int64_t>{3, 5})
      .Attr("value", 1.25f)
      .Attr("dtype", int32_t(t()));
  ExpectGpuMatchesCpu(f, GpuTol(t()));
  OpCase z("fill_zeros_like");
  z.In("X", "x", R({4, 2})).Out("Out", "out");
  ExpectGpuMatchesCpu(z);
  OpCase a("assign");
  TestTensor x = R({3, 4});
  x.lod = {{0, 1, 3}};
  a.In("X", "x", x).Out("Out", "out");
  ExpectGpuMatchesCpu(a);
  ExpectGpuGradsMatchCpu(a, {"x"}, {"out"});
}

TEST_P(GpuMathTest, EmptyTensorsAreFine) {
  for (const char* op : {"relu", "sigmoid", "scale", "assign", "fill_zeros_like"}) {
    SCOPED_TRACE(op);
    OpCase c(op);
    c.In("X", "x", R({0, 3})).Out("Out", "out");
    ExpectGpuMatchesCpu(c);
  }
  OpCase s("softmax");
  s.In("X", "x", R({0, 4})).Out("Out", "out");
  ExpectGpuMatchesCpu(s);
}

// sum over SelectedRows inputs: all sparse gives a SelectedRows listing every row; sparse and
// dense give the dense sum. The sparse inputs live in the scope with their values on the host.
struct SumResult {
  std::vector<int64_t> rows;  // sparse result only
  TestTensor value;
};

SumResult RunSparseSum(const core::Place& place, TideDataType dt, bool with_dense) {
  core::ProgramDesc prog;
  core::BlockDesc* b = prog.MutableBlock(0);
  std::vector<std::string> xs;
  std::map<std::string, TestTensor> feeds;
  const std::vector<std::vector<int64_t>> rows = {{3, 0, 3}, {5, 1}};
  for (size_t i = 0; i < rows.size(); ++i)
    xs.push_back(DeclareSelectedRows(b, "s" + std::to_string(i), dt)->name());
  if (with_dense) {
    feeds["d"] = Random({6, 4}, dt, -1, 1, 40);
    core::VarDesc* v = b->Var("d");
    v->set_dtype(dt);
    v->set_shape({6, 4});
    xs.insert(xs.begin() + 1, "d");
  }
  AppendChecked(b, core::OpDesc("sum", {{"X", xs}}, {{"Out", {"out"}}}, {}));
  b->Var("out")->set_persistable(true);
  core::Scope scope;
  for (size_t i = 0; i < rows.size(); ++i)
    PutSelectedRows(&scope, "s" + std::to_string(i), 6, rows[i],
                    Random({int64_t(rows[i].size()), 4}, dt, -1, 1, 50 + unsigned(i)));
  std::map<std::string, core::LoDTensor> f;
  for (const auto& [var, t] : feeds) f[var] = ToLoD(t);
  core::Executor exe(place);
  exe.Run(prog, &scope, f, {});
  const core::Variable* out = scope.FindVar("out");
  SumResult r;
  if (out->IsType<core::SelectedRows>()) {
    SparseResult sparse = ReadSelectedRows(out->Get<core::SelectedRows>());
    r.rows = std::move(sparse.rows);
    r.value = std::move(sparse.value);
  } else {
    core::LoDTensor host;
    core::TensorCopySync(out->Get<core::LoDTensor>(), Cpu(), &host);
    r.value = FromLoD(host);
  }
  return r;
}

TEST_P(GpuMathTest, SumOfSelectedRowsMatchesCpu) {
  for (bool with_dense : {false, true}) {
    SCOPED_TRACE(with_dense ? "sparse + dense" : "sparse only");
    SumResult cpu = RunSparseSum(Cpu(), t(), with_dense),
              gpu = RunSparseSum(Gpu(), t(), with_dense);
    EXPECT_EQ(gpu.rows, cpu.rows);
    ExpectClose(gpu.value, cpu.value, GpuTol(t()), "sum");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuMathTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeParam);

// ---------------------------------------------------------------------------------------------
// Integer kernels and casts.
TEST(GpuMathInt, IntegerElementwiseScaleFillSumMatchCpu) {
  TIDE_REQUIRE_GPU();
  for (TideDataType it : {TIDE_INT32, TIDE_INT64}) {
    for (const char* op : kBinaryOps) {
      SCOPED_TRACE(std::string(op) + " " + core::DataTypeName(it));
      OpCase c(op);
      c.In("X", "x", Random({4, 6}, it, -50, 50, 1))
          .In("Y", "y", Random({6}, it, 1, 9, 2))
          .Out("Out", "out");
      ExpectGpuMatchesCpu(c, {0, 0});
    }
    OpCase scale("scale");
    scale.In("X", "x", Random({4, 6}, it, -50, 50, 3))
        .Out("Out", "out")
        .Attr("scale", 3.0f)
        .Attr("bias", 2.0f);
    ExpectGpuMatchesCpu(scale, {0, 0});
    OpCase sum("sum");
    sum.In("X", "a", Random({5}, it, -9, 9, 4))
        .In("X", "b", Random({5}, it, -9, 9, 5))
        .Out("Out", "out");
    ExpectGpuMatchesCpu(sum, {0, 0});
    OpCase fill("fill_constant");
    fill.Out("Out", "out")
        .Attr("shape", std::vector<int64_t>{2, 3})
        .Attr("value", 7.0f)
        .Attr("dtype", int32_t(it));
    ExpectGpuMatchesCpu(fill, {0, 0});
  }
}

TEST(GpuMathInt, IntegerDivisionByZeroIsAnError) {
  TIDE_REQUIRE_GPU();
  OpCase c("elementwise_div");
  c.In("X", "x", Values({2}, {4, 6}, TIDE_INT32))
      .In("Y", "y", Values({2}, {2, 0}, TIDE_INT32))
      .Out("Out", "out");
  EXPECT_THROW(c.Run(Gpu()), core::Error);
  OpCase ok("elementwise_div");  // the place works afterwards
  ok.In("X", "x", Values({2}, {4, 6}, TIDE_INT32))
      .In("Y", "y", Values({2}, {2, 3}, TIDE_INT32))
      .Out("Out", "out");
  ExpectGpuMatchesCpu(ok, {0, 0});
}

TEST(GpuMathInt, CastsBetweenEveryPairMatchCpu) {
  TIDE_REQUIRE_GPU();
  const TideDataType types[] = {TIDE_FP32,  TIDE_FP64, TIDE_INT32,
                                TIDE_INT64, TIDE_BOOL, TIDE_UINT8};
  for (TideDataType from : types)
    for (TideDataType to : types) {
      SCOPED_TRACE(std::string(core::DataTypeName(from)) + " -> " + core::DataTypeName(to));
      TestTensor x = Values({6}, {0, 1, 2, 3, 100, 7}, from);
      if (from == TIDE_BOOL) x = Values({6}, {0, 1, 1, 0, 1, 0}, from);
      if (from == TIDE_FP32 || from == TIDE_FP64)
        x = Values({6}, {0, 1.5, 2.75, 3, 100.25, 7}, from);
      OpCase c("cast");
      c.In("X", "x", x)
          .Out("Out", "out")
          .Attr("in_dtype", int32_t(from))
          .Attr("out_dtype", int32_t(to));
      ExpectGpuMatchesCpu(c, {0, 0});
    }
}

// ---------------------------------------------------------------------------------------------
// Random ops: other generators than the CPU's, so the checks are the distributions' own.
TEST(GpuRandom, UniformIsInRangeSeededAndUniform) {
  TIDE_REQUIRE_GPU();
  for (TideDataType dt : {TIDE_FP32, TIDE_FP64}) {
    OpCase c("uniform_random");
    c.Out("Out", "out")
        .Attr("shape", std::vector<int64_t>{200, 500})
        .Attr("min", -2.0f)
        .Attr("max", 3.0f)
        .Attr("seed", int32_t(17))
        .Attr("dtype", int32_t(dt));
    TestTensor a = c.Run(Gpu())["out"], b = c.Run(Gpu())["out"];
    EXPECT_EQ(a.data, b.data) << "a seeded op must repeat its numbers";
    double sum = 0;
    for (double v : a.data) {
      ASSERT_GE(v, -2.0);
      ASSERT_LT(v, 3.0);
      sum += v;
    }
    EXPECT_NEAR(sum / a.data.size(), 0.5, 0.02);
    OpCase fresh("uniform_random");
    fresh.Out("Out", "out").Attr("shape", std::vector<int64_t>{1000}).Attr("dtype", int32_t(dt));
    EXPECT_NE(fresh.Run(Gpu())["out"].data, fresh.Run(Gpu())["out"].data)
        << "seed 0 must draw fresh numbers each run";
  }
}

TEST(GpuRandom, GaussianHasItsMeanAndStd) {
  TIDE_REQUIRE_GPU();
  for (TideDataType dt : {TIDE_FP32, TIDE_FP64}) {
    OpCase c("gaussian_random");
    c.Out("Out", "out")
        .Attr("shape", std::vector<int64_t>{400, 500})
        .Attr("mean", 1.5f)
        .Attr("std", 2.0f)
        .Attr("seed", int32_t(5))
        .Attr("dtype", int32_t(dt));
    TestTensor a = c.Run(Gpu())["out"];
    EXPECT_EQ(a.data, c.Run(Gpu())["out"].data);
    double mean = std::accumulate(a.data.begin(), a.data.end(), 0.0) / a.data.size(), var = 0;
    for (double v : a.data) {
      ASSERT_TRUE(std::isfinite(v));
      var += (v - mean) * (v - mean);
    }
    EXPECT_NEAR(mean, 1.5, 0.02);
    EXPECT_NEAR(std::sqrt(var / a.data.size()), 2.0, 0.02);
  }
}

}  // namespace
}  // namespace tide::test::cuda
