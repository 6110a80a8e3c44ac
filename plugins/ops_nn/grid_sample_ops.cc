// grid_sample_ops.cc: Paddle's grid_sampler (F.grid_sample on a 4-D X: Output[n, c, h, w] = X[n, c]
// sampled at Grid[n, h, w] = (x, y) in [-1, 1]; bilinear or nearest, padding zeros / border /
// reflection, align_corners) and affine_grid (F.affine_grid: the [-1, 1] grid of output_shape moved
// by Theta [N, 2, 3]), with their grads (grid_sampler: X and Grid; affine_grid: Theta), following
// Paddle's CPU kernels (phi's grid_sample_kernel.cc, affine_grid_kernel.cc).
#include <cmath>
#include <string>

#include "common.h"

namespace ops_nn {
namespace {

// ---------------------------------------------------------------------------------------------
// grid_sampler: a grid coordinate g along an axis of `size` pixels -> a source pixel position,
// and the position's derivative by g.
struct SourcePos {
  double pos, dpos;
};

SourcePos SourcePosition(double g, int64_t size, bool align_corners, const std::string& padding) {
  const double max = static_cast<double>(size - 1);
  // Unnormalise: -1 and 1 are the corner pixels' centres (align_corners) or their outer edges.
  double x = align_corners ? (g + 1) * max * 0.5 : (g + 1) * (max + 1) * 0.5 - 0.5;
  double d = align_corners ? max * 0.5 : (max + 1) * 0.5;
  if (padding == "border") {
    if (x <= 0 || x >= max) d = 0;
    x = std::min(std::max(x, 0.0), max);
  } else if (padding == "reflection") {
    // Mirror about the corner centres (align_corners) or the outer edges (then clip).
    if (align_corners && max == 0) return {0, 0};
    const double shift = align_corners ? 0 : 0.5;
    const double range = 2 * (align_corners ? max : max + 1);
    const double a = std::fabs(x + shift);
    const double extra = a - std::floor(a / range) * range;
    const double sign = (x + shift < 0 ? -1 : 1) * (extra <= range - extra ? 1 : -1);
    x = std::min(extra, range - extra) - shift;
    d *= sign;
    if (!align_corners) {
      if (x <= 0 || x >= max) d = 0;
      x = std::min(std::max(x, 0.0), max);
    }
  }
  return {x, d};
}

void GridSamplerDims(const char* op, const Dims& x, const Dims& grid) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D [N, C, H, W], got ", tide::ToString(x),
             " (a 5-D X is not supported)");
  TIDE_CHECK(grid.size() == 4 && DimsCompatible(grid[3], 2), "op '", op,
             "': Grid must be [N, H_out, W_out, 2], got ", tide::ToString(grid));
  TIDE_CHECK(DimsCompatible(x[0], grid[0]), "op '", op, "': X ", tide::ToString(x), " and Grid ",
             tide::ToString(grid), " must have one batch size");
}

Dims GridSamplerOut(const Dims& x, const Dims& grid) { return {x[0], x[1], grid[1], grid[2]}; }

