// gpu.cc: the kernel-side helpers of gpu.h: binding a kernel call to its place's stream, error
// checks that name the op, device-error messages, scalar inputs.
#include "gpu.h"

#include <cstdlib>
#include <cstring>
#include <tide/ops/optimizer.hpp>

namespace tide_cuda {

const char* DeviceErrorMessage(int code) {
  switch (code) {
    case kLabelOutOfRange:
      return "a CUDA kernel of op 'cross_entropy' or 'softmax_with_cross_entropy' found a label "
             "outside [0, number of classes) that is not ignore_index";
    case kIdOutOfRange:
      return "a CUDA kernel of op 'lookup_table' found an id outside [0, rows of W) that is not "
             "padding_idx";
    case kBeta1PowIsOne:
      return "a CUDA kernel of op 'adam' found Beta1Pow = 1, which makes the bias correction "
             "1 / (1 - Beta1Pow) infinite";
    case kIntegerDivisionByZero:
      return "a CUDA kernel of op 'elementwise_div', 'elementwise_mod' or 'elementwise_floordiv' "
             "found an integer division by zero (Y has a 0)";
    case kIndexOutOfRange:
      return "a CUDA kernel of op 'top_k_grad' found an index outside [0, last dim of X)";
    case kGatherIndexOutOfRange:
      return "a CUDA kernel of op 'gather' or 'gather_grad' found an Index outside [0, X's dim "
             "along axis)";
    case kScatterIdsOutOfRange:
      return "a CUDA kernel of op 'scatter' or 'scatter_grad' found an Ids value outside [0, X's "
             "first dim)";
    case kGatherNdIndexOutOfRange:
      return "a CUDA kernel of op 'gather_nd' or 'gather_nd_grad' found an Index value outside "
             "[0, the dim of X it indexes)";
    case kOneHotIdOutOfRange:
      return "a CUDA kernel of op 'one_hot' found an id in X outside [0, depth) (and "
             "allow_out_of_range is false)";
    case kArgsortIndexOutOfRange:
      return "a CUDA kernel of op 'argsort_grad' found an Indices value outside [0, X's dim along "
             "axis)";
    case kCrossEntropy2LabelOutOfRange:
      return "a CUDA kernel of op 'cross_entropy2' or 'cross_entropy2_grad' found a Label outside "
             "[0, number of classes) that is not ignore_index";
    default:
      return "a CUDA kernel reported an unknown device error";
  }
}

bool SyncEveryLaunch() {
  static const bool on = [] {
    const char* v = std::getenv("TIDE_CUDA_SYNC");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

Gpu::Gpu(const KernelContext& ctx) : op_(ctx.op_type()), kctx_(&ctx), place_(ctx.place()) {
  Bind(tide::Host().DeviceContext_Extension(ctx.device_context(), TIDE_CUDA_CONTEXT_EXTENSION));
}

Gpu::Gpu(TideDeviceContext* dctx, const char* what)
    : op_(what), place_(tide::Host().DeviceContext_Place(dctx)) {
  Bind(tide::Host().DeviceContext_Extension(dctx, TIDE_CUDA_CONTEXT_EXTENSION));
}

void Gpu::Bind(const void* ext) {
  if (!ext)
    TIDE_THROW(TIDE_UNAVAILABLE, "op '", op_, "': place ", place_.ToString(), " has no '",
               TIDE_CUDA_CONTEXT_EXTENSION,
               "' extension; these CUDA kernels run only on the CUDA device plugin's places");
  ext_ = static_cast<const TideCudaContext*>(ext);
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    current = -1;
  }
  if (current != ext_->device) Check(cudaSetDevice(ext_->device), "cudaSetDevice");
}

void Gpu::Check(cudaError_t e, const char* call) const {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next op does not report it again
  TIDE_THROW(e == cudaErrorMemoryAllocation ? TIDE_RESOURCE_EXHAUSTED : TIDE_INTERNAL, "op '", op_,
             "' on ", place_.ToString(), ": ", call, ": ", cudaGetErrorName(e), ": ",
             cudaGetErrorString(e));
}

void Gpu::CheckLaunch(const char* kernel) const {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    std::string what = std::string("launching CUDA kernel ") + kernel;
    Check(e, what.c_str());
  }
  if (!SyncEveryLaunch()) return;
  std::string what = std::string("running CUDA kernel ") + kernel + " (TIDE_CUDA_SYNC=1)";
  Check(cudaStreamSynchronize(stream()), what.c_str());
  const auto* state = reinterpret_cast<const ContextState*>(ext_);
  volatile int* word = state->error_word_host;
  if (word && *word) {
    int code = *word;
    *word = 0;
    TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op_, "' on ", place_.ToString(), ": ",
               DeviceErrorMessage(code));
  }
}

void Gpu::CopyToHostSync(void* dst, const void* src, size_t bytes) const {
  if (!bytes) return;
  Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream()),
        "cudaMemcpyAsync (device to host)");
  Check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
}

void Gpu::CopyFromHost(void* dst, const void* src, size_t bytes) const {
  // From pageable memory the runtime stages `src` before returning, so it may be freed after.
  if (bytes)
    Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream()),
          "cudaMemcpyAsync (host to device)");
}

Scalar ScalarInput(const KernelContext& ctx, const Gpu& g, const char* param) {
  Tensor t = ctx.Input(param);
  tide::ops::CheckScalarInput(ctx, param, t);
  Scalar s;
  s.is_double = t.dtype() == TIDE_FP64;
  if (t.place() == g.place()) {
    s.ptr = t.raw_data();
  } else if (t.place().kind_name() == "cpu") {  // host memory: read it here
    s.value = s.is_double ? t.data<double>()[0] : double(t.data<float>()[0]);
  } else {
    TIDE_THROW(TIDE_INVALID_ARGUMENT, tide::ops::InputLabel(ctx, param), " is on ",
               t.place().ToString(), ", the kernel runs on ", g.place().ToString());
  }
  return s;
}

}  // namespace tide_cuda
