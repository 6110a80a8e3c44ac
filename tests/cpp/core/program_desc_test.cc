// Tests core/ir: program, block, op and var descs: building, round trips, validation, attributes.
#include "core/ir/program_desc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "core/platform/enforce.h"

namespace tide::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// One attribute of every AttrType, keyed by a name that says which.
AttributeMap EveryAttr() {
  return {
      {"a_int", int32_t{-7}},
      {"a_float", 0.5f},
      {"a_string", std::string("hello")},
      {"a_ints", std::vector<int32_t>{1, -2, 3}},
      {"a_floats", std::vector<float>{0.25f, -1.5f}},
      {"a_strings", std::vector<std::string>{"x", "", "yz"}},
      {"a_bool", true},
      {"a_bools", std::vector<bool>{true, false, true}},
      {"a_block", BlockIndex{1}},
      {"a_long", int64_t{1} << 40},
      {"a_blocks", std::vector<BlockIndex>{BlockIndex{1}, BlockIndex{2}}},
      {"a_longs", std::vector<int64_t>{-1, int64_t{1} << 40}},
  };
}

// A program with nested blocks (0 <- 1 <- 2, 0 <- 3), variables of every type and ops with
// every kind of attribute.
ProgramDesc BuildProgram() {
  ProgramDesc prog;
  BlockDesc* g = prog.MutableBlock(0);
  VarDesc* x = g->Var("x");
  x->set_shape({-1, 13});
  x->set_lod_level(1);
  VarDesc* w = g->Var("w");
  w->set_shape({13, 1});
  w->set_persistable(true);
  VarDesc* rows = g->Var("rows");
  rows->set_type(TIDE_VAR_SELECTED_ROWS);
  rows->set_dtype(TIDE_INT64);
  rows->set_shape({100, 8});
  VarDesc* arr = g->Var("arr");
  arr->set_type(TIDE_VAR_LOD_TENSOR_ARRAY);
  arr->set_dtype(TIDE_FP64);
  arr->set_lod_level(2);
  g->Var("feed")->set_type(TIDE_VAR_FEED_MINIBATCH);
  g->Var("fetch")->set_type(TIDE_VAR_FETCH_LIST);
  g->Var("steps")->set_type(TIDE_VAR_STEP_SCOPES);
  g->Var("table")->set_type(TIDE_VAR_LOD_RANK_TABLE);
  g->Var("raw")->set_type(TIDE_VAR_RAW);
  VarDesc* label = g->Var("label");
  label->set_dtype(TIDE_INT32);
  label->set_stop_gradient(true);

  BlockDesc* b1 = prog.AppendBlock(*g);
  BlockDesc* b2 = prog.AppendBlock(*b1);
  BlockDesc* b3 = prog.AppendBlock(*g);
  b3->set_forward_block_idx(1);
  b1->Var("h")->set_shape({-1, 4});
  b2->Var("inner")->set_dtype(TIDE_INT8);

  OpDesc* mul = g->AppendOp();
  mul->set_type("mul");
  mul->SetInput("X", {"x"});
  mul->SetInput("Y", {"w"});
  mul->SetOutput("Out", {"y"});
  mul->SetAttr("x_num_col_dims", int32_t{1});

  OpDesc* every = g->AppendOp();
  every->set_type("everything");
  every->SetInput("Xs", {"x", "w"});
  every->SetOutput("Out", {"arr"});
  for (auto& kv : EveryAttr()) every->SetAttr(kv.first, kv.second);
  every->set_is_target(true);

  OpDesc* inner = b1->AppendOp();
  inner->set_type("relu");
  inner->SetInput("X", {"x"});
  inner->SetOutput("Out", {"h"});
  OpDesc* deep = b2->AppendOp();
  deep->set_type("scale");
  deep->SetInput("X", {"h"});
  deep->SetOutput("Out", {"inner"});
  deep->SetAttr("scale", 2.0f);
  return prog;
}

TEST(ProgramDescTest, DefaultHasOneGlobalBlock) {
  ProgramDesc p;
  EXPECT_EQ(p.Size(), 1u);
  EXPECT_EQ(p.version(), ProgramDesc::kCurrentVersion);
  const BlockDesc& g = p.Block(0);
  EXPECT_EQ(g.idx(), 0);
  EXPECT_EQ(g.parent_idx(), -1);
  EXPECT_EQ(g.parent(), nullptr);
  EXPECT_EQ(g.forward_block_idx(), -1);
  EXPECT_EQ(g.program(), &p);
  EXPECT_EQ(g.OpSize(), 0u);
  try {
    p.MutableBlock(1);
    FAIL() << "block 1 of a one-block program";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("block 1 does not exist"));
  }
}

TEST(ProgramDescTest, NestedBlocks) {
  ProgramDesc p = BuildProgram();
  ASSERT_EQ(p.Size(), 4u);
  EXPECT_EQ(p.Block(1).parent_idx(), 0);
  EXPECT_EQ(p.Block(2).parent_idx(), 1);
  EXPECT_EQ(p.Block(3).parent_idx(), 0);
  EXPECT_EQ(p.Block(2).parent(), p.MutableBlock(1));
  EXPECT_EQ(p.Block(1).parent(), p.MutableBlock(0));
  EXPECT_EQ(p.Block(3).forward_block_idx(), 1);
  for (size_t i = 0; i < p.Size(); ++i) {
    EXPECT_EQ(p.Block(i).idx(), static_cast<int32_t>(i));
    EXPECT_EQ(p.Block(i).program(), &p);
  }
}

