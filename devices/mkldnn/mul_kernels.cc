// mul_kernels.cc: mul (Fluid's fc core: X flattened at x_num_col_dims times Y flattened at
// y_num_col_dims) and mul_grad on the oneDNN matmul primitive. A blocked X (a conv or pool
// output) is reordered to NCHW first, so the flattening is Fluid's. Outputs are plain.
#include <tide/ops/matmul.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

constexpr auto f32 = memory::data_type::f32;

struct MulShape {
  int64_t m, k, n;
  Dims out;
};

MulShape GetShape(const KernelContext& ctx, const Dims& x, const Dims& y) {
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  MulShape s;
  s.out = tide::ops::MulOutDims(ctx.op_type(), x, y, xc, yc);
  s.m = DimsProduct(x, 0, xc);
  s.k = DimsProduct(x, xc, x.size());
  s.n = DimsProduct(y, yc, y.size());
  return s;
}

// A row-major [rows, cols] matrix, or the transpose of a row-major [cols, rows] one.
memory::desc Matrix(int64_t rows, int64_t cols, bool transposed = false) {
  if (!transposed) return memory::desc({rows, cols}, f32, Tag::ab);
  return memory::desc({rows, cols}, f32, memory::dims{1, rows});
}

struct MatMul {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
};

// dst[M, N] = src[M, K] * weights[K, N] with the given operand layouts.
void RunMatMul(Exec& e, const char* what, const memory::desc& a, const memory::desc& b,
               const memory::desc& c, const void* ad, const void* bd, void* cd) {
  Key key(what);
  for (const memory::desc* md : {&a, &b}) {
    const auto& st = md->data.format_desc.blocking.strides;
    key(md->dims())(st[0])(st[1]);
  }
  auto entry = e.cache().GetOrCreate<MatMul>(key.str(), [&] {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), DefaultAttr(), e.engine());
    return MatMul{pd, dnnl::matmul(pd)};
  });
  e.Run(entry->prim, entry->pd,
        {{DNNL_ARG_SRC, e.View(a, ad)}, {DNNL_ARG_WEIGHTS, e.View(b, bd)},
         {DNNL_ARG_DST, e.View(c, cd)}});
}

float* PlainOut(Tensor& t, const Dims& d, const tide::Place& place) {
  t.Resize(d);
  float* p = t.mutable_data<float>(place);
  t.set_layout(TIDE_LAYOUT_ANY);
  t.set_format(0);
  return p;
}

template <typename T>
void MulKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
    MulShape s = GetShape(ctx, x.dims(), y.dims());
    Exec e(ctx);
    memory xm = PlainView(e, x, op, "X"), ym = PlainView(e, y, op, "Y");
    float* od = PlainOut(out, s.out, ctx.place());
    if (s.m * s.n == 0) return;
    if (s.k == 0) {
      std::fill(od, od + s.m * s.n, 0.0f);
      return;
    }
    RunMatMul(e, "mul", Matrix(s.m, s.k), Matrix(s.k, s.n), Matrix(s.m, s.n),
              xm.get_data_handle(), ym.get_data_handle(), od);
    e.Wait();
  });
}

template <typename T>
void MulGradKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y");
    Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
    Tensor dy = ctx.OptionalOutput(tide::GradVarName("Y").c_str());
    MulShape s = GetShape(ctx, x.dims(), y.dims());
    TIDE_CHECK(dout.numel() == s.m * s.n, "op '", op, "': Out@GRAD has dims ",
               tide::ToString(dout.dims()), ", expected ", tide::ToString(s.out));
    Exec e(ctx);
    memory gm = PlainView(e, dout, op, "Out@GRAD");
    if (dx) {  // dX[M, K] = dOut[M, N] * Y^T
      memory ym = PlainView(e, y, op, "Y");
      float* d = PlainOut(dx, x.dims(), ctx.place());
      if (s.n == 0)
        std::fill(d, d + s.m * s.k, 0.0f);
      else if (s.m * s.k > 0)
        RunMatMul(e, "mul_grad_x", Matrix(s.m, s.n), Matrix(s.n, s.k, true), Matrix(s.m, s.k),
                  gm.get_data_handle(), ym.get_data_handle(), d);
    }
    if (dy) {  // dY[K, N] = X^T * dOut[M, N]
      memory xm = PlainView(e, x, op, "X");
      float* d = PlainOut(dy, y.dims(), ctx.place());
      if (s.m == 0)
        std::fill(d, d + s.k * s.n, 0.0f);
      else if (s.k * s.n > 0)
        RunMatMul(e, "mul_grad_y", Matrix(s.k, s.m, true), Matrix(s.m, s.n), Matrix(s.k, s.n),
                  xm.get_data_handle(), gm.get_data_handle(), d);
    }
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("mul", MulKernel);
TIDE_MKLDNN_KERNEL("mul_grad", MulGradKernel);
