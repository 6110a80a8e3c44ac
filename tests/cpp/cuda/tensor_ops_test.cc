// tensor_ops_test.cc: the CUDA kernels of Fluid's tensor ops and matmul_v2 against the same ops
// on the CPU, outputs and grads, float32 and float64 (and the integer types the move ops take):
// squeeze2 / unsqueeze2 / flatten_contiguous_range, stack / unstack, matmul_v2 (transposes,
// vectors, batch broadcasting), gather / scatter / gather_nd, one_hot, arg_max / arg_min, cumsum,
// slice / strided_slice, pad, expand / expand_as, layer_norm / group_norm / instance_norm, Paddle's
// tensor-valued attributes; index errors found on the device.
#include <cmath>
#include <string>
#include <tide/ops/matmul_v2.hpp>
#include <vector>

#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

using Ints = std::vector<int32_t>;

class GpuTensorTest : public GpuDtypeTest {};  // GEMMs sum in another order than the CPU's

// ---------------------------------------------------------------------------------------------
TEST_P(GpuTensorTest, SqueezeUnsqueezeFlattenRangeAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("squeeze2");
  for (Ints axes : {Ints{}, Ints{0}, Ints{0, 2}, Ints{-1}, Ints{1}}) {  // {1}: size 3, kept
    SCOPED_TRACE("squeeze2 axes " + std::to_string(axes.size()));
    OpCase c("squeeze2");
    c.In("X", "x", R({1, 3, 1, 4, 1}))
        .Out("Out", "out")
        .Out("XShape", "xs", false)
        .Attr("axes", axes);
    Both(c, {"x"}, {"out"});
  }
  for (Ints axes : {Ints{0}, Ints{2}, Ints{0, 3}, Ints{-1}, Ints{1, 1}}) {
    SCOPED_TRACE("unsqueeze2");
    OpCase c("unsqueeze2");
    c.In("X", "x", R({3, 4})).Out("Out", "out").Out("XShape", "xs", false).Attr("axes", axes);
    Both(c, {"x"}, {"out"});
  }
  struct Range {
    int32_t start, stop;
  };
  for (Range r : {Range{1, 2}, Range{0, 3}, Range{0, 0}, Range{-2, -1}, Range{2, 3}}) {
    SCOPED_TRACE("flatten_contiguous_range " + std::to_string(r.start) + ".." +
                 std::to_string(r.stop));
    OpCase c("flatten_contiguous_range");
    c.In("X", "x", R({2, 3, 4, 5}))
        .Out("Out", "out")
        .Out("XShape", "xs", false)
        .Attr("start_axis", r.start)
        .Attr("stop_axis", r.stop);
    Both(c, {"x"}, {"out"});
  }
}

TEST_P(GpuTensorTest, StackUnstackAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("stack");
  for (int32_t axis : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    OpCase s("stack");
    s.In("X", "a", R({2, 3}, 1))
        .In("X", "b", R({2, 3}, 2))
        .In("X", "c", R({2, 3}, 3))
        .Out("Y", "y")
        .Attr("axis", axis);
    Both(s, {"a", "b", "c"}, {"y"});
    ExpectGpuGradsMatchCpu(s, {"b"}, {"y"}, Loose());  // the other grads unwanted
  }
  for (int32_t axis : {0, 1, -1}) {
    SCOPED_TRACE("unstack axis " + std::to_string(axis));
    std::vector<int64_t> x{3, 3, 3};
    OpCase u("unstack");
    u.In("X", "x", R(x, 4))
        .Out("Y", "y0")
        .Out("Y", "y1")
        .Out("Y", "y2")
        .Attr("axis", axis)
        .Attr("num", int32_t(3));
    Both(u, {"x"}, {"y0", "y1", "y2"});
  }
}

