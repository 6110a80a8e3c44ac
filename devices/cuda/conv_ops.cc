// conv_ops.cc: conv2d, depthwise_conv2d and conv2d_transpose (NCHW or NHWC data_format, strides,
// paddings, dilations, groups) and their grads on the GPU through cuDNN, with the shape rules and
// messages of tide/ops/conv.hpp. NHWC Input / Output are described to cuDNN as NHWC tensors (the
// Filter stays [M, C/groups, kh, kw], cuDNN's NCHW filter format): no transposes. Paddings cuDNN
// cannot express (unequal on the two sides: Fluid's 4-value paddings, SAME with an odd total) are
// made explicit in a padded copy of Input in scratch memory (image_pad.h), which an unpadded
// convolution then reads. Algorithms come from cuDNN's heuristics (deterministic ones first, within
// workspace_size_MB), cached per shape; an NHWC convolution for which cuDNN offers none is
// declined (the CPU kernel runs it). float32 runs on FMA math (no TF32) unless
// TIDE_CUDA_ALLOW_TF32=1, so results match the CPU's. conv2d and depthwise_conv2d (+ grads) also
// take float16 and bfloat16: CUDNN_DATA_HALF / CUDNN_DATA_BFLOAT16 tensors, float32 compute in the
// convolution descriptor, CUDNN_TENSOR_OP_MATH (tensor cores), float scaling factors; where cuDNN's
// heuristics offer no algorithm for them, the op is declined (the core runs the float32 kernel on
// widened data).
#include <array>
#include <map>
#include <mutex>
#include <tide/ops/conv.hpp>
#include <tide/ops/conv_transpose.hpp>
#include <type_traits>

#include "dnn.h"
#include "image_pad.h"

