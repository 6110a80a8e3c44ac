// nn_shape_ops_test.cc: transpose(2), split, concat, reshape(2), flatten(2) against index loops,
// their grads against finite differences, compile-time shapes with -1 dims, and errors.
#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

std::vector<int64_t> Strides(const std::vector<int64_t>& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// out[idx] = x[idx permuted back], by unravelling every output index.
std::vector<double> RefTranspose(const TestTensor& x, const std::vector<int32_t>& perm) {
  std::vector<int64_t> od;
  for (int p : perm) od.push_back(x.dims[p]);
  auto xs = Strides(x.dims), os = Strides(od);
  std::vector<double> out(x.data.size());
  for (int64_t j = 0; j < static_cast<int64_t>(out.size()); ++j) {
    int64_t src = 0;
    for (size_t i = 0; i < od.size(); ++i) src += ((j / os[i]) % od[i]) * xs[perm[i]];
    out[j] = x.data[src];
  }
  return out;
}

class NnTransposeTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnTransposeTest, ForwardAndGrad) {
  GradTolerances t = GradTols(GetParam());
  struct C {
    std::vector<int64_t> dims;
    std::vector<int32_t> perm;
  } cases[] = {{{3, 4}, {1, 0}},
               {{2, 3, 4}, {2, 0, 1}},
               {{2, 3, 4, 5}, {0, 2, 3, 1}},
               {{2, 1, 3, 2, 2}, {4, 3, 0, 2, 1}},
               {{5}, {0}}};
  for (const auto& c : cases) {
    for (const char* type : {"transpose", "transpose2"}) {
      SCOPED_TRACE(type);
      TestTensor x = Random(c.dims, GetParam(), -1, 1, 3);
      NnOp op = NnOp(type).In("X", "x", x).Out("Out", "out").Attr("axis", c.perm);
      if (std::string(type) == "transpose2") op.Out("XShape", "xshape", false);
      auto out = op.Run();
      std::vector<int64_t> od;
      for (int p : c.perm) od.push_back(c.dims[p]);
      EXPECT_EQ(out["out"].dims, od);
      ExpectNear(out["out"], RefTranspose(x, c.perm), 0, 0);
      op.CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
    }
  }
}

TEST_P(NnTransposeTest, IntegerData) {
  TestTensor x = Values({2, 3}, {1, 2, 3, 4, 5, 6}, TIDE_INT64);
  auto out = NnOp("transpose")
                 .In("X", "x", x)
                 .Out("Out", "out")
                 .Attr("axis", std::vector<int32_t>{1, 0})
                 .Run();
  EXPECT_EQ(out["out"].dtype, TIDE_INT64);
  ExpectNear(out["out"], {1, 4, 2, 5, 3, 6}, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnTransposeTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnTransposeShape, CompileTimeAndErrors) {
  auto got = CompileInfer("transpose2", {{"X", "x", {-1, 3, 5}}}, {{"Out", "o"}, {"XShape", "xs"}},
                          {{"axis", std::vector<int32_t>{2, 0, 1}}});
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{5, -1, 3}));
  EXPECT_EQ(got["xs"].dims, (std::vector<int64_t>{0, -1, 3, 5}));
  ExpectThrows(
      [] {
        CompileInfer("transpose", {{"X", "x", {2, 3, 5}}}, {{"Out", "o"}},
                     {{"axis", std::vector<int32_t>{0, 0, 1}}});
      },
      {"transpose", "permutation", "entry 0 at 1"});
  ExpectThrows(
      [] {
        CompileInfer("transpose", {{"X", "x", {2, 3, 5}}}, {{"Out", "o"}},
                     {{"axis", std::vector<int32_t>{1, 0}}});
      },
      {"transpose", "2 entries", "[2, 3, 5]"});
}

// ------------------------------------------------------------------------------------------
// Slices [begin, end) of axis `axis` of x.
std::vector<double> Slice(const TestTensor& x, int axis, int64_t begin, int64_t end) {
  int64_t pre = 1, post = 1, n = x.dims[axis];
  for (int i = 0; i < axis; ++i) pre *= x.dims[i];
  for (size_t i = axis + 1; i < x.dims.size(); ++i) post *= x.dims[i];
  std::vector<double> out;
  for (int64_t i = 0; i < pre; ++i)
    for (int64_t j = begin; j < end; ++j)
      for (int64_t k = 0; k < post; ++k) out.push_back(x.data[(i * n + j) * post + k]);
  return out;
}

class NnSplitConcatTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnSplitConcatTest, SplitByNumAndSections) {
  TestTensor x = Random({2, 6, 3}, GetParam(), -1, 1, 4);
  auto out = NnOp("split")
                 .In("X", "x", x)
                 .Out("Out", "a")
                 .Out("Out", "b")
                 .Out("Out", "c")
                 .Attr("axis", int32_t(1))
                 .Attr("num", int32_t(3))
                 .Run();
  for (int i = 0; i < 3; ++i) {
    const auto& o = out[std::string(1, char('a' + i))];
    EXPECT_EQ(o.dims, (std::vector<int64_t>{2, 2, 3}));
    ExpectNear(o, Slice(x, 1, 2 * i, 2 * i + 2), 0, 0);
  }
  // sections with a -1, negative axis.
  out = NnOp("split")
            .In("X", "x", x)
            .Out("Out", "a")
            .Out("Out", "b")
            .Out("Out", "c")
            .Attr("axis", int32_t(-2))
            .Attr("sections", std::vector<int32_t>{1, -1, 2})
            .Run();
  EXPECT_EQ(out["b"].dims, (std::vector<int64_t>{2, 3, 3}));
  ExpectNear(out["a"], Slice(x, 1, 0, 1), 0, 0);
  ExpectNear(out["b"], Slice(x, 1, 1, 4), 0, 0);
  ExpectNear(out["c"], Slice(x, 1, 4, 6), 0, 0);
}

TEST_P(NnSplitConcatTest, SplitGradIsConcatOfAllParts) {
  GradTolerances t = GradTols(GetParam());
  NnOp op = NnOp("split")
                .In("X", "x", Random({3, 4, 2}, GetParam(), -1, 1, 5))
                .Out("Out", "a")
                .Out("Out", "b")
                .Attr("axis", int32_t(2))
                .Attr("num", int32_t(2));
  core::OpDesc fwd;
  op.Build(&fwd);
  auto grads = core::MakeGradOps(fwd, {});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0].type(), "concat");
  EXPECT_EQ(grads[0].Input("X"), (std::vector<std::string>{"a@GRAD", "b@GRAD"}));
  op.CheckGrad({"x"}, {"a", "b"}, t.rtol, t.atol, t.delta);
  NnOp("split")
      .In("X", "x", Random({5, 3}, GetParam(), -1, 1, 6))
      .Out("Out", "a")
      .Out("Out", "b")
      .Attr("sections", std::vector<int32_t>{2, 3})
      .CheckGrad({"x"}, {"a", "b"}, t.rtol, t.atol, t.delta);
}

TEST_P(NnSplitConcatTest, ConcatForwardAndGrad) {
  GradTolerances t = GradTols(GetParam());
  TestTensor a = Random({2, 1, 3}, GetParam(), -1, 1, 7),
             b = Random({2, 3, 3}, GetParam(), -1, 1, 8),
             c = Random({2, 2, 3}, GetParam(), -1, 1, 9);
  NnOp op = NnOp("concat")
                .In("X", "a", a)
                .In("X", "b", b)
                .In("X", "c", c)
                .Out("Out", "out")
                .Attr("axis", int32_t(1));
  auto out = op.Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 6, 3}));
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (const TestTensor* p : {&a, &b, &c}) {
      int64_t w = p->dims[1] * 3;
      want.insert(want.end(), p->data.begin() + i * w, p->data.begin() + (i + 1) * w);
    }
  ExpectNear(out["out"], want, 0, 0);
  op.CheckGrad({"a", "b", "c"}, {"out"}, t.rtol, t.atol, t.delta);
  // axis 0 and a negative axis.
  NnOp("concat")
      .In("X", "a", Random({1, 4}, GetParam(), -1, 1, 10))
      .In("X", "b", Random({2, 4}, GetParam(), -1, 1, 11))
      .Out("Out", "out")
      .CheckGrad({"a", "b"}, {"out"}, t.rtol, t.atol, t.delta);
  out = NnOp("concat")
            .In("X", "a", a)
            .In("X", "b", a)
            .Out("Out", "out")
            .Attr("axis", int32_t(-1))
            .Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 1, 6}));
}

