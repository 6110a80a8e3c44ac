// conv_ops.cc: conv2d and depthwise_conv2d (NCHW, strides, paddings, dilations, groups) and their
// grads on the GPU through cuDNN, with the shape rules and messages of tide/ops/conv.hpp.
// Algorithms come from cuDNN's heuristics (deterministic ones first, within workspace_size_MB),
// cached per shape. float32 runs on FMA math (no TF32) unless TIDE_CUDA_ALLOW_TF32=1, so results
// match the CPU's.
#include <tide/ops/conv.hpp>

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "cuda_libs.h"
#include "gpu.h"

namespace tide_cuda {
namespace {

using tide::ops::ConvGeom;
using tide::ops::GetConvGeom;

// ---------------------------------------------------------------------------------------------
// cuDNN plumbing.
void CheckDnn(const Gpu& g, cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS)
    TIDE_THROW(s == CUDNN_STATUS_ALLOC_FAILED ? TIDE_RESOURCE_EXHAUSTED : TIDE_INTERNAL, "op '",
               g.op(), "' on ", g.place().ToString(), ": ", call, ": ", CudnnStatusText(s));
}

cudnnHandle_t DnnHandle(const Gpu& g) {
  Cudnn();  // throws with the loader's reason when cuDNN is missing
  if (!g.ext().cudnn)
    TIDE_THROW(TIDE_UNAVAILABLE, "op '", g.op(), "': cuDNN could not be set up on ",
               g.place().ToString(), " (the reason is in the log of its context's creation)");
  return static_cast<cudnnHandle_t>(g.ext().cudnn);
}

bool AllowTf32() {
  const char* v = std::getenv("TIDE_CUDA_ALLOW_TF32");
  return v && std::strcmp(v, "1") == 0;
}

int AsInt(const KernelContext& ctx, int64_t v) {
  TIDE_CHECK(v >= 0 && v <= INT32_MAX, "op '", ctx.op_type(), "': dim ", v,
             " exceeds cuDNN's int range");
  return static_cast<int>(v);
}

// The descriptors of one convolution, destroyed with it.
template <typename T>
class ConvDescriptors {
 public:
  ConvDescriptors(const Gpu& g, const KernelContext& ctx, const ConvGeom& geo) {
    try {
      Set(g, ctx, geo);
    } catch (...) {
      Destroy();
      throw;
    }
  }
  ~ConvDescriptors() { Destroy(); }
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;

  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t f = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

