// reduce_ops.cc: mean (of all elements), sum (of a list of tensors) and their grads.
#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;

template <typename T>
void MeanKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  TIDE_CHECK(x.numel() > 0, "op 'mean': X ('", ctx.InputName("X"), "') is empty");
  out.Resize({1});
  tide::EigenVector<T> o(out.mutable_data<T>(ctx.place()), 1);
  Eigen::TensorMap<Eigen::Tensor<T, 0, Eigen::RowMajor, Eigen::DenseIndex>> o0(o.data());
  if (x.numel() >= kParallelThreshold) o0.device(tide::EigenDevice(ctx)) = In<T>(x).mean();
  else o0 = In<T>(x).mean();
}

template <typename T>
void MeanGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  dx.Resize(x.dims());
  T g = dout.data<T>()[0] / static_cast<T>(x.numel());
  auto d = Out<T>(dx, ctx);
  Eval(ctx, d, d.constant(g));
}

template <typename T>
void SumKernel(KernelContext& ctx) {
  std::vector<Tensor> xs = ctx.Inputs("X");
  TIDE_CHECK(!xs.empty(), "op 'sum' needs at least one input");
  Tensor out = ctx.Output("Out");
  for (size_t i = 1; i < xs.size(); ++i)
    TIDE_CHECK(xs[i].dims() == xs[0].dims(), "op 'sum': input ", i, " ('", ctx.InputName("X", i),
               "') has dims ", tide::ToString(xs[i].dims()), ", input 0 has ",
               tide::ToString(xs[0].dims()));
  // Out may be one of the inputs (in-place accumulation): sum into a scratch buffer first.
  const int64_t n = xs[0].numel();
  T* acc = ctx.TempBuffer<T>(static_cast<size_t>(n));
  tide::EigenVector<T> a(acc, n);
  Eval(ctx, a, In<T>(xs[0]));
  for (size_t i = 1; i < xs.size(); ++i) Eval(ctx, a, a + In<T>(xs[i]));
  out.Resize(xs[0].dims());
  Eval(ctx, Out<T>(out, ctx), a);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("mean")
                     .Comment("Out = the mean of all elements of X, as a [1] tensor.")
                     .Input("X", "input").Output("Out", "[1]")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", {1});
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .DefaultGrad());
TIDE_REGISTER_OP(tide::OpSchema("mean_grad")
                     .Input("X").Input("Out").AsDispensable().Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("mean", "cpu", MeanKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("mean_grad", "cpu", MeanGradKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("sum")
                     .Comment("Out = the elementwise sum of the X tensors (all of one shape).")
                     .Input("X", "tensors to add").AsDuplicable()
                     .Output("Out", "their sum")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", c.InputDims("X", 0));
                       c.SetOutputDataType("Out", c.InputDataType("X", 0));
                       c.ShareLoD("X", "Out");
                     })
                     .Grad([](tide::GradMaker& g) {
                       std::vector<std::string> dxs = g.InputGrad("X");
                       for (const auto& dx : dxs) {
                         if (dx == tide::kEmptyVarName) continue;
                         g.NewOp("scale").Input("X", g.OutputGrad("Out")).Output("Out", {dx})
                             .Attr("scale", 1.0f);
                       }
                     }));
TIDE_REGISTER_KERNEL("sum", "cpu", SumKernel, OPS_MATH_NUMERIC_TYPES);
