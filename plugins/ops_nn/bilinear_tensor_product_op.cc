// bilinear_tensor_product_op.cc: Fluid's bilinear_tensor_product (F.bilinear, PIR pd_op.bilinear):
// Out[b, k] = X[b] Weight[k] Y[b]^T + Bias[k], X [B, M], Y [B, N], Weight [K, M, N], Bias [1, K];
// with the grads of X, Y, Weight and Bias.
#include "common.h"

namespace ops_nn {
namespace {

void BilinearShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X"), y = ctx.InputDims("Y"), w = ctx.InputDims("Weight");
  TIDE_CHECK(x.size() == 2, "op '", op, "': X ('", ctx.InputName("X"),
             "') must be 2-D [B, M], got ", tide::ToString(x));
  TIDE_CHECK(y.size() == 2, "op '", op, "': Y ('", ctx.InputName("Y"),
             "') must be 2-D [B, N], got ", tide::ToString(y));
  TIDE_CHECK(w.size() == 3, "op '", op, "': Weight ('", ctx.InputName("Weight"),
             "') must be 3-D [K, M, N], got ", tide::ToString(w));
  TIDE_CHECK(DimsCompatible(x[0], y[0]), "op '", op, "': X ", tide::ToString(x), " and Y ",
             tide::ToString(y), " must have the same batch (first) dim");
  TIDE_CHECK(DimsCompatible(x[1], w[1]) && DimsCompatible(y[1], w[2]), "op '", op, "': Weight ('",
             ctx.InputName("Weight"), "') ", tide::ToString(w), " must be [K, ", x[1], ", ", y[1],
             "] for X ", tide::ToString(x), " and Y ", tide::ToString(y));
  CheckSameType(ctx, "X", "Y");
  CheckSameType(ctx, "X", "Weight");
  if (ctx.HasInput("Bias")) {
    const Dims b = ctx.InputDims("Bias");
    TIDE_CHECK(b.size() == 2 && DimsCompatible(b[0], 1) && DimsCompatible(b[1], w[0]), "op '", op,
               "': Bias ('", ctx.InputName("Bias"), "') must be [1, ", w[0], "], got ",
               tide::ToString(b));
    CheckSameType(ctx, "X", "Bias");
  }
  ctx.SetOutputDims("Out", Dims{x[0] >= 0 ? x[0] : y[0], w[0]});
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

struct BilinearGeom {
  int64_t b, m, n, k;
};

BilinearGeom GetBilinear(const KernelContext& ctx) {
  const Dims x = ctx.Input("X").dims(), y = ctx.Input("Y").dims(), w = ctx.Input("Weight").dims();
  TIDE_CHECK(x.size() == 2 && y.size() == 2 && w.size() == 3 && x[0] == y[0] && w[1] == x[1] &&
                 w[2] == y[1],
             "op '", ctx.op_type(), "': X [B, M], Y [B, N] and Weight [K, M, N] do not fit: X ",
             tide::ToString(x), ", Y ", tide::ToString(y), ", Weight ", tide::ToString(w));
  return {x[0], x[1], y[1], w[0]};
}

template <typename T>
void BilinearKernel(KernelContext& ctx) {
  const BilinearGeom g = GetBilinear(ctx);
  const T* x = ctx.Input("X").data<T>();
  const T* y = ctx.Input("Y").data<T>();
  const T* w = ctx.Input("Weight").data<T>();
  const T* bias = nullptr;
  if (ctx.HasInput("Bias")) {
    Tensor bt = ctx.Input("Bias");
    TIDE_CHECK(bt.numel() == g.k, "op '", ctx.op_type(), "': Bias ('", ctx.InputName("Bias"),
               "') must be [1, ", g.k, "], got ", tide::ToString(bt.dims()));
    bias = bt.data<T>();
  }
  T* out = ctx.Output("Out").mutable_data<T>(Dims{g.b, g.k}, ctx.place());
  ParallelFor(ctx, g.b * g.k, g.m * g.n, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t r = e / g.k, k = e % g.k;
      const T* xr = x + r * g.m;
      const T* yr = y + r * g.n;
      const T* wk = w + k * g.m * g.n;
      T acc = 0;
      for (int64_t i = 0; i < g.m; ++i) {
        T row = 0;
        for (int64_t j = 0; j < g.n; ++j) row += wk[i * g.n + j] * yr[j];
        acc += xr[i] * row;
      }
      out[e] = acc + (bias ? bias[k] : T(0));
    }
  });
}

