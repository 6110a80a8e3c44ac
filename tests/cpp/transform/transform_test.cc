// transform_test.cc: kernel choice and data transform with the test-only "sim" device (loaded
// from $TIDE_SIM_PLUGIN): device copies (each one counted by the device), fallback to the CPU
// kernel (logged once per op type, an error in strict mode), casts, layout transforms, and one
// clear error for each path that does not exist.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "../../plugins/sim_device/sim_context.h"
#include "core/executor/executor.h"
#include "core/framework/tensor_util.h"
#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/platform/flags.h"

namespace tide::core {
namespace {

class TransformTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Initialize();
    const char* path = std::getenv("TIDE_SIM_PLUGIN");
    ASSERT_NE(path, nullptr) << "set TIDE_SIM_PLUGIN (ctest does)";
    PluginManager::Global().Load(path);
  }
  void TearDown() override {
    FLAGS_strict_kernel_placement = false;
    FLAGS_log_kernels = false;
  }

  static const TideSimCounters& Counters() {
    return *static_cast<const TideSimCounters*>(
        DeviceContextPool::Global().Get(Place("sim", 0))->Extension(TIDE_SIM_CONTEXT_EXTENSION));
  }

  static LoDTensor Host(std::vector<int64_t> dims, const std::vector<float>& v) {
    LoDTensor t;
    t.Resize(DDim(dims));
    std::copy(v.begin(), v.end(), t.mutable_data<float>(HostPlace()));
    return t;
  }
  template <typename T>
  static LoDTensor HostAs(std::vector<int64_t> dims, const std::vector<float>& v, DataType dt) {
    LoDTensor t;
    t.Resize(DDim(dims));
    T* d = static_cast<T*>(t.mutable_data(HostPlace(), dt));
    for (size_t i = 0; i < v.size(); ++i) d[i] = static_cast<T>(v[i]);
    return t;
  }

  static VarDesc* Var(BlockDesc* b, const std::string& name, DataType dt = TIDE_FP32) {
    VarDesc* v = b->Var(name);
    v->set_dtype(dt);
    return v;
  }
  static void Op(BlockDesc* b, OpDesc op) { *b->AppendOp() = std::move(op); }
};

// x -> relu (sim) -> matmul_v2 (no sim kernel: CPU) -> elementwise_add (sim), W and b on the host.
ProgramDesc ReluMatmulAdd() {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  for (const char* n : {"x", "r", "m", "out"}) b->Var(n)->set_dtype(TIDE_FP32);
  for (const char* n : {"w", "bias"}) {
    b->Var(n)->set_dtype(TIDE_FP32);
    b->Var(n)->set_persistable(true);
  }
  *b->AppendOp() = OpDesc("relu", {{"X", {"x"}}}, {{"Out", {"r"}}}, {});
  *b->AppendOp() = OpDesc("matmul_v2", {{"X", {"r"}}, {"Y", {"w"}}}, {{"Out", {"m"}}}, {});
  *b->AppendOp() =
      OpDesc("elementwise_add", {{"X", {"m"}}, {"Y", {"bias"}}}, {{"Out", {"out"}}}, {});
  return p;
}

TEST_F(TransformTest, CopiesAroundAFallbackAreCountedAndCorrect) {
  Scope scope;
  *scope.Var("w")->GetMutable<LoDTensor>() = Host({3, 2}, {1, 2, 3, 4, 5, 6});
  *scope.Var("bias")->GetMutable<LoDTensor>() = Host({1}, {0.5f});
  Executor exe(Place("sim", 0));
  auto prepared = exe.Prepare(ReluMatmulAdd(), 0, {"x"}, {"out"});
  EXPECT_EQ(prepared->op(2).kernel_key().ToString(),
            "{cpu, float32, ANY, plain}");  // matmul_v2 falls back
  EXPECT_EQ(prepared->op(1).kernel_key().ToString(), "{sim, float32, ANY, plain}");  // relu stays
  LoDTensor x = Host({2, 3}, {1, -2, 3, -4, 5, -6});
  uint64_t allocs_after_first = 0;
  for (int run = 0; run < 3; ++run) {
    TideSimCounters before = Counters();
    std::vector<LoDTensor> got = exe.Run(*prepared, &scope, {x});
    TideSimCounters after = Counters();
    // feed (H2D), r -> cpu for matmul_v2 (D2H), m and bias -> sim for the add (2x H2D), fetch
    // (D2H); bias is unchanged after the first run, so its copy on the sim is reused.
    const uint64_t uploads = run == 0 ? 3u : 2u;
    EXPECT_EQ(after.host_to_device - before.host_to_device, uploads) << "run " << run;
    EXPECT_EQ(after.device_to_host - before.device_to_host, 2u) << "run " << run;
    EXPECT_EQ(prepared->transform_counts().copies, run == 0 ? 3u : 2u);
    EXPECT_EQ(prepared->transform_counts().reused, run == 0 ? 0u : 1u);
    EXPECT_EQ(prepared->transform_counts().layouts + prepared->transform_counts().casts, 0u);
    // relu(x) = [[1,0,3],[0,5,0]]; @ w = [[16,20],[15,20]]; + 0.5
    ASSERT_EQ(got[0].place(), HostPlace());
    const float want[] = {16.5f, 20.5f, 15.5f, 20.5f};
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[0].data<float>()[i], want[i]);
    // The pool keeps the device's blocks; TIDE_USE_SYSTEM_ALLOCATOR (the sanitizer runs) makes
    // every tensor its own allocation, so only the pool's count can stay flat.
    if (run == 0)
      allocs_after_first = after.allocs;
    else if (!std::getenv("TIDE_USE_SYSTEM_ALLOCATOR"))
      EXPECT_EQ(after.allocs, allocs_after_first) << "scratch tensors are reused, not reallocated";
  }
}

