// view_moves_test.cc: a view op (reshape, squeeze, flatten and their grads: OpInfo::views) whose
// input dies at it takes the input's memory (core/executor/release_plan.h's view moves): right
// after the op its output's data is the input's, then the input holds none; the values are the
// copy's. No move where the input is read later, fetched, persistable, fed, held elsewhere or
// seen by numpy (content version 0), with --free_temporaries off, or for a freezing block.
#include <gtest/gtest.h>

#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "core/platform/flags.h"

namespace tide::core {
namespace {

LoDTensor Host(std::vector<int64_t> dims) {
  LoDTensor t;
  t.Resize(DDim(dims));
  float* d = t.mutable_data<float>(HostPlace());
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = static_cast<float>(i) - 5.f;
  return t;
}

// A view op in a chain: feed x -> a = 2 * x -> view(a) = b -> c = b + 1 -> fetch c. `view` has
// its input and output parameters, attributes and any extra input or output (an XShape).
struct View {
  std::string type, in = "X", out = "Out";
  AttributeMap attrs;
  VariableNameMap extra_in, extra_out;
  std::vector<int64_t> out_dims;
};

struct Chain {
  View view;
  std::vector<int64_t> x_dims = {4, 6};
  bool a_read_later = false;  // another scale reads a after the view op
  bool a_persistable = false;
  bool view_reads_x = false;  // the view op reads the fed x itself
};

ProgramDesc Build(const Chain& c) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  for (const char* n : {"x", "a", "b", "c", "d", "xs", "xs2", "x_shape"})
    b->Var(n)->set_dtype(TIDE_FP32);
  b->Var("a")->set_persistable(c.a_persistable);
  // The grads' XShape: made by a reshape2 of the fed x ([0] + x's dims).
  *b->AppendOp() = OpDesc("reshape2", {{"X", {"x"}}}, {{"Out", {"xs"}}, {"XShape", {"x_shape"}}},
                          {{"shape", std::vector<int32_t>{-1}}});
  *b->AppendOp() = OpDesc("scale", {{"X", {"x"}}}, {{"Out", {"a"}}}, {{"scale", 2.0f}});
  VariableNameMap in = c.view.extra_in, out = c.view.extra_out;
  in[c.view.in] = {c.view_reads_x ? "x" : "a"};
  out[c.view.out] = {"b"};
  *b->AppendOp() = OpDesc(c.view.type, in, out, c.view.attrs);
  *b->AppendOp() = OpDesc("scale", {{"X", {"b"}}}, {{"Out", {"c"}}}, {{"bias", 1.0f}});
  if (c.a_read_later)
    *b->AppendOp() = OpDesc("scale", {{"X", {"a"}}}, {{"Out", {"d"}}}, {{"scale", 1.0f}});
  return p;
}

// What a run of the chain showed: whether the view op's output held its input's data right
// after it ran, and whether its input held any after the op's release.
struct Seen {
  bool shared = false, input_kept = false;
  std::vector<LoDTensor> fetched;
};

class ViewMovesTest : public ::testing::Test {
 protected:
  void TearDown() override { FLAGS_free_temporaries = true; }