template <typename T, bool kGrad>
void GridSampler(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), grid = ctx.Input("Grid");
  GridSamplerDims(ctx.op_type(), x.dims(), grid.dims());
  const std::string mode = ctx.Attr<std::string>("mode");
  const std::string padding = ctx.Attr<std::string>("padding_mode");
  const bool ac = ctx.Attr<bool>("align_corners");
  TIDE_CHECK(mode == "bilinear" || mode == "nearest", "op '", ctx.op_type(),
             "': mode must be bilinear or nearest, got '", mode, "'");
  TIDE_CHECK(padding == "zeros" || padding == "border" || padding == "reflection", "op '",
             ctx.op_type(), "': padding_mode must be zeros, border or reflection, got '", padding,
             "'");
  const int64_t n = x.dims()[0], c = x.dims()[1], ih = x.dims()[2], iw = x.dims()[3];
  const int64_t oh = grid.dims()[1], ow = grid.dims()[2];
  const Dims out_dims = GridSamplerOut(x.dims(), grid.dims());
  const T* xd = x.data<T>();
  const T* gd = grid.data<T>();
  T* o = nullptr;
  const T* dout = nullptr;
  T* dx = nullptr;
  T* dgrid = nullptr;
  if constexpr (!kGrad) {
    o = ctx.Output("Output").mutable_data<T>(out_dims, ctx.place());
  } else {
    Tensor g = ctx.Input(GradVarName("Output").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Output@GRAD", g.dims(), out_dims);
    dout = g.data<T>();
    const std::string gx = GradVarName("X"), gg = GradVarName("Grid");
    if (ctx.HasOutput(gx.c_str())) {
      dx = ctx.Output(gx.c_str()).mutable_data<T>(x.dims(), ctx.place());
      std::fill(dx, dx + x.numel(), T(0));
    }
    if (ctx.HasOutput(gg.c_str())) {
      dgrid = ctx.Output(gg.c_str()).mutable_data<T>(grid.dims(), ctx.place());
      std::fill(dgrid, dgrid + grid.numel(), T(0));
    }
  }
  const int64_t plane = ih * iw;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t p = (b * oh + i) * ow + j;
        const SourcePos sx = SourcePosition(gd[2 * p], iw, ac, padding);
        const SourcePos sy = SourcePosition(gd[2 * p + 1], ih, ac, padding);
        auto inside = [&](double yy, double xx) {
          return xx >= 0 && xx <= iw - 1 && yy >= 0 && yy <= ih - 1;
        };
        const T* xb = xd + b * c * plane;
        auto out_at = [&](int64_t ch) { return ((b * c + ch) * oh + i) * ow + j; };
        if (mode == "nearest") {
          // Halves to even (as Paddle 3.3.1 computes); the bound test is on the rounded position.
          const double rx = std::nearbyint(sx.pos), ry = std::nearbyint(sy.pos);
          const bool in = inside(ry, rx);
          const int64_t at = in ? static_cast<int64_t>(ry) * iw + static_cast<int64_t>(rx) : 0;
          for (int64_t ch = 0; ch < c; ++ch) {
            if constexpr (!kGrad)
              o[out_at(ch)] = in ? xb[ch * plane + at] : T(0);
            else if (dx && in)
              dx[b * c * plane + ch * plane + at] += dout[out_at(ch)];
          }
          continue;  // Grid@GRAD stays 0
        }
        // Bilinear: the four neighbours west/east, north/south and their distances.
        const double xw = std::floor(sx.pos), yn = std::floor(sy.pos);
        const double xe = xw + 1, ys = yn + 1;
        const double dw = sx.pos - xw, de = xe - sx.pos, dn = sy.pos - yn, ds = ys - sy.pos;
        const double ys_[4] = {yn, yn, ys, ys}, xs_[4] = {xw, xe, xw, xe};
        const double w[4] = {de * ds, dw * ds, de * dn, dw * dn};
        int64_t at[4];
        bool in[4];
        for (int k = 0; k < 4; ++k) {
          in[k] = inside(ys_[k], xs_[k]);
          at[k] = in[k] ? static_cast<int64_t>(ys_[k]) * iw + static_cast<int64_t>(xs_[k]) : 0;
        }
        double gx = 0, gy = 0;
        for (int64_t ch = 0; ch < c; ++ch) {
          double v[4];
          for (int k = 0; k < 4; ++k)
            v[k] = in[k] ? static_cast<double>(xb[ch * plane + at[k]]) : 0;
          if constexpr (!kGrad) {
            o[out_at(ch)] = static_cast<T>(v[0] * w[0] + v[1] * w[1] + v[2] * w[2] + v[3] * w[3]);
          } else {
            const double go = dout[out_at(ch)];
            if (dx)
              for (int k = 0; k < 4; ++k)
                if (in[k]) dx[b * c * plane + ch * plane + at[k]] += static_cast<T>(go * w[k]);
            gx += go * ((v[1] - v[0]) * ds + (v[3] - v[2]) * dn);
            gy += go * ((v[2] - v[0]) * de + (v[3] - v[1]) * dw);
          }
        }
        if constexpr (kGrad) {
          if (dgrid) {
            dgrid[2 * p] = static_cast<T>(gx * sx.dpos);
            dgrid[2 * p + 1] = static_cast<T>(gy * sy.dpos);
          }
        }
      }
}
template <typename T>
void GridSamplerKernel(KernelContext& c) {
  GridSampler<T, false>(c);
}
template <typename T>
void GridSamplerGradKernel(KernelContext& c) {
  GridSampler<T, true>(c);
}

void GridSamplerInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X"), grid = ctx.InputDims("Grid");
  GridSamplerDims(ctx.op_type(), x, grid);
  ctx.SetOutputDims("Output", GridSamplerOut(x, grid));
  ctx.SetOutputDataType("Output", ctx.InputDataType("X"));
}

// ---------------------------------------------------------------------------------------------
// affine_grid: Output[n, h, w] = Theta[n] (x_w, y_h, 1), x and y from -1 to 1 over W and H
// (without align_corners shrunk by (size - 1) / size: the pixel centres).
std::vector<int64_t> AffineGridShape(const KernelContext& ctx) {
  std::vector<int64_t> s;
  if (ctx.HasInput("OutputShape")) {
    s = IntValues(ctx, "OutputShape");
  } else {
    const auto a = ctx.Attr<std::vector<int32_t>>("output_shape");
    s.assign(a.begin(), a.end());
  }
  TIDE_CHECK(s.size() == 4, "op '", ctx.op_type(),
             "': output_shape (or OutputShape) must be [N, C, H, W], got ", tide::ToString(s),
             " (a 5-D shape is not supported)");
  return s;
}

std::vector<double> AffineLinspace(int64_t count, bool align_corners) {
  std::vector<double> v(count, 0.0);
  if (count < 2) return v;
  const double scale = align_corners ? 1.0 : double(count - 1) / double(count);
  for (int64_t i = 0; i < count; ++i) v[i] = (-1.0 + 2.0 * double(i) / double(count - 1)) * scale;
  return v;
}

template <typename T, bool kGrad>
void AffineGrid(KernelContext& ctx) {
  Tensor theta = ctx.Input("Theta");
  const std::vector<int64_t> s = AffineGridShape(ctx);
  const int64_t n = s[0], h = s[2], w = s[3];
  TIDE_CHECK(theta.dims() == Dims({n, 2, 3}), "op '", ctx.op_type(), "': Theta must be [", n,
             ", 2, 3] (output_shape ", tide::ToString(s), "), got ", tide::ToString(theta.dims()));
  const bool ac = ctx.Attr<bool>("align_corners");
  const std::vector<double> xs = AffineLinspace(w, ac), ys = AffineLinspace(h, ac);
  const Dims out_dims = {n, h, w, 2};
  if constexpr (!kGrad) {
    const T* t = theta.data<T>();
    T* o = ctx.Output("Output").mutable_data<T>(out_dims, ctx.place());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j)
          for (int k = 0; k < 2; ++k) {
            const T* r = t + b * 6 + k * 3;
            o[((b * h + i) * w + j) * 2 + k] =
                static_cast<T>(xs[j] * double(r[0]) + ys[i] * double(r[1]) + double(r[2]));
          }
  } else {
    Tensor g = ctx.Input(GradVarName("Output").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Output@GRAD", g.dims(), out_dims);
    const T* gd = g.data<T>();
    T* dt = ctx.Output(GradVarName("Theta").c_str()).mutable_data<T>(theta.dims(), ctx.place());
    for (int64_t b = 0; b < n; ++b)
      for (int k = 0; k < 2; ++k) {
        double acc[3] = {0, 0, 0};
        for (int64_t i = 0; i < h; ++i)
          for (int64_t j = 0; j < w; ++j) {
            const double go = gd[((b * h + i) * w + j) * 2 + k];
            acc[0] += go * xs[j];
            acc[1] += go * ys[i];
            acc[2] += go;
          }
        for (int m = 0; m < 3; ++m) dt[b * 6 + k * 3 + m] = static_cast<T>(acc[m]);
      }
  }
}
template <typename T>
void AffineGridKernel(KernelContext& c) {
  AffineGrid<T, false>(c);
}
template <typename T>
void AffineGridGradKernel(KernelContext& c) {
  AffineGrid<T, true>(c);
}