// ---------------------------------------------------------------------------------------------
TEST_P(GpuTensorTest, MatmulV2AndGradsMatchCpu) {
  TIDE_REQUIRE_OP("matmul_v2");
  struct Case {
    std::vector<int64_t> x, y;
    bool tx, ty;
  };
  const Case cases[] = {
      {{3, 4}, {4, 5}, false, false},
      {{4, 3}, {4, 5}, true, false},
      {{3, 4}, {5, 4}, false, true},
      {{4, 3}, {5, 4}, true, true},
      {{2, 3, 4}, {2, 4, 5}, false, false},       // batched
      {{2, 3, 4}, {4, 5}, false, false},          // Y shared
      {{3, 4}, {2, 4, 5}, false, false},          // X shared
      {{2, 4, 3}, {5, 4}, true, true},            // shared, transposed
      {{2, 1, 3, 4}, {3, 4, 5}, false, false},    // [2, 1] x [3]: broadcast inside the batch
      {{1, 3, 3, 4}, {2, 1, 5, 4}, false, true},  // [1, 3] x [2, 1]
      {{4}, {4, 5}, false, false},                // vector . matrix
      {{4}, {4, 5}, true, false},                 // a vector's trans_x is ignored
      {{3, 4}, {4}, false, false},                // matrix . vector
      {{2, 3, 4}, {4}, false, true},
      {{4}, {4}, false, false},              // vector . vector
      {{4}, {2, 4, 5}, false, false},        // vector . batch
      {{2, 3, 0}, {2, 0, 5}, false, false},  // empty inner dim: zeros
  };
  unsigned seed = 10;
  for (const Case& k : cases) {
    SCOPED_TRACE("X " + DimsStr(k.x) + (k.tx ? "^T" : "") + " Y " + DimsStr(k.y) +
                 (k.ty ? "^T" : ""));
    OpCase c("matmul_v2");
    c.In("X", "x", R(k.x, seed++))
        .In("Y", "y", R(k.y, seed++))
        .Out("Out", "out")
        .Attr("trans_x", k.tx)
        .Attr("trans_y", k.ty);
    Both(c, {"x", "y"}, {"out"});
    ExpectGpuGradsMatchCpu(c, {"y"}, {"out"}, Loose());  // only Y's grad
  }
}

