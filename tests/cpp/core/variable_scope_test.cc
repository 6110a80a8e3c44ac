// Tests core/framework/variable.h and scope.h, including concurrent lookup and creation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/framework/scope.h"
#include "core/framework/variable.h"
#include "core/platform/enforce.h"

namespace tide::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(VariableTest, FreshVariableHoldsNothing) {
  Variable v;
  EXPECT_FALSE(v.IsInitialized());
  EXPECT_EQ(v.type(), TIDE_VAR_UNINITIALIZED);
  EXPECT_FALSE(v.IsType<LoDTensor>());
  EXPECT_EQ(v.GetTensorList(), nullptr);
  try {
    v.Get<LoDTensor>();
    FAIL() << "Get on an empty variable";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("holds nothing"));
    EXPECT_THAT(e.what(), HasSubstr("LOD_TENSOR"));
  }
}

TEST(VariableTest, GetMutableCreatesOnceAndTagsType) {
  Variable v;
  LoDTensor* t = v.GetMutable<LoDTensor>();
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(v.IsInitialized());
  EXPECT_EQ(v.type(), TIDE_VAR_LOD_TENSOR);
  EXPECT_TRUE(v.IsType<LoDTensor>());
  EXPECT_FALSE(v.IsType<SelectedRows>());
  t->Resize(DDim({2, 3}));
  EXPECT_EQ(v.GetMutable<LoDTensor>(), t);
  EXPECT_EQ(&v.Get<LoDTensor>(), t);
  EXPECT_EQ(v.Get<LoDTensor>().dims(), DDim({2, 3}));
}

TEST(VariableTest, EachTypeHasItsTag) {
  {
    Variable v;
    v.GetMutable<SelectedRows>()->set_height(7);
    EXPECT_EQ(v.type(), TIDE_VAR_SELECTED_ROWS);
    EXPECT_EQ(v.Get<SelectedRows>().height(), 7);
  }
  {
    Variable v;
    v.GetMutable<LoDTensorArray>();
    EXPECT_EQ(v.type(), TIDE_VAR_LOD_TENSOR_ARRAY);
  }
  {
    Variable v;
    v.GetMutable<FeedList>();
    EXPECT_EQ(v.type(), TIDE_VAR_FEED_MINIBATCH);
  }
  {
    Variable v;
    v.GetMutable<FetchList>();
    EXPECT_EQ(v.type(), TIDE_VAR_FETCH_LIST);
  }
  {
    Variable v;
    v.GetMutable<StepScopes>();
    EXPECT_EQ(v.type(), TIDE_VAR_STEP_SCOPES);
  }
}

TEST(VariableTest, UsingAsAnotherTypeThrows) {
  Variable v;
  v.GetMutable<LoDTensor>();
  try {
    v.GetMutable<SelectedRows>();
    FAIL() << "LoDTensor variable used as SelectedRows";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("variable holds LOD_TENSOR, used as SELECTED_ROWS"));
  }
  try {
    v.Get<FetchList>();
    FAIL() << "LoDTensor variable read as FetchList";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("variable holds LOD_TENSOR, read as FETCH_LIST"));
  }
  // The list types are distinct even though they share a representation.
  Variable f;
  f.GetMutable<FeedList>();
  EXPECT_THROW(f.GetMutable<FetchList>(), Error);
  EXPECT_THROW(f.GetMutable<LoDTensorArray>(), Error);
  // The failed uses left the held objects alone.
  EXPECT_EQ(v.type(), TIDE_VAR_LOD_TENSOR);
  EXPECT_EQ(f.type(), TIDE_VAR_FEED_MINIBATCH);
}

TEST(VariableTest, ClearAllowsANewType) {
  Variable v;
  v.GetMutable<LoDTensor>();
  v.Clear();
  EXPECT_FALSE(v.IsInitialized());
  EXPECT_EQ(v.type(), TIDE_VAR_UNINITIALIZED);
  EXPECT_NO_THROW(v.GetMutable<SelectedRows>());
  EXPECT_EQ(v.type(), TIDE_VAR_SELECTED_ROWS);
}

TEST(VariableTest, GetTensorListForListTypes) {
  Variable arr, feed, fetch, tensor, rows;
  arr.GetMutable<LoDTensorArray>()->resize(3);
  feed.GetMutable<FeedList>()->resize(2);
  fetch.GetMutable<FetchList>()->resize(1);
  tensor.GetMutable<LoDTensor>();
  rows.GetMutable<SelectedRows>();

  std::vector<LoDTensor>* a = arr.GetTensorList();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, static_cast<std::vector<LoDTensor>*>(arr.GetMutable<LoDTensorArray>()));
  EXPECT_EQ(a->size(), 3u);
  ASSERT_NE(feed.GetTensorList(), nullptr);
  EXPECT_EQ(feed.GetTensorList()->size(), 2u);
  ASSERT_NE(fetch.GetTensorList(), nullptr);
  EXPECT_EQ(fetch.GetTensorList()->size(), 1u);
  EXPECT_EQ(tensor.GetTensorList(), nullptr);
  EXPECT_EQ(rows.GetTensorList(), nullptr);

  // Writes through the list are seen through the typed object.
  a->emplace_back();
  EXPECT_EQ(arr.Get<LoDTensorArray>().size(), 4u);
}

