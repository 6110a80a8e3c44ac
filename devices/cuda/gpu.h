// gpu.h: what the CUDA kernels of this plugin share: the kernel's stream and handles (through
// the public "tide.cuda" extension, as a third-party op pack gets them), CUDA error checks that
// name the op, launch shapes, errors found on the device, and scalar inputs read on the device.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tide/cuda_context.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <tide/ops/data_layout.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

namespace tide {
// __half tensors are TIDE_FP16, __nv_bfloat16 ones TIDE_BF16 (plugin.hpp knows only the host
// types).
template <>
struct DataTypeTrait<__half> {
  static constexpr TideDataType value = TIDE_FP16;
};
template <>
struct DataTypeTrait<__nv_bfloat16> {
  static constexpr TideDataType value = TIDE_BF16;
};
}  // namespace tide

namespace tide_cuda {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::Tensor;
using tide::ops::DimsProduct;

// Paddle 2.x inputs and layouts (issue 15) these kernels do not implement yet are refused by
// name, so a program never gets a result computed without them (docs/paddle_ops.md).
inline void RefuseInputs(const KernelContext& ctx, std::initializer_list<const char*> params) {
  for (const char* p : params)
    if (ctx.HasInput(p))
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(),
                 "': the CUDA kernel does not take input '", p,
                 "' yet; run the op on the CPU (docs/paddle_ops.md)");
}
// conv2d / pool2d's data_format: true for NHWC (channels last), false for NCHW or AnyLayout
// (tide/ops/data_layout.hpp's rule and error).
inline bool ChannelsLastFormat(const KernelContext& ctx) {
  return ctx.HasAttr("data_format") &&
         tide::ops::ChannelsLast(ctx.op_type(), "data_format",
                                 ctx.Attr<std::string>("data_format"));
}

// An NHWC image's dims [N, H, W, C] as [N, C, H, W], for the shape rules, which take NCHW (other
// ranks are left for them to refuse); InLayout turns their NCHW dims back.
inline Dims AsNchwDims(const Dims& d, bool nhwc) {
  return nhwc && d.size() == 4 ? Dims{d[0], d[3], d[1], d[2]} : d;
}
inline Dims InLayout(const Dims& nchw, bool nhwc) {
  return nhwc ? Dims{nchw[0], nchw[2], nchw[3], nchw[1]} : nchw;
}

// Errors a kernel can only see on the device (a label or id out of range, ...). The kernel
// records the first one in the context's error word; the next synchronisation of the stream
// reports it (the host never waits for a kernel just to check its input).
enum DeviceError : int {
  kNoDeviceError = 0,
  kLabelOutOfRange = 1,
  kIdOutOfRange = 2,
  kBeta1PowIsOne = 3,
  kIntegerDivisionByZero = 4,
  kIndexOutOfRange = 5,
  kGatherIndexOutOfRange = 6,
  kScatterIdsOutOfRange = 7,
  kGatherNdIndexOutOfRange = 8,
  kOneHotIdOutOfRange = 9,
  kArgsortIndexOutOfRange = 10,
  kCrossEntropy2LabelOutOfRange = 11,
};
// The message of a DeviceError code (names the op that records it).
const char* DeviceErrorMessage(int code);

// The plugin's state behind a TideCudaContext: the extension is its first member, so kernels
// of this plugin reach the rest from the pointer the extension lookup returns.
struct ContextState {
  TideCudaContext ext;             // must stay first
  int* error_word = nullptr;       // device view of a pinned, mapped int: kernels write a
                                   // DeviceError there
  int* error_word_host = nullptr;  // host view of it: Synchronize reads and clears it
};

// True when TIDE_CUDA_SYNC=1: every launch is followed by a stream synchronisation, so an
// asynchronous fault is reported by the op that caused it (for debugging and sanitizer runs).
bool SyncEveryLaunch();

