// sim_device.cc: a test-only device plugin. Place kind "sim" (two devices) with its own memory
// pool (host memory the core must treat as device memory: every transfer is a counted copy),
// kernels for a few ops (elementwise_add, relu, scale), float32<->float64 casts (but no float16
// ones, and no layout transforms: the paths tests expect to fail), and ops that make and need
// particular layouts (sim.to_nhwc, sim.nchw_only).
#include <tide/plugin.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "sim_context.h"

namespace {

TideSimCounters g_counters{sizeof(TideSimCounters), 0, 0, 0, 0, 0};
std::atomic<uint64_t> g_h2d{0}, g_d2h{0}, g_d2d{0}, g_allocs{0}, g_frees{0};

class SimDevice : public tide::Device {
 public:
  const char* kind() const override { return "sim"; }
  bool host_accessible() const override { return false; }
  int32_t Count() override { return 2; }
  void* Alloc(int32_t, size_t size) override {
    ++g_allocs;
    void* p = std::aligned_alloc(64, (size + 63) / 64 * 64);
    if (!p) TIDE_THROW(TIDE_RESOURCE_EXHAUSTED, "sim: out of memory for ", size, " bytes");
    return p;
  }
  void Free(int32_t, void* p, size_t) override {
    ++g_frees;
    std::free(p);
  }
  void MemoryInfo(int32_t, size_t* total, size_t* available) override {
    *total = *available = size_t(1) << 30;  // 1 GiB per sim device
  }
  void* CreateContext(int32_t device) override { return new int32_t(device); }
  void DestroyContext(void* ctx) override { delete static_cast<int32_t*>(ctx); }
  void Synchronize(void*) override {}
  void Copy(void*, TideCopyKind kind, void* dst, const void* src, size_t size) override {
    (kind == TIDE_COPY_HOST_TO_DEVICE ? g_h2d : kind == TIDE_COPY_DEVICE_TO_HOST ? g_d2h : g_d2d)++;
    std::memcpy(dst, src, size);
  }
  const void* Extension(void*, const char* name) override {
    if (std::strcmp(name, TIDE_SIM_CONTEXT_EXTENSION) != 0) return nullptr;
    g_counters.host_to_device = g_h2d;
    g_counters.device_to_host = g_d2h;
    g_counters.device_to_device = g_d2d;
    g_counters.allocs = g_allocs;
    g_counters.frees = g_frees;
    return &g_counters;
  }
};

void CheckOnSim(const tide::KernelContext& ctx, const tide::Tensor& t, const char* what) {
  TIDE_CHECK(t.place() == ctx.place(), "sim kernel of '", ctx.op_type(), "': ", what, " is on ",
             t.place().ToString(), ", not ", ctx.place().ToString(), " (the core should have copied it)");
}

template <typename T>
void Add(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  CheckOnSim(ctx, y, "Y");
  TIDE_CHECK(y.numel() == x.numel() || y.numel() == 1, "sim elementwise_add: only same-size or scalar Y");
  const T* a = x.data<T>();
  const T* b = y.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = a[i] + b[y.numel() == 1 ? 0 : i];
}

template <typename T>
void Relu(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  const T* a = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = a[i] > 0 ? a[i] : T(0);
}

template <typename T>
void Scale(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  T s = static_cast<T>(ctx.Attr<float>("scale")), b = static_cast<T>(ctx.Attr<float>("bias"));
  const T* a = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = a[i] * s + b;
}

// Out = X with its layout marked NHWC (the data is reinterpreted, as a test fixture).
template <typename T>
void ToNhwc(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  out.CopyFrom(x, ctx.place(), ctx.device_context());
  out.set_layout(TIDE_LAYOUT_NHWC);
}

// Out = X, for kernels registered NCHW-only: the core must hand them NCHW data.
template <typename T>
void NchwOnly(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  TIDE_CHECK(x.layout() != TIDE_LAYOUT_NHWC, "sim.nchw_only got NHWC data");
  out.CopyFrom(x, ctx.place(), ctx.device_context());
}

template <typename From, typename To>
void Cast(const tide::Tensor& in, tide::Tensor& out, TideDeviceContext*) {
  const From* a = in.data<From>();
  To* o = out.mutable_data<To>(in.place());
  for (int64_t i = 0; i < in.numel(); ++i) o[i] = static_cast<To>(a[i]);
}

}  // namespace

TIDE_ON_REGISTER([](tide::Registrar& r) {
  r.AddDevice(std::make_unique<SimDevice>());
  r.DataTypeCast("sim", TIDE_FP32, TIDE_FP64, &Cast<float, double>);
  r.DataTypeCast("sim", TIDE_FP64, TIDE_FP32, &Cast<double, float>);
});
TIDE_REGISTER_KERNEL("elementwise_add", "sim", Add, float, double);
TIDE_REGISTER_KERNEL("relu", "sim", Relu, float, double);
TIDE_REGISTER_KERNEL("scale", "sim", Scale, float, double);
TIDE_REGISTER_OP(tide::OpSchema("sim.to_nhwc").Input("X").Output("Out")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_OP(tide::OpSchema("sim.nchw_only").Input("X").Output("Out")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_OP(tide::OpSchema("sim.no_kernels").Input("X").Output("Out")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("sim.to_nhwc", "sim", ToNhwc, float);
TIDE_REGISTER_KERNEL("sim.to_nhwc", "cpu", ToNhwc, float);
TIDE_REGISTER_KERNEL_EX("sim.nchw_only", "sim", TIDE_LAYOUT_NCHW, "plain", 0, NchwOnly, float);
TIDE_REGISTER_KERNEL_EX("sim.nchw_only", "cpu", TIDE_LAYOUT_NCHW, "plain", 0, NchwOnly, float);
TIDE_PLUGIN_REQUIRES("device_sim", "0.1.0", "test-only device: counted copies, a few kernels", "device_cpu");