TEST_F(TransformTest, FallbackIsLoggedOncePerOpType) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  for (const char* n : {"x", "y", "z"}) Var(b, n);
  Op(b, OpDesc("matmul", {{"X", {"x"}}, {"Y", {"x"}}}, {{"Out", {"y"}}}, {}));
  Op(b, OpDesc("matmul", {{"X", {"y"}}, {"Y", {"y"}}}, {{"Out", {"z"}}}, {}));
  Executor exe(Place("sim", 0));
  Scope scope;
  ::testing::internal::CaptureStderr();
  auto got = exe.Run(p, &scope, {{"x", Host({2, 2}, {1, 2, 3, 4})}}, {"z"});
  std::string log = ::testing::internal::GetCapturedStderr();
  size_t first = log.find("op 'matmul' has no kernel on sim");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("op 'matmul' has no kernel on sim", first + 1), std::string::npos) << log;
  // [[1,2],[3,4]]^2 = [[7,10],[15,22]]; squared again = [[199,290],[435,634]]
  EXPECT_FLOAT_EQ(got[0].data<float>()[0], 199.f);
  EXPECT_FLOAT_EQ(got[0].data<float>()[3], 634.f);
}

TEST_F(TransformTest, StrictPlacementMakesTheFallbackAnError) {
  FLAGS_strict_kernel_placement = true;
  Executor exe(Place("sim", 0));
  try {
    exe.Prepare(ReluMatmulAdd(), 0, {"x"}, {"out"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("op 'matmul_v2'"), std::string::npos) << m;
    EXPECT_NE(m.find("{sim, float32, ANY, plain}"), std::string::npos) << m;
    EXPECT_NE(m.find("strict"), std::string::npos) << m;
  }
}

TEST_F(TransformTest, FloatInputsAreCastToTheKernelsDataType) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  Var(b, "x", TIDE_FP64);
  Var(b, "y", TIDE_FP32);
  Var(b, "out", TIDE_FP64);
  Op(b, OpDesc("elementwise_add", {{"X", {"x"}}, {"Y", {"y"}}}, {{"Out", {"out"}}}, {}));
  for (const char* kind : {"sim", "cpu"}) {
    SCOPED_TRACE(kind);
    Executor exe(Place(kind, 0));
    auto prepared = exe.Prepare(p, 0, {"x", "y"}, {"out"});
    Scope scope;
    auto got =
        exe.Run(*prepared, &scope,
                {HostAs<double>({3}, {1, 2, 3}, TIDE_FP64), Host({3}, {0.25f, 0.5f, 0.75f})});
    EXPECT_EQ(prepared->transform_counts().casts, 1u);
    ASSERT_EQ(got[0].dtype(), TIDE_FP64);
    EXPECT_DOUBLE_EQ(got[0].data<double>()[2], 3.75);
  }
}

// The sim device registers no float16 cast: the cast runs on the host, before the copy to the
// device (as a device plugin without casts still runs mixed-type programs), with the right sum.
TEST_F(TransformTest, ACastTheDeviceLacksRunsOnTheHost) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  Var(b, "x", TIDE_FP32);
  Var(b, "y", TIDE_FP16);
  Var(b, "out", TIDE_FP32);
  Op(b, OpDesc("elementwise_add", {{"X", {"x"}}, {"Y", {"y"}}}, {{"Out", {"out"}}}, {}));
  Executor exe(Place("sim", 0));
  Scope scope;
  LoDTensor y;
  y.Resize(DDim({2}));
  uint16_t* h = static_cast<uint16_t*>(y.mutable_data(HostPlace(), TIDE_FP16));
  h[0] = 0x3C00;  // 1.0
  h[1] = 0xC000;  // -2.0
  auto got = exe.Run(p, &scope, {{"x", Host({2}, {1, 2})}, {"y", y}}, {"out"});
  ASSERT_EQ(got[0].dtype(), TIDE_FP32);
  LoDTensor out;
  TensorCopySync(got[0], HostPlace(), &out);
  EXPECT_FLOAT_EQ(out.data<float>()[0], 2.0f);
  EXPECT_FLOAT_EQ(out.data<float>()[1], 0.0f);
}

