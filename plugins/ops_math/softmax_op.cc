// softmax_op.cc: softmax along one axis (numerically stable) and its grad; the forward CPU
// kernel is the SDK's header-only tide/kernels/softmax.hpp.
#include <cmath>
#include <limits>
#include <tide/kernels/softmax.hpp>
#include <tide/ops/softmax.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::AxisSplit;

// dX = (dOut - sum(dOut * Out)) * Out along the axis.
template <typename T>
void SoftmaxGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetSoftmaxGradArgs<T>(ctx);
  const AxisSplit s = a.s;
  const T* od = a.out;
  const T* gd = a.dout;
  T* dd = a.dx;
  for (int64_t i = 0; i < s.pre; ++i)
    for (int64_t k = 0; k < s.post; ++k) {
      const int64_t base = i * s.n * s.post + k;
      T dot = 0;
      for (int64_t j = 0; j < s.n; ++j) dot += gd[base + j * s.post] * od[base + j * s.post];
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t e = base + j * s.post;
        dd[e] = (gd[e] - dot) * od[e];
      }
    }
}

// softmax_grad of the forward op's Out (its attributes for the caller to set).
tide::GradOp SoftmaxGradOfOut(tide::GradMaker& g) {
  return g.NewOp("softmax_grad")
      .Input("Out", g.Output("Out"))
      .Input(GradVarName("Out"), g.OutputGrad("Out"))
      .Output(GradVarName("X"), g.InputGrad("X"));
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("softmax")
                     .Comment("Out = exp(X) / sum(exp(X)) along `axis`.")
                     .Input("X", "input")
                     .Output("Out", "same dims as X")
                     .Attr("axis", int32_t(-1), "the axis normalised over")
                     // Paddle 2.x's backend hints on softmax; none changes the result.
                     .Attr("data_format", std::string("AnyLayout"), "Paddle cuDNN hint (ignored)")
                     .Attr("is_test", false, "Paddle's inference hint (ignored)")
                     .Attr("mkldnn_data_type", std::string("float32"),
                           "oneDNN precision hint "
                           "(ignored)")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) { SoftmaxGradOfOut(g).CopyAttrs(); }));
TIDE_REGISTER_OP(tide::OpSchema("softmax_grad")
                     .Input("Out")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("axis", int32_t(-1))
                     .Attr("data_format", std::string("AnyLayout"))
                     .Attr("is_test", false)
                     .Attr("mkldnn_data_type", std::string("float32"))
                     .InferShape(tide::SameShapeAsInput("Out", GradVarName("X"))));
TIDE_REGISTER_KERNEL("softmax", "cpu", tide::kernels::Softmax, OPS_MATH_FLOAT_TYPES);

// Paddle's incubate softmax_mask_fuse_upper_triangle (GPT's causal attention: X [B, H, S, S]);
// Tide's mask_value and diagonal also make it of an exported causal mask, which
// InferenceTranspiler's fuse_causal_softmax folds: softmax(X + tril_triu(fill_any_like(X, v),
// diagonal, lower = false)) in one pass over X instead of four.
TIDE_REGISTER_OP(
    tide::OpSchema("fused_softmax_mask_upper_triangle")
        .Comment("Out = softmax along the last dim of X with mask_value added to the entries "
                 "(i, j) of the last two dims where j - i >= diagonal.")
        .Input("X", "[..., q, k] attention scores")
        .Output("Out", "X's dims")
        .Attr("mask_value", -std::numeric_limits<float>::infinity(),
              "added to the masked entries (-inf: probability 0, Paddle's op)")
        .Attr("diagonal", int32_t(1), "the first masked diagonal (1: above the main one)")
        .InferShape(tide::SameShapeAsInput("X", "Out"))
        // The mask is a constant added to X, so dX is softmax's grad of Out along the last dim
        // (0 where Out is, i.e. where -inf masked).
        .Grad([](tide::GradMaker& g) { SoftmaxGradOfOut(g).Attr("axis", int32_t(-1)); }));
TIDE_REGISTER_KERNEL("fused_softmax_mask_upper_triangle", "cpu",
                     tide::kernels::SoftmaxMaskUpperTriangle, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("softmax_grad", "cpu", SoftmaxGradKernel, OPS_MATH_FLOAT_TYPES);
// gumbel_softmax's grad (random_ops.cc) is softmax's of its Out, as Paddle's.
TIDE_REGISTER_KERNEL("gumbel_softmax_grad", "cpu", SoftmaxGradKernel, OPS_MATH_FLOAT_TYPES);