void AffineGridInferShape(tide::InferShapeContext& ctx) {
  const Dims theta = ctx.InputDims("Theta");
  TIDE_CHECK(theta.size() == 3 && DimsCompatible(theta[1], 2) && DimsCompatible(theta[2], 3),
             "op '", ctx.op_type(), "': Theta must be [N, 2, 3], got ", tide::ToString(theta));
  Dims out = {theta[0], -1, -1, 2};
  const auto s = ctx.Attr<std::vector<int32_t>>("output_shape");
  if (!ctx.HasInput("OutputShape") && s.size() == 4) out = {s[0], s[2], s[3], 2};
  ctx.SetOutputDims("Output", out);
  ctx.SetOutputDataType("Output", ctx.InputDataType("Theta"));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("grid_sampler")
                     .Comment("Output[n, c, h, w] = X[n, c] sampled at Grid[n, h, w] = (x, y) "
                              "(F.grid_sample; -1 and 1 the corner pixels' centres with "
                              "align_corners, else their outer edges).")
                     .Input("X", "[N, C, H, W]")
                     .Input("Grid", "[N, H_out, W_out, 2]: (x, y) in [-1, 1]")
                     .Output("Output", "[N, C, H_out, W_out]")
                     .Attr("use_cudnn", true, "unused (Paddle's cuDNN switch)")
                     .Attr("align_corners", true, "-1 / 1 are the corner pixels' centres")
                     .Attr("padding_mode", std::string("zeros"),
                           "outside X: zeros, border (the edge) or reflection")
                     .InSet({"zeros", "border", "reflection"})
                     .Attr("mode", std::string("bilinear"), "bilinear or nearest")
                     .InSet({"bilinear", "nearest"})
                     .KernelDataTypeFrom("X")
                     .InferShape(GridSamplerInferShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("grid_sampler_grad")
                           .Input("X", g.Input("X"))
                           .Input("Grid", g.Input("Grid"))
                           .Input(GradVarName("Output"), g.OutputGrad("Output"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Grid"), g.InputGrad("Grid"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("grid_sampler_grad")
                     .Input("X")
                     .Input("Grid")
                     .Input(GradVarName("Output"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Grid"))
                     .AsDispensable()
                     .Attr("use_cudnn", true)
                     .Attr("align_corners", true)
                     .Attr("padding_mode", std::string("zeros"))
                     .Attr("mode", std::string("bilinear"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X", "Grid"})));
TIDE_REGISTER_KERNEL("grid_sampler", "cpu", GridSamplerKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("grid_sampler_grad", "cpu", GridSamplerGradKernel, OPS_NN_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("affine_grid")
                     .Comment("Output[n, h, w] = Theta[n] (x_w, y_h, 1) (F.affine_grid): x and y "
                              "from -1 to 1 over output_shape's W and H (the pixel centres "
                              "without align_corners).")
                     .Input("Theta", "[N, 2, 3]")
                     .Input("OutputShape", "int [4]: N, C, H, W (optional; over output_shape)")
                     .AsDispensable()
                     .Output("Output", "[N, H, W, 2]")
                     .Attr("output_shape", std::vector<int32_t>{}, "N, C, H, W")
                     .Attr("align_corners", true, "-1 / 1 are the corner pixels' centres")
                     .Attr("use_cudnn", true, "unused (Paddle's cuDNN switch)")
                     .KernelDataTypeFrom("Theta")
                     .InferShape(AffineGridInferShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("affine_grid_grad");
                       op.Input("Theta", g.Input("Theta"));
                       if (!g.Input("OutputShape").empty())
                         op.Input("OutputShape", g.Input("OutputShape"));
                       op.Input(GradVarName("Output"), g.OutputGrad("Output"))
                           .Output(GradVarName("Theta"), g.InputGrad("Theta"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("affine_grid_grad")
                     .Input("Theta")
                     .Input("OutputShape")
                     .AsDispensable()
                     .Input(GradVarName("Output"))
                     .Output(GradVarName("Theta"))
                     .Attr("output_shape", std::vector<int32_t>{})
                     .Attr("align_corners", true)
                     .Attr("use_cudnn", true)
                     .KernelDataTypeFrom("Theta")
                     .InferShape(GradLike({"Theta"})));
TIDE_REGISTER_KERNEL("affine_grid", "cpu", AffineGridKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("affine_grid_grad", "cpu", AffineGridGradKernel, OPS_NN_FLOAT_TYPES);
