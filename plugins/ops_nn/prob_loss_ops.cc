// prob_loss_ops.cc: Paddle's losses of probabilities with their grads: bce_loss
// (F.binary_cross_entropy: -(l log x + (1 - l) log(1 - x)), each log clamped at -100, X refused
// outside [0, 1]), log_loss (F.log_loss: the same with epsilon inside the logs instead of the
// clamp) and nll_loss (F.nll_loss: -X[n, Label[n], ...] weighted by class, ignore_index,
// reduction none / sum / mean by the total weight). The formulas and edge cases are Paddle's CPU
// kernels'.
#include <algorithm>
#include <cmath>
#include <string>
#include <tide/ops/grad_outputs.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::OptionalGrad;

// ---- bce_loss
void BceShape(tide::InferShapeContext& ctx) {
  CheckSameDims(ctx, "X", "Label");
  CheckSameType(ctx, "X", "Label");
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

template <typename T>
void BceKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), label = ctx.Input("Label");
  CheckSameDims(ctx, x, label, "X", "Label");
  const T *a = x.data<T>(), *l = label.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    // As Paddle's kernel: a probability outside [0, 1] (or NaN) is an error, not a NaN loss.
    TIDE_CHECK(a[i] >= T(0) && a[i] <= T(1), "op 'bce_loss': X ('", ctx.InputName("X"),
               "') holds probabilities in [0, 1], but element ", i, " is ", a[i]);
    out[i] = (l[i] - T(1)) * std::max(std::log(T(1) - a[i]), T(-100)) -
             l[i] * std::max(std::log(a[i]), T(-100));
  }
}

template <typename T>
void BceGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const T *a = x.data<T>(), *l = ctx.Input("Label").data<T>();
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  T* dx = OptionalGrad<T>(ctx, "X", x.dims());
  if (!dx) return;
  // Paddle's (x - l) / max(x (1 - x), 1e-12): finite at x = 0 and 1, where the clamped loss is
  // flat.
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    dx[i] = g[i] * (a[i] - l[i]) / std::max((T(1) - a[i]) * a[i], T(1e-12));
}

// ---- log_loss
void LogLossShape(tide::InferShapeContext& ctx) {
  const Dims d = ctx.InputDims("Predicted");
  TIDE_CHECK(d.size() == 2 && DimsCompatible(d[1], 1), "op 'log_loss': Predicted ('",
             ctx.InputName("Predicted"), "') must be [N, 1], got ", tide::ToString(d));
  CheckSameDims(ctx, "Predicted", "Labels");
  CheckSameType(ctx, "Predicted", "Labels");
  ctx.SetOutputDims("Loss", d);
  ctx.SetOutputDataType("Loss", ctx.InputDataType("Predicted"));
}

template <typename T>
void LogLossKernel(KernelContext& ctx) {
  Tensor p = ctx.Input("Predicted"), label = ctx.Input("Labels");
  CheckSameDims(ctx, p, label, "Predicted", "Labels");
  const T eps = static_cast<T>(ctx.Attr<float>("epsilon"));
  const T *a = p.data<T>(), *l = label.data<T>();
  T* out = ctx.Output("Loss").mutable_data<T>(p.dims(), ctx.place());
  for (int64_t i = 0, n = p.numel(); i < n; ++i)
    out[i] = -l[i] * std::log(a[i] + eps) - (T(1) - l[i]) * std::log(T(1) - a[i] + eps);
}

template <typename T>
void LogLossGradKernel(KernelContext& ctx) {
  Tensor p = ctx.Input("Predicted");
  const T eps = static_cast<T>(ctx.Attr<float>("epsilon"));
  const T *a = p.data<T>(), *l = ctx.Input("Labels").data<T>();
  const T* g = ctx.Input(GradVarName("Loss").c_str()).data<T>();
  T* dp = OptionalGrad<T>(ctx, "Predicted", p.dims());
  if (!dp) return;
  for (int64_t i = 0, n = p.numel(); i < n; ++i)
    dp[i] = g[i] * (-l[i] / (a[i] + eps) + (T(1) - l[i]) / (T(1) - a[i] + eps));
}

// ---- nll_loss
enum class NllReduction { kNone, kSum, kMean };

NllReduction NllReductionOf(const std::string& r) {
  if (r == "none") return NllReduction::kNone;
  if (r == "sum") return NllReduction::kSum;
  if (r == "mean") return NllReduction::kMean;
  TIDE_THROW(TIDE_INVALID_ARGUMENT,
             "op 'nll_loss': attribute 'reduction' must be 'none', 'sum' or 'mean', got '", r, "'");
}

