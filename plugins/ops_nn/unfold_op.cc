// unfold_op.cc: Paddle's unfold (F.unfold, im2col): the kernel_sizes patches of X [N, C, H, W]
// as Y [N, C * kh * kw, L] (row c * kh * kw + i * kw + j; L the patch positions, row-major),
// with strides, paddings [top, left, bottom, right] and dilations; and its grad (col2im: each
// Y@GRAD element added back to the pixel it read).
#include "common.h"

namespace ops_nn {
namespace {

std::string IntsString(const std::vector<int32_t>& v) {
  return tide::ToString(Dims(v.begin(), v.end()));
}

struct UnfoldGeom {
  int64_t n, c, h, w, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow;
  Dims OutDims() const { return {n, c * kh * kw, oh * ow}; }
};

template <typename Ctx>
UnfoldGeom GetUnfold(const Ctx& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D [N, C, H, W], got ", tide::ToString(x));
  const auto k = ctx.template Attr<std::vector<int32_t>>("kernel_sizes");
  const auto s = ctx.template Attr<std::vector<int32_t>>("strides");
  const auto p = ctx.template Attr<std::vector<int32_t>>("paddings");
  const auto d = ctx.template Attr<std::vector<int32_t>>("dilations");
  TIDE_CHECK(k.size() == 2 && k[0] > 0 && k[1] > 0, "op '", op,
             "': kernel_sizes must be 2 positive values, got ", IntsString(k));
  TIDE_CHECK(s.size() == 2 && s[0] > 0 && s[1] > 0, "op '", op,
             "': strides must be 2 positive values, got ", IntsString(s));
  TIDE_CHECK(d.size() == 2 && d[0] > 0 && d[1] > 0, "op '", op,
             "': dilations must be 2 positive values, got ", IntsString(d));
  TIDE_CHECK(p.size() == 4 && *std::min_element(p.begin(), p.end()) >= 0, "op '", op,
             "': paddings must be 4 values >= 0 (top, left, bottom, right), got ", IntsString(p));
  UnfoldGeom g{x[0], x[1], x[2], x[3], k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], -1, -1};
  auto out_size = [&](int64_t in, int64_t lo, int64_t hi, int64_t kk, int64_t dd, int64_t ss,
                      const char* axis) -> int64_t {
    if (in < 0) return -1;
    const int64_t span = dd * (kk - 1) + 1;
    TIDE_CHECK(in + lo + hi >= span, "op '", op, "': the ", axis, " kernel (", kk, ", dilation ",
               dd, ") spans ", span, " pixels, more than X's padded ", axis, " ", in + lo + hi,
               " (X ", tide::ToString(x), ")");
    return (in + lo + hi - span) / ss + 1;
  };
  g.oh = out_size(g.h, p[0], p[2], g.kh, g.dh, g.sh, "height");
  g.ow = out_size(g.w, p[1], p[3], g.kw, g.dw, g.sw, "width");
  return g;
}

template <typename T, bool kGrad>
void Unfold(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const UnfoldGeom g = GetUnfold(ctx, x.dims());
  const T* xd = nullptr;
  T* y = nullptr;
  const T* gy = nullptr;
  T* dx = nullptr;
  if constexpr (!kGrad) {
    xd = x.data<T>();
    y = ctx.Output("Y").mutable_data<T>(g.OutDims(), ctx.place());
  } else {
    Tensor dy = ctx.Input(GradVarName("Y").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Y@GRAD", dy.dims(), g.OutDims());
    gy = dy.data<T>();
    dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dx, dx + x.numel(), T(0));
  }
  const int64_t l = g.oh * g.ow;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t i = 0; i < g.kh; ++i)
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t row = (b * g.c * g.kh * g.kw + (c * g.kh + i) * g.kw + j) * l;
          for (int64_t oy = 0; oy < g.oh; ++oy) {
            const int64_t sy = oy * g.sh - g.pt + i * g.dh;
            for (int64_t ox = 0; ox < g.ow; ++ox) {
              const int64_t sx = ox * g.sw - g.pl + j * g.dw;
              const bool in = sy >= 0 && sy < g.h && sx >= 0 && sx < g.w;
              const int64_t at = ((b * g.c + c) * g.h + sy) * g.w + sx;
              if constexpr (!kGrad)
                y[row + oy * g.ow + ox] = in ? xd[at] : T(0);
              else if (in)
                dx[at] += gy[row + oy * g.ow + ox];
            }
          }
        }
}
template <typename T>
void UnfoldKernel(KernelContext& c) {
  Unfold<T, false>(c);
}
template <typename T>
void UnfoldGradKernel(KernelContext& c) {
  Unfold<T, true>(c);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("unfold")
                     .Comment("Y[n, c * kh * kw + i * kw + j, l] = X[n, c] at patch l's pixel "
                              "(i, j) (F.unfold, im2col; 0 in the padding).")
                     .Input("X", "[N, C, H, W]")
                     .Output("Y", "[N, C * kh * kw, L], L = out_h * out_w")
                     .Attr("kernel_sizes", std::vector<int32_t>{}, "kh, kw")
                     .Attr("strides", std::vector<int32_t>{1, 1}, "stride h, w")
                     .Attr("paddings", std::vector<int32_t>{0, 0, 0, 0}, "top, left, bottom, right")
                     .Attr("dilations", std::vector<int32_t>{1, 1}, "dilation h, w")
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Y", GetUnfold(c, c.InputDims("X")).OutDims());
                       c.SetOutputDataType("Y", c.InputDataType("X"));
                     })
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("unfold_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Y"), g.OutputGrad("Y"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("unfold_grad")
                     .Input("X")
                     .Input(GradVarName("Y"))
                     .Output(GradVarName("X"))
                     .Attr("kernel_sizes", std::vector<int32_t>{})
                     .Attr("strides", std::vector<int32_t>{1, 1})
                     .Attr("paddings", std::vector<int32_t>{0, 0, 0, 0})
                     .Attr("dilations", std::vector<int32_t>{1, 1})
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("unfold", "cpu", UnfoldKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("unfold_grad", "cpu", UnfoldGradKernel, OPS_NN_FLOAT_TYPES);
