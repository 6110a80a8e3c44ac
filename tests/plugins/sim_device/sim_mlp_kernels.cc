// sim_mlp_kernels.cc: the sim device's kernels for training a small MLP entirely on the device
// (fc = mul + elementwise_add, relu, softmax_with_cross_entropy, mean, their gradients,
// fill_constant and sgd), so tests can assert that a training step moves nothing but its feeds
// and fetches between host and device. Simple float loops on the device's stream; results match
// the CPU's to rounding, not bit for bit (sums run in another order). mul and mul_grad also take
// bfloat16 (the sim's one low-precision op: tests/python/test_amp_bf16.py), summed in float32
// with one rounding per output.
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <tide/low_precision.hpp>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/loss.hpp>
#include <tide/plugin.hpp>
#include <type_traits>

#include "sim_kernels.h"

namespace {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::Tensor;

Dims MulOutDims(const Dims& x, const Dims& y, int xc, int yc) {
  Dims out(x.begin(), x.begin() + xc);
  out.insert(out.end(), y.begin() + yc, y.end());
  return out;
}

// What mul's sums run in: float32 for bfloat16, the type itself otherwise.
template <typename T>
using SumOf = std::conditional_t<std::is_same_v<T, tide::bfloat16>, float, T>;

// Out[M, N] = X[M, K] * Y[K, N], X and Y flattened to 2-D at their num_col_dims.
template <typename T>
void Mul(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  CheckOnSim(ctx, x, "X");
  CheckOnSim(ctx, y, "Y");
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  const auto [m, k] = tide::ops::Flatten2D(x.dims(), xc);
  const auto [k2, n] = tide::ops::Flatten2D(y.dims(), yc);
  TIDE_CHECK(k == k2, "sim mul: X's ", k, " columns do not match Y's ", k2, " rows");
  const T* a = x.data<T>();
  const T* b = y.data<T>();
  T* o = out.mutable_data<T>(MulOutDims(x.dims(), y.dims(), xc, yc), ctx.place());
  StreamOf(ctx).Enqueue([=] {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        SumOf<T> acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += SumOf<T>(a[i * k + p]) * SumOf<T>(b[p * n + j]);
        o[i * n + j] = T(acc);
      }
  });
}

// dX = dOut * Y^T, dY = X^T * dOut.
template <typename T>
void MulGrad(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  CheckOnSim(ctx, dout, "Out@GRAD");
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  const auto [m, k] = tide::ops::Flatten2D(x.dims(), xc);
  const int64_t n = tide::ops::Flatten2D(y.dims(), yc).second;
  const T* a = x.data<T>();
  const T* b = y.data<T>();
  const T* g = dout.data<T>();
  Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str());
  Tensor dy = ctx.OptionalOutput(GradVarName("Y").c_str());
  T* dxd = dx ? dx.mutable_data<T>(x.dims(), ctx.place()) : nullptr;
  T* dyd = dy ? dy.mutable_data<T>(y.dims(), ctx.place()) : nullptr;
  StreamOf(ctx).Enqueue([=] {
    if (dxd)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) {
          SumOf<T> acc = 0;
          for (int64_t j = 0; j < n; ++j) acc += SumOf<T>(g[i * n + j]) * SumOf<T>(b[p * n + j]);
          dxd[i * k + p] = T(acc);
        }
    if (dyd)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) {
          SumOf<T> acc = 0;
          for (int64_t i = 0; i < m; ++i) acc += SumOf<T>(a[i * k + p]) * SumOf<T>(g[i * n + j]);
          dyd[p * n + j] = T(acc);
        }
  });
}

// dX = dOut; dY = dOut summed over the elements Y was repeated on (Fluid's pre/n/post split).
template <typename T>
void AddGrad(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), dout = ctx.Input(GradVarName("Out").c_str());
  CheckOnSim(ctx, dout, "Out@GRAD");
  const tide::ops::Broadcast bc =
      tide::ops::GetBroadcast(ctx.op_type(), x.dims(), y.dims(), ctx.Attr<int32_t>("axis"), true);
  const T* g = dout.data<T>();
  Tensor dx = ctx.OptionalOutput(GradVarName("X").c_str());
  Tensor dy = ctx.OptionalOutput(GradVarName("Y").c_str());
  T* dxd = dx ? dx.mutable_data<T>(x.dims(), ctx.place()) : nullptr;
  T* dyd = dy ? dy.mutable_data<T>(y.dims(), ctx.place()) : nullptr;
  const int64_t total = x.numel(), y_numel = y.numel();
  StreamOf(ctx).Enqueue([=] {
    if (dxd)
      for (int64_t i = 0; i < total; ++i) dxd[i] = g[i];
    if (!dyd) return;
    if (bc.same) {
      for (int64_t i = 0; i < total; ++i) dyd[i] = g[i];
      return;
    }
    if (bc.general) {  // Y paired through the index; dY summed where Y is repeated
      for (int64_t j = 0; j < y_numel; ++j) dyd[j] = 0;
      for (int64_t e = 0; e < total; ++e) dyd[bc.index(e)] += g[e];
      return;
    }
    for (int64_t j = 0; j < bc.n; ++j) dyd[j] = 0;
    for (int64_t i = 0; i < bc.pre; ++i)
      for (int64_t j = 0; j < bc.n; ++j)
        for (int64_t p = 0, base = (i * bc.n + j) * bc.post; p < bc.post; ++p)
          dyd[j] += g[base + p];
  });
}

