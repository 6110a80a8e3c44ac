// elementwise_ops.cc: elementwise_add/sub/mul/div with Fluid's broadcast rule (Y repeated over
// X at `axis`), and their grads (the broadcast dims of dY are summed).
#include "common.h"

namespace ops_math {
namespace {

// Each functor works on scalars and Eigen expressions alike.
struct AddF {
  template <typename A, typename B> static auto Fwd(const A& x, const B& y) { return x + y; }
};
struct SubF {
  template <typename A, typename B> static auto Fwd(const A& x, const B& y) { return x - y; }
};
struct MulF {
  template <typename A, typename B> static auto Fwd(const A& x, const B& y) { return x * y; }
};
struct DivF {
  template <typename A, typename B> static auto Fwd(const A& x, const B& y) { return x / y; }
};
struct MaxF {
  template <typename A, typename B> static auto Fwd(const A& x, const B& y) {
    if constexpr (std::is_arithmetic_v<A>) return x > y ? x : y;
    else return x.cwiseMax(y);
  }
};
struct MinF {
  template <typename A, typename B> static auto Fwd(const A& x, const B& y) {
    if constexpr (std::is_arithmetic_v<A>) return x < y ? x : y;
    else return x.cwiseMin(y);
  }
};

Broadcast BroadcastOf(const KernelContext& ctx, const Tensor& x, const Tensor& y) {
  return GetBroadcast(ctx.op_type(), x.dims(), y.dims(), ctx.Attr<int32_t>("axis"));
}

template <typename T, typename F>
void ElementwiseKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
  if (x.SameDims(y) && !(std::is_same_v<F, DivF> && std::is_integral_v<T>)) {  // the common case
    out.ResizeLike(x);
    EigenEval(ctx, Out<T>(out, ctx), F::Fwd(In<T>(x), In<T>(y)));
    return;
  }
  Broadcast b = BroadcastOf(ctx, x, y);
  if constexpr (std::is_same_v<F, DivF> && std::is_integral_v<T>) {
    const T* yd = y.data<T>();
    TIDE_CHECK(std::find(yd, yd + y.numel(), T(0)) == yd + y.numel(),
               "op 'elementwise_div': integer division by zero (Y '", ctx.InputName("Y"), "' has a 0)");
  }
  out.Resize(x.dims());
  if (b.same) {
    EigenEval(ctx, Out<T>(out, ctx), F::Fwd(In<T>(x), In<T>(y)));
    return;
  }
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  T* od = out.mutable_data<T>(ctx.place());
  for (int64_t i = 0; i < b.pre; ++i)
    for (int64_t j = 0; j < b.n; ++j) {
      const T yv = yd[j];
      const int64_t base = (i * b.n + j) * b.post;
      for (int64_t k = 0; k < b.post; ++k) od[base + k] = F::Fwd(xd[base + k], yv);
    }
}

template <typename T> void AddKernel(KernelContext& c) { ElementwiseKernel<T, AddF>(c); }
template <typename T> void SubKernel(KernelContext& c) { ElementwiseKernel<T, SubF>(c); }
template <typename T> void MulKernel(KernelContext& c) { ElementwiseKernel<T, MulF>(c); }
template <typename T> void DivKernel(KernelContext& c) { ElementwiseKernel<T, DivF>(c); }
template <typename T> void MaxKernel(KernelContext& c) { ElementwiseKernel<T, MaxF>(c); }
template <typename T> void MinKernel(KernelContext& c) { ElementwiseKernel<T, MinF>(c); }

// Per-element partial derivatives: dx = dout * DX(x, y, out), dy = dout * DY(x, y, out).
struct AddG {
  template <typename T> static T DX(T, T, T) { return T(1); }
  template <typename T> static T DY(T, T, T) { return T(1); }
};
struct SubG {
  template <typename T> static T DX(T, T, T) { return T(1); }
  template <typename T> static T DY(T, T, T) { return T(-1); }
};
struct MulG {
  template <typename T> static T DX(T, T y, T) { return y; }
  template <typename T> static T DY(T x, T, T) { return x; }
};
struct DivG {
  template <typename T> static T DX(T, T y, T) { return T(1) / y; }
  template <typename T> static T DY(T, T y, T out) { return -out / y; }
};
// The gradient goes to the larger (max) or smaller (min) operand; ties go to Y, as in Fluid.
struct MaxG {
  template <typename T> static T DX(T x, T y, T) { return x > y ? T(1) : T(0); }
  template <typename T> static T DY(T x, T y, T) { return x > y ? T(0) : T(1); }
};
struct MinG {
  template <typename T> static T DX(T x, T y, T) { return x < y ? T(1) : T(0); }
  template <typename T> static T DY(T x, T y, T) { return x < y ? T(0) : T(1); }
};

template <typename T, typename G>
void ElementwiseGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), y = ctx.Input("Y");
  Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
  Tensor out_t = ctx.OptionalInput("Out");
  Broadcast b = BroadcastOf(ctx, x, y);
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  const T* dod = dout.data<T>();
  const T* od = out_t ? out_t.data<T>() : nullptr;
  Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
  Tensor dy = ctx.OptionalOutput(tide::GradVarName("Y").c_str());
  T* dxd = dx ? dx.mutable_data<T>(x.dims(), ctx.place()) : nullptr;
  T* dyd = dy ? dy.mutable_data<T>(y.dims(), ctx.place()) : nullptr;
  if (dyd) std::fill(dyd, dyd + b.n, T(0));
  for (int64_t i = 0; i < b.pre; ++i)
    for (int64_t j = 0; j < b.n; ++j) {
      const T yv = yd[j];
      const int64_t base = (i * b.n + j) * b.post;
      T acc = 0;
      for (int64_t k = 0; k < b.post; ++k) {
        const int64_t e = base + k;
        const T o = od ? od[e] : T(0);
        const T yy = b.same ? yd[e] : yv;
        if (dxd) dxd[e] = dod[e] * G::DX(xd[e], yy, o);
        if (dyd) {
          if (b.same) dyd[e] = dod[e] * G::DY(xd[e], yy, o);
          else acc += dod[e] * G::DY(xd[e], yy, o);
        }
      }
      if (dyd && !b.same) dyd[j] += acc;
    }
}

