// initialize_required_test.cc: nothing starts the core behind a program's back. Before
// tide::core::Initialize() the registry is empty (the core's own ops come with that call, not with
// the registry) and an Executor refuses to exist, naming the call to make; after it, a program of
// the core's own ops (feed, fetch) runs on the CPU device plugin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ThrowsMessage;

// One test, so that nothing in this process starts the core before it looks.
TEST(InitializeRequired, NothingRunsBeforeInitializeAndTheErrorNamesIt) {
  ASSERT_FALSE(Registry::Global().initialized()) << "something started the core already";
  EXPECT_EQ(Registry::Global().NumOps(), 0u) << "the registry starts empty";
  EXPECT_THAT([] { Executor exe(HostPlace()); },
              ThrowsMessage<Error>(
                  HasSubstr("call tide::core::Initialize() (core/host/initialize.h) once first")));
  const auto not_called =
      HasSubstr("tide::core::Initialize() (core/host/initialize.h) has not been called");
  EXPECT_THAT([] { Registry::Global().GetOp("feed"); }, ThrowsMessage<Error>(not_called));
  EXPECT_THAT([] { CheckedDevice(HostPlace()); }, ThrowsMessage<Error>(not_called));

  Initialize();
  EXPECT_TRUE(Registry::Global().initialized());
  for (const char* op : {"feed", "fetch", "delete_var"})
    EXPECT_NE(Registry::Global().FindOp(op), nullptr) << op << " is registered by Initialize()";
  EXPECT_THAT([] { Registry::Global().GetOp("no_such_op"); },
              ThrowsMessage<Error>(Not(HasSubstr("Initialize()"))));

  Executor exe(HostPlace());
  ProgramDesc program;
  program.MutableBlock(0)->Var("x")->set_shape({2});
  LoDTensor x;
  x.Resize(DDim({2}));
  float* data = x.mutable_data<float>(HostPlace());
  data[0] = 1.5f;
  data[1] = -2.f;
  Scope scope;
  std::vector<LoDTensor> out = exe.Run(program, &scope, {{"x", x}}, {"x"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<float>()[0], 1.5f);
  EXPECT_EQ(out[0].data<float>()[1], -2.f);
}

}  // namespace
}  // namespace tide::core
