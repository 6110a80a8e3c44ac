// frozen_model_test.cc: tide::FrozenModel from C++ (core/aot), as docs/aot.md shows it: a program
// frozen with a variable batch, loaded and run at batches inside the range, bit-identical to the
// executor; the batch-dependent dims follow each run's feed.
#include "core/aot/frozen_model.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "core/aot/freeze.h"
#include "core/executor/executor.h"
#include "core/host/initialize.h"

namespace tide::core {
namespace {

LoDTensor Ramp(std::vector<int64_t> dims, float from) {
  LoDTensor t;
  t.Resize(DDim(dims));
  float* p = t.mutable_data<float>(HostPlace());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = from + 0.25f * static_cast<float>(i);
  return t;
}

// y = relu(x * w - 1) + x: three temporaries, w persistable.
ProgramDesc Net() {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  for (const char* n : {"x", "t", "u", "v", "y"}) b->Var(n)->set_dtype(TIDE_FP32);
  b->Var("x")->set_shape({-1, 3});
  b->Var("w")->set_dtype(TIDE_FP32);
  b->Var("w")->set_persistable(true);
  *b->AppendOp() = OpDesc("elementwise_mul", {{"X", {"x"}}, {"Y", {"w"}}}, {{"Out", {"t"}}}, {});
  *b->AppendOp() = OpDesc("scale", {{"X", {"t"}}}, {{"Out", {"u"}}}, {{"bias", -1.0f}});
  *b->AppendOp() = OpDesc("relu", {{"X", {"u"}}}, {{"Out", {"v"}}}, {});
  *b->AppendOp() = OpDesc("elementwise_add", {{"X", {"v"}}, {"Y", {"x"}}}, {{"Out", {"y"}}}, {});
  return p;
}

TEST(FrozenModelTest, RunsLikeTheExecutorAtEveryBatchInItsRange) {
  Initialize();
  const Place cpu("cpu", 0);
  Scope scope;
  *scope.Var("w")->GetMutable<LoDTensor>() = Ramp({3}, 0.5f);
  const std::string path = ::testing::TempDir() + "frozen_model_test.tideaot";
  FrozenPlan plan = FreezeProgram(Net(), {"x"}, {"y"}, cpu, {{"x", {{1, 6}, {3, 3}}}}, &scope);
  EXPECT_EQ(plan.ops.size(), 4u);
  // At batch 6 each temporary is 72 bytes, 128 with the alignment; t (ops 1-2) and v (3-4) never
  // live at once, nor u (2-3) and y (4 to the end): two slots serve the four.
  EXPECT_EQ(plan.arena_bytes, 2 * 128u);
  WriteFrozenPlan(plan, path);

  auto model = FrozenModel::Load(path, cpu);
  EXPECT_EQ(model->num_ops(), 4u);
  EXPECT_EQ(model->num_ops_inferring_shapes(), 0u);
  Executor exe(cpu);
  auto prepared = exe.Prepare(Net(), 0, {"x"}, {"y"});
  for (int64_t batch : {6, 2, 5, 1}) {
    LoDTensor x = Ramp({batch, 3}, -2.0f);
    std::vector<LoDTensor> want = exe.Run(*prepared, &scope, {x});
    std::vector<LoDTensor> got = model->Run({x});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].dims(), want[0].dims()) << "batch " << batch;
    EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), 4 * 3 * batch), 0) << "batch " << batch;
  }
  EXPECT_THROW(model->Run({Ramp({7, 3}, 0)}), Error);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tide::core
