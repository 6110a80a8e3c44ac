// tide/eigen.hpp: CPU kernels on Tide's CPU thread pool. ParallelFor and EigenEval split work
// over the CPU device plugin's parallel_for (TideCpuContext), the pool oneDNN and the GEMM run
// on too, sized by --cpu_threads; EigenDevice is an Eigen::ThreadPoolDevice for what needs
// Eigen's own threading (its schedule function).
#ifndef TIDE_EIGEN_HPP_
#define TIDE_EIGEN_HPP_

#define EIGEN_USE_THREADS
#include <tide/cpu_context.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <tide/plugin.hpp>
#include <unordered_map>
#include <unsupported/Eigen/CXX11/Tensor>

namespace tide {

// Eigen's pool interface over the C scheduling functions of a TideCpuContext.
class EigenPoolAdapter : public Eigen::ThreadPoolInterface {
 public:
  explicit EigenPoolAdapter(const TideCpuContext& c) : c_(c) {}
  void Schedule(std::function<void()> fn) override {
    auto* task = new std::function<void()>(std::move(fn));
    c_.schedule(c_.pool, &Run, task);
  }
  int NumThreads() const override { return c_.num_threads; }
  int CurrentThreadId() const override { return c_.current_thread_id(c_.pool); }

 private:
  static void Run(void* arg) {
    std::unique_ptr<std::function<void()>> task(static_cast<std::function<void()>*>(arg));
    (*task)();
  }
  TideCpuContext c_;
};

// The Eigen device for a kernel's CPU place, made once per CPU context and cached.
inline const Eigen::ThreadPoolDevice& EigenDevice(const KernelContext& ctx) {
  const auto& cpu = ctx.DeviceExtension<TideCpuContext>(TIDE_CPU_CONTEXT_EXTENSION);
  thread_local const TideCpuContext* last_key = nullptr;
  thread_local const Eigen::ThreadPoolDevice* last_device = nullptr;
  if (last_key == &cpu) return *last_device;
  struct Entry {
    std::unique_ptr<EigenPoolAdapter> pool;
    std::unique_ptr<Eigen::ThreadPoolDevice> device;
  };
  static std::mutex mu;
  static auto* devices = new std::unordered_map<const TideCpuContext*, Entry>;  // lives forever
  std::lock_guard<std::mutex> lock(mu);
  Entry& e = (*devices)[&cpu];
  if (!e.device) {
    e.pool = std::make_unique<EigenPoolAdapter>(cpu);
    e.device = std::make_unique<Eigen::ThreadPoolDevice>(e.pool.get(), cpu.num_threads);
  }
  last_key = &cpu;
  last_device = e.device.get();
  return *e.device;
}

// Below this many elements (or units of work), a thread hand-off costs more than the work.
constexpr int64_t kParallelThreshold = 1 << 15;

namespace detail {
// fn(begin, end) behind parallel_for's C callback: an exception stops at the boundary and is
// rethrown on the calling thread.
template <typename F>
struct RangeTask {
  F* fn;
  std::mutex mu;
  std::exception_ptr error;
  static void Run(void* arg, int64_t begin, int64_t end) {
    auto* task = static_cast<RangeTask*>(arg);
    try {
      (*task->fn)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(task->mu);
      if (!task->error) task->error = std::current_exception();
    }
  }
};
}  // namespace detail

// fn(begin, end) over [0, n), split across the CPU pool when n * cost_per_item is large: at most
// one thread per kParallelThreshold units of work, each taking one contiguous range.
template <typename F>
void ParallelFor(const KernelContext& ctx, int64_t n, int64_t cost_per_item, F&& fn) {
  if (n <= 0) return;
  const int64_t work = n * std::max<int64_t>(cost_per_item, 1);
  if (n == 1 || work < kParallelThreshold) {
    fn(int64_t(0), n);
    return;
  }
  const auto& cpu = ctx.DeviceExtension<TideCpuContext>(TIDE_CPU_CONTEXT_EXTENSION);
  if (TIDE_HAS_FIELD(&cpu, TideCpuContext, parallel_for) && cpu.parallel_for) {
    const int64_t threads = std::max<int64_t>(2, work / kParallelThreshold);
    detail::RangeTask<std::remove_reference_t<F>> task{&fn, {}, {}};
    cpu.parallel_for(
        cpu.pool, n,
        static_cast<int32_t>(std::min<int64_t>(threads, std::numeric_limits<int32_t>::max())),
        &decltype(task)::Run, &task);
    if (task.error) std::rethrow_exception(task.error);
    return;
  }
  Eigen::TensorOpCost cost(static_cast<double>(cost_per_item) * 8,
                           static_cast<double>(cost_per_item) * 4,
                           static_cast<double>(cost_per_item));
  EigenDevice(ctx).parallelFor(
      static_cast<Eigen::Index>(n), cost,
      [&fn](Eigen::Index b, Eigen::Index e) { fn(int64_t(b), int64_t(e)); });
}

// out = expr for a 1-D out, split across the CPU pool (ParallelFor over slices) when out is large
// enough to benefit.
template <typename Out, typename Expr>
void EigenEval(const KernelContext& ctx, Out out, const Expr& expr) {
  static_assert(Out::NumDimensions == 1, "EigenEval evaluates 1-D outputs");
  constexpr int64_t kCost = 2;  // units of work per element, for ParallelFor
  const int64_t n = static_cast<int64_t>(out.size());
  if (n * kCost < kParallelThreshold) {
    out = expr;
    return;
  }
  ParallelFor(ctx, n, kCost, [&](int64_t b, int64_t e) {
    const Eigen::array<Eigen::Index, 1> offset{static_cast<Eigen::Index>(b)};
    const Eigen::array<Eigen::Index, 1> extent{static_cast<Eigen::Index>(e - b)};
    out.slice(offset, extent) = expr.slice(offset, extent);
  });
}

// Views of a tensor's data as Eigen maps. Unaligned: tensors may wrap external memory (numpy,
// DLPack) at any element-aligned address.
template <typename T>
using EigenVector =
    Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, Eigen::DenseIndex>, Eigen::Unaligned>;
template <typename T>
using ConstEigenVector =
    Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, Eigen::DenseIndex>,
                     Eigen::Unaligned>;

template <typename T>
ConstEigenVector<T> Flat(const Tensor& t) {
  return ConstEigenVector<T>(t.data<T>(), t.numel());
}
template <typename T>
EigenVector<T> FlatMutable(Tensor& t, const Place& place) {
  return EigenVector<T>(t.mutable_data<T>(place), t.numel());
}

}  // namespace tide

#endif  // TIDE_EIGEN_HPP_