// The run plan the CUDA matmul_v2 kernels follow (tide/ops/matmul_v2.hpp's GetMatmulV2Runs), run
// on the host: every run is one strided batched GEMM, so within a run each side's matrix advances
// by its step, and a gradient's matrices differ. Checked without a GPU: the plan's products and
// X's gradient (zeroed, then summed run by run) equal the per-batch definition.
TEST(MatmulV2Runs, StridedRunsReproduceEveryBatch) {
  struct Case {
    std::vector<int64_t> x, y;
    int64_t run;  // the forward plan's run length: as long as the broadcast allows
  };
  const Case cases[] = {{{2, 3, 4}, {2, 4, 5}, 2},
                        {{2, 3, 4}, {4, 5}, 2},
                        {{3, 4}, {2, 4, 5}, 2},
                        {{2, 1, 3, 4}, {3, 4, 5}, 3},
                        {{1, 3, 3, 4}, {2, 1, 4, 5}, 3},
                        {{4, 1, 2, 1, 3, 4}, {3, 2, 5, 4, 5}, 5},
                        {{4}, {2, 4, 5}, 2},
                        {{3, 4}, {4, 5}, 1}};
  for (const Case& k : cases) {
    SCOPED_TRACE("X " + DimsStr(k.x) + " Y " + DimsStr(k.y));
    const auto s = tide::ops::GetMatmulV2Shape("matmul_v2", k.x, k.y, false, false, true);
    const TestTensor x = Random(k.x, TIDE_FP64, -1, 1, 1), y = Random(k.y, TIDE_FP64, -1, 1, 2);
    const int64_t xs = s.m * s.k, ys = s.k * s.n, os = s.m * s.n;
    // C_b = A_b B_b for one batch, row-major.
    auto gemm = [&](const double* a, const double* b, double* c, bool add) {
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          double acc = add ? c[i * s.n + j] : 0;
          for (int64_t l = 0; l < s.k; ++l) acc += a[i * s.k + l] * b[l * s.n + j];
          c[i * s.n + j] = acc;
        }
    };
    std::vector<double> want(size_t(s.batch * os)), got(want.size(), -7);
    for (int64_t b = 0; b < s.batch; ++b)
      gemm(&x.data[s.x_off[b] * xs], &y.data[s.y_off[b] * ys], &want[b * os], false);
    const auto r = tide::ops::GetMatmulV2Runs(s, false, false);
    ASSERT_EQ(s.batch % r.len, 0);
    EXPECT_EQ(r.len, k.run);
    for (int64_t b = 0; b < s.batch; b += r.len)
      for (int64_t i = 0; i < r.len; ++i)  // batch i of the strided call
        gemm(&x.data[(s.x_off[b] + i * r.x_step) * xs], &y.data[(s.y_off[b] + i * r.y_step) * ys],
             &got[(b + i) * os], false);
    EXPECT_EQ(got, want);
    // X's gradient with dOut = 1: sum over the batches sharing each X matrix of row sums of Y.
    const auto rx = tide::ops::GetMatmulV2Runs(s, true, false);
    std::vector<double> dx_want(x.data.size(), 0), dx_got(x.data.size(), 0);
    auto dx_add = [&](const double* yb, double* db) {
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t l = 0; l < s.k; ++l)
          for (int64_t j = 0; j < s.n; ++j) db[i * s.k + l] += yb[l * s.n + j];
    };
    for (int64_t b = 0; b < s.batch; ++b)
      dx_add(&y.data[s.y_off[b] * ys], &dx_want[s.x_off[b] * xs]);
    for (int64_t b = 0; b < s.batch; b += rx.len) {
      std::vector<int64_t> written;
      for (int64_t i = 0; i < rx.len; ++i) {
        const int64_t xm = s.x_off[b] + i * rx.x_step;
        EXPECT_EQ(xm, s.x_off[b + i]) << "run at " << b << " batch " << i;
        for (int64_t w : written) EXPECT_NE(w, xm) << "a run writes X's matrix " << xm << " twice";
        written.push_back(xm);
        dx_add(&y.data[(s.y_off[b] + i * rx.y_step) * ys], &dx_got[xm * xs]);
      }
    }
    EXPECT_EQ(dx_got, dx_want);
  }
}

// ---------------------------------------------------------------------------------------------
TEST_P(GpuTensorTest, GatherScatterGatherNdAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("gather");
  for (TideDataType it : {TIDE_INT64, TIDE_INT32}) {
    OpCase g("gather");  // repeated rows: the grad adds them
    g.In("X", "x", R({5, 3})).In("Index", "idx", Values({4}, {4, 0, 4, 2}, it)).Out("Out", "out");
    Both(g, {"x"}, {"out"});
    for (int32_t axis : {1, -1}) {
      OpCase a("gather");
      a.In("X", "x", R({2, 4, 3}, 2))
          .In("Index", "idx", Values({3, 1}, {2, 0, 2}, it))
          .Out("Out", "out")
          .Attr("axis", axis);
      Both(a, {"x"}, {"out"});
    }
    for (bool overwrite : {true, false}) {
      SCOPED_TRACE(overwrite ? "scatter overwrite" : "scatter add");
      OpCase s("scatter");  // Ids repeat: overwrite keeps the last, add sums
      s.In("X", "x", R({5, 3}, 3))
          .In("Ids", "ids", Values({4}, {1, 3, 1, 0}, it))
          .In("Updates", "upd", R({4, 3}, 4))
          .Out("Out", "out")
          .Attr("overwrite", overwrite);
      ExpectGpuMatchesCpu(s, Loose());
      ExpectGpuGradsMatchCpu(s, {"x", "upd"}, {"out"}, Loose());
    }
    OpCase nd("gather_nd");  // Index [2, 2, 2] into X [3, 4, 5]: Out [2, 2, 5]
    nd.In("X", "x", R({3, 4, 5}, 5))
        .In("Index", "idx", Values({2, 2, 2}, {0, 1, 2, 3, 0, 1, 1, 0}, it))
        .Out("Out", "out");
    Both(nd, {"x"}, {"out"});
    OpCase full("gather_nd");  // a full index: single elements
    full.In("X", "x", R({3, 4}, 6))
        .In("Index", "idx", Values({3, 2}, {2, 3, 0, 0, 2, 3}, it))
        .Out("Out", "out");
    Both(full, {"x"}, {"out"});
  }
}