template <typename T> void AddGradKernel(KernelContext& c) { ElementwiseGradKernel<T, AddG>(c); }
template <typename T> void SubGradKernel(KernelContext& c) { ElementwiseGradKernel<T, SubG>(c); }
template <typename T> void MulGradKernel(KernelContext& c) { ElementwiseGradKernel<T, MulG>(c); }
template <typename T> void DivGradKernel(KernelContext& c) { ElementwiseGradKernel<T, DivG>(c); }
template <typename T> void MaxGradKernel(KernelContext& c) { ElementwiseGradKernel<T, MaxG>(c); }
template <typename T> void MinGradKernel(KernelContext& c) { ElementwiseGradKernel<T, MinG>(c); }

void ElementwiseShape(tide::InferShapeContext& ctx) {
  Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y");
  // Unknown (-1) dims are checked at run time.
  bool known = std::none_of(x.begin(), x.end(), [](int64_t d) { return d < 0; }) &&
               std::none_of(y.begin(), y.end(), [](int64_t d) { return d < 0; });
  if (known) GetBroadcast(ctx.op_type(), x, y, ctx.Attr<int32_t>("axis"));
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

void ElementwiseGradShape(tide::InferShapeContext& ctx) {
  for (const char* p : {"X", "Y"}) {
    std::string g = tide::GradVarName(p);
    if (ctx.HasOutput(g.c_str())) {
      ctx.SetOutputDims(g.c_str(), ctx.InputDims(p));
      ctx.SetOutputDataType(g.c_str(), ctx.InputDataType(p));
    }
  }
}

tide::OpSchema ElementwiseSchema(const std::string& type, const char* formula, bool grad_uses_out) {
  return tide::OpSchema(type)
      .Comment(std::string("Out = ") + formula +
               ", Y broadcast over X: Y's dims match X's from `axis` (-1: the trailing dims).")
      .Input("X", "the first operand")
      .Input("Y", "the second operand, broadcast over X")
      .Output("Out", "same dims as X")
      .Attr("axis", int32_t(-1), "where Y's dims start in X's; -1 aligns the trailing dims")
      .InferShape(ElementwiseShape)
      .Grad([type, grad_uses_out](tide::GradMaker& g) {
        auto op = g.NewOp(type + "_grad");
        op.Input("X", g.Input("X")).Input("Y", g.Input("Y"));
        if (grad_uses_out) op.Input("Out", g.Output("Out"));
        op.Input(tide::GradVarName("Out"), g.OutputGrad("Out"))
            .Output(tide::GradVarName("X"), g.InputGrad("X"))
            .Output(tide::GradVarName("Y"), g.InputGrad("Y"))
            .CopyAttrs();
      });
}

tide::OpSchema ElementwiseGradSchema(const std::string& type) {
  return tide::OpSchema(type)
      .Input("X").Input("Y").Input("Out").AsDispensable()
      .Input(tide::GradVarName("Out"))
      .Output(tide::GradVarName("X")).AsDispensable()
      .Output(tide::GradVarName("Y")).AsDispensable()
      .Attr("axis", int32_t(-1))
      .InferShape(ElementwiseGradShape);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ElementwiseSchema("elementwise_add", "X + Y", false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_sub", "X - Y", false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_mul", "X * Y", false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_div", "X / Y", true));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_max", "max(X, Y)", false));
TIDE_REGISTER_OP(ElementwiseSchema("elementwise_min", "min(X, Y)", false));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_max_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_min_grad"));
TIDE_REGISTER_KERNEL("elementwise_max", "cpu", MaxKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_min", "cpu", MinKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_max_grad", "cpu", MaxGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_min_grad", "cpu", MinGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_add_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_sub_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_mul_grad"));
TIDE_REGISTER_OP(ElementwiseGradSchema("elementwise_div_grad"));
TIDE_REGISTER_KERNEL("elementwise_add", "cpu", AddKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_sub", "cpu", SubKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_mul", "cpu", MulKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_div", "cpu", DivKernel, OPS_MATH_NUMERIC_TYPES);
TIDE_REGISTER_KERNEL("elementwise_add_grad", "cpu", AddGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_sub_grad", "cpu", SubGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_mul_grad", "cpu", MulGradKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("elementwise_div_grad", "cpu", DivGradKernel, OPS_MATH_FLOAT_TYPES);
