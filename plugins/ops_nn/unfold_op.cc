// unfold_op.cc: Paddle's unfold (F.unfold, im2col): the kernel_sizes patches of X [N, C, H, W]
// as Y [N, C * kh * kw, L] (row c * kh * kw + i * kw + j; L the patch positions, row-major),
// with strides, paddings [top, left, bottom, right] and dilations; and its inverse fold (F.fold,
// col2im: X [N, C * kh * kw, L] summed into Out [N, C, output_sizes]). One patch walk serves
// both and their grads (each is the other's).
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

// The patch attributes of unfold and fold, checked: kernel_sizes, strides, dilations (2 values
// > 0 each) and paddings (4 values >= 0).
struct PatchAttrs {
  std::vector<int32_t> k, s, p, d;
};

template <typename Ctx>
PatchAttrs GetPatchAttrs(const Ctx& ctx) {
  const char* op = ctx.op_type();
  PatchAttrs a{ctx.template Attr<std::vector<int32_t>>("kernel_sizes"),
               ctx.template Attr<std::vector<int32_t>>("strides"),
               ctx.template Attr<std::vector<int32_t>>("paddings"),
               ctx.template Attr<std::vector<int32_t>>("dilations")};
  TIDE_CHECK(a.k.size() == 2 && a.k[0] > 0 && a.k[1] > 0, "op '", op,
             "': kernel_sizes must be 2 positive values, got ", IntsString(a.k));
  TIDE_CHECK(a.s.size() == 2 && a.s[0] > 0 && a.s[1] > 0, "op '", op,
             "': strides must be 2 positive values, got ", IntsString(a.s));
  TIDE_CHECK(a.d.size() == 2 && a.d[0] > 0 && a.d[1] > 0, "op '", op,
             "': dilations must be 2 positive values, got ", IntsString(a.d));
  TIDE_CHECK(a.p.size() == 4 && *std::min_element(a.p.begin(), a.p.end()) >= 0, "op '", op,
             "': paddings must be 4 values >= 0 (top, left, bottom, right), got ", IntsString(a.p));
  return a;
}

// The patch positions along one axis of `in` pixels padded by lo and hi (-1 when in is unknown).
int64_t PatchCount(const char* op, int64_t in, int64_t lo, int64_t hi, int64_t k, int64_t d,
                   int64_t s, const char* axis, const char* image) {
  if (in < 0) return -1;
  const int64_t span = d * (k - 1) + 1;
  TIDE_CHECK(in + lo + hi >= span, "op '", op, "': the ", axis, " kernel (", k, ", dilation ", d,
             ") spans ", span, " pixels, more than the padded ", axis, " ", in + lo + hi, " of ",
             image);
  return (in + lo + hi - span) / s + 1;
}

template <typename Ctx>
UnfoldGeom GetUnfold(const Ctx& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D [N, C, H, W], got ", tide::ToString(x));
  const PatchAttrs a = GetPatchAttrs(ctx);
  UnfoldGeom g{x[0],   x[1],   x[2],   x[3],   a.k[0], a.k[1], a.s[0],
               a.s[1], a.p[0], a.p[1], a.d[0], a.d[1], -1,     -1};
  const std::string image = "X " + tide::ToString(x);
  g.oh = PatchCount(op, g.h, a.p[0], a.p[2], g.kh, g.dh, g.sh, "height", image.c_str());
  g.ow = PatchCount(op, g.w, a.p[1], a.p[3], g.kw, g.dw, g.sw, "width", image.c_str());
  return g;
}