TEST(ProgramDescTest, SerializeParseRoundTrip) {
  ProgramDesc p = BuildProgram();
  std::string bytes = p.Serialize();
  ASSERT_FALSE(bytes.empty());
  ProgramDesc q = ProgramDesc::Parse(bytes);
  EXPECT_EQ(q.Serialize(), bytes);
  EXPECT_EQ(q.ToString(), p.ToString());
  ASSERT_EQ(q.Size(), 4u);
  EXPECT_EQ(q.Block(2).parent_idx(), 1);
  EXPECT_EQ(q.Block(3).forward_block_idx(), 1);

  const BlockDesc& g = q.Block(0);
  const VarDesc* x = g.FindVar("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->type(), TIDE_VAR_LOD_TENSOR);
  EXPECT_EQ(x->dtype(), TIDE_FP32);
  EXPECT_EQ(x->shape(), (std::vector<int64_t>{-1, 13}));
  EXPECT_EQ(x->lod_level(), 1);
  EXPECT_FALSE(x->persistable());
  EXPECT_TRUE(g.FindVar("w")->persistable());
  EXPECT_EQ(g.FindVar("rows")->type(), TIDE_VAR_SELECTED_ROWS);
  EXPECT_EQ(g.FindVar("rows")->dtype(), TIDE_INT64);
  EXPECT_EQ(g.FindVar("rows")->shape(), (std::vector<int64_t>{100, 8}));
  EXPECT_EQ(g.FindVar("arr")->type(), TIDE_VAR_LOD_TENSOR_ARRAY);
  EXPECT_EQ(g.FindVar("arr")->dtype(), TIDE_FP64);
  EXPECT_EQ(g.FindVar("arr")->lod_level(), 2);
  EXPECT_EQ(g.FindVar("feed")->type(), TIDE_VAR_FEED_MINIBATCH);
  EXPECT_EQ(g.FindVar("fetch")->type(), TIDE_VAR_FETCH_LIST);
  EXPECT_EQ(g.FindVar("steps")->type(), TIDE_VAR_STEP_SCOPES);
  EXPECT_EQ(g.FindVar("table")->type(), TIDE_VAR_LOD_RANK_TABLE);
  EXPECT_EQ(g.FindVar("raw")->type(), TIDE_VAR_RAW);
  EXPECT_TRUE(g.FindVar("label")->stop_gradient());
  EXPECT_EQ(g.FindVar("label")->dtype(), TIDE_INT32);
  EXPECT_EQ(q.Block(2).FindVar("inner")->dtype(), TIDE_INT8);

  // Variables keep their creation order.
  std::vector<std::string> names;
  for (const VarDesc* v : g.AllVars()) names.push_back(v->name());
  EXPECT_THAT(names, ElementsAre("x", "w", "rows", "arr", "feed", "fetch", "steps", "table", "raw",
                                 "label"));

  ASSERT_EQ(g.OpSize(), 2u);
  const OpDesc* every = g.Op(1);
  EXPECT_EQ(every->type(), "everything");
  EXPECT_TRUE(every->is_target());
  EXPECT_FALSE(g.Op(0)->is_target());
  EXPECT_EQ(every->block(), &g);
  EXPECT_THAT(every->Input("Xs"), ElementsAre("x", "w"));
  for (const auto& kv : EveryAttr()) {
    ASSERT_TRUE(every->HasAttr(kv.first)) << kv.first;
    EXPECT_EQ(every->GetAttr(kv.first), kv.second) << kv.first;
    EXPECT_EQ(AttrTypeOf(every->GetAttr(kv.first)), AttrTypeOf(kv.second)) << kv.first;
  }
  EXPECT_EQ(std::get<float>(q.Block(2).Op(0)->GetAttr("scale")), 2.0f);
}

TEST(ProgramDescTest, ToStringListsBlocksVarsAndOps) {
  ProgramDesc p = BuildProgram();
  std::string s = p.ToString();
  EXPECT_THAT(s, HasSubstr("block 0 (parent -1):\n"));
  EXPECT_THAT(s, HasSubstr("block 2 (parent 1):\n"));
  EXPECT_THAT(s, HasSubstr("  var x : LOD_TENSOR float32 [-1, 13] lod_level=1\n"));
  EXPECT_THAT(s, HasSubstr("  var persist w : LOD_TENSOR float32 [13, 1]\n"));
  EXPECT_THAT(s, HasSubstr("  var feed : FEED_MINIBATCH\n"));
  EXPECT_THAT(s, HasSubstr("  var label : LOD_TENSOR int32 [dims unknown] stop_gradient\n"));
  EXPECT_THAT(s, HasSubstr("  op mul(X=[x], Y=[w]) -> (Out=[y]) {x_num_col_dims=1}\n"));
  EXPECT_THAT(s, HasSubstr("  op relu(X=[x]) -> (Out=[h])\n"));
}

TEST(ProgramDescTest, CopyIsDeep) {
  ProgramDesc p = BuildProgram();
  std::string before = p.Serialize();
  ProgramDesc c(p);
  EXPECT_EQ(c.Serialize(), before);
  ASSERT_EQ(c.Size(), 4u);
  // The copy's blocks and ops belong to the copy.
  for (size_t i = 0; i < c.Size(); ++i) {
    EXPECT_EQ(c.Block(i).program(), &c);
    EXPECT_NE(c.MutableBlock(i), p.MutableBlock(i));
    for (OpDesc* op : c.Block(i).AllOps()) EXPECT_EQ(op->block(), c.MutableBlock(i));
  }
  EXPECT_EQ(c.Block(2).parent(), c.MutableBlock(1));
  EXPECT_NE(c.Block(0).FindVar("x"), p.Block(0).FindVar("x"));

  // Changing the copy leaves the original alone.
  c.MutableBlock(0)->Var("new_var");
  c.MutableBlock(0)->FindVar("x")->set_shape({7});
  c.MutableBlock(0)->Op(0)->SetAttr("x_num_col_dims", int32_t{2});
  c.MutableBlock(2)->RemoveOps(0, 1);
  c.AppendBlock(c.Block(3));
  EXPECT_EQ(p.Serialize(), before);
  EXPECT_EQ(p.Size(), 4u);
  EXPECT_EQ(p.Block(0).FindVar("new_var"), nullptr);
  EXPECT_EQ(p.Block(0).FindVar("x")->shape(), (std::vector<int64_t>{-1, 13}));
  EXPECT_EQ(std::get<int32_t>(p.Block(0).Op(0)->GetAttr("x_num_col_dims")), 1);
  EXPECT_EQ(p.Block(2).OpSize(), 1u);

  // Assignment is deep too, and replaces what was there.
  ProgramDesc a;
  a.MutableBlock(0)->Var("old");
  a = p;
  EXPECT_EQ(a.Serialize(), before);
  EXPECT_EQ(a.Block(0).FindVar("old"), nullptr);
  EXPECT_EQ(a.Block(1).program(), &a);
  a = a;  // self-assignment keeps it
  EXPECT_EQ(a.Serialize(), before);
}

TEST(BlockDescTest, FindVarRecursiveWalksParents) {
  ProgramDesc p = BuildProgram();
  const BlockDesc& b2 = p.Block(2);
  EXPECT_EQ(b2.FindVar("x"), nullptr);
  EXPECT_EQ(b2.FindVarRecursive("x"), p.Block(0).FindVar("x"));
  EXPECT_EQ(b2.FindVarRecursive("h"), p.Block(1).FindVar("h"));
  EXPECT_EQ(b2.FindVarRecursive("inner"), b2.FindVar("inner"));
  EXPECT_EQ(b2.FindVarRecursive("nope"), nullptr);
  // Block 3's parent is 0: block 1's variables are not visible from it.
  EXPECT_EQ(p.Block(3).FindVarRecursive("h"), nullptr);
  EXPECT_EQ(p.Block(0).FindVarRecursive("h"), nullptr);
  // A sub-block's variable shadows its ancestor's.
  VarDesc* shadow = p.MutableBlock(1)->Var("x");
  EXPECT_EQ(b2.FindVarRecursive("x"), shadow);
  EXPECT_EQ(p.Block(3).FindVarRecursive("x"), p.Block(0).FindVar("x"));
}

TEST(BlockDescTest, VarCreatesOnceAndRejectsEmptyNames) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  VarDesc* v = b->Var("v");
  EXPECT_EQ(b->Var("v"), v);
  EXPECT_TRUE(b->HasVar("v"));
  EXPECT_EQ(v->type(), TIDE_VAR_LOD_TENSOR);  // defaults
  EXPECT_EQ(v->dtype(), TIDE_FP32);
  try {
    b->Var("");
    FAIL() << "empty variable name accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("must not be empty"));
  }
  b->Var("u");
  b->RemoveVar("v");
  b->RemoveVar("never_there");
  EXPECT_FALSE(b->HasVar("v"));
  ASSERT_EQ(b->AllVars().size(), 1u);
  EXPECT_EQ(b->AllVars()[0]->name(), "u");
}