TEST(VariableTest, InitByType) {
  const std::vector<TideVarType> made = {TIDE_VAR_LOD_TENSOR,       TIDE_VAR_SELECTED_ROWS,
                                         TIDE_VAR_LOD_TENSOR_ARRAY, TIDE_VAR_FEED_MINIBATCH,
                                         TIDE_VAR_FETCH_LIST,       TIDE_VAR_STEP_SCOPES,
                                         TIDE_VAR_LOD_RANK_TABLE};
  for (TideVarType t : made) {
    Variable v;
    v.InitByType(t);
    EXPECT_TRUE(v.IsInitialized()) << VarTypeName(t);
    EXPECT_EQ(v.type(), t);
  }
  // Types that plugins own are left for their ops to make.
  for (TideVarType t : {TIDE_VAR_RAW}) {
    Variable v;
    v.InitByType(t);
    EXPECT_FALSE(v.IsInitialized()) << VarTypeName(t);
    EXPECT_EQ(v.type(), TIDE_VAR_UNINITIALIZED);
  }
}

TEST(VariableTest, InitBySameTypeKeepsTheObject) {
  Variable v;
  LoDTensor* t = v.GetMutable<LoDTensor>();
  t->Resize(DDim({4}));
  v.InitByType(TIDE_VAR_LOD_TENSOR);
  EXPECT_EQ(v.GetMutable<LoDTensor>(), t);
  EXPECT_EQ(t->dims(), DDim({4}));
}

TEST(ScopeTest, VarCreatesOnceAndFindsLocally) {
  Scope s;
  EXPECT_EQ(s.FindVar("x"), nullptr);
  EXPECT_EQ(s.FindLocalVar("x"), nullptr);
  Variable* x = s.Var("x");
  ASSERT_NE(x, nullptr);
  EXPECT_FALSE(x->IsInitialized());
  EXPECT_EQ(s.Var("x"), x);
  EXPECT_EQ(s.FindVar("x"), x);
  EXPECT_EQ(s.FindLocalVar("x"), x);
  EXPECT_NE(s.Var("y"), x);
  EXPECT_EQ(s.parent(), nullptr);
}

TEST(ScopeTest, LookupsWalkParentsAndKidsShadow) {
  Scope root;
  Variable* rx = root.Var("x");
  Variable* ry = root.Var("y");
  Scope& kid = root.NewScope();
  Scope& grandkid = kid.NewScope();
  EXPECT_EQ(kid.parent(), &root);
  EXPECT_EQ(grandkid.parent(), &kid);

  EXPECT_EQ(grandkid.FindVar("x"), rx);
  EXPECT_EQ(grandkid.FindLocalVar("x"), nullptr);

  Variable* kx = kid.Var("x");  // shadows root's x below kid
  EXPECT_NE(kx, rx);
  EXPECT_EQ(kid.FindVar("x"), kx);
  EXPECT_EQ(grandkid.FindVar("x"), kx);
  EXPECT_EQ(root.FindVar("x"), rx);
  EXPECT_EQ(grandkid.FindVar("y"), ry);

  // Var never looks up: it creates locally even when an ancestor has the name.
  Variable* gy = grandkid.Var("y");
  EXPECT_NE(gy, ry);
  EXPECT_EQ(grandkid.FindVar("y"), gy);

  // Parents never see their kids' variables.
  Variable* only = grandkid.Var("only_in_grandkid");
  EXPECT_EQ(root.FindVar("only_in_grandkid"), nullptr);
  EXPECT_EQ(kid.FindVar("only_in_grandkid"), nullptr);

  EXPECT_EQ(grandkid.FindScope(only), &grandkid);
  EXPECT_EQ(grandkid.FindScope(kx), &kid);
  EXPECT_EQ(grandkid.FindScope(rx), &root);
  EXPECT_EQ(root.FindScope(kx), nullptr);
  Variable stray;
  EXPECT_EQ(grandkid.FindScope(&stray), nullptr);
}

TEST(ScopeTest, KidManagement) {
  Scope root;
  EXPECT_EQ(root.NumKids(), 0u);
  Scope& a = root.NewScope();
  Scope& b = root.NewScope();
  Scope& c = root.NewScope();
  EXPECT_NE(&a, &b);
  EXPECT_EQ(root.NumKids(), 3u);
  b.Var("in_b");
  root.DeleteScope(&b);
  EXPECT_EQ(root.NumKids(), 2u);
  // Deleting something that is not a kid changes nothing.
  root.DeleteScope(&a.NewScope());
  EXPECT_EQ(root.NumKids(), 2u);
  EXPECT_EQ(a.NumKids(), 1u);
  Scope unrelated;
  root.DeleteScope(&unrelated);
  EXPECT_EQ(root.NumKids(), 2u);
  a.DeleteScope(&c);  // c is root's kid, not a's
  EXPECT_EQ(root.NumKids(), 2u);

  root.DropKids();
  EXPECT_EQ(root.NumKids(), 0u);
  // The root itself keeps its variables.
  root.Var("kept");
  root.DropKids();
  EXPECT_NE(root.FindLocalVar("kept"), nullptr);
}