TEST_P(GpuTensorTest, OneHotArgExtremesAndCumsumMatchCpu) {
  TIDE_REQUIRE_OP("one_hot");
  for (bool allow : {false, true}) {
    OpCase oh("one_hot");
    oh.In("X", "x", Values({4, 1}, {2, 0, allow ? 7.0 : 3.0, 1}, TIDE_INT64))
        .Out("Out", "out")
        .Attr("depth", int32_t(4))
        .Attr("dtype", int32_t(t()))
        .Attr("allow_out_of_range", allow);
    ExpectGpuMatchesCpu(oh, {0, 0});
  }
  TestTensor x = Values({2, 3, 4}, {1,  5, 5, 2, 0, 0, 0, 0,  3, -1, 7,  7,  // ties: the first
                                    -4, 2, 2, 9, 1, 1, 8, -3, 6, 6,  -9, 0},
                        t());
  for (const char* op : {"arg_max", "arg_min"})
    for (int64_t axis : {int64_t(0), int64_t(1), int64_t(-1)})
      for (bool keep : {false, true})
        for (int32_t dtype : {int32_t(TIDE_INT64), int32_t(TIDE_INT32), int32_t(-1)}) {
          SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
          OpCase c(op);
          c.In("X", "x", x)
              .Out("Out", "out")
              .Attr("axis", axis)
              .Attr("keepdims", keep)
              .Attr("dtype", dtype);
          ExpectGpuMatchesCpu(c, {0, 0});
        }
  // Long lines (a block per line): many ties, NaNs (they never win, unless a line starts with
  // one), the extreme at the last element.
  TestTensor longx = Random({4, 2000}, t(), 0, 10, 11);
  for (double& v : longx.data) v = std::floor(v);
  longx.data[1 * 2000 + 0] = std::nan("");
  for (int j = 5; j < 2000; j += 97) longx.data[2 * 2000 + j] = std::nan("");
  longx.data[3 * 2000 + 1999] = 20;
  longx.data[3 * 2000 + 1998] = -20;
  for (const char* op : {"arg_max", "arg_min"}) {
    SCOPED_TRACE(std::string("long ") + op);
    OpCase c(op);
    c.In("X", "x", longx).Out("Out", "out").Attr("axis", int64_t(1));
    ExpectGpuMatchesCpu(c, {0, 0});
    OpCase i(op);
    i.In("X", "x", Random({2, 3000}, TIDE_INT32, -5, 5, 12))
        .Out("Out", "out")
        .Attr("axis", int64_t(-1));
    ExpectGpuMatchesCpu(i, {0, 0});
  }
  for (bool keep : {false, true}) {
    OpCase f("arg_max");
    f.In("X", "x", x).Out("Out", "out").Attr("flatten", true).Attr("keepdims", keep);
    ExpectGpuMatchesCpu(f, {0, 0});
  }
  for (int32_t axis : {0, 1, -1})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        SCOPED_TRACE("cumsum axis " + std::to_string(axis) + (exclusive ? " exclusive" : "") +
                     (reverse ? " reverse" : ""));
        OpCase c("cumsum");
        c.In("X", "x", R({3, 4, 5}, 7))
            .Out("Out", "out")
            .Attr("axis", axis)
            .Attr("exclusive", exclusive)
            .Attr("reverse", reverse);
        Both(c, {"x"}, {"out"});
      }
  OpCase flat("cumsum");
  flat.In("X", "x", R({3, 4}, 8)).Out("Out", "out").Attr("flatten", true);
  Both(flat, {"x"}, {"out"});
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {  // long lines: a block scans each
      SCOPED_TRACE(std::string("long cumsum") + (exclusive ? " exclusive" : "") +
                   (reverse ? " reverse" : ""));
      OpCase c("cumsum");
      c.In("X", "x", R({3, 2500}, 9))
          .Out("Out", "out")
          .Attr("axis", int32_t(-1))
          .Attr("exclusive", exclusive)
          .Attr("reverse", reverse);
      Both(c, {"x"}, {"out"});
      OpCase i("cumsum");  // integers: exact whatever the order
      i.In("X", "x", Random({2, 1500}, TIDE_INT64, -100, 100, 10))
          .Out("Out", "out")
          .Attr("axis", int32_t(1))
          .Attr("exclusive", exclusive)
          .Attr("reverse", reverse);
      ExpectGpuMatchesCpu(i, {0, 0});
    }
}