TEST(BlockDescTest, RenameVarRenamesInOps) {
  ProgramDesc p = BuildProgram();
  BlockDesc* g = p.MutableBlock(0);
  VarDesc* x = g->FindVar("x");
  g->RenameVar("x", "x2");
  EXPECT_EQ(g->FindVar("x"), nullptr);
  EXPECT_EQ(g->FindVar("x2"), x);
  EXPECT_EQ(x->name(), "x2");
  EXPECT_THAT(g->Op(0)->Input("X"), ElementsAre("x2"));
  EXPECT_THAT(g->Op(1)->Input("Xs"), ElementsAre("x2", "w"));
  EXPECT_THAT(g->Op(0)->InputArgumentNames(), ElementsAre("x2", "w"));
  g->RenameVar("arr", "arr2");  // an output
  EXPECT_THAT(g->Op(1)->Output("Out"), ElementsAre("arr2"));
  EXPECT_EQ(ProgramDesc::Parse(p.Serialize()).Block(0).FindVar("x2")->shape(),
            (std::vector<int64_t>{-1, 13}));

  try {
    g->RenameVar("x2", "w");
    FAIL() << "rename onto a taken name";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the name is taken"));
  }
  try {
    g->RenameVar("missing", "m");
    FAIL() << "rename of a missing variable";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot rename 'missing'"));
  }
  EXPECT_EQ(g->FindVar("x2"), x);  // failed renames changed nothing
}

std::vector<std::string> OpTypes(const BlockDesc& b) {
  std::vector<std::string> out;
  for (const OpDesc* op : b.AllOps()) out.push_back(op->type());
  return out;
}

TEST(BlockDescTest, InsertPrependAndRemoveOps) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  b->AppendOp()->set_type("b");
  b->AppendOp()->set_type("d");
  b->PrependOp()->set_type("a");
  b->InsertOp(2)->set_type("c");
  b->InsertOp(4)->set_type("e");
  EXPECT_THAT(OpTypes(*b), ElementsAre("a", "b", "c", "d", "e"));
  for (const OpDesc* op : b->AllOps()) EXPECT_EQ(op->block(), b);
  EXPECT_EQ(b->Op(2)->type(), "c");
  EXPECT_THROW(b->Op(5), std::out_of_range);
  try {
    b->InsertOp(6);
    FAIL() << "insert past the end";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("op index 6 is past the end of block 0"));
  }
  OpDesc* d = b->Op(3);
  b->RemoveOps(1, 3);
  EXPECT_THAT(OpTypes(*b), ElementsAre("a", "d", "e"));
  EXPECT_EQ(b->Op(1), d);  // the others stay where they were in memory
  b->RemoveOps(1, 1);      // an empty range
  EXPECT_EQ(b->OpSize(), 3u);
  EXPECT_THROW(b->RemoveOps(2, 1), Error);
  EXPECT_THROW(b->RemoveOps(0, 4), Error);
  b->RemoveOps(0, 3);
  EXPECT_EQ(b->OpSize(), 0u);
}

