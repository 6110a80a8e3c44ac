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

#include "core/executor/executor.h"
#include "core/ir/compile_infer_shape.h"
#include "core/ir/grad_op_maker.h"
#include "core/platform/device_context.h"
#include "core/platform/flags.h"
#include "core/plugin/loader.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"
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
        s.why_none = "the CUDA device plugin loaded but reports 0 devices (no NVIDIA driver or "
                     "GPU on this machine, or CUDA_VISIBLE_DEVICES hides them)";
    }
    return s;
  }();
  return status;
}

// Skips the test, printing why, when there is no gpu place.
#define TIDE_REQUIRE_GPU()                                                       \
  do {                                                                           \
    const auto& tide_gpu_status = ::tide::test::cuda::Gpus();                    \
    if (tide_gpu_status.count == 0) GTEST_SKIP() << tide_gpu_status.why_none;    \
  } while (0)

// For tests of the CUDA device itself: skips under TIDE_CUDA_TEST_PLACE too.
#define TIDE_REQUIRE_REAL_GPU()                                                       \
  do {                                                                                \
    TIDE_REQUIRE_GPU();                                                               \
    if (::tide::test::cuda::PlaceOverride())                                          \
      GTEST_SKIP() << "TIDE_CUDA_TEST_PLACE replaces the GPU: a test of the CUDA device"; \
  } while (0)