namespace tide_cuda {
namespace {

using tide::ops::ConvGeom;
using tide::ops::GetConvGeom;

// ---------------------------------------------------------------------------------------------
// cuDNN plumbing (CheckDnn, DnnHandle, DnnType, AllowTf32, AsInt: dnn.h).

// The convolution's compute type: T's for float and double, float for the 16-bit types (cuDNN's
// "pseudo half" configuration: 16-bit data, float32 accumulation).
template <typename T>
constexpr cudnnDataType_t DnnComputeType() {
  return kLowFloat<T> ? CUDNN_DATA_FLOAT : DnnType<T>();
}
// Math: FMA for float (TF32 tensor cores only with TIDE_CUDA_ALLOW_TF32=1) and double, tensor
// cores for the 16-bit types.
template <typename T>
cudnnMathType_t DnnMathType() {
  if constexpr (kLowFloat<T>)
    return CUDNN_TENSOR_OP_MATH;
  else
    return std::is_same_v<T, float> && AllowTf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

// The descriptors of one convolution, destroyed with it.
template <typename T>
class ConvDescriptors {
 public:
  ConvDescriptors(const Gpu& g, const KernelContext& ctx, const ConvGeom& geo, bool nhwc) {
    try {
      Set(g, ctx, geo, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW);
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
  // Input and Output in `layout` (n, c, h, w are the logical dims either way); the Filter is
  // always [M, C/groups, kh, kw] (cuDNN's NCHW filter format).
  void Set(const Gpu& g, const KernelContext& ctx, const ConvGeom& geo,
           cudnnTensorFormat_t layout) {
    const CudnnApi& api = Cudnn();
    const cudnnDataType_t dt = DnnType<T>();
    CheckDnn(g, api.cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    CheckDnn(g, api.cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    CheckDnn(g, api.cudnnCreateFilterDescriptor(&f), "cudnnCreateFilterDescriptor");
    CheckDnn(g, api.cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    CheckDnn(g,
             api.cudnnSetTensor4dDescriptor(x, layout, dt, AsInt(ctx, geo.n), AsInt(ctx, geo.c),
                                            AsInt(ctx, geo.h), AsInt(ctx, geo.w)),
             "cudnnSetTensor4dDescriptor (Input)");
    CheckDnn(g,
             api.cudnnSetTensor4dDescriptor(y, layout, dt, AsInt(ctx, geo.n), AsInt(ctx, geo.m),
                                            AsInt(ctx, geo.oh), AsInt(ctx, geo.ow)),
             "cudnnSetTensor4dDescriptor (Output)");
    CheckDnn(g,
             api.cudnnSetFilter4dDescriptor(f, dt, CUDNN_TENSOR_NCHW, AsInt(ctx, geo.m),
                                            AsInt(ctx, geo.c / geo.groups), AsInt(ctx, geo.kh),
                                            AsInt(ctx, geo.kw)),
             "cudnnSetFilter4dDescriptor");
    CheckDnn(g,
             api.cudnnSetConvolution2dDescriptor(conv, AsInt(ctx, geo.ph), AsInt(ctx, geo.pw),
                                                 AsInt(ctx, geo.sh), AsInt(ctx, geo.sw),
                                                 AsInt(ctx, geo.dh), AsInt(ctx, geo.dw),
                                                 CUDNN_CROSS_CORRELATION, DnnComputeType<T>()),
             "cudnnSetConvolution2dDescriptor");
    CheckDnn(g, api.cudnnSetConvolutionGroupCount(conv, AsInt(ctx, geo.groups)),
             "cudnnSetConvolutionGroupCount");
    CheckDnn(g, api.cudnnSetConvolutionMathType(conv, DnnMathType<T>()),
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

ChoiceKey KeyOf(int direction, TideDataType dt, const ConvGeom& geo, bool nhwc, int device,
                size_t limit) {
  return {direction,
          dt,
          geo.n,
          geo.c,
          geo.h,
          geo.w,
          geo.m,
          geo.kh,
          geo.kw,
          geo.sh,
          geo.sw,
          geo.ph,
          geo.pw,
          geo.dh,
          geo.dw,
          geo.groups,
          device,
          AllowTf32() ? 1 : 0,
          static_cast<int64_t>(limit >> 20),
          nhwc ? 1 : 0};
}

// The convolution cuDNN runs: Fluid's geometry, or, where the paddings differ between the two
// sides (cuDNN pads both alike), the same geometry over Input padded explicitly, unpadded.
struct ConvRun {
  ConvGeom geo;     // what cuDNN is told
  bool padded;      // Input is copied into a padded buffer first
  ImageDims input;  // the op's Input
  ImagePads pads;
};

ConvRun PlanConv(const ConvGeom& geo, bool nhwc) {
  ConvRun r{geo,
            !geo.symmetric(),
            {geo.n, geo.c, geo.h, geo.w, nhwc},
            {geo.ph, geo.ph_end, geo.pw, geo.pw_end}};
  if (r.padded) {
    r.geo.h = geo.h + geo.ph + geo.ph_end;
    r.geo.w = geo.w + geo.pw + geo.pw_end;
    r.geo.ph = r.geo.ph_end = r.geo.pw = r.geo.pw_end = 0;
  }
  return r;
}

// Input as cuDNN reads it: the tensor's data, or its padded copy in scratch memory.
template <typename T>
const T* RunInput(const Gpu& g, const ConvRun& run, const Tensor& x) {
  if (!run.padded) return x.data<T>();
  T* p = g.Temp<T>(run.geo.n * run.geo.c * run.geo.h * run.geo.w);
  PadImages(g, x.data<T>(), run.input, run.pads, p);
  return p;
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
// `get` fills a ranking, `size` returns an algorithm's workspace. With none, `decline` (an NHWC or
// a 16-bit convolution, whose support in cuDNN depends on its version) declines the op, else it
// is an error.
template <typename Perf, typename Get, typename Size>
Choice Choose(const Gpu& g, const ChoiceKey& key, size_t limit, bool nhwc, bool decline,
              const char* what, Get get, Size size) {
  {
    std::lock_guard<std::mutex> lock(CacheMutex());
    auto it = Cache().find(key);
    if (it != Cache().end()) return it->second;
  }
  Perf perf[16];
  int returned = 0;
  const cudnnStatus_t got = get(perf, 16, &returned);
  // cuDNN may refuse the whole configuration up front (NOT_SUPPORTED, in cuDNN 9 a family of
  // codes 3000-3999) instead of ranking algorithms that all fail: declined like an empty ranking.
  const bool not_supported = got == CUDNN_STATUS_NOT_SUPPORTED
#if CUDNN_MAJOR >= 9
                             || (int(got) >= 3000 && int(got) < 4000)
#endif
      ;
  if (not_supported && decline)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", g.op(), "': cuDNN (", what, ") does not support this ",
               nhwc ? "NHWC " : "", tide::DataTypeName(static_cast<TideDataType>(key[1])),
               " convolution: ", CudnnStatusText(got));
  CheckDnn(g, got, what);
  const Perf* pick = nullptr;
  for (int pass = 0; pass < 2 && !pick; ++pass)
    for (int i = 0; i < returned && !pick; ++i) {
      const Perf& p = perf[i];
      if (p.status != CUDNN_STATUS_SUCCESS || p.memory > limit) continue;
      if (pass == 0 && p.determinism != CUDNN_DETERMINISTIC) continue;
      pick = &p;
    }
  if (!pick && decline)  // cuDNN's NHWC and 16-bit support varies by version and type: the CPU
                         // kernel (or the float32 one) runs it
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", g.op(), "': cuDNN (", what,
               ") offers no algorithm for this ", nhwc ? "NHWC " : "",
               tide::DataTypeName(static_cast<TideDataType>(key[1])),
               " convolution within workspace_size_MB = ", limit >> 20);
  TIDE_CHECK(pick != nullptr, "op '", g.op(), "': cuDNN (", what,
             ") offers no algorithm for this convolution within workspace_size_MB = ", limit >> 20);
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

// cuDNN's alpha and beta: double for double data, float otherwise (the 16-bit types too).
template <typename T>
struct Scalars {
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  S one = S(1), zero = S(0);
};

// The algorithm of each cuDNN pass over one geometry (a conv2d's, or the conv2d whose Input
// gradient a conv2d_transpose is: the same passes, cached alike).
template <typename T>
Choice ChooseForward(const Gpu& g, cudnnHandle_t h, const ConvDescriptors<T>& d, const ConvRun& run,
                     bool nhwc, size_t limit) {
  const CudnnApi& api = Cudnn();
  return Choose<cudnnConvolutionFwdAlgoPerf_t>(
      g, KeyOf(0, tide::DataTypeOf<T>(), run.geo, nhwc, g.ext().device, limit), limit, nhwc,
      nhwc || kLowFloat<T>, "cudnnGetConvolutionForwardAlgorithm_v7",
      [&](cudnnConvolutionFwdAlgoPerf_t* p, int n, int* got) {
        return api.cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.f, d.conv, d.y, n, got, p);
      },
      [&](cudnnConvolutionFwdAlgo_t a, size_t* ws) {
        return api.cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.f, d.conv, d.y, a, ws);
      });
}
template <typename T>
Choice ChooseBackwardData(const Gpu& g, cudnnHandle_t h, const ConvDescriptors<T>& d,
                          const ConvRun& run, bool nhwc, size_t limit) {
  const CudnnApi& api = Cudnn();
  return Choose<cudnnConvolutionBwdDataAlgoPerf_t>(
      g, KeyOf(1, tide::DataTypeOf<T>(), run.geo, nhwc, g.ext().device, limit), limit, nhwc,
      nhwc || kLowFloat<T>, "cudnnGetConvolutionBackwardDataAlgorithm_v7",
      [&](cudnnConvolutionBwdDataAlgoPerf_t* p, int n, int* got) {
        return api.cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.f, d.y, d.conv, d.x, n, got, p);
      },
      [&](cudnnConvolutionBwdDataAlgo_t a, size_t* ws) {
        return api.cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.f, d.y, d.conv, d.x, a, ws);
      });
}
template <typename T>
Choice ChooseBackwardFilter(const Gpu& g, cudnnHandle_t h, const ConvDescriptors<T>& d,
                            const ConvRun& run, bool nhwc, size_t limit) {
  const CudnnApi& api = Cudnn();
  return Choose<cudnnConvolutionBwdFilterAlgoPerf_t>(
      g, KeyOf(2, tide::DataTypeOf<T>(), run.geo, nhwc, g.ext().device, limit), limit, nhwc,
      nhwc || kLowFloat<T>, "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
      [&](cudnnConvolutionBwdFilterAlgoPerf_t* p, int n, int* got) {
        return api.cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.f, n, got,
                                                                 p);
      },
      [&](cudnnConvolutionBwdFilterAlgo_t a, size_t* ws) {
        return api.cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.f, a, ws);
      });
}

// The passes themselves, each with its chosen algorithm and workspace: y = conv(x); dx (the
// padded Input's when the run pads, cropped into `dx`) from dy; df from x and dy.
template <typename T>
void RunForward(const Gpu& g, cudnnHandle_t h, const ConvDescriptors<T>& d, const Choice& c,
                const T* x, const T* f, T* y) {
  void* ws = c.workspace ? g.Temp<char>(static_cast<int64_t>(c.workspace)) : nullptr;
  Scalars<T> s;
  CheckDnn(g,
           Cudnn().cudnnConvolutionForward(h, &s.one, d.x, x, d.f, f, d.conv,
                                           static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), ws,
                                           c.workspace, &s.zero, d.y, y),
           "cudnnConvolutionForward");
}
template <typename T>
void RunBackwardData(const Gpu& g, cudnnHandle_t h, const ConvDescriptors<T>& d, const Choice& c,
                     const ConvRun& run, const T* f, const T* dy, T* dx) {
  // Padded explicitly: the grad of the padded Input, then its inner box.
  T* target = run.padded ? g.Temp<T>(run.geo.n * run.geo.c * run.geo.h * run.geo.w) : dx;
  void* ws = c.workspace ? g.Temp<char>(static_cast<int64_t>(c.workspace)) : nullptr;
  Scalars<T> s;
  CheckDnn(g,
           Cudnn().cudnnConvolutionBackwardData(h, &s.one, d.f, f, d.y, dy, d.conv,
                                                static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo),
                                                ws, c.workspace, &s.zero, d.x, target),
           "cudnnConvolutionBackwardData");
  if (run.padded) CropImages(g, static_cast<const T*>(target), run.input, run.pads, dx);
}
template <typename T>
void RunBackwardFilter(const Gpu& g, cudnnHandle_t h, const ConvDescriptors<T>& d, const Choice& c,
                       const T* x, const T* dy, T* df) {
  void* ws = c.workspace ? g.Temp<char>(static_cast<int64_t>(c.workspace)) : nullptr;
  Scalars<T> s;
  CheckDnn(
      g,
      Cudnn().cudnnConvolutionBackwardFilter(h, &s.one, d.x, x, d.y, dy, d.conv,
                                             static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo),
                                             ws, c.workspace, &s.zero, d.f, df),
      "cudnnConvolutionBackwardFilter");
}

// ---------------------------------------------------------------------------------------------
template <typename T>
void ConvKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  const bool nhwc = ChannelsLastFormat(ctx);
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  const ConvGeom geo = GetConvGeom(ctx, op, AsNchwDims(x.dims(), nhwc), f.dims());
  const Dims out_dims = InLayout(geo.out_dims(), nhwc);
  if (tide::ops::DimsProduct(out_dims) == 0) {
    out.mutable_data<T>(out_dims, g.place());
    return;
  }
  if (x.numel() == 0 || f.numel() == 0) {  // an empty sum (no channels or an empty filter)
    T* od = out.mutable_data<T>(out_dims, g.place());
    g.Zero(od, sizeof(T) * size_t(out.numel()));
    return;
  }
  const ConvRun run = PlanConv(geo, nhwc);
  cudnnHandle_t h = DnnHandle(g);
  ConvDescriptors<T> d(g, ctx, run.geo, nhwc);
  const Choice c = ChooseForward(g, h, d, run, nhwc, WorkspaceLimit(ctx));
  // Chosen (or declined) before anything is written.
  const T* xd = RunInput<T>(g, run, x);
  RunForward(g, h, d, c, xd, f.data<T>(), out.mutable_data<T>(out_dims, g.place()));
}

template <typename T>
void ConvGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  const bool nhwc = ChannelsLastFormat(ctx);
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  Tensor dout = ctx.Input(GradVarName("Output").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("Input").c_str());
  Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str());
  const ConvGeom geo = GetConvGeom(ctx, op, AsNchwDims(x.dims(), nhwc), f.dims());
  tide::ops::CheckGradDims(op, "Output@GRAD", dout.dims(), InLayout(geo.out_dims(), nhwc));
  if (!dx && !df) return;
  if (dout.numel() == 0 || x.numel() == 0 || f.numel() == 0) {  // empty sums: zero grads
    if (dx) g.Zero(dx.mutable_data<T>(x.dims(), g.place()), sizeof(T) * size_t(x.numel()));
    if (df) g.Zero(df.mutable_data<T>(f.dims(), g.place()), sizeof(T) * size_t(f.numel()));
    return;
  }
  const ConvRun run = PlanConv(geo, nhwc);
  cudnnHandle_t h = DnnHandle(g);
  ConvDescriptors<T> d(g, ctx, run.geo, nhwc);
  const size_t limit = WorkspaceLimit(ctx);
  // Both algorithms are chosen (or the op declined) before anything is written.
  Choice data_algo, filter_algo;
  if (dx) data_algo = ChooseBackwardData(g, h, d, run, nhwc, limit);
  if (df) filter_algo = ChooseBackwardFilter(g, h, d, run, nhwc, limit);
  const T* gd = dout.data<T>();
  if (dx)
    RunBackwardData(g, h, d, data_algo, run, f.data<T>(), gd,
                    dx.mutable_data<T>(x.dims(), g.place()));
  if (df)
    RunBackwardFilter(g, h, d, filter_algo, RunInput<T>(g, run, x), gd,
                      df.mutable_data<T>(f.dims(), g.place()));
}

