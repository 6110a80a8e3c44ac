// cuda_test_util.h: what the CUDA kernel tests share: the GPU check that skips a test (saying
// why) where there is no GPU, one-op programs run on a chosen place, and the comparison of an
// op's gpu:0 run (outputs and grads) with the same op on cpu:0. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/device/device_context.h"
#include "core/executor/executor.h"
#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/passes/compile_infer_shape.h"
#include "core/passes/grad_op_maker.h"
#include "core/platform/flags.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"
#include "one_op_program.h"
#include "op_tester.h"

namespace tide::test::cuda {

// TIDE_CUDA_TEST_PLACE (e.g. "cpu:0") runs the "GPU" side of every comparison on that place: on a
// machine without a GPU it checks the test cases themselves (shapes, attributes, tolerances)
// against the CPU kernels; it does not exercise a single CUDA kernel.
inline const char* PlaceOverride() {
  const char* v = std::getenv("TIDE_CUDA_TEST_PLACE");
  return v && *v ? v : nullptr;
}

inline core::Place Cpu() { return core::Place("cpu", 0); }
inline core::Place Gpu() {
  return PlaceOverride() ? core::ParsePlace(PlaceOverride()) : core::Place("gpu", 0);
}

// How many gpu places there are, and why there are none.
struct GpuStatus {
  int count = 0;
  std::string why_none;
};

inline const GpuStatus& Gpus() {
  static const GpuStatus status = [] {
    core::Initialize();
    // A GPU test must run the GPU kernel: no silent fallback to the CPU's.
    core::SetFlag("strict_kernel_placement", "true");
    GpuStatus s;
    if (PlaceOverride()) {
      s.count = 1;
      return s;
    }
    const core::PluginRecord* rec = nullptr;
    static std::vector<core::PluginRecord> records = core::PluginManager::Global().Records();
    for (const auto& r : records)
      if (r.name == "device_cuda") rec = &r;
    if (!rec) {
      s.why_none = "the CUDA device plugin (libtide_device_cuda.so) is not on the plugin path";
    } else if (!rec->loaded) {
      s.why_none = "the CUDA device plugin failed to load: " + rec->error;
    } else {
      s.count = core::DeviceCount("gpu");
      if (s.count == 0)
        s.why_none =
            "the CUDA device plugin loaded but reports 0 devices (no NVIDIA driver or "
            "GPU on this machine, or CUDA_VISIBLE_DEVICES hides them)";
    }
    return s;
  }();
  return status;
}

// Skips the test, printing why, when there is no gpu place.
#define TIDE_REQUIRE_GPU()                                                    \
  do {                                                                        \
    const auto& tide_gpu_status = ::tide::test::cuda::Gpus();                 \
    if (tide_gpu_status.count == 0) GTEST_SKIP() << tide_gpu_status.why_none; \
  } while (0)

// For tests of the CUDA device itself: skips under TIDE_CUDA_TEST_PLACE too.
#define TIDE_REQUIRE_REAL_GPU()                                                           \
  do {                                                                                    \
    TIDE_REQUIRE_GPU();                                                                   \
    if (::tide::test::cuda::PlaceOverride())                                              \
      GTEST_SKIP() << "TIDE_CUDA_TEST_PLACE replaces the GPU: a test of the CUDA device"; \
  } while (0)

// Skips the test when no loaded op pack defines `type` (its CPU reference is missing).
#define TIDE_REQUIRE_OP(type)                                                          \
  do {                                                                                 \
    if (!::tide::core::Registry::Global().FindOp(type))                                \
      GTEST_SKIP() << "op '" << (type) << "' is not registered by any loaded op pack"; \
  } while (0)

// "[2, 3]", for messages.
inline std::string DimsStr(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// Tolerances of a GPU result against the CPU's: the same formulas, other summation orders.
struct Tolerance {
  double rtol, atol;
};
inline Tolerance GpuTol(TideDataType t) {
  return t == TIDE_FP64 ? Tolerance{1e-9, 1e-11} : Tolerance{1e-4, 1e-5};
}

// Compares two results element by element (NaN matches NaN), naming the first mismatch.
inline void ExpectClose(const TestTensor& gpu, const TestTensor& cpu, Tolerance tol,
                        const std::string& what) {
  ASSERT_EQ(gpu.dims, cpu.dims) << what << ": dims differ";
  ASSERT_EQ(gpu.dtype, cpu.dtype) << what << ": dtypes differ";
  ASSERT_EQ(gpu.data.size(), cpu.data.size()) << what;
  EXPECT_EQ(gpu.lod, cpu.lod) << what << ": LoD differs";
  for (size_t i = 0; i < cpu.data.size(); ++i) {
    const double a = gpu.data[i], b = cpu.data[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    ASSERT_NEAR(a, b, tol.atol + tol.rtol * std::fabs(b))
        << what << ": element " << i << " of " << cpu.data.size() << " (gpu vs cpu)";
  }
}

// A one-op program on any place (one_op_program.h): In/Out/Attr, Run(place), RunGrad(place).
using OpCase = OneOpProgram;

// A cast op from `in` to `out` (the low-precision tests' way onto and off the 16-bit types).
inline core::OpDesc CastOp(const std::string& in, const std::string& out, TideDataType from,
                           TideDataType to) {
  return core::OpDesc("cast", {{"X", {in}}}, {{"Out", {out}}},
                      {{"in_dtype", int32_t(from)}, {"out_dtype", int32_t(to)}});
}

// Runs `ops` with `feeds` on `place`, fetching `fetch`.
inline std::map<std::string, TestTensor> RunOps(const core::Place& place,
                                                const std::vector<core::OpDesc>& ops,
                                                const std::map<std::string, TestTensor>& feeds,
                                                const std::vector<std::string>& fetch) {
  core::ProgramDesc prog;
  core::BlockDesc* b = prog.MutableBlock(0);
  DeclareFeeds(b, feeds);
  for (const auto& op : ops) AppendChecked(b, op);
  return RunProgram(prog, place, feeds, fetch);
}

// Runs `c` on cpu:0 and gpu:0 and checks every fetched output agrees.
inline void ExpectGpuMatchesCpu(const OpCase& c, Tolerance tol) {
  auto cpu = c.Run(Cpu());
  auto gpu = c.Run(Gpu());
  for (const auto& var : c.fetched()) ExpectClose(gpu[var], cpu[var], tol, c.type() + " " + var);
}
inline void ExpectGpuMatchesCpu(const OpCase& c) {
  TideDataType t = c.feeds().empty() ? TIDE_FP32 : c.feeds().begin()->second.dtype;
  ExpectGpuMatchesCpu(c, GpuTol(t));
}

// Runs the grad ops of `c` on both places, each output's gradient random (fixed seeds), and
// checks the grads of `wrt` agree.
inline void ExpectGpuGradsMatchCpu(const OpCase& c, const std::vector<std::string>& wrt,
                                   const std::vector<std::string>& outs, Tolerance tol) {
  auto fwd = c.Run(Cpu());
  std::map<std::string, TestTensor> douts;
  unsigned seed = 501;
  for (const auto& o : outs) {
    ASSERT_TRUE(fwd.count(o)) << c.type() << ": output " << o << " is not fetched";
    douts[o] = Random(fwd[o].dims, fwd[o].dtype, -1, 1, seed++);
  }
  auto cpu = c.RunGrad(Cpu(), wrt, douts);
  auto gpu = c.RunGrad(Gpu(), wrt, douts);
  for (const auto& v : wrt) ExpectClose(gpu[v], cpu[v], tol, c.type() + " grad of " + v);
}
inline void ExpectGpuGradsMatchCpu(const OpCase& c, const std::vector<std::string>& wrt,
                                   const std::vector<std::string>& outs) {
  ExpectGpuGradsMatchCpu(c, wrt, outs, GpuTol(c.feeds().at(wrt.at(0)).dtype));
}

// fp32 and fp64 suites.
inline std::string DtypeParam(const ::testing::TestParamInfo<TideDataType>& info) {
  return info.param == TIDE_FP64 ? "fp64" : "fp32";
}

// A suite over float32 and float64 (INSTANTIATE_TEST_SUITE_P with DtypeParam): random inputs of
// the dtype, and an op's outputs and grads on the GPU against the CPU's within a tolerance that
// allows another summation order.
class GpuDtypeTest : public ::testing::TestWithParam<TideDataType> {
 protected:
  void SetUp() override { TIDE_REQUIRE_GPU(); }
  TideDataType t() const { return GetParam(); }
  TestTensor R(std::vector<int64_t> dims, unsigned seed = 1, double lo = -1, double hi = 1) const {
    return Random(std::move(dims), t(), lo, hi, seed);
  }
  Tolerance Loose() const {
    return t() == TIDE_FP32 ? Tolerance{1e-4, 1e-4} : Tolerance{1e-9, 1e-10};
  }
  void Both(const OpCase& c, const std::vector<std::string>& wrt,
            const std::vector<std::string>& outs) const {
    ExpectGpuMatchesCpu(c, Loose());
    ExpectGpuGradsMatchCpu(c, wrt, outs, Loose());
  }
};

}  // namespace tide::test::cuda