// Skips the test when no loaded op pack defines `type` (its CPU reference is missing).
#define TIDE_REQUIRE_OP(type)                                                           \
  do {                                                                                  \
    if (!::tide::core::Registry::Global().FindOp(type))                                 \
      GTEST_SKIP() << "op '" << (type) << "' is not registered by any loaded op pack";  \
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

// A one-op program: inputs are fed, outputs fetched by variable name; runs on any place.
class OpCase {
 public:
  explicit OpCase(std::string type) : type_(std::move(type)) { core::Initialize(); }

  OpCase& In(const std::string& param, const std::string& var, TestTensor t) {
    ins_[param].push_back(var);
    feeds_[var] = std::move(t);
    return *this;
  }
  // `fetch` false: bound, not fetched (e.g. an output that holds no data in some mode).
  OpCase& Out(const std::string& param, const std::string& var, bool fetch = true) {
    outs_[param].push_back(var);
    if (fetch) fetch_.push_back(var);
    return *this;
  }
  OpCase& Attr(const std::string& name, core::Attribute v) {
    attrs_[name] = std::move(v);
    return *this;
  }
  const std::string& type() const { return type_; }
  const std::map<std::string, TestTensor>& feeds() const { return feeds_; }
  const std::vector<std::string>& fetched() const { return fetch_; }

  core::ProgramDesc Build(core::OpDesc* fwd = nullptr) const {
    core::ProgramDesc prog;
    core::BlockDesc* b = prog.MutableBlock(0);
    for (const auto& [var, t] : feeds_) {
      core::VarDesc* v = b->Var(var);
      v->set_dtype(t.dtype);
      v->set_shape(t.dims);
    }
    core::OpDesc* op = Append(b, core::OpDesc(type_, ins_, outs_, attrs_));
    if (fwd) *fwd = *op;
    return prog;
  }

  std::map<std::string, TestTensor> Run(const core::Place& place) const {
    return RunProgram(Build(), place, feeds_, fetch_);
  }

  // The forward op and its registered grad ops, with out@GRAD fed from `douts` (one per output
  // variable); returns the grads of the input variables `wrt`.
  std::map<std::string, TestTensor> RunGrad(const core::Place& place,
                                            const std::vector<std::string>& wrt,
                                            const std::map<std::string, TestTensor>& douts) const {
    core::OpDesc fwd;
    core::ProgramDesc prog = Build(&fwd);
    core::BlockDesc* block = prog.MutableBlock(0);
    auto feeds = feeds_;
    for (const auto& [out, d] : douts) {
      const std::string g = core::GradVarName(out);
      core::VarDesc* v = block->Var(g);
      v->set_dtype(d.dtype);
      v->set_shape(d.dims);
      feeds[g] = d;
    }
    for (const core::OpDesc& g : core::MakeGradOps(fwd, {})) Append(block, g);
    std::vector<std::string> fetch;
    for (const auto& v : wrt) fetch.push_back(core::GradVarName(v));
    auto got = RunProgram(prog, place, feeds, fetch);
    std::map<std::string, TestTensor> out;
    for (const auto& v : wrt) out[v] = got[core::GradVarName(v)];
    return out;
  }

  static core::OpDesc* Append(core::BlockDesc* block, const core::OpDesc& op) {
    for (const auto& names : {op.InputArgumentNames(), op.OutputArgumentNames()})
      for (const auto& n : names)
        if (n != core::kEmptyVarName && !block->FindVar(n)) block->Var(n);
    core::OpDesc* added = block->AppendOp();
    *added = op;
    added->set_block(block);
    const core::OpInfo& info = core::Registry::Global().GetOp(op.type());
    core::CheckOpDesc(info, added);
    core::InferShapeAtCompileTime(info, *added, block);
    return added;
  }

  static std::map<std::string, TestTensor> RunProgram(const core::ProgramDesc& prog,
                                                      const core::Place& place,
                                                      const std::map<std::string, TestTensor>& feeds,
                                                      const std::vector<std::string>& fetch) {
    std::map<std::string, core::LoDTensor> f;
    for (const auto& [var, t] : feeds) f[var] = ToLoD(t);
    core::Executor exe(place);
    core::Scope scope;
    std::vector<core::LoDTensor> got = exe.Run(prog, &scope, f, fetch);
    std::map<std::string, TestTensor> out;
    for (size_t i = 0; i < fetch.size(); ++i) out[fetch[i]] = FromLoD(got[i]);
    return out;
  }

  static core::LoDTensor ToLoD(const TestTensor& t) {
    core::LoDTensor out;
    out.Resize(core::DDim(t.dims));
    const core::Place host = Cpu();
    auto fill = [&](auto* d) {
      for (size_t i = 0; i < t.data.size(); ++i)
        d[i] = static_cast<std::remove_pointer_t<decltype(d)>>(t.data[i]);
    };
    switch (t.dtype) {
      case TIDE_FP32: fill(out.mutable_data<float>(host)); break;
      case TIDE_FP64: fill(out.mutable_data<double>(host)); break;
      case TIDE_INT32: fill(out.mutable_data<int32_t>(host)); break;
      case TIDE_INT64: fill(out.mutable_data<int64_t>(host)); break;
      case TIDE_BOOL: fill(out.mutable_data<bool>(host)); break;
      case TIDE_UINT8: fill(out.mutable_data<uint8_t>(host)); break;
      default: ADD_FAILURE() << "unsupported test dtype " << core::DataTypeName(t.dtype);
    }
    out.set_lod(t.lod);
    return out;
  }

  static TestTensor FromLoD(const core::LoDTensor& t) {
    TestTensor out;
    out.dims = t.dims().ToVector();
    out.dtype = t.dtype();
    out.lod = t.lod();
    auto read = [&](const auto* d) { out.data.assign(d, d + t.numel()); };
    switch (t.dtype()) {
      case TIDE_FP32: read(t.data<float>()); break;
      case TIDE_FP64: read(t.data<double>()); break;
      case TIDE_INT32: read(t.data<int32_t>()); break;
      case TIDE_INT64: read(t.data<int64_t>()); break;
      case TIDE_BOOL: read(t.data<bool>()); break;
      case TIDE_UINT8: read(t.data<uint8_t>()); break;
      default: ADD_FAILURE() << "unsupported result dtype " << core::DataTypeName(t.dtype());
    }
    return out;
  }

 private:
  std::string type_;
  core::VariableNameMap ins_, outs_;
  core::AttributeMap attrs_;
  std::map<std::string, TestTensor> feeds_;
  std::vector<std::string> fetch_;
};

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

}  // namespace tide::test::cuda