// ---------------------------------------------------------------------------------------------
TEST_P(GpuTensorTest, SliceStridedSlicePadExpandAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("slice");
  struct SliceCase {
    Ints axes, starts, ends, decrease;
  };
  const SliceCase slices[] = {
      {{0}, {1}, {3}, {}},
      {{1, 2}, {-3, 0}, {100, -1}, {}},  // clamped, counted from the end
      {{0, 2}, {2, 1}, {3, 2}, {0}},     // decrease_axis drops dim 0
      {{1}, {2}, {2}, {}},               // empty
  };
  for (const SliceCase& k : slices) {
    SCOPED_TRACE("slice axes " + std::to_string(k.axes.size()));
    OpCase c("slice");
    c.In("Input", "x", R({4, 5, 6}))
        .Out("Out", "out")
        .Attr("axes", k.axes)
        .Attr("starts", k.starts)
        .Attr("ends", k.ends)
        .Attr("decrease_axis", k.decrease);
    Both(c, {"x"}, {"out"});
  }
  struct StridedCase {
    Ints axes, starts, ends, strides;
  };
  const StridedCase strided[] = {
      {{0, 1}, {0, 1}, {4, 5}, {2, 3}},
      {{2}, {-1}, {-100}, {-2}},  // backwards to the start
      {{0, 2}, {3, 4}, {0, 1}, {-1, -2}},
  };
  for (const StridedCase& k : strided) {
    SCOPED_TRACE("strided_slice");
    OpCase c("strided_slice");
    c.In("Input", "x", R({4, 5, 6}, 2))
        .Out("Out", "out")
        .Attr("axes", k.axes)
        .Attr("starts", k.starts)
        .Attr("ends", k.ends)
        .Attr("strides", k.strides);
    Both(c, {"x"}, {"out"});
  }
  for (Ints pads : {Ints{0, 0, 0, 0}, Ints{1, 2, 0, 3}, Ints{2, 0, 1, 1}}) {
    OpCase p("pad");
    p.In("X", "x", R({3, 4}, 3)).Out("Out", "out").Attr("paddings", pads).Attr("pad_value", 1.5f);
    Both(p, {"x"}, {"out"});
  }
  for (Ints times : {Ints{1, 1, 1}, Ints{2, 1, 3}, Ints{3, 2, 1}}) {
    OpCase e("expand");
    e.In("X", "x", R({2, 3, 1}, 4)).Out("Out", "out").Attr("expand_times", times);
    Both(e, {"x"}, {"out"});
  }
  OpCase ea("expand_as");
  ea.In("X", "x", R({2, 1, 3}, 5)).In("target_tensor", "target", R({4, 3, 3}, 6)).Out("Out", "out");
  Both(ea, {"x"}, {"out"});
}