TEST_P(NnSplitConcatTest, ConcatGradSkipsUnwantedInputs) {
  TestTensor a = Random({2, 2}, GetParam(), -1, 1, 12), b = Random({2, 3}, GetParam(), -1, 1, 13);
  NnOp op =
      NnOp("concat").In("X", "a", a).In("X", "b", b).Out("Out", "out").Attr("axis", int32_t(1));
  core::OpDesc fwd;
  core::ProgramDesc prog = op.Build(&fwd);
  auto grads = core::MakeGradOps(fwd, {"a"});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0].Output("X@GRAD"), (std::vector<std::string>{core::kEmptyVarName, "b@GRAD"}));
  core::BlockDesc* blk = prog.MutableBlock(0);
  core::VarDesc* dv = blk->Var("out@GRAD");
  dv->set_dtype(GetParam());
  dv->set_shape({2, 5});
  AppendChecked(blk, grads[0]);
  auto feeds = op.feeds();
  feeds["out@GRAD"] = Values({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, GetParam());
  auto got = RunProgram(prog, feeds, {"b@GRAD"});
  ExpectNear(got["b@GRAD"], {2, 3, 4, 7, 8, 9}, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnSplitConcatTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnSplitConcatShape, CompileTimeAndErrors) {
  auto got = CompileInfer("concat", {{"X", "a", {-1, 3}}, {"X", "b", {-1, 5}}}, {{"Out", "o"}},
                          {{"axis", int32_t(1)}});
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 8}));
  got = CompileInfer("concat", {{"X", "a", {-1, 3}}, {"X", "b", {4, 3}}}, {{"Out", "o"}});
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 3}));
  got = CompileInfer("split", {{"X", "x", {-1, 6}}}, {{"Out", "a"}, {"Out", "b"}},
                     {{"axis", int32_t(1)}, {"sections", std::vector<int32_t>{4, -1}}});
  EXPECT_EQ(got["b"].dims, (std::vector<int64_t>{-1, 2}));
  got = CompileInfer("split", {{"X", "x", {-1, 6}}}, {{"Out", "a"}, {"Out", "b"}},
                     {{"num", int32_t(2)}});
  EXPECT_EQ(got["a"].dims, (std::vector<int64_t>{-1, 6}));
  ExpectThrows(
      [] {
        CompileInfer("concat", {{"X", "a", {2, 3}}, {"X", "b", {4, 5}}}, {{"Out", "o"}});
      },
      {"concat", "X[1] [4, 5]", "X[0] [2, 3]", "dim 1"});
  ExpectThrows(
      [] {
        CompileInfer("split", {{"X", "x", {2, 7}}}, {{"Out", "a"}, {"Out", "b"}},
                     {{"axis", int32_t(1)}, {"num", int32_t(2)}});
      },
      {"split", "7 entries on axis 1", "num = 2"});
  ExpectThrows(
      [] {
        CompileInfer("split", {{"X", "x", {2, 7}}}, {{"Out", "a"}, {"Out", "b"}, {"Out", "c"}},
                     {{"axis", int32_t(1)}, {"sections", std::vector<int32_t>{3, 4}}});
      },
      {"split", "2 parts but 3 Out"});
  ExpectThrows(
      [] {
        CompileInfer("split", {{"X", "x", {2, 7}}}, {{"Out", "a"}, {"Out", "b"}},
                     {{"axis", int32_t(1)}, {"sections", std::vector<int32_t>{3, 3}}});
      },
      {"split", "sum to 6", "[2, 7]"});
}

// ------------------------------------------------------------------------------------------
class NnReshapeTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnReshapeTest, ZeroCopiesAndMinusOneInfers) {
  GradTolerances t = GradTols(GetParam());
  TestTensor x = Random({2, 3, 4}, GetParam(), -1, 1, 14);
  struct C {
    std::vector<int32_t> shape;
    std::vector<int64_t> want;
  } cases[] = {{{6, 4}, {6, 4}},
               {{0, -1}, {2, 12}},
               {{-1, 2, 0}, {3, 2, 4}},
               {{24}, {24}},
               {{0, 0, 2, 2}, {2, 3, 2, 2}}};
  for (const auto& c : cases) {
    for (const char* type : {"reshape", "reshape2"}) {
      SCOPED_TRACE(type);
      NnOp op = NnOp(type).In("X", "x", x).Out("Out", "out").Attr("shape", c.shape);
      if (std::string(type) == "reshape2") op.Out("XShape", "xshape", false);
      auto out = op.Run();
      EXPECT_EQ(out["out"].dims, c.want);
      ExpectNear(out["out"], x.data, 0, 0);
      op.CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
    }
  }
}

