// cpu_device.cc: the CPU device plugin. Registers place kind "cpu": 64-byte-aligned host memory
// for the core's allocator, memcpy copies, and a CPU context whose thread pool (sized by
// --cpu_threads) op packs reach through the "tide.cpu" extension (tide/cpu_context.h).
#define EIGEN_USE_THREADS
#include <tide/cpu_context.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <tide/plugin.hpp>
#include <unsupported/Eigen/CXX11/ThreadPool>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

constexpr size_t kAlignment = 64;

// The context's threads. parallel_for runs on OpenMP where the plugin is built with it: the
// runtime Debian's oneDNN (and so the GEMM) runs on, whose team a thread's successive parallel
// regions share, so kernels and libraries take turns on one set of threads instead of two pools
// fighting for the cores. schedule (asynchronous, for Eigen's ThreadPoolDevice) needs a pool of
// its own, an Eigen one made on first use.
struct CpuPool {
  int threads = 1;
  bool spin = false;
  std::once_flag eigen_once;
  std::unique_ptr<Eigen::ThreadPool> eigen_owner;
  std::atomic<Eigen::ThreadPool*> eigen{nullptr};  // readable without the once_flag

  Eigen::ThreadPool& Eigen() {
    std::call_once(eigen_once, [this] {
      eigen_owner = std::make_unique<Eigen::ThreadPool>(threads, /*allow_spinning=*/spin);
      eigen.store(eigen_owner.get(), std::memory_order_release);
    });
    return *eigen_owner;
  }
  int32_t EigenThreadId() const {
    Eigen::ThreadPool* e = eigen.load(std::memory_order_acquire);
    return e ? e->CurrentThreadId() : -1;
  }
  // True on one of this pool's threads, where a nested parallel_for must run inline.
  bool InsideRange() const {
#ifdef _OPENMP
    if (omp_in_parallel()) return true;
#endif
    return EigenThreadId() >= 0;
  }
};

void ParallelFor(void* pool, int64_t n, int32_t max_threads,
                 void (*fn)(void* arg, int64_t begin, int64_t end), void* arg) {
  auto* p = static_cast<CpuPool*>(pool);
  const int64_t t = std::min<int64_t>({n, max_threads, p->threads});
  if (t <= 1 || p->InsideRange()) {
    if (n > 0) fn(arg, 0, n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel num_threads(static_cast <int>(t))
  {
    const int64_t i = omp_get_thread_num(), k = omp_get_num_threads();
    const int64_t begin = n * i / k, end = n * (i + 1) / k;
    if (begin < end) fn(arg, begin, end);
  }
#else
  Eigen::Barrier done(static_cast<unsigned>(t - 1));
  for (int64_t i = 1; i < t; ++i)
    p->Eigen().Schedule([&done, fn, arg, n, i, t] {
      fn(arg, n * i / t, n * (i + 1) / t);
      done.Notify();
    });
  fn(arg, 0, n / t);
  done.Wait();
#endif
}

struct CpuContext {
  CpuPool pool;
  TideCpuContext ext{};
};

// --cpu_threads; else OMP_NUM_THREADS, which users set to size every CPU runtime at once (the
// core exports --cpu_threads there too, for oneDNN's OpenMP); else one per hardware thread.
int ThreadCount() {
  int flag = std::atoi(tide::Flag("cpu_threads", "0").c_str());
  if (flag > 0) return flag;
  if (const char* omp = std::getenv("OMP_NUM_THREADS")) {
    int n = std::atoi(omp);  // "4" or OpenMP's list form "4,2": the outer level
    if (n > 0) return n;
  }
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
    c->pool.threads = ThreadCount();
    // Eigen's workers spin for new work only when asked: spinning threads starve a busy
    // machine's other processes, which is far worse than the wake-up it saves. (OpenMP's spin
    // is the core's GOMP_SPINCOUNT, core/platform/cpu_threading.cc.)
    const std::string spin = tide::Flag("cpu_spin_wait", "false");
    c->pool.spin = spin == "true" || spin == "1";
    c->ext.struct_size = TIDE_STRUCT_SIZE(TideCpuContext, parallel_for);
    c->ext.num_threads = c->pool.threads;
    c->ext.pool = &c->pool;
    c->ext.schedule = [](void* pool, void (*fn)(void*), void* arg) {
      static_cast<CpuPool*>(pool)->Eigen().Schedule([fn, arg] { fn(arg); });
    };
    c->ext.current_thread_id = [](void* pool) -> int32_t {
      return static_cast<CpuPool*>(pool)->EigenThreadId();
    };
    c->ext.parallel_for = &ParallelFor;
    return c;
  }
  void DestroyContext(void* ctx) override { delete static_cast<CpuContext*>(ctx); }
  void Synchronize(void*) override {}  // CPU kernels finish before they return

  void Copy(void*, TideCopyKind, void* dst, const void* src, size_t size) override {
    std::memcpy(dst, src, size);
  }
  int32_t DLPackDeviceType() const override { return 1 /* kDLCPU */; }
  bool HasMemset() const override { return true; }
  void Memset(void*, void* dst, int32_t value, size_t size) override {
    std::memset(dst, value, size);
  }
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
    if (std::strcmp(name, TIDE_CPU_CONTEXT_EXTENSION) == 0)
      return &static_cast<CpuContext*>(ctx)->ext;
    return nullptr;
  }
};

}  // namespace

TIDE_ON_REGISTER([](tide::Registrar& r) { r.AddDevice(std::make_unique<CpuDevice>()); });
TIDE_PLUGIN("device_cpu", "0.1.0", "CPU device: host memory, memcpy copies, the CPU thread pool");
