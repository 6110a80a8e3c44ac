// out_of_tree_runner.cc: loads the out-of-tree acme_ops plugin (path in $ACME_PLUGIN) at run
// time and runs its op forward and backward on the CPU.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/passes/grad_op_maker.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

TEST(OutOfTreePlugin, LoadsAndRuns) {
  const char* path = std::getenv("ACME_PLUGIN");
  ASSERT_NE(path, nullptr) << "run through run_out_of_tree.sh";
  Initialize();
  PluginRecord r = PluginManager::Global().Load(path);
  EXPECT_EQ(r.name, "acme_ops");
  EXPECT_EQ(r.version, "1.2.3");
  EXPECT_EQ(r.abi_major, TIDE_ABI_MAJOR);
  ASSERT_NE(Registry::Global().FindOp("acme.axpb"), nullptr);

  ProgramDesc prog;
  BlockDesc* b = prog.MutableBlock(0);
  for (const char* n : {"x", "out", "out@GRAD", "x@GRAD"}) {
    b->Var(n)->set_dtype(TIDE_FP32);
  }
  b->Var("x")->set_shape({-1, 3});
  OpDesc fwd("acme.axpb", {{"X", {"x"}}}, {{"Out", {"out"}}}, {{"a", 3.0f}, {"b", 1.0f}});
  *b->AppendOp() = fwd;
  for (OpDesc& g : MakeGradOps(fwd, {})) *b->AppendOp() = g;

  LoDTensor x, dout;
  x.Resize(DDim({2, 3}));
  dout.Resize(DDim({2, 3}));
  float* xd = x.mutable_data<float>(Place("cpu", 0));
  float* gd = dout.mutable_data<float>(Place("cpu", 0));
  for (int i = 0; i < 6; ++i) {
    xd[i] = static_cast<float>(i);
    gd[i] = 1.0f + static_cast<float>(i);
  }
  Executor exe(Place("cpu", 0));
  Scope scope;
  auto out = exe.Run(prog, &scope, {{"x", x}, {"out@GRAD", dout}}, {"out", "x@GRAD"});
  for (int i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(out[0].data<float>()[i], 3.0f * i + 1.0f);
    EXPECT_FLOAT_EQ(out[1].data<float>()[i], 3.0f * (1.0f + i));
  }
}

}  // namespace
}  // namespace tide::core