// X [N, C] with Label [N], or X [N, C, d1, ...] with Label [N, d1, ...]; Weight [C].
void NllShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), label = ctx.InputDims("Label");
  TIDE_CHECK(x.size() >= 2, "op 'nll_loss': X ('", ctx.InputName("X"),
             "') must be [N, C] or [N, C, d1, ...], got ", tide::ToString(x));
  bool ok = label.size() + 1 == x.size() && DimsCompatible(label[0], x[0]);
  for (size_t i = 1; ok && i < label.size(); ++i) ok = DimsCompatible(label[i], x[i + 1]);
  TIDE_CHECK(ok, "op 'nll_loss': Label ('", ctx.InputName("Label"), "') must have X's dims ",
             tide::ToString(x), " without the class dim 1, but has ", tide::ToString(label));
  const TideDataType lt = ctx.InputDataType("Label");
  TIDE_CHECK(lt == TIDE_INT64 || lt == TIDE_UNDEFINED, "op 'nll_loss': Label ('",
             ctx.InputName("Label"), "') must be int64, got ", tide::DataTypeName(lt));
  if (ctx.HasInput("Weight")) {
    const Dims w = ctx.InputDims("Weight");
    TIDE_CHECK(w.size() == 1 && DimsCompatible(w[0], x[1]), "op 'nll_loss': Weight ('",
               ctx.InputName("Weight"), "') must be [C] = [", x[1], "], got ", tide::ToString(w));
    CheckSameType(ctx, "X", "Weight");
  }
  const NllReduction r = NllReductionOf(ctx.Attr<std::string>("reduction"));
  ctx.SetOutputDims("Out", r == NllReduction::kNone ? label : Dims{});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.SetOutputDims("Total_weight", Dims{});
  ctx.SetOutputDataType("Total_weight", ctx.InputDataType("X"));
}

// X seen as [N, C, M] (M the product of d1, ...), Label as [N, M]; the labels checked.
template <typename T>
struct NllArgs {
  Tensor x;
  int64_t n, c, m, ignore;
  const T* xd;
  const int64_t* label;
  const T* weight;
  NllReduction reduction;
  T w(int64_t k) const { return weight ? weight[k] : T(1); }
};

template <typename T>
NllArgs<T> GetNllArgs(KernelContext& ctx) {
  NllArgs<T> a;
  a.x = ctx.Input("X");
  Tensor label = ctx.Input("Label"), weight = ctx.OptionalInput("Weight");
  const Dims& d = a.x.dims();
  TIDE_CHECK(d.size() >= 2, "op 'nll_loss': X ('", ctx.InputName("X"),
             "') must be [N, C] or [N, C, d1, ...], got ", tide::ToString(d));
  a.n = d[0];
  a.c = d[1];
  a.m = DimsProduct(d, 2, d.size());
  TIDE_CHECK(label.dtype() == TIDE_INT64 && label.numel() == a.n * a.m, "op 'nll_loss': Label ('",
             ctx.InputName("Label"), "') must be int64 with ", a.n * a.m, " elements for X ",
             tide::ToString(d), ", got ", tide::DataTypeName(label.dtype()), " ",
             tide::ToString(label.dims()));
  TIDE_CHECK(!weight || weight.numel() == a.c, "op 'nll_loss': Weight ('", ctx.InputName("Weight"),
             "') must hold C = ", a.c, " weights, got ",
             tide::ToString(weight ? weight.dims() : Dims{}));
  a.xd = a.x.template data<T>();
  a.label = label.data<int64_t>();
  a.weight = weight ? weight.data<T>() : nullptr;
  a.ignore = ctx.Attr<int64_t>("ignore_index");
  a.reduction = NllReductionOf(ctx.Attr<std::string>("reduction"));
  for (int64_t i = 0, e = a.n * a.m; i < e; ++i)
    TIDE_CHECK(a.label[i] == a.ignore || (a.label[i] >= 0 && a.label[i] < a.c),
               "op 'nll_loss': Label ('", ctx.InputName("Label"), "') element ", i, " is ",
               a.label[i], ", outside the classes [0, ", a.c, ") and not ignore_index ", a.ignore);
  return a;
}

template <typename T>
void NllKernel(KernelContext& ctx) {
  const auto a = GetNllArgs<T>(ctx);
  Tensor label = ctx.Input("Label");
  T* total = ctx.Output("Total_weight").mutable_data<T>(Dims{}, ctx.place());
  if (a.reduction == NllReduction::kNone) {
    T* out = ctx.Output("Out").mutable_data<T>(label.dims(), ctx.place());
    for (int64_t i = 0; i < a.n; ++i)
      for (int64_t j = 0; j < a.m; ++j) {
        const int64_t k = a.label[i * a.m + j];
        out[i * a.m + j] = k == a.ignore ? T(0) : -a.xd[(i * a.c + k) * a.m + j] * a.w(k);
      }
    *total = T(0);  // Paddle leaves it 0 without a reduction
    return;
  }
  T sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < a.n; ++i)
    for (int64_t j = 0; j < a.m; ++j) {
      const int64_t k = a.label[i * a.m + j];
      if (k == a.ignore) continue;
      weight_sum += a.w(k);
      sum -= a.xd[(i * a.c + k) * a.m + j] * a.w(k);
    }
  // Paddle divides only by a non-zero total weight (all ignored: the loss is 0, not NaN).
  if (a.reduction == NllReduction::kMean && weight_sum != T(0)) sum /= weight_sum;
  *ctx.Output("Out").mutable_data<T>(Dims{}, ctx.place()) = sum;
  *total = weight_sum;
}