template <typename T>
void ReluGrad(KernelContext& ctx) {
  Tensor out = ctx.Input("Out"), dout = ctx.Input(GradVarName("Out").c_str());
  CheckOnSim(ctx, out, "Out");
  const T* o = out.data<T>();
  const T* g = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(out.dims(), ctx.place());
  const int64_t n = out.numel();
  StreamOf(ctx).Enqueue([=] {
    for (int64_t i = 0; i < n; ++i) dx[i] = o[i] > 0 ? g[i] : T(0);
  });
}

// Fluid's semantics on any class axis (the shared tide/ops/loss.hpp view), hard or soft labels.
template <typename T>
void SoftmaxXent(KernelContext& ctx) {
  const char* op = ctx.op_type();
  // use_softmax = false (Logits holding probabilities) is declined: the CPU kernel runs it.
  if (ctx.HasAttr("use_softmax") && !ctx.Attr<bool>("use_softmax"))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "sim ", op, ": use_softmax = false is the CPU kernel's");
  Tensor logits = ctx.Input("Logits"), label = ctx.Input("Label");
  CheckOnSim(ctx, logits, "Logits");
  CheckOnSim(ctx, label, "Label");
  int axis = 0;
  const tide::ops::ClassView v =
      tide::ops::GetClassView(op, logits.dims(), ctx.Attr<int32_t>("axis"), &axis);
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckSoftmaxLabel(op, logits.dims(), label.dims(), axis, soft);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  Dims loss_dims = logits.dims();
  loss_dims[axis] = 1;
  const T* x = logits.data<T>();
  const T* soft_lbl = soft ? label.data<T>() : nullptr;
  const int64_t* hard_lbl = soft ? nullptr : label.data<int64_t>();
  T* sm = ctx.Output("Softmax").mutable_data<T>(logits.dims(), ctx.place());
  T* loss = ctx.Output("Loss").mutable_data<T>(loss_dims, ctx.place());
  StreamOf(ctx).Enqueue([=] {
    for (int64_t r = 0; r < v.pre * v.post; ++r) {
      const int64_t base = (r / v.post) * v.k * v.post + r % v.post;
      T mx = x[base];
      for (int64_t c = 1; c < v.k; ++c) mx = std::max(mx, x[base + c * v.post]);
      T sum = 0;
      for (int64_t c = 0; c < v.k; ++c) sum += std::exp(x[base + c * v.post] - mx);
      const T lse = std::log(sum) + mx;
      for (int64_t c = 0; c < v.k; ++c)
        sm[base + c * v.post] = std::exp(x[base + c * v.post] - lse);
      if (soft) {
        T l = 0;
        for (int64_t c = 0; c < v.k; ++c)
          l -= soft_lbl[base + c * v.post] * (x[base + c * v.post] - lse);
        loss[r] = l;
        continue;
      }
      const int64_t cls = hard_lbl[r];
      if (cls != ignore && (cls < 0 || cls >= v.k))
        throw std::runtime_error(std::string(op) + ": label " + std::to_string(cls) +
                                 " is outside [0, " + std::to_string(v.k) + ")");
      loss[r] = cls == ignore ? T(0) : lse - x[base + cls * v.post];
    }
  });
}

template <typename T>
void SoftmaxXentGrad(KernelContext& ctx) {
  const char* op = ctx.op_type();
  // use_softmax = false (Logits holding probabilities) is declined: the CPU kernel runs it.
  if (ctx.HasAttr("use_softmax") && !ctx.Attr<bool>("use_softmax"))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "sim ", op, ": use_softmax = false is the CPU kernel's");
  Tensor softmax = ctx.Input("Softmax"), label = ctx.Input("Label");
  Tensor dloss = ctx.Input(GradVarName("Loss").c_str());
  CheckOnSim(ctx, dloss, "Loss@GRAD");
  int axis = 0;
  const tide::ops::ClassView v =
      tide::ops::GetClassView(op, softmax.dims(), ctx.Attr<int32_t>("axis"), &axis);
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckSoftmaxLabel(op, softmax.dims(), label.dims(), axis, soft);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const T* sm = softmax.data<T>();
  const T* soft_lbl = soft ? label.data<T>() : nullptr;
  const int64_t* hard_lbl = soft ? nullptr : label.data<int64_t>();
  const T* g = dloss.data<T>();
  T* dx = ctx.Output(GradVarName("Logits").c_str()).mutable_data<T>(softmax.dims(), ctx.place());
  StreamOf(ctx).Enqueue([=] {
    for (int64_t r = 0; r < v.pre * v.post; ++r) {
      const int64_t base = (r / v.post) * v.k * v.post + r % v.post;
      T total = 0;  // a soft label's mass (Fluid scales the softmax by it)
      if (soft)
        for (int64_t c = 0; c < v.k; ++c) total += soft_lbl[base + c * v.post];
      for (int64_t c = 0; c < v.k; ++c) {
        const int64_t e = base + c * v.post;
        if (soft)
          dx[e] = (sm[e] * total - soft_lbl[e]) * g[r];
        else
          dx[e] = hard_lbl[r] == ignore ? T(0) : (sm[e] - (c == hard_lbl[r] ? T(1) : T(0))) * g[r];
      }
    }
  });
}