  // Runs `c` twice (the second run on the bindings the first made) and reports the second.
  Seen Run(const Chain& c, std::vector<std::string> fetch = {"c"},
           const std::function<void(PreparedBlock&)>& before = {},
           const std::function<void(const OpInstance&)>& before_view = {}) {
    auto prepared = exe.Prepare(Build(c), 0, {"x"}, fetch);
    if (before) before(*prepared);
    size_t view = prepared->num_ops();
    for (size_t i = 0; i < prepared->num_ops(); ++i)
      if (prepared->op(i).type() == c.view.type && i > 1) view = i;
    EXPECT_LT(view, prepared->num_ops());
    Seen seen;
    prepared->ObserveOps([&](size_t i) {
      const OpInstance& op = prepared->op(i);
      if (i + 1 == view && before_view) before_view(op);
      if (i == view) {
        const LoDTensor& x = op.FindInput(c.view.in.c_str())->vars[0]->Get<LoDTensor>();
        const LoDTensor& y = op.FindOutput(c.view.out.c_str())->vars[0]->Get<LoDTensor>();
        seen.shared = x.holder() != nullptr && x.holder() == y.holder() && x.data() == y.data();
      }
      if (i == view + 1) {  // after the view op's moves and releases
        const LoDTensor& x =
            prepared->op(view).FindInput(c.view.in.c_str())->vars[0]->Get<LoDTensor>();
        seen.input_kept = x.initialized();
      }
    });
    Scope scope;
    for (int run = 0; run < 2; ++run) seen.fetched = exe.Run(*prepared, &scope, {Host(c.x_dims)});
    return seen;
  }

  // c = 2 x + 1 with the view's dims.
  static void ExpectValues(const LoDTensor& got, const std::vector<int64_t>& dims) {
    EXPECT_EQ(got.dims(), DDim(dims));
    const LoDTensor x = Host({got.numel()});
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_FLOAT_EQ(got.data<float>()[i], 2.f * x.data<float>()[i] + 1.f) << "element " << i;
  }