// The CUDA side of one kernel call (or one transform): device, stream, handles, checks.
class Gpu {
 public:
  explicit Gpu(const KernelContext& ctx);
  // For transforms (casts) that get a device context, not a kernel context.
  Gpu(TideDeviceContext* dctx, const char* what);

  const char* op() const { return op_; }
  const tide::Place& place() const { return place_; }
  cudaStream_t stream() const { return static_cast<cudaStream_t>(ext_->stream); }
  const TideCudaContext& ext() const { return *ext_; }
  int* error_word() const { return reinterpret_cast<const ContextState*>(ext_)->error_word; }
  int sm_count() const { return ext_->multiprocessor_count; }

  // Throws TIDE_INTERNAL (TIDE_RESOURCE_EXHAUSTED when out of memory) naming the op and `call`.
  void Check(cudaError_t e, const char* call) const;
  // After a launch: cudaGetLastError, and with TIDE_CUDA_SYNC=1 a synchronisation.
  void CheckLaunch(const char* kernel) const;

  // Device scratch memory for this kernel call (freed by the core when the kernel returns; the
  // stream orders its reuse). Only for Gpu objects made from a KernelContext.
  template <typename T>
  T* Temp(int64_t count) const {
    TIDE_CHECK(kctx_ != nullptr, "op '", op_, "': no scratch memory outside a kernel");
    return kctx_->TempBuffer<T>(static_cast<size_t>(std::max<int64_t>(count, 1)));
  }

  // A zero-filled buffer of `bytes` on the stream.
  void Zero(void* p, size_t bytes) const {
    if (bytes) Check(cudaMemsetAsync(p, 0, bytes, stream()), "cudaMemsetAsync");
  }
  void CopyD2D(void* dst, const void* src, size_t bytes) const {
    if (bytes && dst != src)
      Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream()),
            "cudaMemcpyAsync (device to device)");
  }
  // Host <- device, waiting for it (for the few kernels that need device values on the host).
  void CopyToHostSync(void* dst, const void* src, size_t bytes) const;
  // Device <- host; `src` may be freed when this returns.
  void CopyFromHost(void* dst, const void* src, size_t bytes) const;

 private:
  void Bind(const void* ext);
  const char* op_ = "";
  const KernelContext* kctx_ = nullptr;
  const TideCudaContext* ext_ = nullptr;
  tide::Place place_;
};

#define TIDE_CUDA_CHECK(gpu, call) (gpu).Check((call), #call)

// A tensor's data on the kernel's device: as it is when it lives there; copied into scratch when
// it lives on the host (the core moves LoDTensor inputs, not a SelectedRows' value).
template <typename T>
const T* DeviceData(const Gpu& g, const Tensor& t) {
  const T* p = t.data<T>();
  if (t.place() == g.place()) return p;
  TIDE_CHECK(t.place().kind_name() == "cpu", "op '", g.op(), "': a tensor on ",
             t.place().ToString(), " reached a kernel on ", g.place().ToString());
  T* d = g.Temp<T>(t.numel());
  g.CopyFromHost(d, p, sizeof(T) * size_t(t.numel()));
  return d;
}

// A one-element input (LearningRate, Beta1Pow, ...) read where it lives: on the device (no
// synchronisation) or, when the core left it on the host, by value.
struct Scalar {
  const void* ptr = nullptr;  // device pointer; nullptr: use `value`
  int is_double = 0;
  double value = 0;
};
// Checks it as tide/ops/optimizer.hpp says (one element, float32 or float64) and wraps it.
Scalar ScalarInput(const KernelContext& ctx, const Gpu& g, const char* param);

// Floating-point kernels; ops whose CPU kernels take integers too add int32_t, int64_t.
#define TIDE_CUDA_FLOAT_TYPES float, double
// The 16-bit floating-point types (float16, bfloat16), computed in float.
#define TIDE_CUDA_LOW_FLOAT_TYPES __half, __nv_bfloat16