ProgramDesc NhwcThenNchwOnly() {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  for (const char* n : {"x", "h", "out"}) b->Var(n)->set_dtype(TIDE_FP32);
  *b->AppendOp() = OpDesc("sim.to_nhwc", {{"X", {"x"}}}, {{"Out", {"h"}}}, {});
  *b->AppendOp() = OpDesc("sim.nchw_only", {{"X", {"h"}}}, {{"Out", {"out"}}}, {});
  return p;
}

TEST_F(TransformTest, LayoutTransformOnTheCpu) {
  Executor exe(Place("cpu", 0));
  auto prepared = exe.Prepare(NhwcThenNchwOnly(), 0, {"x"}, {"out"});
  std::vector<float> v(2 * 2 * 3 * 2);  // read as NHWC: N=2, H=2, W=3, C=2
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  Scope scope;
  auto got = exe.Run(*prepared, &scope, {Host({2, 2, 3, 2}, v)});
  EXPECT_EQ(prepared->transform_counts().layouts, 1u);
  EXPECT_EQ(got[0].dims(), DDim({2, 2, 2, 3}));  // NCHW
  // NCHW[n][c][h][w] == NHWC[n][h][w][c]
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 2; ++c)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 3; ++w)
          EXPECT_EQ(got[0].data<float>()[((n * 2 + c) * 2 + h) * 3 + w],
                    v[((n * 2 + h) * 3 + w) * 2 + c]);
}

TEST_F(TransformTest, MissingLayoutTransformIsOneClearError) {
  Executor exe(Place("sim", 0));
  Scope scope;
  try {
    exe.Run(NhwcThenNchwOnly(), &scope, {{"x", Host({1, 1, 1, 2}, {1, 2})}}, {"out"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("op 'sim.nchw_only'"), std::string::npos) << m;
    EXPECT_NE(m.find("{sim, float32, NCHW, plain}"), std::string::npos) << m;
    EXPECT_NE(m.find("no plugin registers a sim layout transform NHWC -> NCHW"), std::string::npos)
        << m;
  }
}

TEST_F(TransformTest, OpWithNoKernelAnywhereNamesWhatExists) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  Var(b, "x");
  Var(b, "out");
  Op(b, OpDesc("sim.no_kernels", {{"X", {"x"}}}, {{"Out", {"out"}}}, {}));
  Executor exe(Place("sim", 0));
  try {
    exe.Prepare(p, 0, {"x"}, {"out"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("op 'sim.no_kernels'"), std::string::npos) << m;
    EXPECT_NE(m.find("no kernel for {sim, float32, ANY, plain} on any loaded place"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("registered: none"), std::string::npos) << m;
  }
}

TEST_F(TransformTest, CopyBetweenTwoDevicesOfAKindIsAPeerCopy) {
  ProgramDesc p;
  BlockDesc* b = p.MutableBlock(0);
  Var(b, "x");
  Var(b, "out");
  b->Var("x")->set_persistable(true);
  Op(b, OpDesc("relu", {{"X", {"x"}}}, {{"Out", {"out"}}}, {}));
  Scope scope;
  LoDTensor on_sim1;
  TensorCopySync(Host({2}, {-1, 2}), Place("sim", 1), &on_sim1);
  *scope.Var("x")->GetMutable<LoDTensor>() = on_sim1;
  Executor exe(Place("sim", 0));
  auto prepared = exe.Prepare(p, 0, {}, {"out"});
  TideSimCounters before = Counters();
  auto got = exe.Run(*prepared, &scope);
  TideSimCounters after = Counters();
  EXPECT_EQ(prepared->transform_counts().copies, 1u);
  EXPECT_EQ(after.peer - before.peer, 1u);                      // sim:1 -> sim:0 directly
  EXPECT_EQ(after.device_to_host - before.device_to_host, 1u);  // only the fetch
  EXPECT_EQ(after.host_to_device - before.host_to_device, 0u);
  EXPECT_FLOAT_EQ(got[0].data<float>()[0], 0.f);
  EXPECT_FLOAT_EQ(got[0].data<float>()[1], 2.f);
}

TEST_F(TransformTest, LogKernelsShowsChoicesAndTransforms) {
  FLAGS_log_kernels = true;
  Scope scope;
  *scope.Var("w")->GetMutable<LoDTensor>() = Host({3, 2}, {1, 2, 3, 4, 5, 6});
  *scope.Var("bias")->GetMutable<LoDTensor>() = Host({1}, {0.5f});
  ::testing::internal::CaptureStderr();
  Executor exe(Place("sim", 0));
  auto prepared = exe.Prepare(ReluMatmulAdd(), 0, {"x"}, {"out"});
  exe.Run(*prepared, &scope, {Host({2, 3}, {1, 2, 3, 4, 5, 6})});
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("op 'matmul_v2' (block 0, #2) -> kernel {cpu, float32, ANY, plain} from "
                     "ops_math (fallback to cpu:0)"),
            std::string::npos)
      << log;
  EXPECT_NE(
      log.find("op 'relu' (block 0, #1) -> kernel {sim, float32, ANY, plain} from device_sim"),
      std::string::npos)
      << log;
  EXPECT_NE(log.find("input 'X' ('r'): copy sim:0 -> cpu:0"), std::string::npos) << log;
}

}  // namespace
}  // namespace tide::core
