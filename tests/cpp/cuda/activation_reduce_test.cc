// activation_reduce_test.cc: the CUDA kernels of every activation of tide/ops/activation.hpp,
// elementwise_pow/mod/floordiv, the compare and logical ops and reduce_* against the same ops on
// the CPU, outputs and grads: non-default attributes, Fluid's broadcasts, reduce dim sets that
// are contiguous or not (keep_dim, reduce_all, negative dims), integer and bool kernels.
#include <cmath>
#include <tide/ops/activation.hpp>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

class GpuActReduceTest : public ::testing::TestWithParam<TideDataType> {
 protected:
  void SetUp() override { TIDE_REQUIRE_GPU(); }
  TideDataType t() const { return GetParam(); }
  TestTensor R(std::vector<int64_t> dims, double lo = -1, double hi = 1, unsigned seed = 1) const {
    return Random(std::move(dims), t(), lo, hi, seed);
  }
};

// Small integers (as `dtype`), so comparisons meet equal values.
TestTensor SmallInts(std::vector<int64_t> dims, TideDataType dtype, unsigned seed) {
  TestTensor r = Random(std::move(dims), TIDE_INT64, -3, 3, seed);
  r.dtype = dtype;
  return r;
}
TestTensor Bools(std::vector<int64_t> dims, unsigned seed) {
  TestTensor r = Random(std::move(dims), TIDE_FP64, 0, 2, seed);
  for (double& v : r.data) v = std::floor(v);
  r.dtype = TIDE_BOOL;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Activations: each op of the table, attributes other than Fluid's defaults where it has them.
struct ActCase {
  const char* op;
  double lo, hi;  // X's range: inside the op's domain
  core::AttributeMap attrs;
};
const std::vector<ActCase>& ActCases() {
  static const std::vector<ActCase> cases = {
      {"relu", -3, 3, {}},
      {"sigmoid", -3, 3, {}},
      {"tanh", -3, 3, {}},
      {"square", -3, 3, {}},
      {"abs", -3, 3, {}},
      {"acos", -0.9, 0.9, {}},
      {"asin", -0.9, 0.9, {}},
      {"atan", -3, 3, {}},
      {"cos", -3, 3, {}},
      {"sin", -3, 3, {}},
      {"exp", -3, 3, {}},
      {"log", 0.1, 3, {}},
      {"reciprocal", 0.2, 3, {}},
      {"rsqrt", 0.1, 3, {}},
      {"ceil", -3, 3, {}},
      {"floor", -3, 3, {}},
      {"round", -3, 3, {}},
      {"logsigmoid", -3, 3, {}},
      {"softplus", -3, 3, {}},
      {"softsign", -3, 3, {}},
      {"tanh_shrink", -3, 3, {}},
      {"brelu", -3, 3, {{"t_min", -1.0f}, {"t_max", 2.0f}}},
      {"elu", -3, 3, {{"alpha", 0.5f}}},
      {"hard_shrink", -3, 3, {{"threshold", 0.3f}}},
      {"hard_sigmoid", -3, 3, {{"slope", 0.3f}, {"offset", 0.4f}}},
      {"hard_swish", -6, 6, {{"threshold", 5.0f}, {"scale", 7.0f}, {"offset", 2.0f}}},
      {"leaky_relu", -3, 3, {{"alpha", 0.1f}}},
      {"pow", 0.1, 3, {{"factor", 2.5f}}},
      {"relu6", -2, 8, {{"threshold", 3.0f}}},
      {"soft_relu", -4, 4, {{"threshold", 2.0f}}},
      {"softshrink", -3, 3, {{"lambda", 0.3f}}},
      {"stanh", -3, 3, {{"scale_a", 0.5f}, {"scale_b", 2.0f}}},
      {"swish", -3, 3, {{"beta", 1.5f}}},
      {"thresholded_relu", -3, 3, {{"threshold", 0.5f}}},
      {"gelu", -3, 3, {{"approximate", false}}},
      {"gelu", -3, 3, {{"approximate", true}}},
  };
  return cases;
}

TEST_P(GpuActReduceTest, EveryActivationAndGradMatchCpu) {
  unsigned seed = 1;
  for (const ActCase& ac : ActCases()) {
    SCOPED_TRACE(ac.op);
    TIDE_REQUIRE_OP(ac.op);
    OpCase c(ac.op);
    c.In("X", "x", R({7, 33}, ac.lo, ac.hi, seed++)).Out("Out", "out");
    for (const auto& [name, v] : ac.attrs) c.Attr(name, v);
    ExpectGpuMatchesCpu(c);
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
  }
}

TEST_P(GpuActReduceTest, ActivationsTakeFluidDefaultsAndEmptyTensors) {
  for (const char* op : {"elu", "leaky_relu", "hard_swish", "stanh", "gelu", "softshrink"}) {
    SCOPED_TRACE(op);
    OpCase c(op);
    c.In("X", "x", R({5, 8}, -4, 4, 3)).Out("Out", "out");
    ExpectGpuMatchesCpu(c);
    OpCase e(op);
    e.In("X", "x", R({0, 3})).Out("Out", "out");
    ExpectGpuMatchesCpu(e);
  }
}

// float16 (needs a real GPU: the CPU has no float16 kernels): X (and the grad's inputs) cast to
// float16 on the GPU, the op, cast back, against the float32 op on the CPU within half
// precision. The inputs are multiples of 1/64, exact in float16, so ceil/floor/round and the
// attributes' thresholds see the same values on both sides.
std::map<std::string, TestTensor> RunHalfOrFloat(const core::Place& place, bool half,
                                                 const core::OpDesc& op,
                                                 const std::map<std::string, TestTensor>& feeds,
                                                 const std::string& out) {
  core::ProgramDesc prog;
  core::BlockDesc* b = prog.MutableBlock(0);
  DeclareFeeds(b, feeds);
  core::VariableNameMap ins = op.inputs(), outs = op.outputs();
  if (half) {
    for (auto& [param, vars] : ins)
      for (auto& v : vars) {
        AppendChecked(b, CastOp(v, v + "_h", TIDE_FP32, TIDE_FP16));
        v += "_h";
      }
    for (auto& [param, vars] : outs)
      for (auto& v : vars) v += "_h";
  }
  AppendChecked(b, core::OpDesc(op.type(), ins, outs, op.attrs()));
  if (half) AppendChecked(b, CastOp(out + "_h", out, TIDE_FP16, TIDE_FP32));
  return RunProgram(prog, place, feeds, {out});
}

TestTensor HalfExact(std::vector<int64_t> dims, double lo, double hi, unsigned seed) {
  TestTensor r = Random(std::move(dims), TIDE_FP32, lo, hi, seed);
  for (double& v : r.data) v = std::round(v * 64) / 64;
  return r;
}

TEST(GpuActReduceHalf, EveryActivationAndGradMatchFloat32) {
  TIDE_REQUIRE_REAL_GPU();
  const std::string dout = core::GradVarName("Out"), dx = core::GradVarName("X");
  unsigned seed = 600;
  for (const ActCase& ac : ActCases()) {
    SCOPED_TRACE(ac.op);
    std::map<std::string, TestTensor> feeds{{"x", HalfExact({5, 7}, ac.lo, ac.hi, seed++)},
                                            {"g", HalfExact({5, 7}, -1, 1, seed++)}};
    const core::OpDesc fwd(ac.op, {{"X", {"x"}}}, {{"Out", {"out"}}}, ac.attrs);
    ExpectClose(RunHalfOrFloat(Gpu(), true, fwd, feeds, "out")["out"],
                RunHalfOrFloat(Cpu(), false, fwd, feeds, "out")["out"], {5e-3, 5e-3},
                std::string(ac.op) + " in float16");
    // The grad reads X or Out (the functor's kDep); any value in X's range serves for either.
    std::string from;
    tide::ops::ForEachActivation([&](auto tag) {
      using F = typename decltype(tag)::type;
      if (std::string(F::kName) == ac.op) from = tide::ops::ActGradFrom<F>();
    });
    ASSERT_FALSE(from.empty()) << ac.op << " is not in tide/ops/activation.hpp";
    const core::OpDesc grad(std::string(ac.op) + "_grad", {{from, {"x"}}, {dout, {"g"}}},
                            {{dx, {"dx"}}}, ac.attrs);
    ExpectClose(RunHalfOrFloat(Gpu(), true, grad, feeds, "dx")["dx"],
                RunHalfOrFloat(Cpu(), false, grad, feeds, "dx")["dx"], {5e-3, 5e-3},
                std::string(ac.op) + "_grad in float16");
  }
}

// ---------------------------------------------------------------------------------------------
// elementwise_pow / mod / floordiv.
struct BroadcastCase {
  std::vector<int64_t> x, y;
  int axis;
};
const BroadcastCase kBroadcasts[] = {
    {{3, 4}, {3, 4}, -1}, {{2, 3, 4, 5}, {3, 4}, 1}, {{4, 5}, {5}, -1},     {{4, 5}, {1}, -1},
    {{6, 7}, {6, 1}, 0},  {{2, 3, 4}, {2, 1, 4}, 0}, {{300, 33}, {33}, -1},
};

TEST_P(GpuActReduceTest, PowModFloorDivMatchCpu) {
  unsigned seed = 100;
  for (const auto& bc : kBroadcasts) {
    SCOPED_TRACE("X " + DimsStr(bc.x) + " Y " + DimsStr(bc.y));
    OpCase pow("elementwise_pow");
    pow.In("X", "x", R(bc.x, 0.5, 2, seed++))
        .In("Y", "y", R(bc.y, -2, 2, seed++))
        .Out("Out", "out")
        .Attr("axis", int32_t(bc.axis));
    ExpectGpuMatchesCpu(pow);
    ExpectGpuGradsMatchCpu(pow, {"x", "y"}, {"out"},
                           t() == TIDE_FP32 ? Tolerance{1e-4, 1e-4} : GpuTol(t()));
    for (const char* op : {"elementwise_mod", "elementwise_floordiv"})
      for (double sign : {1.0, -1.0}) {  // mod takes Y's sign
        SCOPED_TRACE(std::string(op) + (sign > 0 ? " Y > 0" : " Y < 0"));
        OpCase c(op);
        c.In("X", "x", R(bc.x, -5, 5, seed++))
            .In("Y", "y", R(bc.y, sign * 0.5, sign * 2, seed++))
            .Out("Out", "out")
            .Attr("axis", int32_t(bc.axis));
        ExpectGpuMatchesCpu(c);
      }
  }
}

TEST(GpuActReduceInt, IntegerPowModFloorDivMatchCpu) {
  TIDE_REQUIRE_GPU();
  for (TideDataType it : {TIDE_INT32, TIDE_INT64}) {
    SCOPED_TRACE(core::DataTypeName(it));
    // Every sign pairing, -1 (INT_MIN's special case) and a broadcast Y.
    const TestTensor x = Values({2, 6}, {-7, 7, -8, 9, 0, -1, 13, -13, 5, -6, 100, -100}, it);
    const TestTensor y = Values({6}, {3, -3, -1, 4, -5, 2}, it);
    for (const char* op : {"elementwise_mod", "elementwise_floordiv"}) {
      SCOPED_TRACE(op);
      OpCase c(op);
      c.In("X", "x", x).In("Y", "y", y).Out("Out", "out");
      ExpectGpuMatchesCpu(c, {0, 0});
      OpCase z(op);  // a zero divisor: an error, as on the CPU
      z.In("X", "x", Values({3}, {4, 6, 1}, it))
          .In("Y", "y", Values({3}, {2, 0, 1}, it))
          .Out("Out", "out");
      EXPECT_THROW(z.Run(Gpu()), core::Error);
    }
    OpCase pow("elementwise_pow");  // rounds to the nearest: 2^-1 is 0, (-2)^3 is -8
    pow.In("X", "x", Values({2, 4}, {2, -2, 3, 0, 5, -1, 2, 7}, it))
        .In("Y", "y", Values({4}, {-1, 3, 2, 0}, it))
        .Out("Out", "out");
    ExpectGpuMatchesCpu(pow, {0, 0});
  }
}

// ---------------------------------------------------------------------------------------------
// Comparisons and logical ops: bool outputs.
TEST(GpuActReduceCompare, ComparisonsMatchCpu) {
  TIDE_REQUIRE_GPU();
  const char* const ops[] = {"equal",      "not_equal",    "less_than",
                             "less_equal", "greater_than", "greater_equal"};
  unsigned seed = 200;
  for (TideDataType dt : {TIDE_FP32, TIDE_FP64, TIDE_INT32, TIDE_INT64})
    for (const auto& bc : kBroadcasts)
      for (const char* op : ops) {
        SCOPED_TRACE(std::string(op) + " " + core::DataTypeName(dt) + " X " + DimsStr(bc.x) +
                     " Y " + DimsStr(bc.y));
        TIDE_REQUIRE_OP(op);
        OpCase c(op);
        c.In("X", "x", SmallInts(bc.x, dt, seed++))
            .In("Y", "y", SmallInts(bc.y, dt, seed++))
            .Out("Out", "out")
            .Attr("axis", int32_t(bc.axis));
        ExpectGpuMatchesCpu(c, {0, 0});
      }
  for (const auto& bc : kBroadcasts)  // bool operands (a padding mask compared with False)
    for (const char* op : ops) {
      SCOPED_TRACE(std::string(op) + " bool X " + DimsStr(bc.x) + " Y " + DimsStr(bc.y));
      OpCase c(op);
      c.In("X", "x", Bools(bc.x, seed++))
          .In("Y", "y", Bools(bc.y, seed++))
          .Out("Out", "out")
          .Attr("axis", int32_t(bc.axis));
      ExpectGpuMatchesCpu(c, {0, 0});
    }
}

TEST(GpuActReduceCompare, LogicalOpsMatchCpu) {
  TIDE_REQUIRE_GPU();
  for (std::vector<int64_t> dims : {std::vector<int64_t>{5, 7}, {1000}, {0, 3}}) {
    SCOPED_TRACE(DimsStr(dims));
    for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
      SCOPED_TRACE(op);
      OpCase c(op);
      c.In("X", "x", Bools(dims, 1)).In("Y", "y", Bools(dims, 2)).Out("Out", "out");
      ExpectGpuMatchesCpu(c, {0, 0});
    }
    OpCase n("logical_not");
    n.In("X", "x", Bools(dims, 3)).Out("Out", "out");
    ExpectGpuMatchesCpu(n, {0, 0});
  }
}

