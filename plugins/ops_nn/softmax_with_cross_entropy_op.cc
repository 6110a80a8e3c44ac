// softmax_with_cross_entropy_op.cc: softmax and cross-entropy in one numerically stable pass
// (log-sum-exp), hard (int64 class ids, ignore_index) or soft (distribution) labels, along any
// axis, and its grad Logits@GRAD = (Softmax * sum(Label) - Label) * Loss@GRAD.
#include <cmath>

#include <tide/ops/loss.hpp>

#include "common.h"

namespace ops_nn {
namespace {

using tide::ops::ClassView;

void SwceInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  Dims logits = ctx.InputDims("Logits"), label = ctx.InputDims("Label");
  int axis = 0;
  tide::ops::GetClassView(op, logits, ctx.Attr<int32_t>("axis"), &axis);
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckSoftmaxLabel(op, logits, label, axis, soft);
  TideDataType lt = ctx.InputDataType("Label"), xt = ctx.InputDataType("Logits");
  TIDE_CHECK(lt == TIDE_UNDEFINED || (soft ? lt == xt : lt == TIDE_INT64), "op '", op,
             "': Label ('", ctx.InputName("Label"), "') must be ",
             soft ? tide::DataTypeName(xt) : "int64",
             " with soft_label = ", soft ? "true" : "false", ", got ", tide::DataTypeName(lt));
  Dims loss = logits;
  loss[axis] = 1;
  ctx.SetOutputDims("Softmax", logits);
  ctx.SetOutputDataType("Softmax", xt);
  ctx.SetOutputDims("Loss", loss);
  ctx.SetOutputDataType("Loss", xt);
  ctx.ShareLoD("Logits", "Softmax");
  ctx.ShareLoD("Logits", "Loss");
}

// Checks every hard label before the (parallel) loops: a class in [0, K) or ignore_index.
const int64_t* CheckedLabels(const KernelContext& ctx, const Tensor& label, int64_t k,
                             int64_t ignore) {
  const char* op = ctx.op_type();
  TIDE_CHECK(label.dtype() == TIDE_INT64, "op '", op, "': Label ('", ctx.InputName("Label"),
             "') must be int64 with soft_label = false, got ", tide::DataTypeName(label.dtype()));
  const int64_t* l = label.data<int64_t>();
  for (int64_t i = 0, n = label.numel(); i < n; ++i)
    TIDE_CHECK(l[i] == ignore || (l[i] >= 0 && l[i] < k), "op '", op, "': Label ('",
               ctx.InputName("Label"), "')[", i, "] = ", l[i], " is not a class in [0, ", k,
               ") nor ignore_index (", ignore, ")");
  return l;
}

template <typename T>
void SwceKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor logits = ctx.Input("Logits"), label = ctx.Input("Label");
  int axis = 0;
  ClassView v = tide::ops::GetClassView(op, logits.dims(), ctx.Attr<int32_t>("axis"), &axis);
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckSoftmaxLabel(op, logits.dims(), label.dims(), axis, soft);
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  Dims loss_dims = logits.dims();
  loss_dims[axis] = 1;
  const T* x = logits.data<T>();
  T* sm = ctx.Output("Softmax").mutable_data<T>(logits.dims(), ctx.place());
  T* loss = ctx.Output("Loss").mutable_data<T>(loss_dims, ctx.place());
  const T* soft_lbl = soft ? label.data<T>() : nullptr;
  const int64_t* hard_lbl = soft ? nullptr : CheckedLabels(ctx, label, v.k, ignore);
  ParallelFor(ctx, v.pre * v.post, 4 * v.k, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t i = r / v.post, j = r % v.post, base = i * v.k * v.post + j;
      T mx = x[base];
      for (int64_t c = 1; c < v.k; ++c) mx = std::max(mx, x[base + c * v.post]);
      T sum = 0;
      for (int64_t c = 0; c < v.k; ++c) sum += std::exp(x[base + c * v.post] - mx);
      const T lse = std::log(sum) + mx;  // log(sum(exp(x)))
      for (int64_t c = 0; c < v.k; ++c)
        sm[base + c * v.post] = std::exp(x[base + c * v.post] - lse);
      if (soft) {
        T l = 0;
        for (int64_t c = 0; c < v.k; ++c)
          l -= soft_lbl[base + c * v.post] * (x[base + c * v.post] - lse);
        loss[r] = l;
      } else {
        const int64_t cls = hard_lbl[r];
        loss[r] = cls == ignore ? T(0) : lse - x[base + cls * v.post];
      }
    }
  });
}