// fold's geometry: the image [N, C, output_sizes] that X [N, C * kh * kw, L] folds into. As
// Paddle, L must be the patch count with the top / left padding on both sides, and also the one
// with paddings [top, left, bottom, right] (its col2im's check).
template <typename Ctx>
UnfoldGeom GetFold(const Ctx& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  TIDE_CHECK(x.size() == 3, "op '", op, "': X must be 3-D [N, C * kh * kw, L], got ",
             tide::ToString(x));
  const PatchAttrs a = GetPatchAttrs(ctx);
  const auto o = ctx.template Attr<std::vector<int32_t>>("output_sizes");
  TIDE_CHECK(o.size() == 2 && o[0] > 0 && o[1] > 0, "op '", op,
             "': output_sizes must be 2 positive values, got ", IntsString(o));
  const int64_t kk = int64_t(a.k[0]) * a.k[1];
  TIDE_CHECK(x[1] < 0 || x[1] % kk == 0, "op '", op, "': X's dim 1 (", x[1],
             ") must be a multiple of kh * kw = ", kk, " (X ", tide::ToString(x), ")");
  UnfoldGeom g{x[0],   x[1] < 0 ? -1 : x[1] / kk,
               o[0],   o[1],
               a.k[0], a.k[1],
               a.s[0], a.s[1],
               a.p[0], a.p[1],
               a.d[0], a.d[1],
               -1,     -1};
  const std::string image = "output_sizes " + IntsString(o);
  g.oh = PatchCount(op, g.h, a.p[0], a.p[0], g.kh, g.dh, g.sh, "height", image.c_str());
  g.ow = PatchCount(op, g.w, a.p[1], a.p[1], g.kw, g.dw, g.sw, "width", image.c_str());
  const int64_t oh2 =
      PatchCount(op, g.h, a.p[0], a.p[2], g.kh, g.dh, g.sh, "height", image.c_str());
  const int64_t ow2 = PatchCount(op, g.w, a.p[1], a.p[3], g.kw, g.dw, g.sw, "width", image.c_str());
  TIDE_CHECK(x[2] < 0 || (x[2] == g.oh * g.ow && x[2] == oh2 * ow2), "op '", op, "': X ",
             tide::ToString(x), " must hold ", g.oh, " * ", g.ow, " = ", g.oh * g.ow,
             " patches (dim 2) for output_sizes ", IntsString(o), ", kernel_sizes ",
             IntsString(a.k), ", strides ", IntsString(a.s), ", paddings ", IntsString(a.p),
             ", dilations ", IntsString(a.d));
  return g;
}

// The patch walk: im2col (col[row, l] = im[pixel], 0 in the padding) or, kCol2Im, col2im
// (im[pixel] += col[row, l]; im zeroed first). im is [n, c, h, w], col [n, c * kh * kw, oh * ow].
template <typename T, bool kCol2Im>
void PatchWalk(const UnfoldGeom& g, const T* src, T* dst) {
  if constexpr (kCol2Im) std::fill(dst, dst + g.n * g.c * g.h * g.w, T(0));
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
              if constexpr (!kCol2Im)
                dst[row + oy * g.ow + ox] = in ? src[at] : T(0);
              else if (in)
                dst[at] += src[row + oy * g.ow + ox];
            }
          }
        }
}

template <typename T, bool kGrad>
void Unfold(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const UnfoldGeom g = GetUnfold(ctx, x.dims());
  if constexpr (!kGrad) {
    PatchWalk<T, false>(g, x.data<T>(), ctx.Output("Y").mutable_data<T>(g.OutDims(), ctx.place()));
  } else {
    Tensor dy = ctx.Input(GradVarName("Y").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Y@GRAD", dy.dims(), g.OutDims());
    PatchWalk<T, true>(g, dy.data<T>(),
                       ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place()));
  }
}

// fold: Y = col2im(X); its grad X@GRAD = im2col(Y@GRAD).
template <typename T, bool kGrad>
void Fold(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const UnfoldGeom g = GetFold(ctx, x.dims());
  const Dims image{g.n, g.c, g.h, g.w};
  if constexpr (!kGrad) {
    PatchWalk<T, true>(g, x.data<T>(), ctx.Output("Y").mutable_data<T>(image, ctx.place()));
  } else {
    Tensor dy = ctx.Input(GradVarName("Y").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Y@GRAD", dy.dims(), image);
    PatchWalk<T, false>(
        g, dy.data<T>(),
        ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place()));
  }
}
template <typename T>
void FoldKernel(KernelContext& c) {
  Fold<T, false>(c);
}
template <typename T>
void FoldGradKernel(KernelContext& c) {
  Fold<T, true>(c);
}

