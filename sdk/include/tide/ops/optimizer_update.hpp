// tide/ops/optimizer_update.hpp: the per-element updates of momentum, adagrad and rmsprop (host and
// device), each made from the op's inputs as every kernel reads them (tide/ops/optimizer.hpp's
// checks; outputs allocated on the kernel's place), and the Param-shaped state they read and write.
// A kernel supplies the learning rate and the gradient its own way: the learning rate as a value
// or as a type of its own that ReadLr<T>() reads where the update runs (a device kernel reads it
// on the device); the gradient as Param-shaped values (a SelectedRows Grad scattered first).
//
// In-place updates: ParamOut is normally Param's variable (MomentOut Moment's, ...), so an output's
// buffer may be its input's: an update reads all of element i before it writes any of it.
#ifndef TIDE_OPS_OPTIMIZER_UPDATE_HPP_
#define TIDE_OPS_OPTIMIZER_UPDATE_HPP_

#include <algorithm>
#include <cstdint>
#include <tide/ops/activation.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/ops/optimizer.hpp>
#include <tide/plugin.hpp>
#include <utility>
#include <vector>

namespace tide {
namespace ops {

// A dense input that must match Param `p` in dtype and dims (a moment, a velocity, a dense Grad).
template <typename T>
const T* OptimizerStateInput(const KernelContext& ctx, const char* param, const Tensor& p) {
  Tensor t = ctx.Input(param);
  CheckStateInput<T>(ctx, param, t, p);
  return t.data<T>();
}

// Output `param` with Param's dims, allocated; when it is its input's variable, the input's own
// buffer (same dims and dtype, nothing reallocated).
template <typename T>
T* OptimizerStateOutput(const KernelContext& ctx, const char* param, const Tensor& p) {
  return ctx.Output(param).mutable_data<T>(p.dims(), ctx.place());
}

// The distinct rows of a SelectedRows Grad, ascending: the rows a sparse update visits.
inline std::vector<int64_t> DistinctRows(std::vector<int64_t> rows) {
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// The gradient as Param-shaped dense values: Grad itself, or for a SelectedRows Grad the values
// `scatter(rows)` returns (the kernel adds the listed rows into zeroed scratch: repeated rows add
// up, rows not listed are 0, Fluid's non-lazy rule), with the distinct rows listed, ascending.
template <typename T>
struct DenseGrad {
  const T* data = nullptr;
  bool sparse = false;
  std::vector<int64_t> rows;  // sparse only
  int64_t row_size = 0;       // sparse only
};

template <typename T, typename Scatter>
DenseGrad<T> ReadDenseGrad(const KernelContext& ctx, const Tensor& param, Scatter scatter) {
  DenseGrad<T> out;
  Variable var = ctx.InputVar("Grad");
  if (!var || !var.IsSelectedRows()) {
    out.data = OptimizerStateInput<T>(ctx, "Grad", param);
    return out;
  }
  SparseGradRows rows = ReadSparseGradRows<T>(ctx, param);
  out.data = scatter(rows);
  out.sparse = true;
  out.row_size = rows.row_size;
  out.rows = DistinctRows(std::move(rows.rows));
  return out;
}

// A learning rate given as a value.
template <typename T>
TIDE_OPS_HOST_DEVICE T ReadLr(T lr) {
  return lr;
}

// momentum: VelocityOut = mu * Velocity + Grad; ParamOut = Param - lr * VelocityOut, or with
// use_nesterov Param - lr * (Grad + mu * VelocityOut).
template <typename T, typename Lr>
struct MomentumUpdate {
  Lr lr;
  T mu;
  bool nesterov;
  const T *g, *v, *p;
  T *v_out, *p_out;
  TIDE_OPS_HOST_DEVICE void operator()(int64_t i) const {
    const T gi = g[i];
    const T vi = mu * v[i] + gi;
    const T l = ReadLr<T>(lr);
    const T pi = nesterov ? p[i] - l * (gi + mu * vi) : p[i] - l * vi;
    v_out[i] = vi;
    p_out[i] = pi;
  }
};

template <typename T, typename Lr>
MomentumUpdate<T, Lr> GetMomentumUpdate(const KernelContext& ctx, const Tensor& param, Lr lr,
                                        const T* grad) {
  MomentumUpdate<T, Lr> u;
  u.lr = lr;
  u.mu = static_cast<T>(ctx.Attr<float>("mu"));
  u.nesterov = ctx.Attr<bool>("use_nesterov");
  u.g = grad;
  u.v = OptimizerStateInput<T>(ctx, "Velocity", param);
  u.p = param.data<T>();
  u.v_out = OptimizerStateOutput<T>(ctx, "VelocityOut", param);
  u.p_out = OptimizerStateOutput<T>(ctx, "ParamOut", param);
  return u;
}

// adagrad: MomentOut = Moment + Grad^2; ParamOut = Param - lr * Grad / (sqrt(MomentOut) +
// epsilon).
template <typename T, typename Lr>
struct AdagradUpdate {
  Lr lr;
  T epsilon;
  const T *g, *m, *p;
  T *m_out, *p_out;
  TIDE_OPS_HOST_DEVICE void operator()(int64_t i) const {
    const T gi = g[i];
    const T mi = m[i] + gi * gi;
    const T pi = p[i] - ReadLr<T>(lr) * gi / (act_math::Sqrt(mi) + epsilon);
    m_out[i] = mi;
    p_out[i] = pi;
  }
};

template <typename T, typename Lr>
AdagradUpdate<T, Lr> GetAdagradUpdate(const KernelContext& ctx, const Tensor& param, Lr lr,
                                      const T* grad) {
  AdagradUpdate<T, Lr> u;
  u.lr = lr;
  u.epsilon = static_cast<T>(ctx.Attr<float>("epsilon"));
  u.g = grad;
  u.m = OptimizerStateInput<T>(ctx, "Moment", param);
  u.p = param.data<T>();
  u.m_out = OptimizerStateOutput<T>(ctx, "MomentOut", param);
  u.p_out = OptimizerStateOutput<T>(ctx, "ParamOut", param);
  return u;
}

// rmsprop (Hinton), plain or centered (a mean gradient kept too), with momentum.
template <typename T, typename Lr>
struct RmspropUpdate {
  bool centered;
  Lr lr;
  T epsilon, decay, momentum;
  const T *g, *ms, *mg, *mom, *p;  // mg: centered only
  T *ms_out, *mg_out, *mom_out, *p_out;
  TIDE_OPS_HOST_DEVICE void operator()(int64_t i) const {
    const T gi = g[i];
    const T msi = decay * ms[i] + (T(1) - decay) * gi * gi;
    T denom = msi;
    T mgi = T(0);
    if (centered) {
      mgi = decay * mg[i] + (T(1) - decay) * gi;
      denom = msi - mgi * mgi;
    }
    const T momi = momentum * mom[i] + ReadLr<T>(lr) * gi / act_math::Sqrt(denom + epsilon);
    const T pi = p[i] - momi;
    ms_out[i] = msi;
    if (centered) mg_out[i] = mgi;
    mom_out[i] = momi;
    p_out[i] = pi;
  }
};

template <typename T, typename Lr>
RmspropUpdate<T, Lr> GetRmspropUpdate(const KernelContext& ctx, const Tensor& param, Lr lr,
                                      const T* grad) {
  RmspropUpdate<T, Lr> u;
  u.centered = ctx.Attr<bool>("centered");
  u.lr = lr;
  u.epsilon = static_cast<T>(ctx.Attr<float>("epsilon"));
  u.decay = static_cast<T>(ctx.Attr<float>("decay"));
  u.momentum = static_cast<T>(ctx.Attr<float>("momentum"));
  u.g = grad;
  u.ms = OptimizerStateInput<T>(ctx, "MeanSquare", param);
  u.mom = OptimizerStateInput<T>(ctx, "Moment", param);
  u.p = param.data<T>();
  u.mg = nullptr;
  u.mg_out = nullptr;
  if (u.centered) {
    CheckRmspropCentered(ctx);
    u.mg = OptimizerStateInput<T>(ctx, "MeanGrad", param);
    u.mg_out = OptimizerStateOutput<T>(ctx, "MeanGradOut", param);
  }
  u.ms_out = OptimizerStateOutput<T>(ctx, "MeanSquareOut", param);
  u.mom_out = OptimizerStateOutput<T>(ctx, "MomentOut", param);
  u.p_out = OptimizerStateOutput<T>(ctx, "ParamOut", param);
  return u;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_OPTIMIZER_UPDATE_HPP_
