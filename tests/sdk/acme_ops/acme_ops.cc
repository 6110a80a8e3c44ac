// acme_ops.cc: a vendor's op pack, as a third party writes one: only <tide/plugin.hpp>.
// acme.axpb: Out = a * X + b, with its gradient; acme.scale64: Out = k * X with a float64 `k`.
#include <tide/plugin.hpp>

namespace {

template <typename T>
void Axpb(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const T a = static_cast<T>(ctx.Attr<float>("a")), b = static_cast<T>(ctx.Attr<float>("b"));
  const T* in = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = a * in[i] + b;
}

template <typename T>
void AxpbGrad(tide::KernelContext& ctx) {
  tide::Tensor dout = ctx.Input("Out@GRAD"), dx = ctx.Output("X@GRAD");
  const T a = static_cast<T>(ctx.Attr<float>("a"));
  const T* g = dout.data<T>();
  T* d = dx.mutable_data<T>(dout.dims(), ctx.place());
  for (int64_t i = 0; i < dout.numel(); ++i) d[i] = a * g[i];
}

template <typename T>
void Scale64(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const double k = ctx.Attr<double>("k");  // exact: a float64 attribute
  const T* in = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = static_cast<T>(k * in[i]);
}

}  // namespace

TIDE_REGISTER_OP(tide::OpSchema("acme.scale64")
                     .Comment("Out = k * X, k in double precision")
                     .Input("X", "input")
                     .Output("Out", "k * X")
                     .Attr("k", 1.0, "the factor (float64)")
                     .NoGradient()
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("acme.scale64", "cpu", Scale64, double);
TIDE_REGISTER_OP(tide::OpSchema("acme.axpb")
                     .Comment("Out = a * X + b")
                     .Input("X", "input")
                     .Output("Out", "a * X + b")
                     .Attr("a", 1.0f, "slope")
                     .Attr("b", 0.0f, "offset")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("acme.axpb_grad")
                           .Input("Out@GRAD", g.OutputGrad("Out"))
                           .Output("X@GRAD", g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("acme.axpb_grad")
                     .Input("Out@GRAD")
                     .Output("X@GRAD")
                     .Attr("a", 1.0f)
                     .Attr("b", 0.0f)
                     .InferShape(tide::SameShapeAsInput("Out@GRAD", "X@GRAD")));
TIDE_REGISTER_KERNEL("acme.axpb", "cpu", Axpb, float, double);
TIDE_REGISTER_KERNEL("acme.axpb_grad", "cpu", AxpbGrad, float, double);
TIDE_PLUGIN("acme_ops", "1.2.3", "an out-of-tree op pack built with find_package(Tide)");