TEST(OpDescTest, AccessorsAndToString) {
  OpDesc op("mul", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"y"}}},
            {{"x_num_col_dims", int32_t{1}}});
  EXPECT_EQ(op.ToString(), "mul(X=[x], Y=[w]) -> (Out=[y]) {x_num_col_dims=1}");
  EXPECT_TRUE(op.Input("Z").empty());
  EXPECT_TRUE(op.Output("X").empty());
  EXPECT_THAT(op.OutputArgumentNames(), ElementsAre("y"));
  try {
    op.GetAttr("nope");
    FAIL() << "missing attribute found";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_NOT_FOUND);
    EXPECT_THAT(e.what(), HasSubstr("op 'mul' has no attribute 'nope'"));
  }
  op.RemoveAttr("x_num_col_dims");
  EXPECT_EQ(op.ToString(), "mul(X=[x], Y=[w]) -> (Out=[y])");
  op.SetInput("X", {"a", "b"});
  op.RenameInput("a", "c");
  EXPECT_THAT(op.Input("X"), ElementsAre("c", "b"));
  EXPECT_EQ(op.ToString(), "mul(X=[c, b], Y=[w]) -> (Out=[y])");
}

TEST(AttributeTest, AttrToString) {
  AttributeMap m = EveryAttr();
  EXPECT_EQ(AttrToString(m["a_int"]), "-7");
  EXPECT_EQ(AttrToString(m["a_float"]), "0.5");
  EXPECT_EQ(AttrToString(m["a_string"]), "\"hello\"");
  EXPECT_EQ(AttrToString(m["a_ints"]), "[1, -2, 3]");
  EXPECT_EQ(AttrToString(m["a_floats"]), "[0.25, -1.5]");
  EXPECT_EQ(AttrToString(m["a_strings"]), "[x, , yz]");
  EXPECT_EQ(AttrToString(m["a_bool"]), "true");
  EXPECT_EQ(AttrToString(m["a_bools"]), "[1, 0, 1]");
  EXPECT_EQ(AttrToString(m["a_block"]), "block 1");
  EXPECT_EQ(AttrToString(m["a_long"]), "1099511627776");
  EXPECT_EQ(AttrToString(m["a_blocks"]), "blocks [1, 2]");
  EXPECT_EQ(AttrToString(m["a_longs"]), "[-1, 1099511627776]");
  // The variant's index is the AttrType.
  EXPECT_EQ(AttrTypeOf(m["a_int"]), TIDE_ATTR_INT);
  EXPECT_EQ(AttrTypeOf(m["a_bools"]), TIDE_ATTR_BOOLEANS);
  EXPECT_EQ(AttrTypeOf(m["a_longs"]), TIDE_ATTR_LONGS);
  EXPECT_STREQ(AttrTypeName(TIDE_ATTR_BLOCKS), "blocks");
}

TEST(ParseTest, GarbageBytesAreRejected) {
  std::vector<std::string> inputs = {std::string("\xff\x00garbage", 9), std::string(""),
                                     std::string("\x0a\x05hello", 7)};
  std::mt19937 rng(7);
  for (int i = 0; i < 50; ++i) {
    std::string r(1 + rng() % 200, '\0');
    for (char& c : r) c = static_cast<char>(rng());
    inputs.push_back(r);
  }
  for (const std::string& bytes : inputs) {
    try {
      ProgramDesc::Parse(bytes);
      ADD_FAILURE() << "parsed " << bytes.size() << " garbage bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
      EXPECT_THAT(e.what(), HasSubstr("ProgramDesc"));
    }
  }
}

TEST(ParseTest, EmptyBytesHaveNoGlobalBlock) {
  try {
    ProgramDesc::Parse("");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("invalid ProgramDesc"));
    EXPECT_THAT(e.what(), HasSubstr("at least the global block"));
  }
}

// Expects `p` to be refused, both as a proto and as bytes, with `why` in the message.
void ExpectInvalid(const proto::ProgramDesc& p, const std::string& why) {
  try {
    ProgramDesc d(p);
    ADD_FAILURE() << "accepted a program that should fail with: " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr(why));
  }
  std::string bytes;
  ASSERT_TRUE(p.SerializeToString(&bytes));
  try {
    ProgramDesc::Parse(bytes);
    ADD_FAILURE() << "parsed a program that should fail with: " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TIDE_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("invalid ProgramDesc"));
    EXPECT_THAT(e.what(), HasSubstr(why));
  }
}

proto::OpDesc::Attr* AddAttr(proto::BlockDesc* b, const std::string& name, const Attribute& a) {
  proto::OpDesc* op = b->add_ops();
  op->set_type("while");
  proto::OpDesc::Attr* p = op->add_attrs();
  AttrToProto(name, a, p);
  return p;
}

