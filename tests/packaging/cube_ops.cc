// cube_ops.cc: a small op pack that tests/packaging builds from Python with
// tide.utils.cpp_extension.load. ext.cube: Out = X^3, with its gradient dX = 3 X^2 dOut.
#include <tide/plugin.hpp>

namespace {

template <typename T>
void Cube(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  const T* in = x.data<T>();
  T* o = out.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * in[i] * in[i];
}

template <typename T>
void CubeGrad(tide::KernelContext& ctx) {
  tide::Tensor x = ctx.Input("X"), dout = ctx.Input("Out@GRAD"), dx = ctx.Output("X@GRAD");
  const T* in = x.data<T>();
  const T* g = dout.data<T>();
  T* d = dx.mutable_data<T>(x.dims(), ctx.place());
  for (int64_t i = 0; i < x.numel(); ++i) d[i] = T(3) * in[i] * in[i] * g[i];
}

}  // namespace

TIDE_REGISTER_OP(tide::OpSchema("ext.cube")
                     .Comment("Out = X^3")
                     .Input("X", "input")
                     .Output("Out", "X cubed")
                     .InferShape(tide::SameShapeAsInput("X", "Out"))
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("ext.cube_grad")
                           .Input("X", g.Input("X"))
                           .Input("Out@GRAD", g.OutputGrad("Out"))
                           .Output("X@GRAD", g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("ext.cube_grad")
                     .Input("X")
                     .Input("Out@GRAD")
                     .Output("X@GRAD")
                     .InferShape(tide::SameShapeAsInput("X", "X@GRAD")));
TIDE_REGISTER_KERNEL("ext.cube", "cpu", Cube, float, double);
TIDE_REGISTER_KERNEL("ext.cube_grad", "cpu", CubeGrad, float, double);
TIDE_PLUGIN("cube_ops", "0.1.0", "built from Python by tide.utils.cpp_extension.load");
