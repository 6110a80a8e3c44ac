// cpu_device.cc: the CPU device plugin. Registers place kind "cpu": 64-byte-aligned host memory
// for the core's allocator, memcpy copies, and a CPU context whose Eigen thread pool (sized by
// --cpu_threads) op packs reach through the "tide.cpu" extension (tide/cpu_context.h).
#define EIGEN_USE_THREADS
#include <tide/cpu_context.h>
#include <tide/plugin.hpp>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <unsupported/Eigen/CXX11/ThreadPool>

namespace {

constexpr size_t kAlignment = 64;

struct CpuContext {
  std::unique_ptr<Eigen::ThreadPool> pool;
  TideCpuContext ext{};
};

int ThreadCount() {
  int flag = std::atoi(tide::Flag("cpu_threads", "0").c_str());
  if (flag > 0) return flag;
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

// /proc/cpuinfo's "model name" (Linux), else "cpu".
std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "cpu";
}

class CpuDevice : public tide::Device {
 public:
  const char* kind() const override { return "cpu"; }
  bool host_accessible() const override { return true; }
  size_t alignment() const override { return kAlignment; }
  int32_t Count() override { return 1; }

  void* Alloc(int32_t, size_t size) override {
    size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded ? rounded : kAlignment);
    if (!p) TIDE_THROW(TIDE_RESOURCE_EXHAUSTED, "host allocation of ", size, " bytes failed");
    return p;
  }
  void Free(int32_t, void* ptr, size_t) override { std::free(ptr); }

  void MemoryInfo(int32_t, size_t* total, size_t* available) override {
    long page = sysconf(_SC_PAGESIZE);
    *total = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(page);
    *available = static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<size_t>(page);
  }

  void* CreateContext(int32_t) override {
    auto* c = new CpuContext;
    int n = ThreadCount();
    // Workers spin for new work only when asked: spinning threads starve a busy machine's other
    // processes (and oneDNN's OpenMP threads), which is far worse than the wake-up it saves.
    const std::string spin = tide::Flag("cpu_spin_wait", "false");
    c->pool = std::make_unique<Eigen::ThreadPool>(n, /*allow_spinning=*/spin == "true" || spin == "1");
    c->ext.struct_size = TIDE_STRUCT_SIZE(TideCpuContext, current_thread_id);
    c->ext.num_threads = n;
    c->ext.pool = c->pool.get();
    c->ext.schedule = [](void* pool, void (*fn)(void*), void* arg) {
      static_cast<Eigen::ThreadPool*>(pool)->Schedule([fn, arg] { fn(arg); });
    };
    c->ext.current_thread_id = [](void* pool) -> int32_t {
      return static_cast<Eigen::ThreadPool*>(pool)->CurrentThreadId();
    };
    return c;
  }
  void DestroyContext(void* ctx) override { delete static_cast<CpuContext*>(ctx); }
  void Synchronize(void*) override {}  // CPU kernels finish before they return

  void Copy(void*, TideCopyKind, void* dst, const void* src, size_t size) override {
    std::memcpy(dst, src, size);
  }
  int32_t DLPackDeviceType() const override { return 1 /* kDLCPU */; }
  bool HasMemset() const override { return true; }
  void Memset(void*, void* dst, int32_t value, size_t size) override { std::memset(dst, value, size); }
  bool HasProperties() const override { return true; }
  void Properties(int32_t, TideDeviceProperties* p) override {
    static const std::string name = CpuModelName();
    p->name = name.c_str();
    p->vendor = "";
    p->compute_capability = "";
    size_t total = 0, available = 0;
    MemoryInfo(0, &total, &available);
    p->total_memory = total;
    if (TIDE_HAS_FIELD(p, TideDeviceProperties, multiprocessor_count))
      p->multiprocessor_count = static_cast<int32_t>(std::thread::hardware_concurrency());
  }
  // No events and no pinned memory: CPU copies and kernels finish before they return.
  const void* Extension(void* ctx, const char* name) override {
    if (std::strcmp(name, TIDE_CPU_CONTEXT_EXTENSION) == 0) return &static_cast<CpuContext*>(ctx)->ext;
    return nullptr;
  }
};

}  // namespace

TIDE_ON_REGISTER([](tide::Registrar& r) { r.AddDevice(std::make_unique<CpuDevice>()); });
TIDE_PLUGIN("device_cpu", "0.1.0", "CPU device: host memory, memcpy copies, Eigen thread pool");