TEST(ParseTest, BlockAttributesMustNameRealBlocks) {
  proto::ProgramDesc base = BuildProgram().ToProto();
  EXPECT_NO_THROW(ProgramDesc{base});  // every attribute of BuildProgram is valid
  {
    proto::ProgramDesc p = base;
    AddAttr(p.mutable_blocks(1), "sub_block", BlockIndex{4});
    ExpectInvalid(p, "attribute 'sub_block' names block 4, but the program has 4 block(s)");
  }
  {
    proto::ProgramDesc p = base;
    AddAttr(p.mutable_blocks(0), "sub_block", BlockIndex{-1});
    ExpectInvalid(p, "names block -1");
  }
  {
    proto::ProgramDesc p = base;
    AddAttr(p.mutable_blocks(0), "sub_block",
            BlockIndex{0});  // the global block is nobody's sub-block
    ExpectInvalid(p, "names block 0");
  }
  {
    proto::ProgramDesc p = base;
    AddAttr(p.mutable_blocks(2), "blocks", std::vector<BlockIndex>{BlockIndex{1}, BlockIndex{9}});
    ExpectInvalid(p, "op 'while' in block 2: attribute 'blocks' names block 9");
  }
}

// A sub-block that is its op's own block, an ancestor of it, or that runs its runner again would
// run without end (a stack overflow, issue 37): refused when loaded, naming the op and blocks.
TEST(ParseTest, SubBlocksThatRunThemselvesAreRefused) {
  proto::ProgramDesc base = BuildProgram().ToProto();  // blocks 0 <- 1 <- 2, 0 <- 3
  {
    proto::ProgramDesc p = base;
    AddAttr(p.mutable_blocks(1), "sub_block", BlockIndex{1});
    ExpectInvalid(p, "op 'while' in block 1: its sub_block is block 1, its own block");
  }
  {
    proto::ProgramDesc p = base;
    AddAttr(p.mutable_blocks(2), "sub_block", BlockIndex{1});
    ExpectInvalid(p, "op 'while' in block 2: its sub_block is block 1, an ancestor of its block");
  }
  {
    proto::ProgramDesc p = base;  // 1 and 3 are siblings that run each other
    AddAttr(p.mutable_blocks(1), "sub_block", BlockIndex{3});
    AddAttr(p.mutable_blocks(3), "sub_block", BlockIndex{1});
    ExpectInvalid(p, "sub-blocks run one another in a cycle: block 1 runs block 3 runs block 1");
  }
  {
    proto::ProgramDesc p = base;  // nesting that runs each block once is fine
    AddAttr(p.mutable_blocks(0), "sub_block", BlockIndex{1});
    AddAttr(p.mutable_blocks(1), "sub_block", BlockIndex{2});
    AddAttr(p.mutable_blocks(0), "sub_block", BlockIndex{3});
    AddAttr(p.mutable_blocks(3), "sub_block", BlockIndex{2});
    EXPECT_NO_THROW(ProgramDesc{p});
  }
}

// The cycle check walks with a stack of its own: a long chain of blocks is no stack overflow.
TEST(ParseTest, ALongChainOfSubBlocksIsChecked) {
  ProgramDesc prog;
  const int n = 20000;
  for (int i = 1; i < n; ++i) prog.AppendBlock(prog.Block(0));
  for (int i = 1; i + 1 < n; ++i) {
    OpDesc* op = prog.MutableBlock(i)->AppendOp();
    op->set_type("conditional_block");
    op->SetAttr("sub_block", BlockIndex{i + 1});
  }
  EXPECT_NO_THROW(ProgramDesc{prog});
  OpDesc* back = prog.MutableBlock(n - 1)->AppendOp();
  back->set_type("conditional_block");
  back->SetAttr("sub_block", BlockIndex{1});
  EXPECT_THROW(ProgramDesc{prog}, Error);
}

TEST(ParseTest, BlockIndicesAndParentsAreChecked) {
  proto::ProgramDesc base = BuildProgram().ToProto();
  {
    proto::ProgramDesc p = base;
    p.mutable_blocks(2)->set_idx(3);
    ExpectInvalid(p, "block 2 says its index is 3");
  }
  {
    proto::ProgramDesc p = base;
    p.mutable_blocks(0)->set_parent_idx(0);
    ExpectInvalid(p, "block 0 has invalid parent index 0");
  }
  {
    proto::ProgramDesc p = base;
    p.mutable_blocks(1)->set_parent_idx(-1);
    ExpectInvalid(p, "block 1 has invalid parent index -1");
  }
  {
    proto::ProgramDesc p = base;
    p.mutable_blocks(2)->set_parent_idx(2);  // itself
    ExpectInvalid(p, "block 2 has invalid parent index 2");
  }
  {
    proto::ProgramDesc p = base;
    p.mutable_blocks(3)->set_parent_idx(17);
    ExpectInvalid(p, "block 3 has invalid parent index 17");
  }
  {
    // 1 -> 2 -> 1 would make parent lookups loop forever.
    proto::ProgramDesc p = base;
    p.mutable_blocks(1)->set_parent_idx(2);
    ExpectInvalid(p, "block 1 has invalid parent index 2");
  }
}