// ---------------------------------------------------------------------------------------------
// conv2d_transpose: the Input gradient of the conv2d that takes its Output back to its Input
// (tide/ops/conv_transpose.hpp's geometry), so the forward is that conv's backward-data pass,
// Input@GRAD its forward of Output@GRAD and Filter@GRAD its filter pass with Output@GRAD as the
// conv's input and this op's Input as its output gradient.
template <typename T>
void ConvTransposeKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  const bool nhwc = ChannelsLastFormat(ctx);
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  if (ctx.HasInput("OutputSize") || ctx.HasInput("OutputSizeTensor"))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
               "': an output size computed at run time (OutputSize / OutputSizeTensor) runs on "
               "the CPU kernel");
  const ConvGeom geo =
      tide::ops::GetConvTransposeGeom(ctx, op, AsNchwDims(x.dims(), nhwc), f.dims());
  const Dims out_dims = InLayout(tide::ops::ConvTransposeOutDims(geo), nhwc);
  if (tide::ops::DimsProduct(out_dims) == 0) {
    out.mutable_data<T>(out_dims, g.place());
    return;
  }
  if (x.numel() == 0 || f.numel() == 0) {  // an empty sum
    g.Zero(out.mutable_data<T>(out_dims, g.place()), sizeof(T) * size_t(out.numel()));
    return;
  }
  const ConvRun run = PlanConv(geo, nhwc);
  cudnnHandle_t h = DnnHandle(g);
  ConvDescriptors<T> d(g, ctx, run.geo, nhwc);
  const Choice c = ChooseBackwardData(g, h, d, run, nhwc, WorkspaceLimit(ctx));
  RunBackwardData(g, h, d, c, run, f.data<T>(), x.data<T>(),
                  out.mutable_data<T>(out_dims, g.place()));
}