  Executor exe{(Initialize(), Place("cpu", 0))};  // the core started first
};

std::vector<View> Views() {
  const std::vector<int32_t> shape = {3, 8};
  std::vector<View> v;
  v.push_back({"reshape", "X", "Out", {{"shape", shape}}, {}, {}, {3, 8}});
  v.push_back({"reshape2", "X", "Out", {{"shape", shape}}, {}, {{"XShape", {"xs2"}}}, {3, 8}});
  v.push_back({"flatten", "X", "Out", {{"axis", int32_t(0)}}, {}, {}, {1, 24}});
  v.push_back({"flatten2", "X", "Out", {{"axis", int32_t(2)}}, {}, {{"XShape", {"xs2"}}}, {24, 1}});
  v.push_back({"flatten_contiguous_range",
               "X",
               "Out",
               {{"start_axis", int32_t(0)}, {"stop_axis", int32_t(-1)}},
               {},
               {},
               {24}});
  v.push_back({"unsqueeze2",
               "X",
               "Out",
               {{"axes", std::vector<int32_t>{0, 2}}},
               {},
               {{"XShape", {"xs2"}}},
               {1, 4, 1, 6}});
  v.push_back({"squeeze2", "X", "Out", {{"axes", std::vector<int32_t>{}}}, {}, {}, {4, 6}});
  // The grads: X@GRAD = Out@GRAD with x's dims (from XShape, or from X for reshape_grad).
  v.push_back({"reshape2_grad",
               "Out@GRAD",
               "X@GRAD",
               {{"shape", std::vector<int32_t>{-1}}},
               {{"XShape", {"x_shape"}}},
               {},
               {4, 6}});
  v.push_back(
      {"reshape_grad", "Out@GRAD", "X@GRAD", {{"shape", shape}}, {{"X", {"x"}}}, {}, {4, 6}});
  v.push_back({"squeeze2_grad", "Out@GRAD", "X@GRAD", {}, {{"XShape", {"x_shape"}}}, {}, {4, 6}});
  v.push_back({"flatten_contiguous_range_grad",
               "Out@GRAD",
               "X@GRAD",
               {},
               {{"XShape", {"x_shape"}}},
               {},
               {4, 6}});
  return v;
}

TEST_F(ViewMovesTest, EachViewOpTakesItsDyingInputsMemory) {
  for (const View& v : Views()) {
    SCOPED_TRACE(v.type);
    Chain c;
    c.view = v;
    // Under 64 KiB: a release keeps such a tensor's memory, a move never does.
    Seen s = Run(c);
    EXPECT_TRUE(s.shared) << "the output should hold the dying input's memory";
    EXPECT_FALSE(s.input_kept) << "the input must let go of it after the op";
    ASSERT_EQ(s.fetched.size(), 1u);
    ExpectValues(s.fetched[0], v.out_dims);
  }
}

TEST_F(ViewMovesTest, LargeTensorsToo) {
  Chain c;
  c.view = Views()[1];   // reshape2
  c.x_dims = {256, 96};  // 96 KiB
  c.view.attrs["shape"] = std::vector<int32_t>{96, 256};
  Seen s = Run(c);
  EXPECT_TRUE(s.shared);
  EXPECT_FALSE(s.input_kept);
  ExpectValues(s.fetched[0], {96, 256});
}

TEST_F(ViewMovesTest, NoMoveWhereTheInputLivesOn) {
  Chain c;
  c.view = Views()[1];  // reshape2
  {
    SCOPED_TRACE("read later");
    Chain later = c;
    later.a_read_later = true;
    Seen s = Run(later, {"c", "d"});
    EXPECT_FALSE(s.shared);
    ExpectValues(s.fetched[0], {3, 8});
  }
  {
    SCOPED_TRACE("fetched");
    Seen s = Run(c, {"c", "a"});
    EXPECT_FALSE(s.shared);
    EXPECT_TRUE(s.input_kept);
    ExpectValues(s.fetched[0], {3, 8});
  }
  {
    SCOPED_TRACE("persistable");
    Chain p = c;
    p.a_persistable = true;
    Seen s = Run(p);
    EXPECT_FALSE(s.shared);
    EXPECT_TRUE(s.input_kept);
    ExpectValues(s.fetched[0], {3, 8});
  }
}

TEST_F(ViewMovesTest, NoMoveOfMemoryHeldElsewhere) {
  Chain c;
  c.view = Views()[1];
  {
    SCOPED_TRACE("fed");  // the feed shares the caller's tensor
    Chain fed = c;
    fed.view_reads_x = true;
    Seen s = Run(fed);
    EXPECT_FALSE(s.shared);
  }
  {
    SCOPED_TRACE("viewed by numpy");  // content version 0: writes to it go unseen
    Seen s = Run(c, {"c"}, {}, [](const OpInstance& scale) {
      scale.FindOutput("Out")->vars[0]->Get<LoDTensor>().holder()->MarkShared();
    });
    EXPECT_FALSE(s.shared);
    ExpectValues(s.fetched[0], {3, 8});
  }
  {
    SCOPED_TRACE("held by another variable");
    std::shared_ptr<Allocation> other;
    Seen s = Run(c, {"c"}, {}, [&](const OpInstance& scale) {
      other = scale.FindOutput("Out")->vars[0]->Get<LoDTensor>().holder();
    });
    EXPECT_FALSE(s.shared);
    ExpectValues(s.fetched[0], {3, 8});
  }
}

TEST_F(ViewMovesTest, OffWithFreeTemporariesOffOrForAFreezingBlock) {
  Chain c;
  c.view = Views()[1];
  FLAGS_free_temporaries = false;
  Seen off = Run(c);
  EXPECT_FALSE(off.shared);
  EXPECT_TRUE(off.input_kept);
  ExpectValues(off.fetched[0], {3, 8});
  FLAGS_free_temporaries = true;
  Seen kept = Run(c, {"c"}, [](PreparedBlock& p) { p.KeepTemporaries(); });
  EXPECT_FALSE(kept.shared);
  EXPECT_TRUE(kept.input_kept);
}

// The output written in place after the move (scale(X = b, Out = b)) changes nothing else: not
// the fed tensor the chain started from, nor the next run's values.
TEST_F(ViewMovesTest, InPlaceWriteAfterTheMove) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  for (const char* n : {"x", "a", "b", "xs"}) b->Var(n)->set_dtype(TIDE_FP32);
  *b->AppendOp() = OpDesc("reshape2", {{"X", {"x"}}}, {{"Out", {"a"}}, {"XShape", {"xs"}}},
                          {{"shape", std::vector<int32_t>{-1}}});
  *b->AppendOp() = OpDesc("reshape2", {{"X", {"a"}}}, {{"Out", {"b"}}, {"XShape", {"xs"}}},
                          {{"shape", std::vector<int32_t>{2, 12}}});
  *b->AppendOp() = OpDesc("scale", {{"X", {"b"}}}, {{"Out", {"b"}}}, {{"scale", 3.0f}});
  auto prepared = exe.Prepare(p, 0, {"x"}, {"b"});
  Scope scope;
  const LoDTensor x = Host({4, 6});
  for (int run = 0; run < 3; ++run) {
    auto out = exe.Run(*prepared, &scope, {x});
    for (int64_t i = 0; i < 24; ++i) {
      ASSERT_FLOAT_EQ(out[0].data<float>()[i], 3.f * (i - 5.f)) << "run " << run;
      ASSERT_FLOAT_EQ(x.data<float>()[i], i - 5.f) << "the fed tensor changed, run " << run;
    }
  }
}