// ---------------------------------------------------------------------------------------------
TEST_P(GpuTensorTest, NormsAndGradsMatchCpu) {
  TIDE_REQUIRE_OP("layer_norm");
  for (int32_t axis : {1, 2, 3}) {
    for (bool affine : {true, false}) {
      SCOPED_TRACE("layer_norm begin_norm_axis " + std::to_string(axis) +
                   (affine ? "" : " no Scale/Bias"));
      const std::vector<int64_t> x{3, 4, 5, 2};
      int64_t right = 1;
      for (size_t d = axis; d < x.size(); ++d) right *= x[d];
      OpCase c("layer_norm");
      c.In("X", "x", Random(x, t(), -2, 3, 11))
          .Out("Y", "y")
          .Out("Mean", "mean")
          .Out("Variance", "var")
          .Attr("begin_norm_axis", axis)
          .Attr("epsilon", 1e-5f);
      if (affine)
        c.In("Scale", "scale", Random({right}, t(), 0.5, 1.5, 12))
            .In("Bias", "bias", Random({right}, t(), -1, 1, 13));
      ExpectGpuMatchesCpu(c, Loose());
      ExpectGpuGradsMatchCpu(
          c,
          affine ? std::vector<std::string>{"x", "scale", "bias"} : std::vector<std::string>{"x"},
          {"y"}, Loose());
    }
  }
  OpCase wide("layer_norm");  // a long row: split sums
  wide.In("X", "x", Random({4, 3000}, t(), -2, 3, 14))
      .Out("Y", "y")
      .Out("Mean", "mean")
      .Out("Variance", "var")
      .In("Scale", "scale", Random({3000}, t(), 0.5, 1.5, 15));
  ExpectGpuMatchesCpu(wide, Loose());
  ExpectGpuGradsMatchCpu(wide, {"x", "scale"}, {"y"}, Loose());
  for (int32_t groups : {1, 2, 6}) {
    SCOPED_TRACE("group_norm groups " + std::to_string(groups));
    OpCase c("group_norm");
    c.In("X", "x", Random({2, 6, 3, 4}, t(), -2, 3, 16))
        .Out("Y", "y")
        .Out("Mean", "mean")
        .Out("Variance", "var")
        .In("Scale", "scale", Random({6}, t(), 0.5, 1.5, 17))
        .In("Bias", "bias", Random({6}, t(), -1, 1, 18))
        .Attr("groups", groups)
        .Attr("epsilon", 1e-4f);
    ExpectGpuMatchesCpu(c, Loose());
    ExpectGpuGradsMatchCpu(c, {"x", "scale", "bias"}, {"y"}, Loose());
  }
  for (bool affine : {true, false}) {
    SCOPED_TRACE(affine ? "instance_norm" : "instance_norm no Scale/Bias");
    OpCase c("instance_norm");
    c.In("X", "x", Random({2, 3, 4, 5}, t(), -2, 3, 19))
        .Out("Y", "y")
        .Out("SavedMean", "mean")
        .Out("SavedVariance", "rstd");
    if (affine)
      c.In("Scale", "scale", Random({3}, t(), 0.5, 1.5, 20))
          .In("Bias", "bias", Random({3}, t(), -1, 1, 21));
    ExpectGpuMatchesCpu(c, Loose());
    ExpectGpuGradsMatchCpu(
        c, affine ? std::vector<std::string>{"x", "scale", "bias"} : std::vector<std::string>{"x"},
        {"y"}, Loose());
  }
}