 private:
  void Set(const Gpu& g, const KernelContext& ctx, const ConvGeom& geo) {
    const CudnnApi& api = Cudnn();
    const cudnnDataType_t dt = std::is_same_v<T, float> ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    CheckDnn(g, api.cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    CheckDnn(g, api.cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    CheckDnn(g, api.cudnnCreateFilterDescriptor(&f), "cudnnCreateFilterDescriptor");
    CheckDnn(g, api.cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    CheckDnn(g,
             api.cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, dt, AsInt(ctx, geo.n),
                                            AsInt(ctx, geo.c), AsInt(ctx, geo.h),
                                            AsInt(ctx, geo.w)),
             "cudnnSetTensor4dDescriptor (Input)");
    CheckDnn(g,
             api.cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, dt, AsInt(ctx, geo.n),
                                            AsInt(ctx, geo.m), AsInt(ctx, geo.oh),
                                            AsInt(ctx, geo.ow)),
             "cudnnSetTensor4dDescriptor (Output)");
    CheckDnn(g,
             api.cudnnSetFilter4dDescriptor(f, dt, CUDNN_TENSOR_NCHW, AsInt(ctx, geo.m),
                                            AsInt(ctx, geo.c / geo.groups), AsInt(ctx, geo.kh),
                                            AsInt(ctx, geo.kw)),
             "cudnnSetFilter4dDescriptor");
    CheckDnn(g,
             api.cudnnSetConvolution2dDescriptor(
                 conv, AsInt(ctx, geo.ph), AsInt(ctx, geo.pw), AsInt(ctx, geo.sh),
                 AsInt(ctx, geo.sw), AsInt(ctx, geo.dh), AsInt(ctx, geo.dw),
                 CUDNN_CROSS_CORRELATION, dt),
             "cudnnSetConvolution2dDescriptor");
    CheckDnn(g, api.cudnnSetConvolutionGroupCount(conv, AsInt(ctx, geo.groups)),
             "cudnnSetConvolutionGroupCount");
    CheckDnn(g,
             api.cudnnSetConvolutionMathType(
                 conv, std::is_same_v<T, float> && AllowTf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
             "cudnnSetConvolutionMathType");
  }
  void Destroy() noexcept {
    if (!x && !y && !f && !conv) return;
    const CudnnApi& api = Cudnn();  // loaded, or no descriptor would exist
    if (conv) api.cudnnDestroyConvolutionDescriptor(conv);
    if (f) api.cudnnDestroyFilterDescriptor(f);
    if (y) api.cudnnDestroyTensorDescriptor(y);
    if (x) api.cudnnDestroyTensorDescriptor(x);
    conv = nullptr;
    f = nullptr;
    x = y = nullptr;
  }
};

// An algorithm and its workspace, chosen once per (direction, shape, dtype, device, limit).
struct Choice {
  int algo = 0;
  size_t workspace = 0;
};
using ChoiceKey = std::array<int64_t, 20>;

ChoiceKey KeyOf(int direction, TideDataType dt, const ConvGeom& geo, int device, size_t limit) {
  return {direction, dt,      geo.n,  geo.c,  geo.h,  geo.w,      geo.m,  geo.kh, geo.kw,
          geo.sh,    geo.sw,  geo.ph, geo.pw, geo.dh, geo.dw,     geo.groups, device,
          AllowTf32() ? 1 : 0, static_cast<int64_t>(limit >> 20), 0};
}

// cuDNN pads both sides alike: asymmetric paddings (Fluid's 4-value paddings, or SAME with an
// odd total) run on the CPU kernel instead.
void CheckSymmetric(const char* op, const ConvGeom& geo) {
  if (!geo.symmetric())
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "': the cuDNN kernel needs equal paddings on both "
               "sides, got [", geo.ph, ", ", geo.ph_end, ", ", geo.pw, ", ", geo.pw_end,
               "] (top, bottom, left, right)");
}

std::mutex& CacheMutex() {
  static std::mutex mu;
  return mu;
}
std::map<ChoiceKey, Choice>& Cache() {
  static auto* cache = new std::map<ChoiceKey, Choice>;  // never destroyed: used at exit
  return *cache;
}

// Picks from cuDNN's heuristic ranking: the first deterministic algorithm that runs within
// `limit` bytes of workspace, else the first that runs within it. `Perf` is the perf struct,
// `get` fills a ranking, `size` returns an algorithm's workspace.
template <typename Perf, typename Get, typename Size>
Choice Choose(const Gpu& g, const ChoiceKey& key, size_t limit, const char* what, Get get,
              Size size) {
  {
    std::lock_guard<std::mutex> lock(CacheMutex());
    auto it = Cache().find(key);
    if (it != Cache().end()) return it->second;
  }
  Perf perf[16];
  int returned = 0;
  CheckDnn(g, get(perf, 16, &returned), what);
  const Perf* pick = nullptr;
  for (int pass = 0; pass < 2 && !pick; ++pass)
    for (int i = 0; i < returned && !pick; ++i) {
      const Perf& p = perf[i];
      if (p.status != CUDNN_STATUS_SUCCESS || p.memory > limit) continue;
      if (pass == 0 && p.determinism != CUDNN_DETERMINISTIC) continue;
      pick = &p;
    }
  TIDE_CHECK(pick != nullptr, "op '", g.op(), "': cuDNN (", what,
             ") offers no algorithm for this convolution within workspace_size_MB = ",
             limit >> 20);
  Choice c;
  c.algo = static_cast<int>(pick->algo);
  CheckDnn(g, size(pick->algo, &c.workspace), "cudnnGetConvolution*WorkspaceSize");
  std::lock_guard<std::mutex> lock(CacheMutex());
  Cache()[key] = c;
  return c;
}

size_t WorkspaceLimit(const KernelContext& ctx) {
  int64_t mb = ctx.Attr<int32_t>("workspace_size_MB");
  return static_cast<size_t>(std::max<int64_t>(mb, 0)) << 20;
}

template <typename T>
struct Scalars {
  T one = T(1), zero = T(0);
};

// ---------------------------------------------------------------------------------------------
template <typename T>
void ConvKernel(KernelContext& ctx) {
  RequireNchw(ctx);
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  ConvGeom geo = GetConvGeom(ctx, op, x.dims(), f.dims());
  CheckSymmetric(op, geo);
  const T* xd = x.data<T>();
  const T* fd = f.data<T>();
  T* od = out.mutable_data<T>(geo.out_dims(), g.place());
  if (out.numel() == 0) return;
  if (x.numel() == 0 || f.numel() == 0) {  // an empty sum (no channels or an empty filter)
    g.Zero(od, sizeof(T) * size_t(out.numel()));
    return;
  }
  cudnnHandle_t h = DnnHandle(g);
  const CudnnApi& api = Cudnn();
  ConvDescriptors<T> d(g, ctx, geo);
  const size_t limit = WorkspaceLimit(ctx);
  Choice c = Choose<cudnnConvolutionFwdAlgoPerf_t>(
      g, KeyOf(0, tide::DataTypeOf<T>(), geo, g.ext().device, limit), limit,
      "cudnnGetConvolutionForwardAlgorithm_v7",
      [&](cudnnConvolutionFwdAlgoPerf_t* p, int n, int* got) {
        return api.cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.f, d.conv, d.y, n, got, p);
      },
      [&](cudnnConvolutionFwdAlgo_t a, size_t* ws) {
        return api.cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.f, d.conv, d.y, a, ws);
      });
  void* ws = c.workspace ? g.Temp<char>(static_cast<int64_t>(c.workspace)) : nullptr;
  Scalars<T> s;
  CheckDnn(g,
           api.cudnnConvolutionForward(h, &s.one, d.x, xd, d.f, fd, d.conv,
                                       static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), ws,
                                       c.workspace, &s.zero, d.y, od),
           "cudnnConvolutionForward");
}

