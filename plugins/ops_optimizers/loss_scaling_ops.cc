// loss_scaling_ops.cc: the two ops of dynamic loss scaling in mixed-precision training, with
// Paddle's semantics (paddle/phi/kernels/cpu/amp_kernel.cc): check_finite_and_unscale divides
// the gradients by the loss scale and says whether any was inf or NaN; update_loss_scaling grows
// or shrinks the scale from that and zeroes the gradients of a step that overflowed.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common.h"

namespace ops_optimizers {
namespace {

// A one-element input of the given type, checked.
template <typename T>
T OneValue(const KernelContext& ctx, const char* param, TideDataType dtype) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == 1 && t.dtype() == dtype, tide::ops::InputLabel(ctx, param),
             " must be one ", tide::DataTypeName(dtype), ", is ", tide::DataTypeName(t.dtype()),
             " of dims ", tide::ToString(t.dims()));
  return t.data<T>()[0];
}

template <typename T>
void WriteOne(const KernelContext& ctx, const char* param, T value) {
  ctx.Output(param).mutable_data<T>(tide::Dims{1}, ctx.place())[0] = value;
}

// The loss scale: float32 (Paddle keeps it float32 whatever the gradients' type) or float64.
double ScaleValue(const KernelContext& ctx, const char* param) {
  Tensor t = ctx.Input(param);
  tide::ops::CheckScalarInput(ctx, param, t);
  return t.dtype() == TIDE_FP64 ? t.data<double>()[0] : t.data<float>()[0];
}

void CheckPairs(const KernelContext& ctx, const char* in, const char* out) {
  TIDE_CHECK(ctx.InputCount(in) == ctx.OutputCount(out), "op '", ctx.op_type(),
             "': ", ctx.InputCount(in), " inputs ", in, " but ", ctx.OutputCount(out), " outputs ",
             out, "; each ", in, " has its ", out);
}

// Out[i] = X[i] / Scale (as X[i] * (1 / Scale), Paddle's order of rounding); FoundInfinite =
// whether any element of any X is inf or NaN. Out may be X itself (in place).
template <typename T>
void CheckFiniteAndUnscaleKernel(KernelContext& ctx) {
  CheckPairs(ctx, "X", "Out");
  const double scale = ScaleValue(ctx, "Scale");
  const T inverse = static_cast<T>(1.0 / scale);
  bool found = false;
  for (size_t k = 0; k < ctx.InputCount("X"); ++k) {
    Tensor x = ctx.Input("X", k);
    const int64_t n = x.numel();
    const T* xd = x.data<T>();
    T* out = ctx.Output("Out", k).mutable_data<T>(x.dims(), ctx.place());
    for (int64_t i = 0; i < n; ++i) {
      const T v = xd[i];
      found = found || !std::isfinite(static_cast<double>(v));
      out[i] = v * inverse;
    }
  }
  WriteOne<bool>(ctx, "FoundInfinite", found);
}

// Paddle's rule: on an overflow the good-step count restarts and the bad one grows; at
// decr_every_n_nan_or_inf bad steps the scale shrinks by decr_ratio (never below 1) and the count
// restarts. Without one, at incr_every_n_steps good steps it grows by incr_ratio (unless that is
// no longer finite). The gradients of an overflowed step become zeros.
template <typename T>
void UpdateLossScalingKernel(KernelContext& ctx) {
  CheckPairs(ctx, "X", "Out");
  const bool found = OneValue<bool>(ctx, "FoundInfinite", TIDE_BOOL);
  for (size_t k = 0; k < ctx.InputCount("X"); ++k) {
    Tensor x = ctx.Input("X", k);
    T* out = ctx.Output("Out", k).mutable_data<T>(x.dims(), ctx.place());
    const T* xd = x.data<T>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = found ? T(0) : xd[i];
  }
  bool stop = ctx.Attr<bool>("stop_update");
  if (ctx.InputCount("StopUpdate")) stop = stop || OneValue<bool>(ctx, "StopUpdate", TIDE_BOOL);
  const float prev = OneValue<float>(ctx, "PrevLossScaling", TIDE_FP32);
  int32_t good = OneValue<int32_t>(ctx, "InGoodSteps", TIDE_INT32);
  int32_t bad = OneValue<int32_t>(ctx, "InBadSteps", TIDE_INT32);
  float scale = prev;
  if (!stop) {
    if (found) {
      good = 0;
      if (++bad == ctx.Attr<int>("decr_every_n_nan_or_inf")) {
        scale = std::max(prev * ctx.Attr<float>("decr_ratio"), 1.0f);
        bad = 0;
      }
    } else {
      bad = 0;
      if (++good == ctx.Attr<int>("incr_every_n_steps")) {
        const float grown = prev * ctx.Attr<float>("incr_ratio");
        scale = std::isfinite(grown) ? grown : prev;
        good = 0;
      }
    }
  }
  WriteOne<float>(ctx, "LossScaling", scale);
  WriteOne<int32_t>(ctx, "OutGoodSteps", good);
  WriteOne<int32_t>(ctx, "OutBadSteps", bad);
}

