// grid_sample_ops.cc: Paddle's grid_sampler (F.grid_sample: Output[n, c, h, w] = X[n, c] sampled
// at Grid[n, h, w] = (x, y) in [-1, 1], or with a 5-D X Output[n, c, d, h, w] at Grid[n, d, h, w] =
// (x, y, z); bilinear / trilinear or nearest, padding zeros / border / reflection, align_corners)
// and affine_grid (F.affine_grid: the [-1, 1] grid of output_shape moved by Theta [N, 2, 3], or
// [N, 3, 4] for a 5-D output_shape), with their grads (grid_sampler: X and Grid; affine_grid:
// Theta), following Paddle's CPU kernels (phi's grid_sample_kernel.cc, affine_grid_kernel.cc).
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
  TIDE_CHECK(x.size() == 4 || x.size() == 5, "op '", op,
             "': X must be 4-D [N, C, H, W] or 5-D [N, C, D, H, W], got ", tide::ToString(x));
  if (x.size() == 4) {
    TIDE_CHECK(grid.size() == 4 && DimsCompatible(grid[3], 2), "op '", op,
               "': Grid must be [N, H_out, W_out, 2] for a 4-D X, got ", tide::ToString(grid));
  } else {
    TIDE_CHECK(grid.size() == 5 && DimsCompatible(grid[4], 3), "op '", op,
               "': Grid must be [N, D_out, H_out, W_out, 3] for a 5-D X, got ",
               tide::ToString(grid));
  }
  TIDE_CHECK(DimsCompatible(x[0], grid[0]), "op '", op, "': X ", tide::ToString(x), " and Grid ",
             tide::ToString(grid), " must have one batch size");
}

Dims GridSamplerOut(const Dims& x, const Dims& grid) {
  if (x.size() == 5) return {x[0], x[1], grid[1], grid[2], grid[3]};
  return {x[0], x[1], grid[1], grid[2]};
}