// ---------------------------------------------------------------------------------------------
// reduce_*: dim sets contiguous and not, negative, keep_dim, reduce_all; short and long
// reductions, few and many Out elements (ReduceMid, the block-per-output and thread-per-output
// kernels).
struct ReduceCase {
  std::vector<int64_t> x;
  std::vector<int32_t> dim;
  bool keep_dim, reduce_all;
};
const ReduceCase kReduces[] = {
    {{2, 3, 4, 5}, {0}, false, false},     {{2, 3, 4, 5}, {1}, true, false},
    {{2, 3, 4, 5}, {-1}, false, false},    {{2, 3, 4, 5}, {1, 2}, false, false},
    {{2, 3, 4, 5}, {0, 2}, true, false},   {{2, 3, 4, 5}, {1, 3}, false, false},
    {{2, 3, 4, 5}, {-3, -1}, true, false}, {{2, 3, 4, 5}, {0, 3}, false, false},
    {{2, 3, 4, 5}, {0}, false, true},      {{2, 3, 4, 5}, {2}, true, true},
    {{2, 1, 4, 1}, {1, 2}, false, false},  {{7}, {0}, false, false},
    {{3000, 7}, {0}, false, false},        {{7, 3000}, {1}, true, false},
    {{3, 20000}, {0, 1}, false, false},    {{0, 3}, {1}, false, false},
    {{100, 1100}, {0}, false, false},      {{40, 3, 50, 2}, {0, 2}, true, false},
};