TEST(ParseTest, OtherInvalidContent) {
  proto::ProgramDesc base = BuildProgram().ToProto();
  {
    proto::ProgramDesc p = base;
    p.mutable_version()->set_version(ProgramDesc::kCurrentVersion + 1);
    ExpectInvalid(p, "is newer than this Tide reads");
  }
  {
    proto::ProgramDesc p = base;
    *p.mutable_blocks(0)->add_vars() = p.blocks(0).vars(0);
    ExpectInvalid(p, "block 0 declares variable 'x' twice");
  }
  {
    proto::ProgramDesc p = base;
    proto::OpDesc::Attr* a = AddAttr(p.mutable_blocks(0), "axis", int32_t{1});
    a->clear_i();
    ExpectInvalid(p, "op 'while': attribute 'axis' of type int has no 'i' value");
  }
  {
    proto::ProgramDesc p = base;
    p.mutable_blocks(0)
        ->mutable_vars(0)
        ->mutable_type()
        ->mutable_lod_tensor()
        ->mutable_tensor()
        ->set_data_type(proto::VarType::LOD_TENSOR);
    ExpectInvalid(p, "variable 'x' has data type 7, which is not an element type");
  }
  // A variable type Tide has no TideVarType for (a fuzzer finding: it was cast into the enum).
  for (auto t : {proto::VarType::UINT16, proto::VarType::READER, proto::VarType::VOCAB}) {
    proto::ProgramDesc p = base;
    p.mutable_blocks(0)->mutable_vars(0)->mutable_type()->set_type(t);
    ExpectInvalid(p, "variable 'x' has variable type " + proto::VarType::Type_Name(t) + " (" +
                         std::to_string(int(t)) + "), which Tide does not hold");
  }
  {
    proto::ProgramDesc p = base;
    p.mutable_blocks(0)->mutable_ops(0)->set_type("");
    ExpectInvalid(p, "an OpDesc has an empty type");
  }
}

TEST(AttributeTest, ProtoRoundTripOfEveryType) {
  for (const auto& kv : EveryAttr()) {
    proto::OpDesc::Attr p;
    AttrToProto(kv.first, kv.second, &p);
    EXPECT_EQ(p.name(), kv.first);
    EXPECT_EQ(static_cast<int>(p.type()), static_cast<int>(kv.second.index()));
    EXPECT_EQ(AttrFromProto(p), kv.second) << kv.first;
  }
}

// A value missing from an attribute is named with its type, also for the types Tide has no
// TideAttrType for (a fuzzer finding: the name lookup read SCALAR as a TideAttrType).
TEST(AttributeTest, MissingValueOfEveryProtoTypeIsNamed) {
  const std::map<proto::AttrType, std::string> names = {
      {proto::INT, "int"},         {proto::FLOAT, "float"},  {proto::STRING, "string"},
      {proto::BOOLEAN, "bool"},    {proto::BLOCK, "block"},  {proto::LONG, "long"},
      {proto::FLOAT64, "float64"}, {proto::SCALAR, "SCALAR"}};
  for (const auto& [t, name] : names) {
    proto::OpDesc::Attr p;
    p.set_name("a");
    p.set_type(t);
    try {
      AttrFromProto(p);
      ADD_FAILURE() << "no error for an empty " << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("attribute 'a' of type " + name + " has no '"),
                std::string::npos)
          << e.what();
    }
  }
}

// Paddle's SCALARS lists: integers (and bools: Paddle 2.6's set_value writes `mask[...] = True`
// as a BOOLEAN scalar) give longs; a list with a float gives doubles.
TEST(AttributeTest, ScalarListsOfBoolsIntegersAndFloats) {
  auto scalars = [](std::initializer_list<std::pair<proto::Scalar::Type, double>> items) {
    proto::OpDesc::Attr p;
    p.set_name("values");
    p.set_type(proto::SCALARS);
    for (const auto& [type, v] : items) {
      proto::Scalar* s = p.add_scalars();
      s->set_type(type);
      if (type == proto::Scalar::BOOLEAN) s->set_b(v != 0);
      if (type == proto::Scalar::LONG) s->set_i(static_cast<int64_t>(v));
      if (type == proto::Scalar::FLOAT64) s->set_r(v);
    }
    return AttrFromProto(p);
  };
  EXPECT_EQ(scalars({{proto::Scalar::BOOLEAN, 1}, {proto::Scalar::BOOLEAN, 0}}),
            Attribute(std::vector<int64_t>{1, 0}));
  EXPECT_EQ(scalars({{proto::Scalar::LONG, -3}, {proto::Scalar::BOOLEAN, 1}}),
            Attribute(std::vector<int64_t>{-3, 1}));
  EXPECT_EQ(scalars({{proto::Scalar::FLOAT64, 0.5}, {proto::Scalar::BOOLEAN, 1}}),
            Attribute(std::vector<double>{0.5, 1.0}));
}