// Paddle 2.x's tensor-valued attributes (fed to the host, moved to the device, read back by the
// kernel) override the attributes as on the CPU.
TEST_P(GpuTensorTest, PaddleTensorAttributesMatchCpu) {
  TIDE_REQUIRE_OP("slice");
  OpCase st("slice");  // StartsTensor (int64) and EndsTensorList (int32 scalars)
  st.In("Input", "x", R({4, 5, 6}))
      .In("StartsTensor", "starts", Values({2}, {1, -4}, TIDE_INT64))
      .In("EndsTensorList", "e0", Values({1}, {3}, TIDE_INT32))
      .In("EndsTensorList", "e1", Values({1}, {100}, TIDE_INT32))
      .Out("Out", "out")
      .Attr("axes", Ints{0, 2})
      .Attr("starts", Ints{0, 0})
      .Attr("ends", Ints{1, 1});
  Both(st, {"x"}, {"out"});
  OpCase et("slice");  // EndsTensor beyond int32: clamped, "to the end"
  et.In("Input", "x", R({4, 5}, 2))
      .In("EndsTensor", "ends", Values({1}, {1e12}, TIDE_INT64))
      .Out("Out", "out")
      .Attr("axes", Ints{1})
      .Attr("starts", Ints{2})
      .Attr("ends", Ints{3});
  Both(et, {"x"}, {"out"});
  OpCase ua("unsqueeze2");
  ua.In("X", "x", R({3, 4}, 3))
      .In("AxesTensor", "axes", Values({2}, {0, -1}, TIDE_INT32))
      .Out("Out", "out")
      .Out("XShape", "xs", false)
      .Attr("axes", Ints{1});
  Both(ua, {"x"}, {"out"});
  OpCase ul("unsqueeze2");
  ul.In("X", "x", R({3, 4}, 4))
      .In("AxesTensorList", "a0", Values({1}, {2}, TIDE_INT64))
      .In("AxesTensorList", "a1", Values({1}, {0}, TIDE_INT64))
      .Out("Out", "out")
      .Out("XShape", "xs", false)
      .Attr("axes", Ints{1});
  Both(ul, {"x"}, {"out"});
  OpCase ga("gather");
  ga.In("X", "x", R({3, 4, 2}, 5))
      .In("Index", "idx", Values({3}, {3, 0, 3}, TIDE_INT64))
      .In("Axis", "axis", Values({1}, {1}, TIDE_INT32))
      .Out("Out", "out");
  Both(ga, {"x"}, {"out"});
  OpCase ca("concat");
  ca.In("X", "a", R({2, 3, 4}, 6))
      .In("X", "b", R({2, 5, 4}, 7))
      .In("AxisTensor", "axis", Values({1}, {-2}, TIDE_INT64))
      .Out("Out", "out")
      .Attr("axis", int32_t(0));
  Both(ca, {"a", "b"}, {"out"});
  OpCase sp("split");
  sp.In("X", "x", R({2, 7, 3}, 8))
      .In("AxisTensor", "axis", Values({1}, {1}, TIDE_INT32))
      .In("SectionsTensorList", "s0", Values({1}, {2}, TIDE_INT32))
      .In("SectionsTensorList", "s1", Values({1}, {-1}, TIDE_INT32))
      .Out("Out", "p0")
      .Out("Out", "p1")
      .Attr("axis", int32_t(0))
      .Attr("sections", Ints{1, 1});
  Both(sp, {"x"}, {"p0", "p1"});
  OpCase rs("reshape2");
  rs.In("X", "x", R({2, 3, 4}, 9))
      .In("ShapeTensor", "d0", Values({1}, {4}, TIDE_INT32))
      .In("ShapeTensor", "d1", Values({1}, {-1}, TIDE_INT64))
      .Out("Out", "out")
      .Out("XShape", "xs", false)
      .Attr("shape", Ints{24});
  Both(rs, {"x"}, {"out"});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuTensorTest, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParam);

