// nn_lookup_table_test.cc: lookup_table rows, padding_idx, id checks; the dense grad against
// finite differences and a summing loop; the sparse grad as a SelectedRows read from the scope.
#include "nn_test_util.h"

namespace tide::test::nn {
namespace {

std::vector<double> RefLookup(const TestTensor& w, const std::vector<double>& ids,
                              int64_t padding) {
  int64_t d = w.dims[1];
  std::vector<double> out;
  for (double idf : ids) {
    auto id = static_cast<int64_t>(idf);
    for (int64_t j = 0; j < d; ++j) out.push_back(id == padding ? 0.0 : w.data[id * d + j]);
  }
  return out;
}

NnOp LookupOp(const TestTensor& w, const TestTensor& ids, int64_t padding = -1,
              bool sparse = false) {
  return NnOp("lookup_table")
      .In("W", "w", w)
      .In("Ids", "ids", ids)
      .Out("Out", "out")
      .Attr("padding_idx", padding)
      .Attr("is_sparse", sparse);
}

class NnLookupTableTest : public ::testing::TestWithParam<TideDataType> {};

TEST_P(NnLookupTableTest, ForwardGathersRows) {
  TestTensor w = Random({10, 4}, GetParam(), -1, 1, 3);
  std::vector<double> ids{3, 0, 9, 3, 5, 1};
  auto out = LookupOp(w, Ints({6, 1}, ids)).Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(out["out"].dtype, GetParam());
  ExpectNear(out["out"], RefLookup(w, ids, -1), 0, 0);
  // Rank-1 ids and [.., 1]-shaped ids.
  out = LookupOp(w, Ints({6}, ids)).Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{6, 4}));
  ExpectNear(out["out"], RefLookup(w, ids, -1), 0, 0);
  out = LookupOp(w, Ints({2, 3, 1}, ids)).Run();
  EXPECT_EQ(out["out"].dims, (std::vector<int64_t>{2, 3, 4}));
  ExpectNear(out["out"], RefLookup(w, ids, -1), 0, 0);
}

TEST_P(NnLookupTableTest, PaddingIdxRowsAreZero) {
  TestTensor w = Random({10, 3}, GetParam(), -1, 1, 4);
  std::vector<double> ids{3, 0, 9, 3, 5};
  auto out = LookupOp(w, Ints({5, 1}, ids), 3).Run();
  ExpectNear(out["out"], RefLookup(w, ids, 3), 0, 0);
  EXPECT_EQ(out["out"].data[0], 0.0);
  EXPECT_NE(out["out"].data[3], 0.0);
}

TEST_P(NnLookupTableTest, DenseGradMatchesFiniteDifferences) {
  GradTolerances t = GradTols(GetParam());
  TestTensor w = Random({6, 3}, GetParam(), -1, 1, 5);
  LookupOp(w, Ints({5, 1}, {2, 0, 2, 5, 4})).CheckGrad({"w"}, {"out"}, t.rtol, t.atol, t.delta);
  LookupOp(w, Ints({5, 1}, {2, 0, 2, 5, 4}), 2).CheckGrad({"w"}, {"out"}, t.rtol, t.atol, t.delta);
}

// The grad program of lookup_table with out@GRAD fed; W@GRAD persistable so it stays in `scope`.
void RunGrad(const NnOp& op, const TestTensor& dout, core::Scope* scope) {
  core::OpDesc fwd;
  core::ProgramDesc prog = op.Build(&fwd);
  core::BlockDesc* b = prog.MutableBlock(0);
  core::VarDesc* dv = b->Var("out@GRAD");
  dv->set_dtype(dout.dtype);
  dv->set_shape(dout.dims);
  auto grads = core::MakeGradOps(fwd, {});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0].type(), "lookup_table_grad");
  AppendChecked(b, grads[0]);
  b->FindVar("w@GRAD")->set_persistable(true);
  std::map<std::string, core::LoDTensor> feeds;
  for (const auto& [var, t] : op.feeds()) feeds[var] = ToLoD(t);
  feeds["out@GRAD"] = ToLoD(dout);
  core::Executor(core::Place("cpu", 0)).Run(prog, scope, feeds, {});
}

TEST_P(NnLookupTableTest, DenseGradSumsRowsPerId) {
  TestTensor w = Random({6, 2}, GetParam(), -1, 1, 6);
  TestTensor dout = Random({4, 2}, GetParam(), -1, 1, 7);
  core::Scope scope;
  RunGrad(LookupOp(w, Ints({4, 1}, {1, 4, 1, 0}), 0), dout, &scope);
  const core::Variable* v = scope.FindVar("w@GRAD");
  ASSERT_TRUE(v && v->IsType<core::LoDTensor>());
  std::vector<double> want(12, 0.0);
  for (int j = 0; j < 2; ++j) {
    want[1 * 2 + j] = dout.data[0 * 2 + j] + dout.data[2 * 2 + j];
    want[4 * 2 + j] = dout.data[1 * 2 + j];
  }  // id 0 is the padding: no gradient
  TestTensor got = FromLoD(v->Get<core::LoDTensor>());
  EXPECT_EQ(got.dims, (std::vector<int64_t>{6, 2}));
  ExpectNear(got, want, 1e-6, 1e-7);
}