template <typename T>
void Mean(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  CheckOnSim(ctx, x, "X");
  const T* a = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(Dims{1}, ctx.place());
  const int64_t n = x.numel();
  StreamOf(ctx).Enqueue([=] {
    T sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += a[i];
    o[0] = n ? sum / T(n) : T(0);
  });
}

template <typename T>
void MeanGrad(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  CheckOnSim(ctx, dout, "Out@GRAD");
  const T* g = dout.data<T>();  // read on the stream: the host never sees device data
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  const int64_t n = x.numel();
  StreamOf(ctx).Enqueue([=] {
    for (int64_t i = 0; i < n; ++i) dx[i] = g[0] / T(n);
  });
}

template <typename T>
void FillConstant(KernelContext& ctx) {
  // What this kernel does not implement it declines (before writing anything): the core then
  // runs the op on another kernel, here the CPU's (tests/python/test_kernel_decline.py).
  if (ctx.HasInput("ShapeTensor") || ctx.HasInput("ShapeTensorList") || ctx.HasInput("ValueTensor"))
    TIDE_THROW(TIDE_UNIMPLEMENTED,
               "sim fill_constant: only the shape and value attributes are "
               "supported");
  const std::string sv = ctx.HasAttr("str_value") ? ctx.Attr<std::string>("str_value") : "";
  const T v = sv.empty() ? static_cast<T>(ctx.Attr<float>("value"))
                         : static_cast<T>(std::strtod(sv.c_str(), nullptr));
  const auto shape = ctx.Attr<std::vector<int64_t>>("shape");
  T* o = ctx.Output("Out").mutable_data<T>(Dims(shape.begin(), shape.end()), ctx.place());
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (v == T(0)) {  // through the core's DeviceContext_Memset, which the sim device implements
    ctx.Memset(o, 0, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  StreamOf(ctx).Enqueue([=] {
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  });
}

// ParamOut = Param - LearningRate * Grad (dense Grad; the learning rate stays on the device).
template <typename T>
void Sgd(KernelContext& ctx) {
  Tensor param = ctx.Input("Param"), grad = ctx.Input("Grad"), lr = ctx.Input("LearningRate");
  CheckOnSim(ctx, param, "Param");
  CheckOnSim(ctx, grad, "Grad");
  CheckOnSim(ctx, lr, "LearningRate");
  TIDE_CHECK(grad.numel() == param.numel(), "sim sgd: Grad has ", grad.numel(), " elements, Param ",
             param.numel());
  TIDE_CHECK(lr.dtype() == TIDE_FP32, "sim sgd: LearningRate must be float32");
  const T* p = param.data<T>();
  const T* g = grad.data<T>();
  const float* rate = lr.data<float>();
  T* o = ctx.Output("ParamOut").mutable_data<T>(param.dims(), ctx.place());
  const int64_t n = param.numel();
  StreamOf(ctx).Enqueue([=] {
    const T r = static_cast<T>(rate[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = p[i] - r * g[i];
  });
}

}  // namespace

TIDE_REGISTER_KERNEL("mul", "sim", Mul, float, tide::bfloat16);
TIDE_REGISTER_KERNEL("mul_grad", "sim", MulGrad, float, tide::bfloat16);
TIDE_REGISTER_KERNEL("elementwise_add_grad", "sim", AddGrad, float);
TIDE_REGISTER_KERNEL("relu_grad", "sim", ReluGrad, float);
TIDE_REGISTER_KERNEL("softmax_with_cross_entropy", "sim", SoftmaxXent, float);
TIDE_REGISTER_KERNEL("softmax_with_cross_entropy_grad", "sim", SoftmaxXentGrad, float);
TIDE_REGISTER_KERNEL("mean", "sim", Mean, float);
TIDE_REGISTER_KERNEL("mean_grad", "sim", MeanGrad, float);
TIDE_REGISTER_KERNEL("fill_constant", "sim", FillConstant, float, int64_t);
TIDE_REGISTER_KERNEL("sgd", "sim", Sgd, float);