// The move ops take int32 and int64 data as the CPU kernels do.
TEST(GpuTensorInt, MoveOpsTakeIntegersAsTheCpu) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("gather");
  for (TideDataType it : {TIDE_INT32, TIDE_INT64}) {
    SCOPED_TRACE(it == TIDE_INT32 ? "int32" : "int64");
    const TestTensor x = Random({3, 4}, it, -50, 50, 9);
    std::vector<OpCase> cases;
    cases.emplace_back("squeeze2");
    cases.back()
        .In("X", "x", Random({1, 3, 4}, it, -50, 50, 9))
        .Out("Out", "out")
        .Out("XShape", "xs", false)
        .Attr("axes", Ints{0});
    cases.emplace_back("flatten_contiguous_range");
    cases.back()
        .In("X", "x", x)
        .Out("Out", "out")
        .Out("XShape", "xs", false)
        .Attr("start_axis", int32_t(0))
        .Attr("stop_axis", int32_t(1));
    cases.emplace_back("stack");
    cases.back().In("X", "a", x).In("X", "b", x).Out("Y", "y").Attr("axis", int32_t(1));
    cases.emplace_back("gather");
    cases.back()
        .In("X", "x", x)
        .In("Index", "i", Values({2}, {2, 0}, TIDE_INT64))
        .Out("Out", "out");
    cases.emplace_back("scatter");
    cases.back()
        .In("X", "x", x)
        .In("Ids", "i", Values({2}, {2, 2}, TIDE_INT64))
        .In("Updates", "u", Random({2, 4}, it, -50, 50, 10))
        .Out("Out", "out")
        .Attr("overwrite", false);
    cases.emplace_back("gather_nd");
    cases.back()
        .In("X", "x", x)
        .In("Index", "i", Values({1, 1}, {1}, TIDE_INT64))
        .Out("Out", "out");
    cases.emplace_back("one_hot");
    cases.back()
        .In("X", "x", Values({2, 1}, {1, 0}, it))
        .Out("Out", "out")
        .Attr("depth", int32_t(3))
        .Attr("dtype", int32_t(it));
    cases.emplace_back("arg_max");
    cases.back().In("X", "x", x).Out("Out", "out").Attr("axis", int64_t(1));
    cases.emplace_back("cumsum");
    cases.back().In("X", "x", x).Out("Out", "out").Attr("axis", int32_t(0));
    cases.emplace_back("slice");
    cases.back()
        .In("Input", "x", x)
        .Out("Out", "out")
        .Attr("axes", Ints{1})
        .Attr("starts", Ints{1})
        .Attr("ends", Ints{3});
    cases.emplace_back("pad");
    cases.back()
        .In("X", "x", x)
        .Out("Out", "out")
        .Attr("paddings", Ints{1, 0, 0, 2})
        .Attr("pad_value", 3.0f);
    cases.emplace_back("expand");
    cases.back().In("X", "x", x).Out("Out", "out").Attr("expand_times", Ints{2, 1});
    for (const OpCase& c : cases) {
      SCOPED_TRACE(c.type());
      ExpectGpuMatchesCpu(c, {0, 0});
    }
  }
}

// ---------------------------------------------------------------------------------------------
// An index out of range is found on the device and reported by the next synchronisation,
// naming the op (on the CPU, by the kernel); the place works afterwards.
TEST(GpuTensorErrors, IndexOutOfRangeNamesTheOp) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("gather");
  std::vector<OpCase> bad;
  bad.emplace_back("gather");
  bad.back()
      .In("X", "x", Random({3, 2}, TIDE_FP32, -1, 1, 1))
      .In("Index", "idx", Values({2}, {1, 3}, TIDE_INT64))
      .Out("Out", "out");
  bad.emplace_back("scatter");
  bad.back()
      .In("X", "x", Random({3, 2}, TIDE_FP32, -1, 1, 1))
      .In("Ids", "ids", Values({1}, {-1}, TIDE_INT32))
      .In("Updates", "u", Random({1, 2}, TIDE_FP32, -1, 1, 2))
      .Out("Out", "out");
  bad.emplace_back("gather_nd");
  bad.back()
      .In("X", "x", Random({3, 2}, TIDE_FP32, -1, 1, 1))
      .In("Index", "idx", Values({1, 2}, {2, 2}, TIDE_INT64))
      .Out("Out", "out");
  bad.emplace_back("one_hot");
  bad.back()
      .In("X", "x", Values({2, 1}, {1, 5}, TIDE_INT64))
      .Out("Out", "out")
      .Attr("depth", int32_t(3));
  for (const OpCase& c : bad) {
    SCOPED_TRACE(c.type());
    try {
      c.Run(Gpu());
      ADD_FAILURE() << c.type() << ": an index out of range was accepted";
    } catch (const core::Error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + c.type() + "'"), std::string::npos) << e.what();
    }
  }
  OpCase ok("gather");
  ok.In("X", "x", Random({3, 2}, TIDE_FP32, -1, 1, 1))
      .In("Index", "idx", Values({2}, {1, 2}, TIDE_INT64))
      .Out("Out", "out");
  ExpectGpuMatchesCpu(ok);
}

}  // namespace
}  // namespace tide::test::cuda