template <typename T>
T* GradOf(KernelContext& ctx, const char* p, const Dims& dims) {
  const std::string g = GradVarName(p);
  if (!ctx.HasOutput(g.c_str())) return nullptr;
  T* d = ctx.Output(g.c_str()).mutable_data<T>(dims, ctx.place());
  std::fill(d, d + DimsProduct(dims), T(0));
  return d;
}

template <typename T>
void BilinearGradKernel(KernelContext& ctx) {
  const BilinearGeom g = GetBilinear(ctx);
  const T* x = ctx.Input("X").data<T>();
  const T* y = ctx.Input("Y").data<T>();
  const T* w = ctx.Input("Weight").data<T>();
  Tensor dout_t = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout_t.dims(), Dims{g.b, g.k});
  const T* dout = dout_t.data<T>();
  T* dx = GradOf<T>(ctx, "X", {g.b, g.m});
  T* dy = GradOf<T>(ctx, "Y", {g.b, g.n});
  T* dw = GradOf<T>(ctx, "Weight", {g.k, g.m, g.n});
  T* db = GradOf<T>(ctx, "Bias", {1, g.k});
  for (int64_t r = 0; r < g.b; ++r)
    for (int64_t k = 0; k < g.k; ++k) {
      const T d = dout[r * g.k + k];
      const T* wk = w + k * g.m * g.n;
      if (db) db[k] += d;
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
          const T wij = wk[i * g.n + j];
          if (dx) dx[r * g.m + i] += d * wij * y[r * g.n + j];
          if (dy) dy[r * g.n + j] += d * x[r * g.m + i] * wij;
          if (dw) dw[(k * g.m + i) * g.n + j] += d * x[r * g.m + i] * y[r * g.n + j];
        }
    }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("bilinear_tensor_product")
                     .Comment("Out[b, k] = X[b] Weight[k] Y[b]^T + Bias[0, k].")
                     .Input("X", "[B, M]")
                     .Input("Y", "[B, N]")
                     .Input("Weight", "[K, M, N]")
                     .Input("Bias", "[1, K] (optional)")
                     .AsDispensable()
                     .Output("Out", "[B, K]")
                     .KernelDataTypeFrom("X")
                     .InferShape(BilinearShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("bilinear_tensor_product_grad");
                       op.Input("X", g.Input("X"))
                           .Input("Y", g.Input("Y"))
                           .Input("Weight", g.Input("Weight"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .Output(GradVarName("Y"), g.InputGrad("Y"))
                           .Output(GradVarName("Weight"), g.InputGrad("Weight"));
                       if (!g.Input("Bias").empty()) {
                         op.Input("Bias", g.Input("Bias"));
                         op.Output(GradVarName("Bias"), g.InputGrad("Bias"));
                       }
                     }));
TIDE_REGISTER_OP(tide::OpSchema("bilinear_tensor_product_grad")
                     .Input("X")
                     .Input("Y")
                     .Input("Weight")
                     .Input("Bias")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .AsDispensable()
                     .Output(GradVarName("Y"))
                     .AsDispensable()
                     .Output(GradVarName("Weight"))
                     .AsDispensable()
                     .Output(GradVarName("Bias"))
                     .AsDispensable()
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X", "Y", "Weight", "Bias"})));
TIDE_REGISTER_KERNEL("bilinear_tensor_product", "cpu", BilinearKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("bilinear_tensor_product_grad", "cpu", BilinearGradKernel, OPS_NN_FLOAT_TYPES);