TEST_P(NnReshapeTest, ShapeTensorOverridesTheAttribute) {
  TestTensor x = Random({2, 6}, GetParam(), -1, 1, 15);
  auto out = NnOp("reshape")
                 .In("X", "x", x)
                 .In("Shape", "shape", Values({3}, {0, 3, -1}, TIDE_INT32))
                 .Out("Out", "out")
                 .Attr("shape", std::vector<int32_t>{12})
                 .Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 2}));
  ExpectNear(out["out"], x.data, 0, 0);
  auto got = CompileInfer("reshape", {{"X", "x", {2, 6}}, {"Shape", "s", {3}, TIDE_INT32}},
                          {{"Out", "o"}}, {{"shape", std::vector<int32_t>{12}}});
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, -1, -1}));
}

TEST_P(NnReshapeTest, FlattenForwardAndGrad) {
  GradTolerances t = GradTols(GetParam());
  TestTensor x = Random({2, 3, 2, 2}, GetParam(), -1, 1, 16);
  for (int axis = 0; axis <= 4; ++axis) {
    for (const char* type : {"flatten", "flatten2"}) {
      SCOPED_TRACE(type);
      NnOp op = NnOp(type).In("X", "x", x).Out("Out", "out").Attr("axis", int32_t(axis));
      if (std::string(type) == "flatten2") op.Out("XShape", "xshape", false);
      auto out = op.Run();
      int64_t rows = 1;
      for (int i = 0; i < axis; ++i) rows *= x.dims[i];
      EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{rows, 24 / rows}));
      ExpectNear(out["out"], x.data, 0, 0);
      if (axis == 2) op.CheckGrad({"x"}, {"out"}, t.rtol, t.atol, t.delta);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Nn, NnReshapeTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnReshapeShape, CompileTimeUnknownDimsAndErrors) {
  auto shape = [](std::vector<int32_t> s) { return core::AttributeMap{{"shape", s}}; };
  auto got = CompileInfer("reshape", {{"X", "x", {-1, 3, 4}}}, {{"Out", "o"}}, shape({-1, 12}));
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 12}));
  got = CompileInfer("reshape", {{"X", "x", {-1, 3, 4}}}, {{"Out", "o"}}, shape({0, -1}));
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 12}));  // the copied -1 cancels out
  got = CompileInfer("reshape2", {{"X", "x", {-1, 3, 4}}}, {{"Out", "o"}, {"XShape", "xs"}},
                     shape({0, 2, -1}));
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 2, 6}));
  EXPECT_EQ(got["xs"].dims, (std::vector<int64_t>{0, -1, 3, 4}));
  got = CompileInfer("flatten2", {{"X", "x", {-1, 3, 4}}}, {{"Out", "o"}, {"XShape", "xs"}},
                     {{"axis", int32_t(1)}});
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 12}));
  got = CompileInfer("flatten", {{"X", "x", {-1, 3, 4}}}, {{"Out", "o"}}, {{"axis", int32_t(2)}});
  EXPECT_EQ(got["o"].dims, (std::vector<int64_t>{-1, 4}));
  ExpectThrows(
      [&] {
        CompileInfer("reshape", {{"X", "x", {2, 3, 4}}}, {{"Out", "o"}}, shape({5, -1}));
      },
      {"reshape", "cannot reshape X [2, 3, 4]", "[5, -1]"});
  ExpectThrows(
      [&] {
        CompileInfer("reshape", {{"X", "x", {2, 3, 4}}}, {{"Out", "o"}}, shape({-1, -1}));
      },
      {"reshape", "more than one -1"});
  ExpectThrows(
      [&] {
        CompileInfer("reshape", {{"X", "x", {2, 3, 4}}}, {{"Out", "o"}}, shape({2, 3, 5}));
      },
      {"reshape", "24 elements", "[2, 3, 5]"});
  ExpectThrows(
      [&] {
        CompileInfer("reshape", {{"X", "x", {2, 12}}}, {{"Out", "o"}}, shape({2, 3, 0}));
      },
      {"reshape", "copies dim 2", "rank 2"});
  ExpectThrows(
      [&] {
        CompileInfer("flatten", {{"X", "x", {2, 3}}}, {{"Out", "o"}}, {{"axis", int32_t(3)}});
      },
      {"flatten", "axis 3", "[0, 2]"});
}

}  // namespace
}  // namespace tide::test::nn