// A kernel that fails after the move (reshape2's target read from ShapeTensor at run time, here
// one X's elements cannot fill) leaves no output holding its input's memory; the next run moves.
TEST_F(ViewMovesTest, AFailedKernelLeavesNothingShared) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  for (const char* n : {"x", "a", "b", "c", "xs"}) b->Var(n)->set_dtype(TIDE_FP32);
  for (const char* n : {"s0", "s1"}) b->Var(n)->set_dtype(TIDE_INT32);
  *b->AppendOp() = OpDesc("scale", {{"X", {"x"}}}, {{"Out", {"a"}}}, {{"scale", 2.0f}});
  *b->AppendOp() =
      OpDesc("reshape2", {{"X", {"a"}}, {"ShapeTensor", {"s0", "s1"}}},
             {{"Out", {"b"}}, {"XShape", {"xs"}}}, {{"shape", std::vector<int32_t>{}}});
  *b->AppendOp() = OpDesc("scale", {{"X", {"b"}}}, {{"Out", {"c"}}}, {{"bias", 1.0f}});
  auto prepared = exe.Prepare(p, 0, {"x", "s0", "s1"}, {"c"});
  size_t view = 0;
  for (size_t i = 0; i < prepared->num_ops(); ++i)
    if (prepared->op(i).type() == "reshape2") view = i;
  const OpInstance& op = prepared->op(view);
  auto held = [&](const char* param, bool input) -> const AllocationPtr& {
    const ArgBinding* arg = input ? op.FindInput(param) : op.FindOutput(param);
    return arg->vars[0]->Get<LoDTensor>().holder();
  };
  auto dim = [](int32_t v) {
    LoDTensor t;
    t.Resize(DDim({1}));
    *t.mutable_data<int32_t>(HostPlace()) = v;
    return t;
  };
  bool shared = false;
  prepared->ObserveOps([&](size_t i) {
    if (i == view) shared = held("X", true) && held("X", true) == held("Out", false);
  });
  Scope scope;
  auto out = exe.Run(*prepared, &scope, {Host({4, 6}), dim(3), dim(8)});
  EXPECT_TRUE(shared);
  ExpectValues(out[0], {3, 8});
  EXPECT_THROW(exe.Run(*prepared, &scope, {Host({4, 6}), dim(5), dim(5)}), Error);
  ASSERT_TRUE(held("X", true)) << "the input keeps its memory";
  EXPECT_NE(held("Out", false), held("X", true)) << "the failed op's output still holds it";
  shared = false;
  out = exe.Run(*prepared, &scope, {Host({4, 6}), dim(2), dim(12)});
  EXPECT_TRUE(shared);
  ExpectValues(out[0], {2, 12});
}

}  // namespace
}  // namespace tide::core