template <typename T>
void NllGradKernel(KernelContext& ctx) {
  const auto a = GetNllArgs<T>(ctx);
  T* dx = OptionalGrad<T>(ctx, "X", a.x.dims());
  if (!dx) return;
  std::fill(dx, dx + a.x.numel(), T(0));
  const T* g = ctx.Input(GradVarName("Out").c_str()).data<T>();
  const T total = *ctx.Input("Total_weight").data<T>();
  for (int64_t i = 0; i < a.n; ++i)
    for (int64_t j = 0; j < a.m; ++j) {
      const int64_t k = a.label[i * a.m + j];
      if (k == a.ignore) continue;
      T d = -a.w(k) * (a.reduction == NllReduction::kNone ? g[i * a.m + j] : g[0]);
      if (a.reduction == NllReduction::kMean) d /= total;  // as Paddle, even a zero total
      dx[(i * a.c + k) * a.m + j] = d;
    }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("bce_loss")
                     .Comment("Out = -(Label log X + (1 - Label) log(1 - X)), each log clamped "
                              "at -100; X must lie in [0, 1].")
                     .Input("X", "probabilities in [0, 1]")
                     .Input("Label", "targets, X's dims")
                     .Output("Out", "the loss, X's dims")
                     .KernelDataTypeFrom("X")
                     .InferShape(BceShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("bce_loss_grad")
                           .Input("X", g.Input("X"))
                           .Input("Label", g.Input("Label"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("bce_loss_grad")
                     .Input("X")
                     .Input("Label")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("bce_loss", "cpu", BceKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("bce_loss_grad", "cpu", BceGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("log_loss")
                     .Comment("Loss = -Labels log(Predicted + epsilon) - (1 - Labels) "
                              "log(1 - Predicted + epsilon).")
                     .Input("Predicted", "probabilities, [N, 1]")
                     .Input("Labels", "targets, [N, 1]")
                     .Output("Loss", "the loss, [N, 1]")
                     .Attr("epsilon", 1e-4f, "added inside both logs")
                     .KernelDataTypeFrom("Predicted")
                     .InferShape(LogLossShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("log_loss_grad")
                           .Input("Predicted", g.Input("Predicted"))
                           .Input("Labels", g.Input("Labels"))
                           .Input(GradVarName("Loss"), g.OutputGrad("Loss"))
                           .Output(GradVarName("Predicted"), g.InputGrad("Predicted"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("log_loss_grad")
                     .Input("Predicted")
                     .Input("Labels")
                     .Input(GradVarName("Loss"))
                     .Output(GradVarName("Predicted"))
                     .Attr("epsilon", 1e-4f)
                     .KernelDataTypeFrom("Predicted")
                     .InferShape(GradLike({"Predicted"})));
TIDE_REGISTER_KERNEL("log_loss", "cpu", LogLossKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("log_loss_grad", "cpu", LogLossGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("nll_loss")
        .Comment("Out = -Weight[Label] X[n, Label, ...] per element (0 where Label is "
                 "ignore_index); reduction 'sum' sums it, 'mean' divides the sum by "
                 "Total_weight, the sum of the weights of the labels not ignored (when non-zero).")
        .Input("X", "log-probabilities, [N, C] or [N, C, d1, ...]")
        .Input("Label", "int64 class ids, [N] or [N, d1, ...]")
        .Input("Weight", "per-class weights, [C] (optional)")
        .AsDispensable()
        .Output("Out", "Label's dims with reduction 'none', else 0-D")
        .Output("Total_weight",
                "0-D: the sum of the weights of the labels not ignored (0 "
                "with reduction 'none')")
        .Attr("ignore_index", int64_t(-100), "a label that gives loss 0 and weight 0")
        .Attr("reduction", std::string("mean"), "'none', 'sum' or 'mean'")
        .KernelDataTypeFrom("X")
        .InferShape(NllShape)
        .Grad([](tide::GradMaker& g) {
          g.NewOp("nll_loss_grad")
              .Input("X", g.Input("X"))
              .Input("Label", g.Input("Label"))
              .Input("Weight", g.Input("Weight"))
              .Input("Total_weight", g.Output("Total_weight"))
              .Input(GradVarName("Out"), g.OutputGrad("Out"))
              .Output(GradVarName("X"), g.InputGrad("X"))
              .CopyAttrs();
        }));
TIDE_REGISTER_OP(tide::OpSchema("nll_loss_grad")
                     .Input("X")
                     .Input("Label")
                     .Input("Weight")
                     .AsDispensable()
                     .Input("Total_weight")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("ignore_index", int64_t(-100))
                     .Attr("reduction", std::string("mean"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("nll_loss", "cpu", NllKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("nll_loss_grad", "cpu", NllGradKernel, OPS_NN_FLOAT_TYPES);
