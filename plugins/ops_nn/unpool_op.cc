// unpool_op.cc: Paddle's max unpooling, unpool (F.max_unpool1d / 2d, X [N, C, H, W]) and
// unpool3d (F.max_unpool3d, X [N, C, D, H, W]): Out [N, C, output_size] is zero but where
// Indices (a max pool's mask: the flat index of each X element inside its output plane) puts X's
// elements (a repeated index keeps the last, as Paddle's loop); the grad reads Out@GRAD back at
// the same indices.
#include "common.h"

namespace ops_nn {
namespace {

// X's planes (N * C), their size and Out's, and Out's dims.
struct UnpoolGeom {
  int64_t planes = 0, in_plane = 0, out_plane = 0;
  Dims out;
};

template <typename Ctx>
UnpoolGeom GetUnpool(const Ctx& ctx, const Dims& x, const Dims& indices) {
  const char* op = ctx.op_type();
  const size_t rank = std::string(op).rfind("unpool3d", 0) == 0 ? 3 : 2;
  TIDE_CHECK(x.size() == rank + 2, "op '", op, "': X ('", ctx.InputName("X"), "') must be ",
             rank + 2, "-D, got ", tide::ToString(x));
  bool same = indices.size() == x.size();
  for (size_t i = 0; same && i < x.size(); ++i) same = DimsCompatible(x[i], indices[i]);
  TIDE_CHECK(same, "op '", op, "': Indices ('", ctx.InputName("Indices"), "') must have X's dims ",
             tide::ToString(x), ", got ", tide::ToString(indices));
  const std::string layout = ctx.template Attr<std::string>("data_format");
  TIDE_CHECK(layout == (rank == 3 ? "NCDHW" : "NCHW"), "op '", op, "': data_format must be ",
             rank == 3 ? "NCDHW" : "NCHW", " (channels first, as Paddle's kernel reads X), got '",
             layout, "'");
  const auto k = ctx.template Attr<std::vector<int32_t>>("ksize");
  const auto s = ctx.template Attr<std::vector<int32_t>>("strides");
  const auto p = ctx.template Attr<std::vector<int32_t>>("paddings");
  const auto o = ctx.template Attr<std::vector<int32_t>>("output_size");
  auto ints = [](const std::vector<int32_t>& v) {
    return tide::ToString(Dims(v.begin(), v.end()));
  };
  TIDE_CHECK(k.size() == rank && s.size() == rank && p.size() == rank, "op '", op,
             "': ksize, strides and paddings need ", rank, " values each, got ", ints(k), ", ",
             ints(s), ", ", ints(p));
  TIDE_CHECK(o.empty() || o.size() == rank, "op '", op, "': output_size needs ", rank,
             " values (or none), got ", ints(o));
  UnpoolGeom g;
  g.out = {x[0], x[1]};
  for (size_t a = 0; a < rank; ++a) {
    // Without output_size, the pool's input size: (in - 1) stride - 2 pad + k.
    const int64_t size = !o.empty()     ? o[a]
                         : x[2 + a] < 0 ? -1
                                        : (x[2 + a] - 1) * s[a] - 2 * int64_t(p[a]) + k[a];
    TIDE_CHECK(size > 0 || size == -1, "op '", op, "': the output size along spatial dim ", a,
               " must be positive, got ", size, " (X ", tide::ToString(x), ", output_size ",
               ints(o), ")");
    g.out.push_back(size);
  }
  g.planes = x[0] * x[1];
  g.in_plane = DimsProduct(x, 2, x.size());
  g.out_plane = DimsProduct(g.out, 2, g.out.size());
  return g;
}

void UnpoolShape(tide::InferShapeContext& ctx) {
  const UnpoolGeom g = GetUnpool(ctx, ctx.InputDims("X"), ctx.InputDims("Indices"));
  const TideDataType it = ctx.InputDataType("Indices");
  TIDE_CHECK(it == TIDE_UNDEFINED || it == TIDE_INT32 || it == TIDE_INT64, "op '", ctx.op_type(),
             "': Indices ('", ctx.InputName("Indices"), "') must be int32 or int64, got ",
             tide::DataTypeName(it));
  ctx.SetOutputDims("Out", g.out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// Indices' values, each checked to fall inside an output plane.
std::vector<int64_t> UnpoolIndices(const KernelContext& ctx, const UnpoolGeom& g) {
  std::vector<int64_t> idx = IntValues(ctx, "Indices");
  for (size_t i = 0; i < idx.size(); ++i)
    TIDE_CHECK(idx[i] >= 0 && idx[i] < g.out_plane, "op '", ctx.op_type(), "': Indices ('",
               ctx.InputName("Indices"), "') holds ", idx[i], " at ", i, ", outside [0, ",
               g.out_plane, ") (an output plane of ", tide::ToString(g.out), ")");
  return idx;
}

template <typename T>
void UnpoolKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const UnpoolGeom g = GetUnpool(ctx, x.dims(), ctx.Input("Indices").dims());
  const std::vector<int64_t> idx = UnpoolIndices(ctx, g);
  const T* in = x.data<T>();
  T* out = ctx.Output("Out").mutable_data<T>(g.out, ctx.place());
  std::fill(out, out + g.planes * g.out_plane, T(0));
  for (int64_t pl = 0; pl < g.planes; ++pl)
    for (int64_t i = 0; i < g.in_plane; ++i)
      out[pl * g.out_plane + idx[pl * g.in_plane + i]] = in[pl * g.in_plane + i];
}

template <typename T>
void UnpoolGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const UnpoolGeom g = GetUnpool(ctx, x.dims(), ctx.Input("Indices").dims());
  const std::vector<int64_t> idx = UnpoolIndices(ctx, g);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.out);
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  for (int64_t pl = 0; pl < g.planes; ++pl)
    for (int64_t i = 0; i < g.in_plane; ++i)
      dx[pl * g.in_plane + i] = gd[pl * g.out_plane + idx[pl * g.in_plane + i]];
}

tide::OpSchema UnpoolSchema(const char* type, bool vol) {
  const std::vector<int32_t> ones(vol ? 3 : 2, 1), zeros(vol ? 3 : 2, 0);
  return tide::OpSchema(type)
      .Comment(
          vol ? "Out = zeros [N, C, output_size] with X's elements at Indices (F.max_unpool3d)."
              : "Out = zeros [N, C, output_size] with X's elements at Indices "
                "(F.max_unpool1d / 2d).")
      .Input("X", vol ? "[N, C, D, H, W]" : "[N, C, H, W]")
      .Input("Indices", "int32 / int64, X's dims: each element's flat index in its output plane")
      .Output("Out", "[N, C, output_size]")
      .Attr("unpooling_type", std::string("max"), "max (the only one)")
      .InSet({"max"})
      .Attr("ksize", ones, "the pool's window")
      .Attr("strides", ones, "the pool's strides")
      .Attr("paddings", zeros, "the pool's paddings")
      .Attr("output_size", std::vector<int32_t>{},
            "Out's spatial size (empty: (in - 1) stride - 2 padding + ksize)")
      .Attr("data_format", std::string(vol ? "NCDHW" : "NCHW"), "channels first only")
      .KernelDataTypeFrom("X")
      .InferShape(UnpoolShape)
      .Grad([type](tide::GradMaker& g) {
        g.NewOp(std::string(type) + "_grad")
            .Input("X", g.Input("X"))
            .Input("Indices", g.Input("Indices"))
            .Input(GradVarName("Out"), g.OutputGrad("Out"))
            .Output(GradVarName("X"), g.InputGrad("X"))
            .CopyAttrs();
      });
}

tide::OpSchema UnpoolGradSchema(const char* type, bool vol) {
  const std::vector<int32_t> ones(vol ? 3 : 2, 1), zeros(vol ? 3 : 2, 0);
  return tide::OpSchema(type)
      .Input("X")
      .Input("Indices")
      .Input(GradVarName("Out"))
      .Output(GradVarName("X"))
      .Attr("unpooling_type", std::string("max"))
      .Attr("ksize", ones)
      .Attr("strides", ones)
      .Attr("paddings", zeros)
      .Attr("output_size", std::vector<int32_t>{})
      .Attr("data_format", std::string(vol ? "NCDHW" : "NCHW"))
      .KernelDataTypeFrom("X")
      .InferShape(GradLike({"X"}));
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(UnpoolSchema("unpool", false));
TIDE_REGISTER_OP(UnpoolGradSchema("unpool_grad", false));
TIDE_REGISTER_OP(UnpoolSchema("unpool3d", true));
TIDE_REGISTER_OP(UnpoolGradSchema("unpool3d_grad", true));
TIDE_REGISTER_KERNEL("unpool", "cpu", UnpoolKernel, OPS_NN_FLOAT_TYPES, int32_t, int64_t);
TIDE_REGISTER_KERNEL("unpool_grad", "cpu", UnpoolGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("unpool3d", "cpu", UnpoolKernel, OPS_NN_FLOAT_TYPES, int32_t, int64_t);
TIDE_REGISTER_KERNEL("unpool3d_grad", "cpu", UnpoolGradKernel, OPS_NN_FLOAT_TYPES);