TEST_P(NnLookupTableTest, SparseGradIsSelectedRows) {
  TestTensor w = Random({8, 3}, GetParam(), -1, 1, 8);
  TestTensor dout = Random({5, 3}, GetParam(), -1, 1, 9);
  std::vector<double> ids{7, 2, 7, 0, 5};
  core::Scope scope;
  RunGrad(LookupOp(w, Ints({5, 1}, ids), 5, /*sparse=*/true), dout, &scope);
  const core::Variable* v = scope.FindVar("w@GRAD");
  ASSERT_TRUE(v != nullptr);
  ASSERT_TRUE(v->IsType<core::SelectedRows>()) << "holds " << core::VarTypeName(v->type());
  const auto& sr = v->Get<core::SelectedRows>();
  EXPECT_EQ(sr.height(), 8);
  EXPECT_EQ(sr.rows(), (std::vector<int64_t>{7, 2, 7, 0, 5}));
  TestTensor value = FromLoD(sr.value());
  EXPECT_EQ(value.dims, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(value.dtype, GetParam());
  std::vector<double> want = dout.data;
  for (int j = 0; j < 3; ++j) want[4 * 3 + j] = 0.0;  // id 5 is the padding
  ExpectNear(value, want, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Nn, NnLookupTableTest, ::testing::Values(TIDE_FP32, TIDE_FP64), DtypeName);

TEST(NnLookupTableShape, CompileTimeShapesAndSparseVarType) {
  auto got =
      CompileInfer("lookup_table", {{"W", "w", {100, 16}}, {"Ids", "ids", {-1, 1}, TIDE_INT64}},
                   {{"Out", "out"}});
  EXPECT_EQ(got["out"].dims, (std::vector<int64_t>{-1, 16}));
  EXPECT_EQ(got["out"].dtype, TIDE_FP32);
  for (bool sparse : {true, false}) {
    auto g = CompileInfer("lookup_table_grad",
                          {{"W", "w", {100, 16}, TIDE_FP64},
                           {"Ids", "ids", {-1, 1}, TIDE_INT64},
                           {"Out@GRAD", "dout", {-1, 16}, TIDE_FP64}},
                          {{"W@GRAD", "dw"}}, {{"is_sparse", sparse}});
    EXPECT_EQ(g["dw"].type, sparse ? TIDE_VAR_SELECTED_ROWS : TIDE_VAR_LOD_TENSOR);
    EXPECT_EQ(g["dw"].dims, (std::vector<int64_t>{100, 16}));
    EXPECT_EQ(g["dw"].dtype, TIDE_FP64);
  }
  // The grad maker keeps is_sparse, so backward's grad op declares a SelectedRows.
  NnOp op = LookupOp(Random({4, 2}, TIDE_FP32), Ints({3, 1}, {0, 1, 2}), -1, true);
  core::OpDesc fwd;
  core::ProgramDesc prog = op.Build(&fwd);
  core::BlockDesc* b = prog.MutableBlock(0);
  b->Var("out@GRAD")->set_shape({3, 2});
  AppendChecked(b, core::MakeGradOps(fwd, {})[0]);
  EXPECT_EQ(b->FindVar("w@GRAD")->type(), TIDE_VAR_SELECTED_ROWS);
}

TEST(NnLookupTableErrors, IdsOutOfRangeAndBadShapes) {
  TestTensor w = Random({10, 4}, TIDE_FP32);
  ExpectThrows(
      [&] {
        LookupOp(w, Ints({3, 1}, {1, 10, 2})).Run();
      },
      {"lookup_table", "Ids ('ids')[1] = 10", "out of range", "'w'", "10 rows"});
  ExpectThrows([&] { LookupOp(w, Ints({3, 1}, {1, -2, 2})).Run(); }, {"lookup_table", "= -2"});
  ExpectThrows(
      [&] {
        LookupOp(w, Ints({3, 2}, {1, 2, 3, 4, 5, 6})).Run();
      },
      {"lookup_table", "Ids [3, 2]", "end in 1"});
  ExpectThrows(
      [&] {
        LookupOp(w, Values({3, 1}, {1, 2, 3}, TIDE_FP32)).Run();
      },
      {"lookup_table", "Ids ('ids') must be int64", "float32"});
}

}  // namespace
}  // namespace tide::test::nn