TEST(ScopeTest, LocalVarNamesSorted) {
  Scope s;
  EXPECT_TRUE(s.LocalVarNames().empty());
  for (const char* n : {"w", "b", "fc_0.w_0", "a", "Z"}) s.Var(n);
  s.NewScope().Var("kid_var");
  EXPECT_THAT(s.LocalVarNames(), ElementsAre("Z", "a", "b", "fc_0.w_0", "w"));
}

TEST(ScopeTest, EraseVars) {
  Scope s;
  s.Var("a");
  s.Var("b");
  s.Var("c");
  Scope& kid = s.NewScope();
  kid.Var("b");
  s.EraseVars({"a", "c", "not_there"});
  EXPECT_THAT(s.LocalVarNames(), ElementsAre("b"));
  EXPECT_EQ(s.FindVar("a"), nullptr);
  EXPECT_EQ(kid.FindVar("a"), nullptr);
  EXPECT_NE(kid.FindLocalVar("b"), nullptr);  // only local variables are erased
  s.EraseVars({});
  EXPECT_THAT(s.LocalVarNames(), ElementsAre("b"));
  // A name erased can be created again, as a fresh variable.
  s.Var("a")->GetMutable<LoDTensor>();
  s.EraseVars({"a"});
  EXPECT_FALSE(s.Var("a")->IsInitialized());
}

TEST(ScopeTest, DetachedScopeLooksUpButIsNotOwned) {
  Scope root;
  Variable* w = root.Var("w");
  {
    std::unique_ptr<Scope> local = Scope::NewDetached(&root);
    EXPECT_EQ(local->parent(), &root);
    EXPECT_EQ(root.NumKids(), 0u);
    EXPECT_EQ(local->FindVar("w"), w);
    EXPECT_EQ(local->FindLocalVar("w"), nullptr);
    Variable* tmp = local->Var("tmp");
    EXPECT_EQ(local->FindScope(tmp), local.get());
    EXPECT_EQ(local->FindScope(w), &root);
    EXPECT_EQ(root.FindVar("tmp"), nullptr);
    Scope& kid = local->NewScope();
    EXPECT_EQ(kid.FindVar("w"), w);
    EXPECT_EQ(local->NumKids(), 1u);
  }
  // The detached scope (and its kid) went away on its own; the parent is intact.
  EXPECT_EQ(root.NumKids(), 0u);
  EXPECT_EQ(root.FindVar("w"), w);
  EXPECT_THAT(root.LocalVarNames(), ElementsAre("w"));

  std::unique_ptr<Scope> orphan = Scope::NewDetached(nullptr);
  EXPECT_EQ(orphan->parent(), nullptr);
  EXPECT_EQ(orphan->FindVar("w"), nullptr);
}

TEST(ScopeTest, ConcurrentLookupAndCreation) {
  constexpr int kThreads = 8;
  constexpr int kNames = 300;
  Scope root;
  Scope& kid = root.NewScope();
  std::vector<std::string> names;
  for (int i = 0; i < kNames; ++i) names.push_back("var_" + std::to_string(i));

  // seen[t][i]: the Variable thread t got for name i.
  std::vector<std::vector<Variable*>> seen(kThreads, std::vector<Variable*>(kNames, nullptr));
  std::atomic<int> ready{0};
  std::atomic<int> inconsistencies{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int round = 0; round < 3; ++round) {
        for (int k = 0; k < kNames; ++k) {
          int i = (k * 7 + t * 31) % kNames;  // each thread in its own order
          // From the kid: nothing, or the one variable that root holds.
          Variable* before = kid.FindVar(names[i]);
          Variable* v = root.Var(names[i]);
          if (before != nullptr && before != v) ++inconsistencies;
          if (root.FindVar(names[i]) != v || root.FindLocalVar(names[i]) != v) ++inconsistencies;
          if (kid.FindVar(names[i]) != v) ++inconsistencies;
          if (seen[t][i] != nullptr && seen[t][i] != v) ++inconsistencies;
          seen[t][i] = v;
          (void)root.LocalVarNames().size();
        }
      }
    });
  }
  for (auto& th : threads) th.join();

  EXPECT_EQ(inconsistencies.load(), 0);
  EXPECT_EQ(root.LocalVarNames().size(), static_cast<size_t>(kNames));
  EXPECT_TRUE(kid.LocalVarNames().empty());
  for (int i = 0; i < kNames; ++i) {
    Variable* v = root.FindLocalVar(names[i]);
    ASSERT_NE(v, nullptr);
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(seen[t][i], v) << names[i] << " thread " << t;
  }
}

TEST(ScopeTest, ConcurrentKidCreation) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 50;
  Scope root;
  root.Var("shared");
  std::atomic<int> misses{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        Scope& kid = root.NewScope();
        if (kid.FindVar("shared") == nullptr) ++misses;
        kid.Var("local");
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(misses.load(), 0);
  EXPECT_EQ(root.NumKids(), static_cast<size_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace tide::core