TEST(AttributeTest, ConvertAttr) {
  Attribute out;
  // Same type: copied.
  ASSERT_TRUE(ConvertAttr(std::string("s"), TIDE_ATTR_STRING, &out));
  EXPECT_EQ(out, Attribute(std::string("s")));
  // int <-> long.
  ASSERT_TRUE(ConvertAttr(int32_t{-5}, TIDE_ATTR_LONG, &out));
  EXPECT_EQ(out, Attribute(int64_t{-5}));
  ASSERT_TRUE(ConvertAttr(int64_t{123}, TIDE_ATTR_INT, &out));
  EXPECT_EQ(out, Attribute(int32_t{123}));
  ASSERT_TRUE(ConvertAttr(int64_t{INT32_MIN}, TIDE_ATTR_INT, &out));
  EXPECT_EQ(out, Attribute(int32_t{INT32_MIN}));
  EXPECT_FALSE(ConvertAttr(int64_t{1} << 31, TIDE_ATTR_INT, &out));  // would lose bits
  EXPECT_FALSE(ConvertAttr(int64_t{INT32_MIN} - 1, TIDE_ATTR_INT, &out));
  ASSERT_TRUE(ConvertAttr(std::vector<int32_t>{1, -2}, TIDE_ATTR_LONGS, &out));
  EXPECT_EQ(out, Attribute(std::vector<int64_t>{1, -2}));
  // int -> float.
  ASSERT_TRUE(ConvertAttr(int32_t{3}, TIDE_ATTR_FLOAT, &out));
  EXPECT_EQ(out, Attribute(3.0f));
  EXPECT_FALSE(ConvertAttr(2.5f, TIDE_ATTR_INT, &out));
  // An empty list becomes any list type, but no scalar.
  for (TideAttrType want : {TIDE_ATTR_INTS, TIDE_ATTR_FLOATS, TIDE_ATTR_STRINGS, TIDE_ATTR_BOOLEANS,
                            TIDE_ATTR_BLOCKS, TIDE_ATTR_LONGS}) {
    ASSERT_TRUE(ConvertAttr(std::vector<int32_t>{}, want, &out)) << AttrTypeName(want);
    EXPECT_EQ(AttrTypeOf(out), want);
    ASSERT_TRUE(ConvertAttr(std::vector<std::string>{}, want, &out)) << AttrTypeName(want);
    EXPECT_EQ(AttrTypeOf(out), want);
  }
  EXPECT_FALSE(ConvertAttr(std::vector<float>{}, TIDE_ATTR_INT, &out));
  EXPECT_FALSE(ConvertAttr(std::vector<float>{}, TIDE_ATTR_STRING, &out));
  // Non-empty lists keep their element type.
  EXPECT_FALSE(ConvertAttr(std::vector<float>{1.f}, TIDE_ATTR_INTS, &out));
  EXPECT_FALSE(ConvertAttr(std::vector<int64_t>{1}, TIDE_ATTR_INTS, &out));
  // Refusals.
  out = int32_t{42};
  EXPECT_FALSE(ConvertAttr(std::string("1"), TIDE_ATTR_INT, &out));
  EXPECT_EQ(out, Attribute(int32_t{42}));  // untouched on failure
  EXPECT_FALSE(ConvertAttr(int32_t{1}, TIDE_ATTR_STRING, &out));
  EXPECT_FALSE(ConvertAttr(true, TIDE_ATTR_INT, &out));
  EXPECT_FALSE(ConvertAttr(BlockIndex{1}, TIDE_ATTR_INT, &out));
}

// Fluid's attribute checker turns integers into floats and bools; Python makes a long of any
// int beyond int32, so longs must convert as ints do.
TEST(AttributeTest, ConvertAttrIntegersAsFluid) {
  Attribute out;
  const int64_t big = int64_t{1} << 40;
  ASSERT_TRUE(ConvertAttr(big, TIDE_ATTR_FLOAT, &out));
  EXPECT_EQ(out, Attribute(1099511627776.0f));
  ASSERT_TRUE(ConvertAttr(big + 1, TIDE_ATTR_FLOAT64, &out));
  EXPECT_EQ(out, Attribute(1099511627777.0));
  ASSERT_TRUE(ConvertAttr(int32_t{-3}, TIDE_ATTR_FLOAT64, &out));
  EXPECT_EQ(out, Attribute(-3.0));
  // A bool from an integer is C++'s cast, as in Fluid: any non-zero is true.
  for (Attribute given : {Attribute(int32_t{1}), Attribute(int32_t{-2}), Attribute(big)}) {
    ASSERT_TRUE(ConvertAttr(given, TIDE_ATTR_BOOLEAN, &out)) << AttrToString(given);
    EXPECT_EQ(out, Attribute(true)) << AttrToString(given);
  }
  ASSERT_TRUE(ConvertAttr(int32_t{0}, TIDE_ATTR_BOOLEAN, &out));
  EXPECT_EQ(out, Attribute(false));
  ASSERT_TRUE(ConvertAttr(int64_t{0}, TIDE_ATTR_BOOLEAN, &out));
  EXPECT_EQ(out, Attribute(false));
  // Lists, element by element.
  const std::vector<int64_t> longs{big, -1, 0};
  ASSERT_TRUE(ConvertAttr(longs, TIDE_ATTR_FLOATS, &out));
  EXPECT_EQ(out, Attribute(std::vector<float>{1099511627776.0f, -1.f, 0.f}));
  ASSERT_TRUE(ConvertAttr(longs, TIDE_ATTR_FLOAT64S, &out));
  EXPECT_EQ(out, Attribute(std::vector<double>{1099511627776.0, -1.0, 0.0}));
  ASSERT_TRUE(ConvertAttr(longs, TIDE_ATTR_BOOLEANS, &out));
  EXPECT_EQ(out, Attribute(std::vector<bool>{true, true, false}));
  ASSERT_TRUE(ConvertAttr(std::vector<int32_t>{0, 1, 5}, TIDE_ATTR_BOOLEANS, &out));
  EXPECT_EQ(out, Attribute(std::vector<bool>{false, true, true}));
  ASSERT_TRUE(ConvertAttr(std::vector<int32_t>{2, -7}, TIDE_ATTR_FLOATS, &out));
  EXPECT_EQ(out, Attribute(std::vector<float>{2.f, -7.f}));
  // Still refused: floats never become integers or bools, bools never integers, and a long
  // that does not fit an int.
  out = int32_t{42};
  EXPECT_FALSE(ConvertAttr(0.5f, TIDE_ATTR_BOOLEAN, &out));
  EXPECT_FALSE(ConvertAttr(Attribute(1.0), TIDE_ATTR_LONG, &out));
  EXPECT_FALSE(ConvertAttr(std::vector<float>{1.f}, TIDE_ATTR_LONGS, &out));
  EXPECT_FALSE(ConvertAttr(std::vector<double>{1.0}, TIDE_ATTR_BOOLEANS, &out));
  EXPECT_FALSE(ConvertAttr(true, TIDE_ATTR_LONG, &out));
  EXPECT_FALSE(ConvertAttr(std::vector<bool>{true}, TIDE_ATTR_INTS, &out));
  EXPECT_FALSE(ConvertAttr(big, TIDE_ATTR_INT, &out));
  EXPECT_FALSE(ConvertAttr(int32_t{1}, TIDE_ATTR_STRING, &out));
  EXPECT_EQ(out, Attribute(int32_t{42}));  // untouched on failure
}