// X[i] -> Out[i] (dims, dtype, LoD); the named one-element outputs get [1] of their type.
tide::InferShapeFn PairsAndScalars(std::vector<std::pair<const char*, TideDataType>> scalars) {
  return [scalars](tide::InferShapeContext& c) {
    TIDE_CHECK(c.InputCount("X") == c.OutputCount("Out"), "op '", c.op_type(),
               "': ", c.InputCount("X"), " inputs X but ", c.OutputCount("Out"),
               " outputs Out; each X has its Out");
    for (size_t i = 0; i < c.InputCount("X"); ++i) {
      c.SetOutputDims("Out", c.InputDims("X", i), i);
      c.SetOutputDataType("Out", c.InputDataType("X", i), i);
    }
    for (const auto& [name, dtype] : scalars) {
      c.SetOutputDims(name, tide::Dims{1});
      c.SetOutputDataType(name, dtype);
    }
  };
}

}  // namespace
}  // namespace ops_optimizers

using namespace ops_optimizers;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("check_finite_and_unscale")
        .Comment(
            "Dynamic loss scaling, first half (Paddle's op): Out[i] = X[i] / Scale for each "
            "gradient X[i]; FoundInfinite = whether any element of any X is inf or NaN. Out is "
            "normally X itself (in place).")
        .Input("X", "(Tensors) the gradients of the scaled loss")
        .AsDuplicable()
        .Input("Scale", "(Tensor, one float32 or float64) the loss scale")
        .Output("Out", "(Tensors) the unscaled gradients, one for each X")
        .AsDuplicable()
        .Output("FoundInfinite", "(Tensor, one bool) whether any X held inf or NaN")
        .KernelDataTypeFrom("X")
        .NoGradient()
        .InPlace("X", "Out")
        .InferShape(PairsAndScalars({{"FoundInfinite", TIDE_BOOL}})));
TIDE_REGISTER_KERNEL("check_finite_and_unscale", "cpu", CheckFiniteAndUnscaleKernel,
                     OPS_OPTIMIZERS_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("update_loss_scaling")
        .Comment(
            "Dynamic loss scaling, second half (Paddle's op). On an overflow (FoundInfinite) the "
            "gradients Out become zeros, OutGoodSteps 0 and OutBadSteps InBadSteps + 1; when that "
            "reaches decr_every_n_nan_or_inf, LossScaling = max(PrevLossScaling * decr_ratio, 1) "
            "and OutBadSteps 0. Otherwise Out = X, OutBadSteps 0, OutGoodSteps InGoodSteps + 1; "
            "when that reaches incr_every_n_steps, LossScaling = PrevLossScaling * incr_ratio "
            "(kept as it was if that is not finite) and OutGoodSteps 0. With stop_update (the "
            "attribute or the StopUpdate input) the scale and the counts stay as they were.")
        .Input("X", "(Tensors) the unscaled gradients")
        .AsDuplicable()
        .Input("FoundInfinite", "(Tensor, one bool) from check_finite_and_unscale")
        .Input("PrevLossScaling", "(Tensor, one float32) the loss scale of this step")
        .Input("InGoodSteps", "(Tensor, one int32) steps without overflow since the last change")
        .Input("InBadSteps", "(Tensor, one int32) steps with overflow since the last change")
        .Input("StopUpdate", "(Tensor, one bool, optional) keep the scale and counts")
        .AsDispensable()
        .Output("Out", "(Tensors) X, or zeros on an overflow; normally X itself")
        .AsDuplicable()
        .Output("LossScaling", "(Tensor, one float32) the loss scale of the next step")
        .Output("OutGoodSteps", "(Tensor, one int32)")
        .Output("OutBadSteps", "(Tensor, one int32)")
        .Attr("incr_every_n_steps", 1000, "grow the scale after this many good steps in a row")
        .GreaterThan(0)
        .Attr("decr_every_n_nan_or_inf", 2, "shrink it after this many overflowed steps")
        .GreaterThan(0)
        .Attr("incr_ratio", 2.0f, "the factor it grows by")
        .GreaterThan(0)
        .Attr("decr_ratio", 0.5f, "the factor it shrinks by")
        .GreaterThan(0)
        .Attr("stop_update", false, "keep the scale and the counts as they are")
        .KernelDataTypeFrom("X")
        .NoGradient()
        .InPlace("X", "Out")
        .InPlace("PrevLossScaling", "LossScaling")
        .InPlace("InGoodSteps", "OutGoodSteps")
        .InPlace("InBadSteps", "OutBadSteps")
        .InferShape(PairsAndScalars({{"LossScaling", TIDE_FP32},
                                     {"OutGoodSteps", TIDE_INT32},
                                     {"OutBadSteps", TIDE_INT32}})));
TIDE_REGISTER_KERNEL("update_loss_scaling", "cpu", UpdateLossScalingKernel,
                     OPS_OPTIMIZERS_FLOAT_TYPES);
