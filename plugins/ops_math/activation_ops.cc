// activation_ops.cc: relu, sigmoid, tanh, square and scale, with grads. Grads of relu, sigmoid
// and tanh read Out (as in Fluid), square's reads X.
#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

struct Relu {
  template <typename E, typename T> static auto Fwd(const E& x, T) { return x.cwiseMax(T(0)); }
  // d/dx in terms of (x or out) and dout.
  template <typename E, typename T> static auto Bwd(const E& out, const E& dout, T) {
    return dout * (out > T(0)).template cast<T>();
  }
};
struct Sigmoid {
  template <typename E, typename T> static auto Fwd(const E& x, T) { return x.sigmoid(); }
  template <typename E, typename T> static auto Bwd(const E& out, const E& dout, T) {
    return dout * out * (out.constant(T(1)) - out);
  }
};
struct Tanh {
  template <typename E, typename T> static auto Fwd(const E& x, T) { return x.tanh(); }
  template <typename E, typename T> static auto Bwd(const E& out, const E& dout, T) {
    return dout * (out.constant(T(1)) - out.square());
  }
};
struct Square {
  template <typename E, typename T> static auto Fwd(const E& x, T) { return x.square(); }
  template <typename E, typename T> static auto Bwd(const E& x, const E& dout, T) {
    return dout * x * T(2);
  }
};

template <typename T, typename F>
void ActKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  out.ResizeLike(x);
  EigenEval(ctx, Out<T>(out, ctx), F::Fwd(In<T>(x), T(0)));
}

// `from` is "Out" for relu/sigmoid/tanh, "X" for square.
template <typename T, typename F, bool kFromX>
void ActGradKernel(KernelContext& ctx) {
  Tensor from = ctx.Input(kFromX ? "X" : "Out");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  dx.ResizeLike(from);
  EigenEval(ctx, Out<T>(dx, ctx), F::Bwd(In<T>(from), In<T>(dout), T(0)));
}

template <typename T> void ReluKernel(KernelContext& c) { ActKernel<T, Relu>(c); }
template <typename T> void SigmoidKernel(KernelContext& c) { ActKernel<T, Sigmoid>(c); }
template <typename T> void TanhKernel(KernelContext& c) { ActKernel<T, Tanh>(c); }
template <typename T> void SquareKernel(KernelContext& c) { ActKernel<T, Square>(c); }
template <typename T> void ReluGradKernel(KernelContext& c) { ActGradKernel<T, Relu, false>(c); }
template <typename T> void SigmoidGradKernel(KernelContext& c) { ActGradKernel<T, Sigmoid, false>(c); }
template <typename T> void TanhGradKernel(KernelContext& c) { ActGradKernel<T, Tanh, false>(c); }
template <typename T> void SquareGradKernel(KernelContext& c) { ActGradKernel<T, Square, true>(c); }

tide::OpSchema ActSchema(const std::string& type, const char* formula, bool grad_from_x) {
  return tide::OpSchema(type)
      .Comment(std::string("Out = ") + formula + ", elementwise.")
      .Input("X", "input").Output("Out", "same dims as X")
      .InferShape(tide::SameShapeAsInput("X", "Out"))
      .Grad([type, grad_from_x](tide::GradMaker& g) {
        auto op = g.NewOp(type + "_grad");
        if (grad_from_x) op.Input("X", g.Input("X"));
        else op.Input("Out", g.Output("Out"));
        op.Input(GradVarName("Out"), g.OutputGrad("Out")).Output(GradVarName("X"), g.InputGrad("X"));
      });
}

tide::OpSchema ActGradSchema(const std::string& type, bool from_x) {
  const char* from = from_x ? "X" : "Out";
  return tide::OpSchema(type)
      .Input(from).Input(GradVarName("Out")).Output(GradVarName("X"))
      .InferShape(tide::SameShapeAsInput(from, GradVarName("X")));
}

template <typename T>
void ScaleKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  T scale = static_cast<T>(ctx.Attr<float>("scale")), bias = static_cast<T>(ctx.Attr<float>("bias"));
  out.ResizeLike(x);
  if (ctx.Attr<bool>("bias_after_scale"))
    EigenEval(ctx, Out<T>(out, ctx), In<T>(x) * scale + bias);
  else
    EigenEval(ctx, Out<T>(out, ctx), (In<T>(x) + bias) * scale);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ActSchema("relu", "max(X, 0)", false));
TIDE_REGISTER_OP(ActSchema("sigmoid", "1 / (1 + exp(-X))", false));
TIDE_REGISTER_OP(ActSchema("tanh", "tanh(X)", false));
TIDE_REGISTER_OP(ActSchema("square", "X^2", true));
TIDE_REGISTER_OP(ActGradSchema("relu_grad", false));
TIDE_REGISTER_OP(ActGradSchema("sigmoid_grad", false));
TIDE_REGISTER_OP(ActGradSchema("tanh_grad", false));
TIDE_REGISTER_OP(ActGradSchema("square_grad", true));
TIDE_REGISTER_KERNEL("relu", "cpu", ReluKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sigmoid", "cpu", SigmoidKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("tanh", "cpu", TanhKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("square", "cpu", SquareKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("relu_grad", "cpu", ReluGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("sigmoid_grad", "cpu", SigmoidGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("tanh_grad", "cpu", TanhGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("square_grad", "cpu", SquareGradKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("scale")
                     .Comment("Out = scale * X + bias (bias_after_scale), else scale * (X + bias).")
                     .Input("X", "input").Output("Out", "same dims as X")
                     .Attr("scale", 1.0f, "the factor")
                     .Attr("bias", 0.0f, "the offset")
                     .Attr("bias_after_scale", true, "add bias after scaling")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("scale")
                           .Input("X", g.OutputGrad("Out"))
                           .Output("Out", g.InputGrad("X"))
                           .Attr("scale", g.Attr<float>("scale"))
                           .Attr("bias", 0.0f);
                     }));
TIDE_REGISTER_KERNEL("scale", "cpu", ScaleKernel, OPS_MATH_NUMERIC_TYPES);