OpCase ReduceOp(const char* op, const ReduceCase& rc, TestTensor x) {
  OpCase c(op);
  c.In("X", "x", std::move(x))
      .Out("Out", "out")
      .Attr("dim", rc.dim)
      .Attr("keep_dim", rc.keep_dim)
      .Attr("reduce_all", rc.reduce_all);
  return c;
}

std::string ReduceName(const char* op, const ReduceCase& rc) {
  std::string s = std::string(op) + " X " + DimsStr(rc.x) + " dim [";
  for (size_t i = 0; i < rc.dim.size(); ++i) s += (i ? ", " : "") + std::to_string(rc.dim[i]);
  return s + "]" + (rc.keep_dim ? " keep_dim" : "") + (rc.reduce_all ? " reduce_all" : "");
}

TEST_P(GpuActReduceTest, ReducesAndGradsMatchCpu) {
  unsigned seed = 300;
  // Long float32 sums: other summation orders.
  const Tolerance tol = t() == TIDE_FP32 ? Tolerance{1e-4, 1e-3} : GpuTol(t());
  for (const ReduceCase& rc : kReduces)
    for (const char* op :
         {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"}) {
      SCOPED_TRACE(ReduceName(op, rc));
      const bool prod = std::string(op) == "reduce_prod";
      const bool empty = rc.x[0] == 0;
      // reduce_prod over thousands of elements: values near 1 keep it finite.
      OpCase c = ReduceOp(op, rc, prod ? R(rc.x, 0.999, 1.001, seed++) : R(rc.x, -1, 1, seed++));
      ExpectGpuMatchesCpu(c, tol);
      if (!empty) ExpectGpuGradsMatchCpu(c, {"x"}, {"out"}, tol);
    }
}

TEST_P(GpuActReduceTest, ProdGradWithZerosMatchesCpu) {
  // Groups of no, one and two zeros (the grad is exact there, not Out / X).
  OpCase c = ReduceOp("reduce_prod", {{3, 4}, {1}, false, false},
                      Values({3, 4}, {1.5, 2, -1, 3, 0, 2, 4, 0.5, 0, 0, 2, 3}, t()));
  ExpectGpuMatchesCpu(c);
  ExpectGpuGradsMatchCpu(c, {"x"}, {"out"});
}

TEST(GpuActReduceInt, IntegerAndBoolReducesMatchCpu) {
  TIDE_REQUIRE_GPU();
  unsigned seed = 400;
  for (const ReduceCase& rc : kReduces) {
    for (TideDataType it : {TIDE_INT32, TIDE_INT64})
      for (const char* op : {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}) {
        SCOPED_TRACE(ReduceName(op, rc) + " " + core::DataTypeName(it));
        const bool prod = std::string(op) == "reduce_prod";
        TestTensor x = SmallInts(rc.x, it, seed++);
        if (prod)  // -1, 1: products stay small
          for (double& v : x.data) v = v < 0 ? -1 : 1;
        ExpectGpuMatchesCpu(ReduceOp(op, rc, x), {0, 0});
      }
    for (const char* op : {"reduce_all", "reduce_any"}) {
      SCOPED_TRACE(ReduceName(op, rc));
      ExpectGpuMatchesCpu(ReduceOp(op, rc, Bools(rc.x, seed++)), {0, 0});
    }
  }
}

TEST(GpuActReduceInt, ReduceErrorsMatchCpu) {
  TIDE_REQUIRE_GPU();
  // Empty along a reduced dim: an error naming the op on both places.
  OpCase empty = ReduceOp("reduce_max", {{3, 0}, {1}, false, false}, Random({3, 0}, TIDE_FP32));
  EXPECT_THROW(empty.Run(Gpu()), core::Error);
  EXPECT_THROW(empty.Run(Cpu()), core::Error);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuActReduceTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParam);

}  // namespace
}  // namespace tide::test::cuda
