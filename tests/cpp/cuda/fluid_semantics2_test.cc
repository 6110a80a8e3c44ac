// fluid_semantics2_test.cc: the CUDA kernels of issue 14's second round of Fluid semantics against
// the same ops on the CPU, float32 and float64, outputs and grads: expand's ExpandTimes /
// expand_times_tensor, merge_selected_rows and get_tensor_from_selected_rows (also against the
// merge written out by hand), fill_constant of bool and its ShapeTensor / ShapeTensorList, the
// interps' SizeTensor and Scale in Fluid 1.8's order, and cross_entropy keeping a NaN a NaN.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "selected_rows_util.h"

namespace tide::test::cuda {
namespace {

// Runs `c` on place and expects a tide error that says `text`.
void ExpectRefused(const OpCase& c, const core::Place& place, const std::string& text) {
  ExpectError([&] { c.Run(place); }, {text});
}

class GpuFluidSemantics2Test : public GpuDtypeTest {};

// ---------------------------------------------------------------------------------------------
// expand: ExpandTimes over expand_times_tensor over expand_times.
TEST_P(GpuFluidSemantics2Test, ExpandTakesTimesTensors) {
  TIDE_REQUIRE_OP("expand");
  for (int source = 0; source < 3; ++source) {  // ExpandTimes, expand_times_tensor, both
    SCOPED_TRACE("source " + std::to_string(source));
    OpCase c("expand");
    // The attribute loses to either tensor; beside the list alone it holds what Fluid's layer
    // puts there (the ints, -1 for a Variable), Out's build-time dims.
    c.In("X", "x", R({2, 3, 1}, 3))
        .Out("Out", "out")
        .Attr("expand_times",
              source == 1 ? std::vector<int32_t>{2, -1, 1} : std::vector<int32_t>{5, 5, 5});
    if (source != 1) c.In("ExpandTimes", "times", Values({3}, {3, 1, 4}, TIDE_INT32));
    if (source != 0) {
      c.In("expand_times_tensor", "t0", Values({1}, {2}, TIDE_INT64));
      c.In("expand_times_tensor", "t1", Values({1}, {2}, TIDE_INT32));
      c.In("expand_times_tensor", "t2", Values({1}, {1}, TIDE_INT32));
    }
    Both(c, {"x"}, {"out"});
    const std::vector<int64_t> want =
        source == 1 ? std::vector<int64_t>{4, 6, 1} : std::vector<int64_t>{6, 3, 4};
    EXPECT_EQ(c.Run(Gpu())["out"].dims, want);
  }
  OpCase zero("expand");
  zero.In("X", "x", R({2, 3}))
      .In("ExpandTimes", "times", Values({2}, {2, 0}, TIDE_INT32))
      .Out("Out", "out");
  ExpectRefused(zero, Gpu(), "op 'expand': ExpandTimes [2, 0] holds 0; each repeat must be >= 1");
}

// ---------------------------------------------------------------------------------------------
// merge_selected_rows, then get_tensor_from_selected_rows of its result.
struct MergedResult {
  SparseResult merged;  // the merged SelectedRows
  TestTensor values;    // the LoDTensor Out
};

MergedResult RunMerge(const core::Place& place, const std::vector<int64_t>& rows,
                      const TestTensor& value) {
  core::ProgramDesc prog;
  core::BlockDesc* b = prog.MutableBlock(0);
  for (const char* name : {"x", "merged"})
    DeclareSelectedRows(b, name, value.dtype, {7, value.dims[1]});
  AppendChecked(b, core::OpDesc("merge_selected_rows", {{"X", {"x"}}}, {{"Out", {"merged"}}}, {}));
  AppendChecked(b, core::OpDesc("get_tensor_from_selected_rows", {{"X", {"merged"}}},
                                {{"Out", {"values"}}}, {}));
  b->Var("values")->set_persistable(true);
  core::Scope scope;
  PutSelectedRows(&scope, "x", 7, rows, value);
  core::Executor exe(place);
  exe.Run(prog, &scope, {}, {});
  MergedResult r;
  r.merged = ReadSelectedRows(scope.FindVar("merged")->Get<core::SelectedRows>());
  core::LoDTensor host;
  core::TensorCopySync(scope.FindVar("values")->Get<core::LoDTensor>(), Cpu(), &host);
  r.values = FromLoD(host);
  return r;
}

TEST_P(GpuFluidSemantics2Test, MergeSelectedRowsMatchesCpuAndTheHandMerge) {
  TIDE_REQUIRE_OP("merge_selected_rows");
  const std::vector<int64_t> rows = {5, 0, 5, 3, 0, 5};
  const TestTensor value = R({6, 3}, 21);
  const MergedResult cpu = RunMerge(Cpu(), rows, value), gpu = RunMerge(Gpu(), rows, value);
  // Each distinct row once, ascending, holding the sum of its listed values.
  const std::vector<int64_t> want_rows = {0, 3, 5};
  const std::vector<double> want = HandMerge(rows, value);
  for (const MergedResult* r : {&cpu, &gpu}) {
    EXPECT_EQ(r->merged.rows, want_rows);
    EXPECT_EQ(r->merged.height, 7);
    EXPECT_EQ(r->values.dims, (std::vector<int64_t>{3, 3}));
    ExpectNear(r->values, want, Loose().rtol, Loose().atol);
  }
  ExpectClose(gpu.merged.value, cpu.merged.value, Loose(), "merge_selected_rows");
  ExpectClose(gpu.values, cpu.values, Loose(), "get_tensor_from_selected_rows");
}

// ---------------------------------------------------------------------------------------------
// fill_constant: bool (true where the value is not 0) and Out's dims from the shape tensors.
TEST(GpuFluidSemantics2, FillConstantBoolAndShapeTensorsMatchCpu) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("fill_constant");
  for (float value : {0.0f, 1.0f, -2.5f, NAN})
    for (TideDataType dt : {TIDE_BOOL, TIDE_FP32, TIDE_INT64})
      for (int source = 0; source < 4; ++source) {  // attr, ShapeTensor, ShapeTensorList, both
        SCOPED_TRACE("value " + std::to_string(value) + " dtype " + core::DataTypeName(dt) +
                     " source " + std::to_string(source));
        if (dt == TIDE_INT64 && std::isnan(value)) continue;  // refused: no int holds NaN
        OpCase c("fill_constant");
        c.Out("Out", "out")
            .Attr("shape", std::vector<int64_t>{2, 2})
            .Attr("value", value)
            .Attr("dtype", int32_t(dt));
        if (source == 1 || source == 3)
          c.In("ShapeTensor", "shape", Values({3}, {2, 3, 4}, TIDE_INT32));
        if (source >= 2) {
          c.In("ShapeTensorList", "d0", Values({1}, {5}, TIDE_INT64));
          c.In("ShapeTensorList", "d1", Values({1}, {1}, TIDE_INT32));
        }
        const auto gpu = c.Run(Gpu())["out"], cpu = c.Run(Cpu())["out"];
        ExpectClose(gpu, cpu, {0, 0}, "fill_constant");
        const std::vector<int64_t> want = source == 0   ? std::vector<int64_t>{2, 2}
                                          : source == 2 ? std::vector<int64_t>{5, 1}
                                                        : std::vector<int64_t>{2, 3, 4};
        EXPECT_EQ(gpu.dims, want);
        if (dt == TIDE_BOOL)
          for (double v : gpu.data) EXPECT_EQ(v, value != 0 ? 1.0 : 0.0);  // NaN != 0: true
      }
  OpCase negative("fill_constant");
  negative.Out("Out", "out")
      .Attr("dtype", int32_t(TIDE_BOOL))
      .In("ShapeTensorList", "d0", Values({1}, {-3}, TIDE_INT32));
  ExpectRefused(negative, Gpu(), "op 'fill_constant': ShapeTensorList [-3] has a negative dim");
}

// ---------------------------------------------------------------------------------------------
// The interps: SizeTensor over OutSize over Scale over scale over out_h / out_w.
TEST_P(GpuFluidSemantics2Test, InterpolationSizeInputsMatchCpu) {
  TIDE_REQUIRE_OP("bilinear_interp");
  struct Source {
    bool size_tensor, out_size, scale_tensor;
    float scale;
    std::vector<int64_t> want_hw;
  };
  // X is 3 x 4; out_h / out_w 2 x 9.
  const Source sources[] = {{true, true, true, 2.0f, {5, 6}},
                            {false, true, true, 2.0f, {4, 7}},
                            {false, false, true, 2.0f, {4, 6}},
                            {false, false, false, 0.5f, {1, 2}},
                            {false, false, false, 0.0f, {2, 9}}};
  for (const char* op : {"bilinear_interp", "nearest_interp"})
    for (const char* layout : {"NCHW", "NHWC"})
      for (const Source& s : sources) {
        SCOPED_TRACE(std::string(op) + " " + layout + " want " + DimsStr(s.want_hw));
        const bool nhwc = std::string(layout) == "NHWC";
        OpCase c(op);
        c.In("X", "x",
             R(nhwc ? std::vector<int64_t>{2, 3, 4, 3} : std::vector<int64_t>{2, 3, 3, 4}, 17))
            .Out("Out", "out")
            .Attr("out_h", int32_t(s.size_tensor ? -1 : 2))  // -1: as Fluid's layer leaves them
            .Attr("out_w", int32_t(s.size_tensor ? -1 : 9))
            .Attr("scale", s.scale)
            .Attr("align_corners", false)
            .Attr("align_mode", int32_t(0))
            .Attr("data_layout", std::string(layout));
        if (s.size_tensor) {
          c.In("SizeTensor", "h", Values({1}, {5}, TIDE_INT32));
          c.In("SizeTensor", "w", Values({1}, {6}, TIDE_INT64));
        }
        if (s.out_size) c.In("OutSize", "size", Values({2}, {4, 7}, TIDE_INT32));
        if (s.scale_tensor) c.In("Scale", "scale", Values({1}, {1.5}, TIDE_FP32));
        Both(c, {"x"}, {"out"});
        const auto dims = c.Run(Gpu())["out"].dims;
        const std::vector<int64_t> hw =
            nhwc ? std::vector<int64_t>{dims[1], dims[2]} : std::vector<int64_t>{dims[2], dims[3]};
        EXPECT_EQ(hw, s.want_hw);
      }
  OpCase three("bilinear_interp");
  three.In("X", "x", R({1, 1, 2, 2}))
      .Out("Out", "out")
      .In("SizeTensor", "a", Values({1}, {2}, TIDE_INT32))
      .In("SizeTensor", "b", Values({1}, {2}, TIDE_INT32))
      .In("SizeTensor", "c", Values({1}, {2}, TIDE_INT32));
  ExpectRefused(three, Gpu(), "SizeTensor must be 2 one-element tensors (h, w), got 3");
  OpCase zero("nearest_interp");
  zero.In("X", "x", R({1, 1, 2, 2}))
      .Out("Out", "out")
      .In("Scale", "scale", Values({1}, {0.25}, TIDE_FP64));
  ExpectRefused(zero, Gpu(), "op 'nearest_interp': the output size must be positive (from Scale)");
}

// ---------------------------------------------------------------------------------------------
// cross_entropy: the log(0) and divide-by-0 guards of tide/ops/cross_entropy.hpp keep a NaN
// probability NaN in Y and X@GRAD on both places (a max() guard once made it 1e-20 on the GPU).
TEST_P(GpuFluidSemantics2Test, CrossEntropyKeepsNan) {
  TIDE_REQUIRE_OP("cross_entropy");
  for (bool soft : {false, true}) {
    SCOPED_TRACE(soft ? "soft" : "hard");
    TestTensor x = Random({3, 4}, t(), 0.1, 1, 5);
    x.data[1 * 4 + 2] = NAN;  // row 1, the class row 1's hard label names
    x.data[2 * 4 + 0] = 0;    // log(0): a finite -1e20 guard, as Fluid
    OpCase c("cross_entropy");
    c.In("X", "x", x).Out("Y", "y").Attr("soft_label", soft);
    if (soft)
      c.In("Label", "label", Random({3, 4}, t(), 0, 1, 6));
    else
      c.In("Label", "label", Values({3, 1}, {1, 2, 0}, TIDE_INT64));
    ExpectGpuMatchesCpu(c, Loose());
    ExpectGpuGradsMatchCpu(c, {"x"}, {"y"}, Loose());
    for (const core::Place& place : {Cpu(), Gpu()}) {
      SCOPED_TRACE(place.ToString());
      const auto y = c.Run(place)["y"];
      EXPECT_TRUE(std::isnan(y.data[1])) << y.data[1];
      EXPECT_TRUE(std::isfinite(y.data[0]) && std::isfinite(y.data[2]));
      const auto dx = c.RunGrad(place, {"x"}, {{"y", Values({3, 1}, {1, 1, 1}, t())}})["x"];
      EXPECT_TRUE(std::isnan(dx.data[1 * 4 + 2])) << dx.data[1 * 4 + 2];
      EXPECT_TRUE(std::isfinite(dx.data[2 * 4 + 0]));  // -1 / 1e-20, finite
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuFluidSemantics2Test, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParam);

}  // namespace
}  // namespace tide::test::cuda
