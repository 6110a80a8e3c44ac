// conv_ops.cc: conv2d and depthwise_conv2d (NCHW, strides, paddings, dilations, groups) and their
// grads on the GPU through cuDNN, with ops_nn's shape rules and messages. Algorithms come from
// cuDNN's heuristics (deterministic ones first, within workspace_size_MB), cached per shape.
// float32 runs on FMA math (no TF32) unless TIDE_CUDA_ALLOW_TF32=1, so results match the CPU's.
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "cuda_libs.h"
#include "gpu.h"

namespace tide_cuda {
namespace {

// ---------------------------------------------------------------------------------------------
// Geometry, as ops_nn/conv_op.cc reads and checks it.
struct ConvGeom {
  int64_t n, c, h, w;  // Input
  int64_t m, kh, kw;   // Filter [m, c / groups, kh, kw]
  int64_t oh, ow;      // Output spatial dims
  int64_t sh, sw, ph, pw, dh, dw, groups;
};

int64_t ConvOutSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil) {
  const int64_t extent = dil * (k - 1) + 1;
  return (in + 2 * pad - extent) / stride + 1;
}

void CheckPair(const char* op, const char* name, const std::vector<int32_t>& v) {
  TIDE_CHECK(v.size() == 2, "op '", op, "': attribute '", name, "' needs 2 values (h, w), got ",
             v.size());
}

ConvGeom GetGeom(const KernelContext& ctx, const char* op, const Dims& x, const Dims& f) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': Input must be 4-D [N, C, H, W], got ",
             tide::ToString(x));
  TIDE_CHECK(f.size() == 4, "op '", op, "': Filter must be 4-D [M, C/groups, kh, kw], got ",
             tide::ToString(f));
  auto strides = ctx.Attr<std::vector<int32_t>>("strides");
  auto pads = ctx.Attr<std::vector<int32_t>>("paddings");
  auto dils = ctx.Attr<std::vector<int32_t>>("dilations");
  CheckPair(op, "strides", strides);
  CheckPair(op, "paddings", pads);
  CheckPair(op, "dilations", dils);
  ConvGeom g{};
  g.groups = ctx.Attr<int32_t>("groups");
  TIDE_CHECK(g.groups >= 1, "op '", op, "': groups must be >= 1, got ", g.groups);
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.m = f[0];
  g.kh = f[2];
  g.kw = f[3];
  g.sh = strides[0];
  g.sw = strides[1];
  g.ph = pads[0];
  g.pw = pads[1];
  g.dh = dils[0];
  g.dw = dils[1];
  TIDE_CHECK(g.sh > 0 && g.sw > 0, "op '", op, "': strides must be > 0, got [", g.sh, ", ", g.sw,
             "]");
  TIDE_CHECK(g.dh > 0 && g.dw > 0, "op '", op, "': dilations must be > 0, got [", g.dh, ", ", g.dw,
             "]");
  TIDE_CHECK(g.ph >= 0 && g.pw >= 0, "op '", op, "': paddings must be >= 0, got [", g.ph, ", ",
             g.pw, "]");
  TIDE_CHECK(g.c == f[1] * g.groups, "op '", op, "': Input ", tide::ToString(x), " has ", g.c,
             " channels but Filter ", tide::ToString(f), " expects C/groups = ", f[1],
             " with groups = ", g.groups, " (", f[1] * g.groups, " channels)");
  TIDE_CHECK(g.m % g.groups == 0, "op '", op, "': Filter ", tide::ToString(f), " has ", g.m,
             " output channels, not divisible by groups = ", g.groups);
  g.oh = ConvOutSize(g.h, g.kh, g.ph, g.sh, g.dh);
  g.ow = ConvOutSize(g.w, g.kw, g.pw, g.sw, g.dw);
  TIDE_CHECK(g.oh > 0 && g.ow > 0, "op '", op, "': the output would be empty: Input ",
             tide::ToString(x), ", Filter ", tide::ToString(f), ", strides [", g.sh, ", ", g.sw,
             "], paddings [", g.ph, ", ", g.pw, "], dilations [", g.dh, ", ", g.dw,
             "] give output size ", g.oh, " x ", g.ow);
  return g;
}

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
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  ConvGeom geo = GetGeom(ctx, op, x.dims(), f.dims());
  const T* xd = x.data<T>();
  const T* fd = f.data<T>();
  T* od = out.mutable_data<T>({geo.n, geo.m, geo.oh, geo.ow}, g.place());
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
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  Tensor dout = ctx.Input(GradVarName("Output").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("Input").c_str());
  Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str());
  ConvGeom geo = GetGeom(ctx, op, x.dims(), f.dims());
  const Dims out_dims{geo.n, geo.m, geo.oh, geo.ow};
  TIDE_CHECK(dout.dims() == out_dims, "op '", op, "': Output@GRAD has dims ",
             tide::ToString(dout.dims()), ", expected ", tide::ToString(out_dims));
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