// The 5-D case: X [N, C, D, H, W] sampled at Grid [N, D', H', W'] = (x, y, z), trilinear (the
// eight neighbours) or nearest, as the 4-D case per axis.
template <typename T, bool kGrad>
void GridSampler3D(const Tensor& x, const Tensor& grid, const T* dout, T* o, T* dx, T* dgrid,
                   const std::string& mode, const std::string& padding, bool ac) {
  const int64_t n = x.dims()[0], c = x.dims()[1];
  const int64_t id = x.dims()[2], ih = x.dims()[3], iw = x.dims()[4];
  const int64_t od = grid.dims()[1], oh = grid.dims()[2], ow = grid.dims()[3];
  const int64_t vol = id * ih * iw, ovol = od * oh * ow;
  const T* xd = x.data<T>();
  const T* gd = grid.data<T>();
  const int64_t size[3] = {iw, ih, id};  // along x, y, z
  for (int64_t b = 0; b < n; ++b)
    for (int64_t q = 0; q < ovol; ++q) {
      const int64_t p = b * ovol + q;
      SourcePos s[3];
      for (int a = 0; a < 3; ++a) s[a] = SourcePosition(gd[3 * p + a], size[a], ac, padding);
      auto inside = [&](const double* pos) {
        for (int a = 0; a < 3; ++a)
          if (!(pos[a] >= 0 && pos[a] <= size[a] - 1)) return false;
        return true;
      };
      auto offset = [&](const double* pos) {
        return (static_cast<int64_t>(pos[2]) * ih + static_cast<int64_t>(pos[1])) * iw +
               static_cast<int64_t>(pos[0]);
      };
      const T* xb = xd + b * c * vol;
      auto out_at = [&](int64_t ch) { return (b * c + ch) * ovol + q; };
      if (mode == "nearest") {
        const double r[3] = {std::nearbyint(s[0].pos), std::nearbyint(s[1].pos),
                             std::nearbyint(s[2].pos)};
        const bool in = inside(r);
        const int64_t at = in ? offset(r) : 0;
        for (int64_t ch = 0; ch < c; ++ch) {
          if constexpr (!kGrad)
            o[out_at(ch)] = in ? xb[ch * vol + at] : T(0);
          else if (dx && in)
            dx[b * c * vol + ch * vol + at] += dout[out_at(ch)];
        }
        continue;  // Grid@GRAD stays 0
      }
      // Trilinear: corner k takes the upper neighbour along axis a where bit a of k is set.
      double lo[3], frac[3];
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::floor(s[a].pos);
        frac[a] = s[a].pos - lo[a];
      }
      double w[8], dw[8][3];
      int64_t at[8];
      bool in[8];
      for (int k = 0; k < 8; ++k) {
        double pos[3], f[3];
        for (int a = 0; a < 3; ++a) {
          const bool up = (k >> a) & 1;
          pos[a] = lo[a] + (up ? 1 : 0);
          f[a] = up ? frac[a] : 1 - frac[a];
        }
        w[k] = f[0] * f[1] * f[2];
        for (int a = 0; a < 3; ++a)  // d w[k] / d pos[a]
          dw[k][a] = (((k >> a) & 1) ? 1.0 : -1.0) * f[(a + 1) % 3] * f[(a + 2) % 3];
        in[k] = inside(pos);
        at[k] = in[k] ? offset(pos) : 0;
      }
      double g[3] = {0, 0, 0};
      for (int64_t ch = 0; ch < c; ++ch) {
        double v[8];
        for (int k = 0; k < 8; ++k) v[k] = in[k] ? static_cast<double>(xb[ch * vol + at[k]]) : 0;
        if constexpr (!kGrad) {
          double acc = 0;
          for (int k = 0; k < 8; ++k) acc += v[k] * w[k];
          o[out_at(ch)] = static_cast<T>(acc);
        } else {
          const double go = dout[out_at(ch)];
          if (dx)
            for (int k = 0; k < 8; ++k)
              if (in[k]) dx[b * c * vol + ch * vol + at[k]] += static_cast<T>(go * w[k]);
          for (int k = 0; k < 8; ++k)
            for (int a = 0; a < 3; ++a) g[a] += go * v[k] * dw[k][a];
        }
      }
      if constexpr (kGrad) {
        if (dgrid)
          for (int a = 0; a < 3; ++a) dgrid[3 * p + a] = static_cast<T>(g[a] * s[a].dpos);
      }
    }
}

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
  const bool vol = x.dims().size() == 5;
  const int64_t n = x.dims()[0], c = x.dims()[1];
  const int64_t ih = vol ? 0 : x.dims()[2], iw = vol ? 0 : x.dims()[3];
  const int64_t oh = vol ? 0 : grid.dims()[1], ow = vol ? 0 : grid.dims()[2];
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
  if (x.dims().size() == 5)
    return GridSampler3D<T, kGrad>(x, grid, dout, o, dx, dgrid, mode, padding, ac);
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
// (without align_corners shrunk by (size - 1) / size: the pixel centres); with a 5-D
// output_shape, Output[n, d, h, w] = Theta[n] (x_w, y_h, z_d, 1) (Theta [N, 3, 4]).
std::vector<int64_t> AffineGridShape(const KernelContext& ctx) {
  std::vector<int64_t> s;
  if (ctx.HasInput("OutputShape")) {
    s = IntValues(ctx, "OutputShape");
  } else {
    const auto a = ctx.Attr<std::vector<int32_t>>("output_shape");
    s.assign(a.begin(), a.end());
  }
  TIDE_CHECK(s.size() == 4 || s.size() == 5, "op '", ctx.op_type(),
             "': output_shape (or OutputShape) must be [N, C, H, W] or [N, C, D, H, W], got ",
             tide::ToString(s));
  for (size_t i = 0; i < s.size(); ++i)
    TIDE_CHECK(s[i] >= 0, "op '", ctx.op_type(), "': output_shape (or OutputShape) ",
               tide::ToString(s), " holds ", s[i], " at index ", i, "; sizes must be >= 0");
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
  const int nd = static_cast<int>(s.size()) - 2;  // 2 (x, y) or 3 (x, y, z)
  const int64_t n = s[0];
  TIDE_CHECK(theta.dims() == Dims({n, nd, nd + 1}), "op '", ctx.op_type(), "': Theta must be [", n,
             ", ", nd, ", ", nd + 1, "] (output_shape ", tide::ToString(s), "), got ",
             tide::ToString(theta.dims()));
  const bool ac = ctx.Attr<bool>("align_corners");
  // ax[a]: the base coordinate along output axis a (x over W, y over H, z over D).
  std::vector<double> ax[3];
  int64_t size[3] = {1, 1, 1};
  for (int a = 0; a < nd; ++a) {
    size[a] = s[s.size() - 1 - a];
    ax[a] = AffineLinspace(size[a], ac);
  }
  if (nd == 2) ax[2] = {0.0};
  const int64_t points = size[0] * size[1] * size[2];
  Dims out_dims(s.begin(), s.end());
  out_dims.erase(out_dims.begin() + 1);
  out_dims.push_back(nd);
  const int m = nd + 1;                    // Theta's row length
  auto base = [&](int64_t q, double* v) {  // point q (W fastest) -> (x, y[, z], 1)
    v[0] = ax[0][q % size[0]];
    v[1] = ax[1][(q / size[0]) % size[1]];
    if (nd == 3) v[2] = ax[2][q / (size[0] * size[1])];
    v[nd] = 1.0;
  };
  if constexpr (!kGrad) {
    const T* t = theta.data<T>();
    T* o = ctx.Output("Output").mutable_data<T>(out_dims, ctx.place());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t q = 0; q < points; ++q) {
        double v[4];
        base(q, v);
        for (int k = 0; k < nd; ++k) {
          const T* r = t + (b * nd + k) * m;
          double acc = 0;
          for (int j = 0; j < m; ++j) acc += v[j] * double(r[j]);
          o[(b * points + q) * nd + k] = static_cast<T>(acc);
        }
      }
  } else {
    Tensor g = ctx.Input(GradVarName("Output").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Output@GRAD", g.dims(), out_dims);
    const T* gd = g.data<T>();
    T* dt = ctx.Output(GradVarName("Theta").c_str()).mutable_data<T>(theta.dims(), ctx.place());
    for (int64_t b = 0; b < n; ++b)
      for (int k = 0; k < nd; ++k) {
        double acc[4] = {0, 0, 0, 0};
        for (int64_t q = 0; q < points; ++q) {
          double v[4];
          base(q, v);
          const double go = gd[(b * points + q) * nd + k];
          for (int j = 0; j < m; ++j) acc[j] += go * v[j];
        }
        for (int j = 0; j < m; ++j) dt[(b * nd + k) * m + j] = static_cast<T>(acc[j]);
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
  const bool vol = theta.size() == 3 && theta[1] == 3;
  TIDE_CHECK(theta.size() == 3 && ((DimsCompatible(theta[1], 2) && DimsCompatible(theta[2], 3)) ||
                                   (DimsCompatible(theta[1], 3) && DimsCompatible(theta[2], 4))),
             "op '", ctx.op_type(), "': Theta must be [N, 2, 3] or [N, 3, 4], got ",
             tide::ToString(theta));
  const auto attr = ctx.Attr<std::vector<int32_t>>("output_shape");
  const Dims s(attr.begin(), attr.end());
  Dims out = vol ? Dims{theta[0], -1, -1, -1, 3} : Dims{theta[0], -1, -1, 2};
  if (!ctx.HasInput("OutputShape") && (s.size() == 4 || s.size() == 5)) {
    const int64_t nd = static_cast<int64_t>(s.size()) - 2;
    TIDE_CHECK(DimsCompatible(theta[1], nd) && DimsCompatible(theta[2], nd + 1), "op '",
               ctx.op_type(), "': Theta must be [N, ", nd, ", ", nd + 1, "] for output_shape ",
               tide::ToString(s), ", got ", tide::ToString(theta));
    out = s;
    out.erase(out.begin() + 1);
    out.push_back(nd);
  }
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
                     .Input("X", "[N, C, H, W] or [N, C, D, H, W]")
                     .Input("Grid",
                            "[N, H_out, W_out, 2]: (x, y) or [N, D_out, H_out, W_out, "
                            "3]: (x, y, z), in [-1, 1]")
                     .Output("Output", "[N, C, H_out, W_out] or [N, C, D_out, H_out, W_out]")
                     .Attr("use_cudnn", true, "unused (Paddle's cuDNN switch)")
                     .Attr("align_corners", true, "-1 / 1 are the corner pixels' centres")
                     .Attr("padding_mode", std::string("zeros"),
                           "outside X: zeros, border (the edge) or reflection")
                     .InSet({"zeros", "border", "reflection"})
                     .Attr("mode", std::string("bilinear"),
                           "bilinear (trilinear for a 5-D X) or nearest")
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
                     .Input("Theta", "[N, 2, 3] (4-D output_shape) or [N, 3, 4] (5-D)")
                     .Input("OutputShape",
                            "int [4] or [5]: N, C, [D,] H, W (optional; over output_shape)")
                     .AsDispensable()
                     .Output("Output", "[N, H, W, 2] or [N, D, H, W, 3]")
                     .Attr("output_shape", std::vector<int32_t>{}, "N, C, [D,] H, W")
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