// True for __half and __nv_bfloat16 (stored in 16 bits, computed in float).
template <typename T>
constexpr bool kLowFloat = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

}  // namespace tide_cuda

// ---------------------------------------------------------------------------------------------
// Device-side helpers (CUDA sources only).
#ifdef __CUDACC__
namespace tide_cuda {

// The type arithmetic happens in: float for __half and __nv_bfloat16, the type itself otherwise.
template <typename T>
struct AccOf {
  using type = T;
};
template <>
struct AccOf<__half> {
  using type = float;
};
template <>
struct AccOf<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using Acc = typename AccOf<T>::type;

template <typename T>
__device__ __forceinline__ Acc<T> Load(const T* p, int64_t i) {
  return static_cast<Acc<T>>(p[i]);
}
template <typename T, typename A>
__device__ __forceinline__ void Store(T* p, int64_t i, A v) {
  p[i] = static_cast<T>(v);
}

__device__ __forceinline__ float Exp(float x) { return expf(x); }
__device__ __forceinline__ double Exp(double x) { return exp(x); }
__device__ __forceinline__ float Log(float x) { return logf(x); }
__device__ __forceinline__ double Log(double x) { return log(x); }
__device__ __forceinline__ float Sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double Sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float Tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double Tanh(double x) { return tanh(x); }

template <typename T>
__device__ __forceinline__ T ReadScalar(const Scalar& s) {
  if (!s.ptr) return static_cast<T>(s.value);
  return s.is_double ? static_cast<T>(*static_cast<const double*>(s.ptr))
                     : static_cast<T>(*static_cast<const float*>(s.ptr));
}

// A learning rate in tide/ops/optimizer_update.hpp's updates (found there by argument-dependent
// lookup): read on the device. The host never runs those updates with a Scalar.
template <typename T>
__host__ __device__ __forceinline__ T ReadLr(const Scalar& s) {
#ifdef __CUDA_ARCH__
  return ReadScalar<T>(s);
#else
  return static_cast<T>(s.value);
#endif
}

// Records a device error of the stream (see DeviceError). The word is mapped host memory, where
// atomics are not guaranteed: plain stores, so of several errors some one is reported.
__device__ __forceinline__ void RaiseDeviceError(int* word, int code) {
  volatile int* w = word;
  if (w && *w == 0) *w = code;
}

// atomicAdd for every type the kernels accumulate (CUDA has no signed 64-bit overload; two's
// complement makes the unsigned one add signed values right).
__device__ __forceinline__ float AtomicAdd(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double AtomicAdd(double* p, double v) { return atomicAdd(p, v); }
__device__ __forceinline__ int32_t AtomicAdd(int32_t* p, int32_t v) { return atomicAdd(p, v); }
__device__ __forceinline__ int64_t AtomicAdd(int64_t* p, int64_t v) {
  return static_cast<int64_t>(
      atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v)));
}

constexpr int kBlock = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the device, never more than
// the elements need.
inline unsigned GridFor(const Gpu& g, int64_t n, int block = kBlock) {
  const int64_t need = (n + block - 1) / block;
  const int64_t cap = int64_t(std::max(g.sm_count(), 1)) * 32;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(need, cap)));
}

#define TIDE_CUDA_LOOP(i, n)                                                \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(blockDim.x) * gridDim.x)

// Launches kernel<<<GridFor(n), kBlock>>> on the kernel's stream and checks it; nothing for
// n <= 0 (an empty launch is an error in CUDA).
template <typename... KArgs, typename... Args>
void Launch(const Gpu& g, const char* name, int64_t n, void (*kernel)(KArgs...), Args&&... args) {
  if (n <= 0) return;
  kernel<<<GridFor(g, n), kBlock, 0, g.stream()>>>(std::forward<Args>(args)...);
  g.CheckLaunch(name);
}

}  // namespace tide_cuda
#endif  // __CUDACC__
