// tracer_test.cc: the CUDA device's tracer (CUPTI's activity API, devices/cuda/cupti_tracer.cc)
// through the device's C table (TideDeviceDef.tracer), as the core's profiler calls it. With a
// GPU: a kernel and a host-to-device copy of a known size run while it records; it hands back a
// kernel record and a copy record of that many bytes, each begin <= end, and now_ns after them.
// Without a GPU: where libcupti opens, start, stop and collect still succeed, with no records.
#include <cstdint>
#include <string>
#include <vector>

#include "core/device/device_context.h"
#include "core/memory/memory.h"
#include "core/platform/status.h"
#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

struct Seen {
  std::string name;
  int32_t device, stream;
  uint64_t begin_ns, end_ns, bytes;
  int32_t kind;
};

void Keep(void* sink, const TideTraceRecord* r) {
  static_cast<std::vector<Seen>*>(sink)->push_back(
      {r->name ? r->name : "", r->device, r->stream, r->begin_ns, r->end_ns, r->bytes, r->kind});
}

// The gpu device's tracer table, or nullptr (the plugin is built without cupti.h, or libcupti
// could not be opened: the plugin logs why).
const core::DeviceInfo* GpuDevice() {
  core::Initialize();
  return core::Registry::Global().FindDevice(core::PlaceKindId("gpu"));
}

class Tracer {
 public:
  explicit Tracer(const core::DeviceInfo& d) : d_(d), t_(*d.def.tracer) {}
  void Start() {
    Call([&] { return t_.start(d_.def.self); }, "start");
  }
  void Stop() {
    Call([&] { return t_.stop(d_.def.self); }, "stop");
  }
  std::vector<Seen> Collect() {
    std::vector<Seen> seen;
    Call([&] { return t_.collect(d_.def.self, &Keep, &seen); }, "collect");
    return seen;
  }
  uint64_t NowNs() {
    uint64_t ns = 0;
    Call([&] { return t_.now_ns(d_.def.self, &ns); }, "now_ns");
    return ns;
  }

 private:
  template <typename F>
  void Call(F&& f, const char* what) {
    core::CallPlugin(f, std::string("the gpu tracer's ") + what, d_.plugin_file);
  }
  const core::DeviceInfo& d_;
  const TideDeviceTracer& t_;
};

std::string Describe(const std::vector<Seen>& seen) {
  std::string s;
  for (const Seen& r : seen)
    s += "\n  kind " + std::to_string(r.kind) + " '" + r.name +
         "' gpu:" + std::to_string(r.device) + " stream " + std::to_string(r.stream) + " " +
         std::to_string(r.bytes) + " bytes, " + std::to_string(r.end_ns - r.begin_ns) + " ns";
  return s;
}

TEST(CudaTracer, RecordsAKernelAndAHostToDeviceCopy) {
  TIDE_REQUIRE_REAL_GPU();
  TIDE_REQUIRE_OP("relu");
  const core::DeviceInfo* dev = GpuDevice();
  ASSERT_NE(dev, nullptr);
  if (!dev->def.tracer)
    GTEST_SKIP() << "the CUDA plugin has no tracer here (built without cupti.h, or libcupti "
                    "could not be opened: the plugin's log says why)";
  Tracer tracer(*dev);
  // Below the plugin's 4 MiB staging slot, so the copy is one cudaMemcpyAsync.
  constexpr size_t kBytes = (size_t(1) << 20) + 512;
  std::vector<unsigned char> host(kBytes);
  for (size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i * 7 + 3);
  void* block = core::memory::Alloc(Gpu(), kBytes);
  core::DeviceContext* ctx = core::DeviceContextPool::Global().Get(Gpu());

  const uint64_t before = tracer.NowNs();
  tracer.Start();
  auto out = RunOps(Gpu(), {core::OpDesc("relu", {{"X", {"x"}}}, {{"Out", {"y"}}}, {})},
                    {{"x", Random({64, 33}, TIDE_FP32, -1, 1, 7)}}, {"y"});
  ctx->Copy(TIDE_COPY_HOST_TO_DEVICE, block, host.data(), kBytes);
  ctx->Synchronize();
  core::DeviceContextPool::Global().SynchronizeAll();  // as the core does before stop
  tracer.Stop();
  const std::vector<Seen> seen = tracer.Collect();
  const uint64_t after = tracer.NowNs();
  core::memory::Free(Gpu(), block);
  ASSERT_EQ(out["y"].dims, (std::vector<int64_t>{64, 33}));

  bool kernel = false, copy = false;
  for (const Seen& r : seen) {
    EXPECT_LE(r.begin_ns, r.end_ns) << r.name;
    EXPECT_GE(r.stream, 0) << r.name;
    EXPECT_GE(r.begin_ns, before) << r.name << ": recorded before start's clock reading";
    EXPECT_LE(r.end_ns, after) << r.name << ": ends after now_ns (not the same clock?)";
    EXPECT_TRUE(r.kind == TIDE_TRACE_KERNEL || r.kind == TIDE_TRACE_COPY ||
                r.kind == TIDE_TRACE_OTHER)
        << r.name << ": kind " << r.kind;
    if (r.device != 0) continue;
    kernel = kernel || (r.kind == TIDE_TRACE_KERNEL && !r.name.empty());
    copy = copy || (r.kind == TIDE_TRACE_COPY && r.bytes == kBytes && r.name == "memcpy HtoD");
  }
  EXPECT_TRUE(kernel) << "no kernel record of gpu:0 among " << seen.size() << Describe(seen);
  EXPECT_TRUE(copy) << "no \"memcpy HtoD\" record of " << kBytes << " bytes on gpu:0 among "
                    << seen.size() << Describe(seen);
  // Collected records are forgotten.
  EXPECT_TRUE(tracer.Collect().empty());
}

// Where libcupti opens on a machine without a GPU (a build machine with the toolkit), the tracer
// is there but has nothing to record: start, stop and collect succeed, empty, and now_ns runs.
TEST(CudaTracer, WithoutAGpuStartsAndCollectsNothing) {
  if (Gpus().count > 0 || PlaceOverride()) GTEST_SKIP() << "this machine has a GPU";
  const core::DeviceInfo* dev = GpuDevice();
  if (!dev) GTEST_SKIP() << "the CUDA device plugin is not loaded";
  if (!dev->def.tracer)
    GTEST_SKIP() << "the CUDA plugin has no tracer here (built without cupti.h, or libcupti "
                    "could not be opened)";
  Tracer tracer(*dev);
  const uint64_t a = tracer.NowNs();
  tracer.Start();
  tracer.Stop();
  EXPECT_TRUE(tracer.Collect().empty());
  EXPECT_GE(tracer.NowNs(), a);
}

}  // namespace
}  // namespace tide::test::cuda