template <typename T>
void ConvGradKernel(KernelContext& ctx) {
  RequireNchw(ctx);
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  Tensor dout = ctx.Input(GradVarName("Output").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("Input").c_str());
  Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str());
  ConvGeom geo = GetConvGeom(ctx, op, x.dims(), f.dims());
  CheckSymmetric(op, geo);
  tide::ops::CheckGradDims(op, "Output@GRAD", dout.dims(), geo.out_dims());
  const T* xd = x.data<T>();
  const T* fd = f.data<T>();
  const T* gd = dout.data<T>();
  T* dxd = dx ? dx.mutable_data<T>(x.dims(), g.place()) : nullptr;
  T* dfd = df ? df.mutable_data<T>(f.dims(), g.place()) : nullptr;
  if (!dxd && !dfd) return;
  if (dout.numel() == 0 || x.numel() == 0 || f.numel() == 0) {  // empty sums: zero grads
    if (dxd) g.Zero(dxd, sizeof(T) * size_t(x.numel()));
    if (dfd) g.Zero(dfd, sizeof(T) * size_t(f.numel()));
    return;
  }
  cudnnHandle_t h = DnnHandle(g);
  const CudnnApi& api = Cudnn();
  ConvDescriptors<T> d(g, ctx, geo);
  const size_t limit = WorkspaceLimit(ctx);
  Scalars<T> s;
  if (dxd) {
    Choice c = Choose<cudnnConvolutionBwdDataAlgoPerf_t>(
        g, KeyOf(1, tide::DataTypeOf<T>(), geo, g.ext().device, limit), limit,
        "cudnnGetConvolutionBackwardDataAlgorithm_v7",
        [&](cudnnConvolutionBwdDataAlgoPerf_t* p, int n, int* got) {
          return api.cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.f, d.y, d.conv, d.x, n, got,
                                                                 p);
        },
        [&](cudnnConvolutionBwdDataAlgo_t a, size_t* ws) {
          return api.cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.f, d.y, d.conv, d.x, a, ws);
        });
    void* ws = c.workspace ? g.Temp<char>(static_cast<int64_t>(c.workspace)) : nullptr;
    CheckDnn(g,
             api.cudnnConvolutionBackwardData(h, &s.one, d.f, fd, d.y, gd, d.conv,
                                              static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo),
                                              ws, c.workspace, &s.zero, d.x, dxd),
             "cudnnConvolutionBackwardData");
  }
  if (dfd) {
    Choice c = Choose<cudnnConvolutionBwdFilterAlgoPerf_t>(
        g, KeyOf(2, tide::DataTypeOf<T>(), geo, g.ext().device, limit), limit,
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
        [&](cudnnConvolutionBwdFilterAlgoPerf_t* p, int n, int* got) {
          return api.cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.f, n,
                                                                   got, p);
        },
        [&](cudnnConvolutionBwdFilterAlgo_t a, size_t* ws) {
          return api.cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.f, a,
                                                                    ws);
        });
    void* ws = c.workspace ? g.Temp<char>(static_cast<int64_t>(c.workspace)) : nullptr;
    CheckDnn(g,
             api.cudnnConvolutionBackwardFilter(
                 h, &s.one, d.x, xd, d.y, gd, d.conv,
                 static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), ws, c.workspace, &s.zero,
                 d.f, dfd),
             "cudnnConvolutionBackwardFilter");
  }
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

TIDE_REGISTER_KERNEL("conv2d", "gpu", ConvKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("conv2d_grad", "gpu", ConvGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d", "gpu", ConvKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d_grad", "gpu", ConvGradKernel, TIDE_CUDA_FLOAT_TYPES);