template <typename T>
void UnfoldKernel(KernelContext& c) {
  Unfold<T, false>(c);
}
template <typename T>
void UnfoldGradKernel(KernelContext& c) {
  Unfold<T, true>(c);
}

// unfold's and fold's patch attributes (fold adds output_sizes), and their grad ops: the same
// op with the forward's X and Y@GRAD.
tide::OpSchema PatchAttrsOf(tide::OpSchema s, bool fold, bool doc) {
  auto d = [doc](const char* text) { return std::string(doc ? text : ""); };
  if (fold) s.Attr("output_sizes", std::vector<int32_t>{}, d("the image's h, w"));
  return s.Attr("kernel_sizes", std::vector<int32_t>{}, d("kh, kw"))
      .Attr("strides", std::vector<int32_t>{1, 1}, d("stride h, w"))
      .Attr("paddings", std::vector<int32_t>{0, 0, 0, 0}, d("top, left, bottom, right"))
      .Attr("dilations", std::vector<int32_t>{1, 1}, d("dilation h, w"))
      .KernelDataTypeFrom("X");
}

tide::OpSchema PatchSchema(const std::string& type, bool fold) {
  return PatchAttrsOf(tide::OpSchema(type), fold, true).Grad([type](tide::GradMaker& g) {
    g.NewOp(type + "_grad")
        .Input("X", g.Input("X"))
        .Input(GradVarName("Y"), g.OutputGrad("Y"))
        .Output(GradVarName("X"), g.InputGrad("X"))
        .CopyAttrs();
  });
}

tide::OpSchema PatchGradSchema(const std::string& type, bool fold) {
  return PatchAttrsOf(tide::OpSchema(type), fold, false)
      .Input("X")
      .Input(GradVarName("Y"))
      .Output(GradVarName("X"))
      .InferShape(GradLike({"X"}));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(PatchSchema("unfold", false)
                     .Comment("Y[n, c * kh * kw + i * kw + j, l] = X[n, c] at patch l's pixel "
                              "(i, j) (F.unfold, im2col; 0 in the padding).")
                     .Input("X", "[N, C, H, W]")
                     .Output("Y", "[N, C * kh * kw, L], L = out_h * out_w")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Y", GetUnfold(c, c.InputDims("X")).OutDims());
                       c.SetOutputDataType("Y", c.InputDataType("X"));
                     }));
TIDE_REGISTER_OP(PatchGradSchema("unfold_grad", false));
TIDE_REGISTER_KERNEL("unfold", "cpu", UnfoldKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("unfold_grad", "cpu", UnfoldGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(PatchSchema("fold", true)
                     .Comment("Y[n, c] = the sum of X[n, c * kh * kw + i * kw + j, l] over the "
                              "patches l whose pixel (i, j) falls there (F.fold, col2im: unfold's "
                              "adjoint).")
                     .Input("X", "[N, C * kh * kw, L], L the patch count")
                     .Output("Y", "[N, C, output_sizes[0], output_sizes[1]]")
                     .InferShape([](tide::InferShapeContext& c) {
                       const UnfoldGeom g = GetFold(c, c.InputDims("X"));
                       c.SetOutputDims("Y", Dims{g.n, g.c, g.h, g.w});
                       c.SetOutputDataType("Y", c.InputDataType("X"));
                     }));
TIDE_REGISTER_OP(PatchGradSchema("fold_grad", true));
TIDE_REGISTER_KERNEL("fold", "cpu", FoldKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("fold_grad", "cpu", FoldGradKernel, OPS_NN_FLOAT_TYPES);
