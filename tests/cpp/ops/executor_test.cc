// executor_test.cc: the executor's feed/fetch and scopes: persistables in the given scope (or
// reused from an ancestor), temporaries in the prepared program's own local scope, bindings kept
// across runs, and nested scopes.
#include "core/executor/executor.h"

#include <gtest/gtest.h>

#include "core/host/initialize.h"

namespace tide::core {
namespace {

LoDTensor Host(std::vector<int64_t> dims, std::vector<float> v) {
  LoDTensor t;
  t.Resize(DDim(dims));
  std::copy(v.begin(), v.end(), t.mutable_data<float>(HostPlace()));
  return t;
}

// y = x * w (elementwise) + 1, with w persistable and t a temporary.
ProgramDesc Affine() {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  for (const char* n : {"x", "t", "y"}) b->Var(n)->set_dtype(TIDE_FP32);
  b->Var("w")->set_dtype(TIDE_FP32);
  b->Var("w")->set_persistable(true);
  *b->AppendOp() = OpDesc("elementwise_mul", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"t"}}}, {});
  *b->AppendOp() = OpDesc("scale", {{"X", {"t"}}}, {{"Out", {"y"}}}, {{"bias", 1.0f}});
  return p;
}

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override { Initialize(); }
  Executor exe{Place("cpu", 0)};
};

TEST_F(ExecutorTest, FeedFetchRoundTripAndPreparedReuse) {
  Scope scope;
  *scope.Var("w")->GetMutable<LoDTensor>() = Host({3}, {1, 2, 3});
  auto prepared = exe.Prepare(Affine(), 0, {"x"}, {"y", "t"});
  EXPECT_EQ(prepared->feed_names(), std::vector<std::string>{"x"});
  for (float k : {1.f, 2.f, 5.f}) {
    auto out = exe.Run(*prepared, &scope, {Host({3}, {k, k, k})});
    ASSERT_EQ(out.size(), 2u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_FLOAT_EQ(out[0].data<float>()[i], k * (i + 1) + 1);
      EXPECT_FLOAT_EQ(out[1].data<float>()[i], k * (i + 1));
    }
  }
}

TEST_F(ExecutorTest, PersistablesInTheScopeTemporariesNot) {
  Scope scope;
  *scope.Var("w")->GetMutable<LoDTensor>() = Host({2}, {1, 1});
  exe.Run(Affine(), &scope, {{"x", Host({2}, {3, 4})}}, {"y"});
  EXPECT_NE(scope.FindVar("w"), nullptr);
  EXPECT_EQ(scope.FindVar("t"), nullptr) << "temporaries live in the run's local scope";
  EXPECT_EQ(scope.FindVar("y"), nullptr);
  EXPECT_NE(scope.FindVar("feed"), nullptr);
}

TEST_F(ExecutorTest, NestedScopeSharesTheParentsParameters) {
  Scope parent;
  *parent.Var("w")->GetMutable<LoDTensor>() = Host({2}, {10, 20});
  Scope& kid = parent.NewScope();
  auto out = exe.Run(Affine(), &kid, {{"x", Host({2}, {1, 2})}}, {"y"});
  EXPECT_FLOAT_EQ(out[0].data<float>()[1], 41.f);
  EXPECT_EQ(kid.FindLocalVar("w"), nullptr) << "the kid must not shadow the parent's parameter";
}

TEST_F(ExecutorTest, TwoScopesKeepTheirOwnParameters) {
  Scope a, b;
  *a.Var("w")->GetMutable<LoDTensor>() = Host({1}, {2});
  *b.Var("w")->GetMutable<LoDTensor>() = Host({1}, {3});
  auto prepared = exe.Prepare(Affine(), 0, {"x"}, {"y"});
  for (int round = 0; round < 2; ++round) {
    EXPECT_FLOAT_EQ(exe.Run(*prepared, &a, {Host({1}, {1})})[0].data<float>()[0], 3.f);
    EXPECT_FLOAT_EQ(exe.Run(*prepared, &b, {Host({1}, {1})})[0].data<float>()[0], 4.f);
  }
}

TEST_F(ExecutorTest, FeedCountMustMatch) {
  Scope scope;
  auto prepared = exe.Prepare(Affine(), 0, {"x"}, {"y"});
  try {
    exe.Run(*prepared, &scope, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("feeds 1 variable(s), given 0"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tide::core

namespace tide::core {
namespace {

// A new scope at a freed scope's address must not inherit its bindings.
TEST_F(ExecutorTest, ScopesAtAReusedAddressGetFreshBindings) {
  auto prepared = exe.Prepare(Affine(), 0, {"x"}, {"y"});
  for (float w : {2.f, 3.f, 4.f}) {
    auto scope = std::make_unique<Scope>();  // often at the previous one's address
    *scope->Var("w")->GetMutable<LoDTensor>() = Host({1}, {w});
    EXPECT_FLOAT_EQ(exe.Run(*prepared, scope.get(), {Host({1}, {1})})[0].data<float>()[0], w + 1);
  }
}

}  // namespace
}  // namespace tide::core