template <typename T>
void SwceGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor softmax = ctx.Input("Softmax"), label = ctx.Input("Label");
  Tensor dloss = ctx.Input(GradVarName("Loss").c_str());
  Tensor dx = ctx.Output(GradVarName("Logits").c_str());
  int axis = 0;
  ClassView v = tide::ops::GetClassView(op, softmax.dims(), ctx.Attr<int32_t>("axis"), &axis);
  const bool soft = ctx.Attr<bool>("soft_label");
  tide::ops::CheckSoftmaxLabel(op, softmax.dims(), label.dims(), axis, soft);
  TIDE_CHECK(dloss.numel() == v.pre * v.post, "op '", op, "': Loss@GRAD ",
             tide::ToString(dloss.dims()), " does not hold one value per row of Softmax ",
             tide::ToString(softmax.dims()));
  const int64_t ignore = ctx.Attr<int32_t>("ignore_index");
  const T* sm = softmax.data<T>();
  const T* g = dloss.data<T>();
  T* d = dx.mutable_data<T>(softmax.dims(), ctx.place());
  const T* soft_lbl = soft ? label.data<T>() : nullptr;
  const int64_t* hard_lbl = soft ? nullptr : CheckedLabels(ctx, label, v.k, ignore);
  ParallelFor(ctx, v.pre * v.post, 2 * v.k, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t i = r / v.post, j = r % v.post, base = i * v.k * v.post + j;
      if (soft) {
        T s = 0;
        for (int64_t c = 0; c < v.k; ++c) s += soft_lbl[base + c * v.post];
        for (int64_t c = 0; c < v.k; ++c) {
          const int64_t e2 = base + c * v.post;
          d[e2] = (sm[e2] * s - soft_lbl[e2]) * g[r];
        }
        continue;
      }
      const int64_t cls = hard_lbl[r];
      for (int64_t c = 0; c < v.k; ++c) {
        const int64_t e2 = base + c * v.post;
        d[e2] = cls == ignore ? T(0) : (sm[e2] - (c == cls ? T(1) : T(0))) * g[r];
      }
    }
  });
}

tide::OpSchema SwceAttrs(tide::OpSchema s) {
  return s
      .Attr("soft_label", false, "Label is a distribution over the classes (float, Logits' dims)")
      .Attr("ignore_index", int32_t(-100),
            "a hard label with this value gets loss 0 and no gradient")
      .Attr("numeric_stable_mode", true,
            "kept for Fluid programs: the kernel is always stable "
            "(log-sum-exp)")
      .Attr("axis", int32_t(-1), "the class axis (negative counts from the end)");
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    SwceAttrs(tide::OpSchema("softmax_with_cross_entropy")
                  .Comment("Softmax = softmax(Logits) along axis; Loss = -log(Softmax[Label]) "
                           "(hard) or -sum(Label * log(Softmax)) (soft), computed as log-sum-exp "
                           "so large logits cannot overflow.")
                  .Input("Logits", "unnormalised scores, e.g. [N, K]")
                  .Input("Label",
                         "int64 class ids with 1 on the class axis (e.g. [N, 1]), or a "
                         "float distribution with Logits' dims (soft_label)")
                  .Output("Softmax", "softmax of Logits, Logits' dims")
                  .Output("Loss", "the cross entropy, Logits' dims with 1 on the class axis")
                  .KernelDataTypeFrom("Logits")
                  .InferShape(SwceInferShape)
                  .Grad([](tide::GradMaker& g) {
                    g.NewOp("softmax_with_cross_entropy_grad")
                        .Input("Label", g.Input("Label"))
                        .Input("Softmax", g.Output("Softmax"))
                        .Input(GradVarName("Loss"), g.OutputGrad("Loss"))
                        .Output(GradVarName("Logits"), g.InputGrad("Logits"))
                        .CopyAttrs();
                  })));
TIDE_REGISTER_OP(SwceAttrs(tide::OpSchema("softmax_with_cross_entropy_grad")
                               .Comment("Logits@GRAD = (Softmax * sum(Label) - Label) * Loss@GRAD "
                                        "(one-hot Label when hard; 0 for ignore_index).")
                               .Input("Label", "the forward labels")
                               .Input("Softmax", "the forward softmax")
                               .Input(GradVarName("Loss"), "gradient of Loss")
                               .Output(GradVarName("Logits"), "gradient of Logits")
                               .KernelDataTypeFrom("Softmax")
                               .InferShape([](tide::InferShapeContext& ctx) {
                                 const std::string g = GradVarName("Logits");
                                 ctx.SetOutputDims(g.c_str(), ctx.InputDims("Softmax"));
                                 ctx.SetOutputDataType(g.c_str(), ctx.InputDataType("Softmax"));
                               })));
TIDE_REGISTER_KERNEL("softmax_with_cross_entropy", "cpu", SwceKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("softmax_with_cross_entropy_grad", "cpu", SwceGradKernel, OPS_NN_FLOAT_TYPES);