template <typename T>
void ConvTransposeGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  const bool nhwc = ChannelsLastFormat(ctx);
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter");
  Tensor dout = ctx.Input(GradVarName("Output").c_str());
  Tensor dx = ctx.OptionalOutput(GradVarName("Input").c_str());
  Tensor df = ctx.OptionalOutput(GradVarName("Filter").c_str());
  if (ctx.HasInput("OutputSize") || ctx.HasInput("OutputSizeTensor"))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
               "': an output size computed at run time (OutputSize / OutputSizeTensor) runs on "
               "the CPU kernel");
  const ConvGeom geo =
      tide::ops::GetConvTransposeGeom(ctx, op, AsNchwDims(x.dims(), nhwc), f.dims());
  tide::ops::CheckGradDims(op, "Output@GRAD", dout.dims(),
                           InLayout(tide::ops::ConvTransposeOutDims(geo), nhwc));
  if (!dx && !df) return;
  if (dout.numel() == 0 || x.numel() == 0 || f.numel() == 0) {  // empty sums: zero grads
    if (dx) g.Zero(dx.mutable_data<T>(x.dims(), g.place()), sizeof(T) * size_t(x.numel()));
    if (df) g.Zero(df.mutable_data<T>(f.dims(), g.place()), sizeof(T) * size_t(f.numel()));
    return;
  }
  const ConvRun run = PlanConv(geo, nhwc);
  cudnnHandle_t h = DnnHandle(g);
  ConvDescriptors<T> d(g, ctx, run.geo, nhwc);
  const size_t limit = WorkspaceLimit(ctx);
  Choice fwd_algo, filter_algo;
  if (dx) fwd_algo = ChooseForward(g, h, d, run, nhwc, limit);
  if (df) filter_algo = ChooseBackwardFilter(g, h, d, run, nhwc, limit);
  const T* gd = RunInput<T>(g, run, dout);  // the conv's input: Output@GRAD, padded if need be
  if (dx) RunForward(g, h, d, fwd_algo, gd, f.data<T>(), dx.mutable_data<T>(x.dims(), g.place()));
  if (df)
    RunBackwardFilter(g, h, d, filter_algo, gd, x.data<T>(),
                      df.mutable_data<T>(f.dims(), g.place()));
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

#define TIDE_CUDA_CONV_TYPES TIDE_CUDA_FLOAT_TYPES, TIDE_CUDA_LOW_FLOAT_TYPES
TIDE_REGISTER_KERNEL("conv2d", "gpu", ConvKernel, TIDE_CUDA_CONV_TYPES);
TIDE_REGISTER_KERNEL("conv2d_grad", "gpu", ConvGradKernel, TIDE_CUDA_CONV_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d", "gpu", ConvKernel, TIDE_CUDA_CONV_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d_grad", "gpu", ConvGradKernel, TIDE_CUDA_CONV_TYPES);
TIDE_REGISTER_KERNEL("conv2d_transpose", "gpu", ConvTransposeKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("conv2d_transpose_grad", "gpu", ConvTransposeGradKernel,
                     TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d_transpose", "gpu", ConvTransposeKernel,
                     TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("depthwise_conv2d_transpose_grad", "gpu", ConvTransposeGradKernel,
                     TIDE_CUDA_FLOAT_TYPES);
