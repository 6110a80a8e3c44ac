// device_test.cc: the CUDA device plugin itself: it loads and registers its place kind, kernels
// and casts on any machine (a machine without a GPU gets 0 gpu places and a clear error, never a
// crash); with a GPU: the "tide.cuda" extension, copies both ways, out-of-memory errors, errors
// found on the device.
#include <tide/cuda_context.h>

#include <algorithm>
#include <cstring>

#include "core/framework/tensor_util.h"
#include "core/memory/memory.h"
#include "cuda_test_util.h"

namespace tide::test::cuda {
namespace {

const core::PluginRecord* CudaRecord() {
  static std::vector<core::PluginRecord> records;
  core::Initialize();
  records = core::PluginManager::Global().Records();
  for (const auto& r : records)
    if (r.name == "device_cuda") return &r;
  return nullptr;
}

bool HasKernel(const std::string& op, TideDataType dtype) {
  core::OpKernelType key{core::PlaceKindId("gpu"), dtype, TIDE_LAYOUT_ANY, 0};
  for (const core::KernelEntry* e : core::Registry::Global().Kernels(op))
    if (e->key.place_kind == key.place_kind && e->key.dtype == dtype) return true;
  return false;
}

// Runs on every machine: this is the "no GPU, no crash" check.
TEST(CudaPlugin, LoadsAndRegistersTheGpuPlaceKernelsAndCasts) {
  const core::PluginRecord* rec = CudaRecord();
  ASSERT_NE(rec, nullptr) << "libtide_device_cuda.so is not on the plugin path";
  ASSERT_TRUE(rec->loaded) << rec->error;
  EXPECT_NE(std::find(rec->devices.begin(), rec->devices.end(), "gpu"), rec->devices.end());
  for (const char* op : {"mul", "matmul_grad", "elementwise_add", "softmax", "sgd", "adam",
                         "conv2d", "conv2d_grad", "pool2d_grad", "batch_norm_grad",
                         "softmax_with_cross_entropy", "lookup_table_grad", "dropout", "lrn_grad"})
    for (TideDataType t : {TIDE_FP32, TIDE_FP64})
      EXPECT_TRUE(HasKernel(op, t)) << op << " has no gpu " << core::DataTypeName(t) << " kernel";
  EXPECT_TRUE(HasKernel("relu", TIDE_FP16));
  EXPECT_TRUE(HasKernel("elementwise_add", TIDE_FP16));
  const int32_t gpu = core::PlaceKindId("gpu");
  for (auto [from, to] : {std::pair{TIDE_FP32, TIDE_FP64},
                          {TIDE_FP64, TIDE_FP32},
                          {TIDE_FP32, TIDE_FP16},
                          {TIDE_FP16, TIDE_FP32},
                          {TIDE_FP64, TIDE_FP16},
                          {TIDE_INT64, TIDE_FP32},
                          {TIDE_FP32, TIDE_INT32}})
    EXPECT_NE(core::Registry::Global().FindCast(gpu, from, to), nullptr)
        << "no gpu cast " << core::DataTypeName(from) << " -> " << core::DataTypeName(to);
}

TEST(CudaPlugin, WithoutAGpuThePlaceIsAbsentWithAClearError) {
  if (Gpus().count > 0 || PlaceOverride()) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(core::DeviceCount("gpu"), 0);
  try {
    core::Executor exe(Gpu());
    FAIL() << "an executor on gpu:0 without a GPU";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.code(), TIDE_UNAVAILABLE) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu:0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0 device"), std::string::npos) << e.what();
  }
}

TEST(CudaPlugin, ExtensionDescribesThePlace) {
  TIDE_REQUIRE_REAL_GPU();
  core::DeviceContext* ctx = core::DeviceContextPool::Global().Get(Gpu());
  const auto* ext =
      static_cast<const TideCudaContext*>(ctx->Extension(TIDE_CUDA_CONTEXT_EXTENSION));
  ASSERT_NE(ext, nullptr);
  EXPECT_GE(ext->struct_size, TIDE_STRUCT_SIZE(TideCudaContext, multiprocessor_count));
  EXPECT_EQ(ext->device, 0);
  EXPECT_NE(ext->stream, nullptr);
  EXPECT_NE(ext->cublas, nullptr);
  EXPECT_NE(ext->cudnn, nullptr);
  EXPECT_GE(ext->compute_capability_major, 7);
  EXPECT_GT(ext->multiprocessor_count, 0);
  EXPECT_EQ(ctx->Extension("tide.cpu"), nullptr);
}

// Host -> device -> device -> host for sizes around the staging chunk (4 MiB).
TEST(CudaPlugin, CopiesRoundTrip) {
  TIDE_REQUIRE_REAL_GPU();
  for (int64_t n : {int64_t(1), int64_t(1000), int64_t(1) << 20, (int64_t(5) << 20) + 3}) {
    core::LoDTensor host;
    host.Resize(core::DDim({n}));
    float* h = host.mutable_data<float>(Cpu());
    for (int64_t i = 0; i < n; ++i) h[i] = static_cast<float>(i % 9973) * 0.5f - 7.0f;
    host.set_lod({{0, static_cast<uint64_t>(n)}});
    core::LoDTensor dev, dev2, back;
    core::TensorCopySync(host, Gpu(), &dev);
    core::TensorCopySync(dev, Gpu(), &dev2);
    core::TensorCopySync(dev2, Cpu(), &back);
    ASSERT_EQ(back.dims(), host.dims());
    EXPECT_EQ(back.lod(), host.lod());
    EXPECT_EQ(std::memcmp(back.data<float>(), h, sizeof(float) * n), 0) << n << " floats";
  }
}

TEST(CudaPlugin, OutOfMemoryIsResourceExhaustedNamingThePlace) {
  TIDE_REQUIRE_REAL_GPU();
  try {
    core::memory::Alloc(Gpu(), size_t(1) << 50);  // 1 PiB
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.code(), TIDE_RESOURCE_EXHAUSTED) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu:0"), std::string::npos) << e.what();
  }
  // The place still works after the failure.
  void* p = core::memory::Alloc(Gpu(), 1 << 20);
  EXPECT_NE(p, nullptr);
  core::memory::Free(Gpu(), p);
}

// A label out of range is found on the device and reported by the next synchronisation, naming
// the op; the place keeps working afterwards.
TEST(CudaPlugin, DeviceErrorsAreReportedWithTheOp) {
  TIDE_REQUIRE_REAL_GPU();
  TIDE_REQUIRE_OP("cross_entropy");
  OpCase bad("cross_entropy");
  bad.In("X", "x", Random({2, 3}, TIDE_FP32, 0.1, 1, 1))
      .In("Label", "label", Values({2, 1}, {1, 7}, TIDE_INT64))
      .Out("Y", "y");
  try {
    bad.Run(Gpu());
    FAIL() << "a label of 7 for 3 classes was accepted";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cross_entropy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("label"), std::string::npos) << e.what();
  }
  OpCase good("cross_entropy");
  good.In("X", "x", Random({2, 3}, TIDE_FP32, 0.1, 1, 1))
      .In("Label", "label", Values({2, 1}, {1, 2}, TIDE_INT64))
      .Out("Y", "y");
  ExpectGpuMatchesCpu(good);
}

}  // namespace
}  // namespace tide::test::cuda
