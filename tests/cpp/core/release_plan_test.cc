// Tests core/executor/release_plan: which temporaries a prepared block releases after which op.
#include "core/executor/release_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tide::core {
namespace {

using Names = std::vector<std::string>;

OpDesc* AddOp(BlockDesc* b, const std::string& type, std::vector<std::string> in,
              std::vector<std::string> out) {
  OpDesc* op = b->AppendOp();
  op->set_type(type);
  op->SetInput("X", std::move(in));
  op->SetOutput("Out", std::move(out));
  return op;
}

TEST(ReleasePlan, ReleasesEachTemporaryAfterItsLastUse) {
  ProgramDesc prog;
  BlockDesc* g = prog.MutableBlock(0);
  for (const char* n : {"x", "a", "b", "c", "out"}) g->Var(n);
  g->Var("w")->set_persistable(true);
  AddOp(g, "feed", {}, {"x"});         // 0
  AddOp(g, "mul", {"x", "w"}, {"a"});  // 1: x's last use
  AddOp(g, "relu", {"a"}, {"b"});      // 2: a's
  AddOp(g, "add", {"a", "b"}, {"c"});  // 3: a's and b's
  AddOp(g, "scale", {"c"}, {"out"});   // 4: c's
  AddOp(g, "fetch", {"out"}, {});      // 5
  auto plan = PlanReleases(prog, 0, {"out"});
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[0], Names{});
  EXPECT_EQ(plan[1], Names{"x"});  // never the persistable w
  EXPECT_EQ(plan[2], Names{});
  EXPECT_EQ(plan[3], (Names{"a", "b"}));  // in name order
  EXPECT_EQ(plan[4], Names{"c"});
  EXPECT_EQ(plan[5], Names{});  // the fetch target is kept
}

TEST(ReleasePlan, KeepsWhatCarriesOverOrControlFlowReads) {
  ProgramDesc prog;
  BlockDesc* g = prog.MutableBlock(0);
  for (const char* n : {"acc", "t", "cond", "inner_in", "arr", "sub_out"}) g->Var(n);
  g->Var("arr")->set_type(TIDE_VAR_LOD_TENSOR_ARRAY);
  BlockDesc* sub = prog.AppendBlock(*g);
  sub->Var("local");
  AddOp(sub, "relu", {"inner_in"}, {"local"});
  AddOp(sub, "scale", {"local"}, {"sub_out"});
  AddOp(g, "add", {"acc", "t"}, {"acc"});       // 0: acc read before written: from the last run
  AddOp(g, "fill", {}, {"t"});                  // 1: t as well (read by op 0 first)
  AddOp(g, "fill", {}, {"inner_in"});           // 2
  AddOp(g, "fill", {}, {"cond"});               // 3
  AddOp(g, "fill", {}, {"arr"});                // 4: not a LoD tensor
  OpDesc* w = AddOp(g, "while", {"cond"}, {});  // 5: its sub-block reads inner_in, writes sub_out
  w->SetAttr("sub_block", BlockIndex{1});
  AddOp(g, "scale", {"arr"}, {});  // 6
  auto plan = PlanReleases(prog, 0, {});
  ASSERT_EQ(plan.size(), 7u);
  for (size_t i = 0; i < plan.size(); ++i)
    EXPECT_EQ(plan[i], i == 5 ? Names{"cond"} : Names{}) << "op " << i;
}

}  // namespace
}  // namespace tide::core