TEST(AttributeTest, AttrViewsForEveryType) {
  const AttributeMap attrs = EveryAttr();
  AttrViews views(attrs);
  EXPECT_EQ(views.Find("missing"), nullptr);
  auto find = [&](const char* name) {
    const TideAttrValue* v = views.Find(name);
    EXPECT_NE(v, nullptr) << name;
    EXPECT_GE(v->struct_size, TIDE_STRUCT_SIZE(TideAttrValue, count)) << name;
    return v;
  };

  const TideAttrValue* v = find("a_int");
  EXPECT_EQ(v->type, TIDE_ATTR_INT);
  EXPECT_EQ(v->i, -7);
  v = find("a_float");
  EXPECT_EQ(v->type, TIDE_ATTR_FLOAT);
  EXPECT_EQ(v->f, 0.5f);
  v = find("a_string");
  EXPECT_EQ(v->type, TIDE_ATTR_STRING);
  EXPECT_STREQ(v->s, "hello");
  v = find("a_ints");
  EXPECT_EQ(v->type, TIDE_ATTR_INTS);
  ASSERT_EQ(v->count, 3u);
  EXPECT_EQ(std::vector<int32_t>(v->ints, v->ints + 3), (std::vector<int32_t>{1, -2, 3}));
  v = find("a_floats");
  EXPECT_EQ(v->type, TIDE_ATTR_FLOATS);
  ASSERT_EQ(v->count, 2u);
  EXPECT_EQ(v->floats[0], 0.25f);
  EXPECT_EQ(v->floats[1], -1.5f);
  v = find("a_strings");
  EXPECT_EQ(v->type, TIDE_ATTR_STRINGS);
  ASSERT_EQ(v->count, 3u);
  EXPECT_STREQ(v->strings[0], "x");
  EXPECT_STREQ(v->strings[1], "");
  EXPECT_STREQ(v->strings[2], "yz");
  v = find("a_bool");
  EXPECT_EQ(v->type, TIDE_ATTR_BOOLEAN);
  EXPECT_EQ(v->i, 1);
  v = find("a_bools");
  EXPECT_EQ(v->type, TIDE_ATTR_BOOLEANS);
  ASSERT_EQ(v->count, 3u);
  EXPECT_EQ(std::vector<int32_t>(v->ints, v->ints + 3), (std::vector<int32_t>{1, 0, 1}));
  v = find("a_block");
  EXPECT_EQ(v->type, TIDE_ATTR_BLOCK);
  EXPECT_EQ(v->i, 1);
  v = find("a_long");
  EXPECT_EQ(v->type, TIDE_ATTR_LONG);
  EXPECT_EQ(v->l, int64_t{1} << 40);
  v = find("a_blocks");
  EXPECT_EQ(v->type, TIDE_ATTR_BLOCKS);
  ASSERT_EQ(v->count, 2u);
  EXPECT_EQ(v->ints[0], 1);
  EXPECT_EQ(v->ints[1], 2);
  v = find("a_longs");
  EXPECT_EQ(v->type, TIDE_ATTR_LONGS);
  ASSERT_EQ(v->count, 2u);
  EXPECT_EQ(v->longs[0], -1);
  EXPECT_EQ(v->longs[1], int64_t{1} << 40);

  // Every view converts back to the attribute it shows.
  for (const auto& kv : attrs) EXPECT_EQ(AttrFromC(*find(kv.first.c_str())), kv.second) << kv.first;
}

TEST(AttributeTest, AttrViewsOfEmptyListsAndFalse) {
  const AttributeMap attrs = {{"no_bools", std::vector<bool>{}},
                              {"no_strings", std::vector<std::string>{}},
                              {"off", false},
                              {"empty", std::string()}};
  AttrViews views(attrs);
  EXPECT_EQ(views.Find("no_bools")->count, 0u);
  EXPECT_EQ(views.Find("no_strings")->count, 0u);
  EXPECT_EQ(views.Find("off")->i, 0);
  EXPECT_STREQ(views.Find("empty")->s, "");
  for (const auto& kv : attrs) EXPECT_EQ(AttrFromC(*views.Find(kv.first.c_str())), kv.second);
}

}  // namespace
}  // namespace tide::core

namespace tide::core {
namespace {

TEST(Float64Attributes, RoundTripAndConvert) {
  OpDesc op("scale", {}, {}, {{"k", 0.1}, {"ks", std::vector<double>{0.1, 1e-300}}});
  proto::OpDesc p;
  op.ToProto(&p);
  OpDesc back = OpDesc::FromProto(p);
  EXPECT_EQ(std::get<double>(back.GetAttr("k")), 0.1);
  EXPECT_EQ(std::get<std::vector<double>>(back.GetAttr("ks")), (std::vector<double>{0.1, 1e-300}));
  Attribute out;
  ASSERT_TRUE(
      ConvertAttr(Attribute(0.1), TIDE_ATTR_FLOAT, &out));  // Python's floats, to a float attr
  EXPECT_EQ(std::get<float>(out), 0.1f);
  ASSERT_TRUE(ConvertAttr(Attribute(0.5f), TIDE_ATTR_FLOAT64, &out));
  EXPECT_EQ(std::get<double>(out), 0.5);
  ASSERT_TRUE(ConvertAttr(Attribute(std::vector<double>{0.25}), TIDE_ATTR_FLOATS, &out));
  EXPECT_EQ(std::get<std::vector<float>>(out), std::vector<float>{0.25f});
  EXPECT_FALSE(ConvertAttr(Attribute(0.1), TIDE_ATTR_INT, &out));
}

}  // namespace
}  // namespace tide::core
