// fluid_semantics3_test.cc: the CUDA kernels of issue 14's third round of Fluid semantics against
// the same ops on the CPU, float32 and float64, outputs and grads: clip of a SelectedRows (merged,
// then clipped; also against the merge written out by hand), scale's ScaleTensor (dense and
// SelectedRows X), fill_constant's ValueTensor (and its refusal of a value Out's dtype cannot
// hold), strided_slice's bound tensors, and conv2d / depthwise_conv2d / pool2d with NHWC data and
// asymmetric paddings (also against the NCHW op on transposed data).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "selected_rows_util.h"

namespace tide::test::cuda {
namespace {

void ExpectRefused(const OpCase& c, const core::Place& place, const std::string& text) {
  ExpectError([&] { c.Run(place); }, {text});
}

class GpuFluidSemantics3Test : public GpuDtypeTest {
 protected:
  // Convolutions sum many float32 terms in another order.
  Tolerance Conv() const {
    return t() == TIDE_FP32 ? Tolerance{1e-4, 1e-4} : Tolerance{1e-9, 1e-10};
  }
};

// ---------------------------------------------------------------------------------------------
// A one-op program over a SelectedRows X and one-element dense inputs; Out is a SelectedRows.
SparseResult RunSparse(const core::Place& place, const std::string& op, core::AttributeMap attrs,
                       const std::vector<int64_t>& rows, const TestTensor& value,
                       const std::map<std::string, TestTensor>& dense = {}) {
  core::ProgramDesc prog;
  core::BlockDesc* b = prog.MutableBlock(0);
  for (const char* name : {"x", "out"})
    DeclareSelectedRows(b, name, value.dtype, {9, value.dims[1]});
  core::VariableNameMap ins = {{"X", {"x"}}};
  for (const auto& [param, t] : dense) {
    core::VarDesc* v = b->Var(param);
    v->set_dtype(t.dtype);
    v->set_shape(t.dims);
    v->set_persistable(true);
    ins[param] = {param};
  }
  AppendChecked(b, core::OpDesc(op, ins, {{"Out", {"out"}}}, std::move(attrs)));
  core::Scope scope;
  PutSelectedRows(&scope, "x", 9, rows, value);
  for (const auto& [param, t] : dense) *scope.Var(param)->GetMutable<core::LoDTensor>() = ToLoD(t);
  core::Executor exe(place);
  exe.Run(prog, &scope, {}, {});
  return ReadSelectedRows(scope.FindVar("out")->Get<core::SelectedRows>());
}

// clip of a SelectedRows: each distinct row once, ascending, its summed values clipped.
TEST_P(GpuFluidSemantics3Test, ClipMergesSelectedRowsThenClips) {
  TIDE_REQUIRE_OP("clip");
  const std::vector<int64_t> rows = {5, 0, 5, 3, 0, 5};
  const TestTensor value = R({6, 3}, 31);
  const core::AttributeMap attrs = {{"min", -0.5f}, {"max", 0.75f}};  // exact in float and double
  const SparseResult cpu = RunSparse(Cpu(), "clip", attrs, rows, value);
  const SparseResult gpu = RunSparse(Gpu(), "clip", attrs, rows, value);
  std::vector<double> want = HandMerge(rows, value);
  auto count = [&](auto pred) { return std::count_if(want.begin(), want.end(), pred); };
  ASSERT_GT(count([](double w) { return w < -0.5; }), 0);  // both bounds bite, not everywhere
  ASSERT_GT(count([](double w) { return w > 0.75; }), 0);
  ASSERT_GT(count([](double w) { return w > -0.5 && w < 0.75; }), 0);
  for (double& w : want) w = std::min(std::max(w, -0.5), 0.75);
  for (const SparseResult* r : {&cpu, &gpu}) {
    EXPECT_EQ(r->rows, (std::vector<int64_t>{0, 3, 5}));
    EXPECT_EQ(r->height, 9);
    ExpectNear(r->value, want, Loose().rtol, Loose().atol);
  }
  ExpectClose(gpu.value, cpu.value, Loose(), "clip (SelectedRows)");
}

// clip_by_norm of a SelectedRows (GradientClipByNorm's sparse path): merged, then scaled by the
// merged values' norm.
TEST_P(GpuFluidSemantics3Test, ClipByNormOfSelectedRowsMatchesCpu) {
  TIDE_REQUIRE_OP("clip_by_norm");
  const std::vector<int64_t> rows = {2, 7, 2, 2};
  const TestTensor value = R({4, 3}, 33);
  for (float max_norm : {0.3f, 100.0f}) {
    SCOPED_TRACE("max_norm " + std::to_string(max_norm));
    const core::AttributeMap attrs = {{"max_norm", max_norm}};
    const SparseResult cpu = RunSparse(Cpu(), "clip_by_norm", attrs, rows, value);
    const SparseResult gpu = RunSparse(Gpu(), "clip_by_norm", attrs, rows, value);
    std::vector<double> merged = HandMerge(rows, value);
    double sq = 0;
    for (double m : merged) sq += m * m;
    const double factor = std::sqrt(sq) > max_norm ? max_norm / std::sqrt(sq) : 1.0;
    for (double& m : merged) m *= factor;
    for (const SparseResult* r : {&cpu, &gpu}) {
      EXPECT_EQ(r->rows, (std::vector<int64_t>{2, 7}));
      ExpectNear(r->value, merged, Loose().rtol, Loose().atol);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// scale: ScaleTensor (float or int, one element, read back to the host) over `scale`.
TEST_P(GpuFluidSemantics3Test, ScaleTensorMatchesCpu) {
  TIDE_REQUIRE_OP("scale");
  const TestTensor factors[] = {Values({1}, {-1.5}, TIDE_FP32), Values({1}, {2.25}, TIDE_FP64),
                                Values({1}, {3}, TIDE_INT32), Values({1}, {-2}, TIDE_INT64)};
  for (const TestTensor& f : factors)
    for (bool after : {true, false}) {
      SCOPED_TRACE(std::string(core::DataTypeName(f.dtype)) + (after ? " after" : " before"));
      OpCase c("scale");
      c.In("X", "x", R({3, 4}, 41))
          .In("ScaleTensor", "s", f)
          .Out("Out", "out")
          .Attr("scale", 100.0f)
          .Attr("bias", 0.5f)
          .Attr("bias_after_scale", after);
      Both(c, {"x"}, {"out"});
      const auto x = c.feeds().at("x");
      std::vector<double> want;
      for (double v : x.data) want.push_back(after ? v * f.data[0] + 0.5 : (v + 0.5) * f.data[0]);
      ExpectNear(c.Run(Gpu())["out"], want, Loose().rtol, Loose().atol);
    }
  OpCase two("scale");
  two.In("X", "x", R({2})).In("ScaleTensor", "s", Values({2}, {1, 2}, t())).Out("Out", "out");
  ExpectRefused(two, Gpu(), "op 'scale': ScaleTensor ('s') must hold one element, got [2]");
}

// scale of a SelectedRows with ScaleTensor (global-norm clipping's sparse path): rows as listed.
TEST_P(GpuFluidSemantics3Test, ScaleTensorOfSelectedRowsKeepsTheRows) {
  TIDE_REQUIRE_OP("scale");
  const std::vector<int64_t> rows = {4, 1, 4};
  const TestTensor value = R({3, 2}, 43);
  const std::map<std::string, TestTensor> dense = {{"ScaleTensor", Values({1}, {0.25}, t())}};
  const SparseResult cpu = RunSparse(Cpu(), "scale", {}, rows, value, dense);
  const SparseResult gpu = RunSparse(Gpu(), "scale", {}, rows, value, dense);
  std::vector<double> want;
  for (double v : value.data) want.push_back(v * 0.25);
  for (const SparseResult* r : {&cpu, &gpu}) {
    EXPECT_EQ(r->rows, rows);
    EXPECT_EQ(r->height, 9);
    ExpectNear(r->value, want, Loose().rtol, Loose().atol);
  }
}

// ---------------------------------------------------------------------------------------------
// fill_constant: ValueTensor over str_value over value, refused where Out's dtype cannot hold it.
TEST(GpuFluidSemantics3, FillConstantValueTensorMatchesCpu) {
  TIDE_REQUIRE_GPU();
  TIDE_REQUIRE_OP("fill_constant");
  struct Case {
    TideDataType out;
    TestTensor value;
    double want;
  };
  const Case cases[] = {{TIDE_INT64, Values({1}, {-3}, TIDE_INT32), -3},
                        {TIDE_INT32, Values({1}, {7.9}, TIDE_FP64), 7},
                        {TIDE_FP32, Values({1}, {2.5}, TIDE_FP32), 2.5},
                        {TIDE_FP64, Values({1}, {-1}, TIDE_INT64), -1},
                        {TIDE_BOOL, Values({1}, {0.5}, TIDE_FP32), 1}};
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(core::DataTypeName(k.value.dtype)) + " to " +
                 core::DataTypeName(k.out));
    OpCase c("fill_constant");
    c.In("ValueTensor", "v", k.value)
        .Out("Out", "out")
        .Attr("shape", std::vector<int64_t>{2, 3})
        .Attr("value", 99.0f)
        .Attr("dtype", int32_t(k.out));
    const auto gpu = c.Run(Gpu())["out"];
    ExpectClose(gpu, c.Run(Cpu())["out"], {0, 0}, "fill_constant");
    ExpectNear(gpu, std::vector<double>(6, k.want), 0, 0);
  }
  // An int64 str_value is read exactly, not through a double (2^53 + 1 has no double).
  OpCase exact("fill_constant");
  exact.Out("Out", "out")
      .Attr("shape", std::vector<int64_t>{1})
      .Attr("str_value", std::string("9007199254740993"))
      .Attr("dtype", int32_t(TIDE_INT64));
  ExpectClose(exact.Run(Gpu())["out"], exact.Run(Cpu())["out"], {0, 0}, "str_value");
  for (const Case& bad : {Case{TIDE_INT32, Values({1}, {3e9}, TIDE_FP64), 0},
                          Case{TIDE_INT32, Values({1}, {-2147483649.0}, TIDE_INT64), 0},
                          Case{TIDE_INT64, Values({1}, {NAN}, TIDE_FP32), 0}}) {
    OpCase c("fill_constant");
    c.In("ValueTensor", "v", bad.value)
        .Out("Out", "out")
        .Attr("shape", std::vector<int64_t>{2})
        .Attr("dtype", int32_t(bad.out));
    const std::string dtype = core::DataTypeName(bad.out);
    ExpectRefused(c, Gpu(), "does not fit " + dtype);
    ExpectRefused(c, Cpu(), "does not fit " + dtype);
  }
}

// ---------------------------------------------------------------------------------------------
// strided_slice: each bound kind from its ...TensorList, its ...Tensor or the attribute.
TEST_P(GpuFluidSemantics3Test, StridedSliceBoundTensorsMatchCpu) {
  TIDE_REQUIRE_OP("strided_slice");
  // Input [4, 3, 6], axes {0, 2}: starts {3, -1}, ends {0, 0}, strides {-2, -2}, each from the
  // attribute (0), its ...Tensor (1) or its ...TensorList (2).
  const std::vector<std::vector<int>> sources = {{1, 0, 0}, {0, 2, 0}, {0, 0, 1},
                                                 {2, 1, 2}, {1, 1, 1}, {2, 2, 2}};
  struct Bound {
    std::string kind, attr;
    std::vector<double> held;
  };
  const Bound bounds[] = {
      {"Starts", "starts", {3, -1}}, {"Ends", "ends", {0, 0}}, {"Strides", "strides", {-2, -2}}};
  for (const auto& source : sources) {
    SCOPED_TRACE("sources " + std::to_string(source[0]) + std::to_string(source[1]) +
                 std::to_string(source[2]));
    OpCase c("strided_slice");
    c.In("Input", "x", R({4, 3, 6}, 51)).Out("Out", "out").Attr("axes", std::vector<int32_t>{0, 2});
    for (int k = 0; k < 3; ++k) {
      const Bound& b = bounds[k];
      if (source[k] == 0) {
        c.Attr(b.attr, std::vector<int32_t>(b.held.begin(), b.held.end()));
        continue;
      }
      c.Attr(b.attr, std::vector<int32_t>{1, 1});  // loses to the tensor
      if (source[k] == 1) {
        c.In(b.kind + "Tensor", b.kind + "_t", Values({2}, b.held, TIDE_INT32));
      } else {
        c.In(b.kind + "TensorList", b.kind + "_0", Values({1}, {b.held[0]}, TIDE_INT64));
        c.In(b.kind + "TensorList", b.kind + "_1", Values({1}, {b.held[1]}, TIDE_INT32));
      }
    }
    Both(c, {"x"}, {"out"});
    // x[3:0:-2, :, -1:0:-2]
    const auto x = c.feeds().at("x");
    std::vector<double> want;
    for (int i : {3, 1})
      for (int j = 0; j < 3; ++j)
        for (int l : {5, 3, 1}) want.push_back(x.data[(i * 3 + j) * 6 + l]);
    const auto got = c.Run(Gpu())["out"];
    EXPECT_EQ(got.dims, (std::vector<int64_t>{2, 3, 3}));
    ExpectNear(got, want, 0, 0);
  }
  OpCase zero("strided_slice");
  zero.In("Input", "x", R({4, 3, 6}))
      .Out("Out", "out")
      .Attr("axes", std::vector<int32_t>{0})
      .Attr("starts", std::vector<int32_t>{0})
      .Attr("ends", std::vector<int32_t>{2})
      .In("StridesTensor", "s", Values({1}, {0}, TIDE_INT32));
  ExpectRefused(zero, Gpu(), "op 'strided_slice': strides[0] is 0");
}

// ---------------------------------------------------------------------------------------------
// NHWC <-> NCHW of test tensors, for the NHWC cases' second reference.
TestTensor Transposed(const TestTensor& t, bool to_nhwc) {
  const auto& d = t.dims;  // NCHW (to_nhwc) or NHWC
  const int64_t n = d[0], c = to_nhwc ? d[1] : d[3], h = to_nhwc ? d[2] : d[1],
                w = to_nhwc ? d[3] : d[2];
  TestTensor out = t;
  out.dims = to_nhwc ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t nchw = ((b * c + k) * h + y) * w + x, nhwc = ((b * h + y) * w + x) * c + k;
          if (to_nhwc)
            out.data[nhwc] = t.data[nchw];
          else
            out.data[nchw] = t.data[nhwc];
        }
  return out;
}

// conv2d / depthwise_conv2d: NHWC, and paddings cuDNN cannot express (unequal sides).
TEST_P(GpuFluidSemantics3Test, NhwcAndAsymmetricConvolutionsMatchCpu) {
  struct Case {
    const char* op;
    std::vector<int64_t> x, f;  // x NCHW
    std::vector<int32_t> strides, pads, dils;
    int32_t groups;
    const char* algo;
  };
  const Case cases[] = {
      {"conv2d", {2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, "EXPLICIT"},
      {"conv2d", {2, 4, 8, 9}, {6, 2, 3, 2}, {2, 1}, {0, 2, 1, 0}, {1, 2}, 2, "EXPLICIT"},
      {"conv2d", {1, 3, 7, 8}, {5, 3, 2, 4}, {2, 3}, {0, 0}, {1, 1}, 1, "SAME"},  // odd totals
      {"conv2d", {2, 2, 5, 5}, {3, 2, 1, 1}, {1, 1}, {2, 0, 0, 1}, {1, 1}, 1, "EXPLICIT"},
      {"depthwise_conv2d", {2, 4, 6, 7}, {4, 1, 3, 3}, {1, 2}, {1, 1}, {1, 1}, 4, "EXPLICIT"},
      {"depthwise_conv2d", {1, 3, 6, 6}, {6, 1, 3, 3}, {2, 2}, {1, 2, 0, 1}, {1, 1}, 3, "EXPLICIT"},
  };
  unsigned seed = 61;
  for (const Case& k : cases)
    for (const char* layout : {"NCHW", "NHWC"}) {
      SCOPED_TRACE(std::string(k.op) + " " + layout + " X " + DimsStr(k.x) + " F " + DimsStr(k.f) +
                   " " + k.algo);
      const bool nhwc = std::string(layout) == "NHWC";
      TIDE_REQUIRE_OP(k.op);
      const TestTensor x = R(k.x, seed++), f = R(k.f, seed++);
      auto make = [&](const TestTensor& input, const char* format) {
        OpCase c(k.op);
        c.In("Input", "x", input)
            .In("Filter", "f", f)
            .Out("Output", "out")
            .Attr("strides", k.strides)
            .Attr("paddings", k.pads)
            .Attr("dilations", k.dils)
            .Attr("groups", k.groups)
            .Attr("padding_algorithm", std::string(k.algo))
            .Attr("data_format", std::string(format));
        return c;
      };
      const OpCase c = make(nhwc ? Transposed(x, true) : x, layout);
      ExpectGpuMatchesCpu(c, Conv());
      ExpectGpuGradsMatchCpu(c, {"x", "f"}, {"out"}, Conv());
      if (nhwc) {  // the NCHW op on the same data, transposed
        const auto got = c.Run(Gpu())["out"];
        const auto want = make(x, "NCHW").Run(Cpu())["out"];
        ExpectClose(Transposed(got, false), want, Conv(), "NHWC vs NCHW");
      }
    }
}

// pool2d: NHWC in every mode, and unequal paddings.
TEST_P(GpuFluidSemantics3Test, NhwcPoolingMatchesCpu) {
  TIDE_REQUIRE_OP("pool2d");
  struct Case {
    const char* type;
    std::vector<int64_t> x;  // NCHW
    std::vector<int32_t> k, s, p;
    bool global, exclusive, adaptive, ceil;
  };
  const Case cases[] = {
      {"max", {2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, false, true, false, false},
      {"avg", {2, 3, 9, 7}, {3, 3}, {2, 2}, {1, 1}, false, true, false, false},
      {"avg", {2, 2, 9, 7}, {3, 3}, {2, 2}, {1, 1}, false, false, false, false},       // / kh * kw
      {"max", {1, 3, 7, 8}, {3, 3}, {2, 2}, {0, 0}, false, true, false, true},         // ceil_mode
      {"max", {2, 3, 7, 6}, {3, 2}, {2, 1}, {1, 0, 0, 1}, false, true, false, false},  // 4 pads
      {"avg", {2, 3, 7, 6}, {3, 2}, {2, 1}, {0, 2, 1, 0}, false, true, false, false},
      {"max", {2, 3, 5, 6}, {1, 1}, {1, 1}, {0, 0}, true, true, false, false},  // global
      {"avg", {2, 3, 5, 6}, {1, 1}, {1, 1}, {0, 0}, true, true, false, false},
      {"max", {1, 2, 12, 12}, {1, 1}, {1, 1}, {0, 0}, true, true, false, false},  // scatter
      {"max", {1, 4, 10, 7}, {3, 2}, {1, 1}, {0, 0}, false, true, true, false},   // adaptive
      {"avg", {1, 4, 10, 7}, {3, 2}, {1, 1}, {0, 0}, false, true, true, false},
  };
  unsigned seed = 71;
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.type) + " NHWC X " + DimsStr(k.x) + " pads " +
                 std::to_string(k.p.size()) + (k.global ? " global" : "") +
                 (k.adaptive ? " adaptive" : "") + (k.ceil ? " ceil" : "") +
                 (k.exclusive ? "" : " inclusive"));
    const TestTensor x = R(k.x, seed++);
    auto make = [&](const TestTensor& input, const char* format) {
      OpCase c("pool2d");
      c.In("X", "x", input)
          .Out("Out", "out")
          .Attr("pooling_type", std::string(k.type))
          .Attr("ksize", k.k)
          .Attr("strides", k.s)
          .Attr("paddings", k.p)
          .Attr("global_pooling", k.global)
          .Attr("exclusive", k.exclusive)
          .Attr("adaptive", k.adaptive)
          .Attr("ceil_mode", k.ceil)
          .Attr("data_format", std::string(format));
      return c;
    };
    const OpCase c = make(Transposed(x, true), "NHWC");
    ExpectGpuMatchesCpu(c, Loose());
    ExpectGpuGradsMatchCpu(c, {"x"}, {"out"}, Loose());
    const auto got = c.Run(Gpu())["out"];
    ExpectClose(Transposed(got, false), make(x, "NCHW").Run(Cpu())["out"], Loose(), "NHWC vs NCHW");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuFluidSemantics3Test, ::testing::Values(TIDE_FP32, TIDE_FP64),
                         DtypeParam);

}  // namespace
}  // namespace tide::test::cuda
