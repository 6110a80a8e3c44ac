// shuffle_ops.cc: Paddle's pixel_shuffle (F.pixel_shuffle: [N, C*r*r, H, W] -> [N, C, H*r, W*r]),
// pixel_unshuffle (its inverse, factor downscale_factor) and channel_shuffle (the channels as a
// [groups, C/groups] grid read transposed), each in NCHW or NHWC. Each one is a reshape, a
// transposition and a reshape; the grads are the inverse moves (pixel_shuffle's is
// pixel_unshuffle's and back; channel_shuffle's is channel_shuffle with C/groups groups).
#include <string>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

// Out = X seen as `split` dims, transposed by `perm` (out dim i is split dim perm[i]).
template <typename T>
void PermuteSplit(const Dims& split, const std::vector<int>& perm, const T* x, T* out) {
  const std::vector<int64_t> st = Strides(split);
  Dims out_dims(perm.size());
  std::vector<int64_t> out_st(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_dims[i] = split[perm[i]];
    out_st[i] = st[perm[i]];
  }
  ForEachIndex(out_dims, [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t off = 0;
    for (size_t k = 0; k < idx.size(); ++k) off += idx[k] * out_st[k];
    out[i] = x[off];
  });
}

enum class Shuffle { kPixel, kUnpixel, kChannel };

// One move of a 4-D X: the split dims of X, the permutation and Out's dims. `factor` is the
// upscale or downscale factor, or the groups.
struct Move {
  Dims split;
  std::vector<int> perm;
  Dims out;
};

// d divided by f, with unknown (-1) dims passing through.
int64_t Div(int64_t d, int64_t f) { return d < 0 ? -1 : d / f; }
int64_t Mul(int64_t d, int64_t f) { return d < 0 ? -1 : d * f; }

Move MoveOf(const char* op, Shuffle kind, const Dims& x, int64_t f, const std::string& format,
            const char* factor_name) {
  TIDE_CHECK(x.size() == 4, "op '", op, "': X must be 4-D (", format, "), got ", tide::ToString(x));
  TIDE_CHECK(f > 0, "op '", op, "': ", factor_name, " must be > 0, got ", f);
  const bool nchw = format == "NCHW";
  TIDE_CHECK(nchw || format == "NHWC", "op '", op, "': data_format must be NCHW or NHWC, got '",
             format, "'");
  const int64_t n = x[0], c = x[nchw ? 1 : 3], h = x[nchw ? 2 : 1], w = x[nchw ? 3 : 2];
  Move m;
  switch (kind) {
    case Shuffle::kPixel:
      TIDE_CHECK(c < 0 || c % (f * f) == 0, "op '", op, "': X's channels (", c,
                 ") must be divisible by ", factor_name, "^2 (", f * f, "); X ", tide::ToString(x));
      if (nchw) {  // [N, C, r, r, H, W] -> [N, C, H, r, W, r]
        m.split = {n, Div(c, f * f), f, f, h, w};
        m.perm = {0, 1, 4, 2, 5, 3};
        m.out = {n, Div(c, f * f), Mul(h, f), Mul(w, f)};
      } else {  // [N, H, W, C, r, r] -> [N, H, r, W, r, C]
        m.split = {n, h, w, Div(c, f * f), f, f};
        m.perm = {0, 1, 4, 2, 5, 3};
        m.out = {n, Mul(h, f), Mul(w, f), Div(c, f * f)};
      }
      break;
    case Shuffle::kUnpixel:
      TIDE_CHECK((h < 0 || h % f == 0) && (w < 0 || w % f == 0), "op '", op,
                 "': X's height and width (", h, ", ", w, ") must be divisible by ", factor_name,
                 " (", f, "); X ", tide::ToString(x));
      if (nchw) {  // [N, C, H, r, W, r] -> [N, C, r, r, H, W]
        m.split = {n, c, Div(h, f), f, Div(w, f), f};
        m.perm = {0, 1, 3, 5, 2, 4};
        m.out = {n, Mul(c, f * f), Div(h, f), Div(w, f)};
      } else {  // [N, H, r, W, r, C] -> [N, H, W, C, r, r]
        m.split = {n, Div(h, f), f, Div(w, f), f, c};
        m.perm = {0, 1, 3, 5, 2, 4};
        m.out = {n, Div(h, f), Div(w, f), Mul(c, f * f)};
      }
      break;
    case Shuffle::kChannel:
      TIDE_CHECK(c < 0 || c % f == 0, "op '", op, "': X's channels (", c, ") must be divisible by ",
                 factor_name, " (", f, "); X ", tide::ToString(x));
      if (nchw) {  // [N, g, C/g, H, W] -> [N, C/g, g, H, W]
        m.split = {n, f, Div(c, f), h, w};
        m.perm = {0, 2, 1, 3, 4};
      } else {  // [N, H, W, g, C/g] -> [N, H, W, C/g, g]
        m.split = {n, h, w, f, Div(c, f)};
        m.perm = {0, 1, 2, 4, 3};
      }
      m.out = x;
      break;
  }
  return m;
}

const char* FactorName(Shuffle kind) {
  switch (kind) {
    case Shuffle::kPixel:
      return "upscale_factor";
    case Shuffle::kUnpixel:
      return "downscale_factor";
    default:
      return "groups";
  }
}

template <typename Ctx>
Move MoveOfOp(const Ctx& ctx, Shuffle kind, const Dims& x) {
  const char* name = FactorName(kind);
  return MoveOf(ctx.op_type(), kind, x, ctx.template Attr<int32_t>(name),
                ctx.template Attr<std::string>("data_format"), name);
}

template <Shuffle kKind>
void ShuffleInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", MoveOfOp(ctx, kKind, ctx.InputDims("X")).out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

template <typename T, Shuffle kKind>
void ShuffleKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Move m = MoveOfOp(ctx, kKind, x.dims());
  PermuteSplit(m.split, m.perm, x.data<T>(), ctx.Output("Out").mutable_data<T>(m.out, ctx.place()));
}

// X@GRAD from Out@GRAD: the forward move undone. X's dims are Out@GRAD's moved back (the
// inverse op's Out), so the grad op needs no X.
Move InverseMove(const char* op, Shuffle kind, const Dims& dout, int64_t f,
                 const std::string& format, const char* name) {
  switch (kind) {
    case Shuffle::kPixel:
      return MoveOf(op, Shuffle::kUnpixel, dout, f, format, name);
    case Shuffle::kUnpixel:
      return MoveOf(op, Shuffle::kPixel, dout, f, format, name);
    default: {
      TIDE_CHECK(dout.size() == 4, "op '", op, "': Out@GRAD must be 4-D, got ",
                 tide::ToString(dout));
      const int64_t c = dout[format == "NCHW" ? 1 : 3];
      TIDE_CHECK(f > 0 && (c < 0 || c % f == 0), "op '", op, "': Out@GRAD's channels (", c,
                 ") must be divisible by groups (", f, ")");
      return MoveOf(op, Shuffle::kChannel, dout, c < 0 ? 1 : c / f, format, name);
    }
  }
}

template <Shuffle kKind>
void ShuffleGradInferShape(tide::InferShapeContext& ctx) {
  const std::string dout = GradVarName("Out"), dx = GradVarName("X");
  const char* name = FactorName(kKind);
  const Move m = InverseMove(ctx.op_type(), kKind, ctx.InputDims(dout.c_str()),
                             ctx.Attr<int32_t>(name), ctx.Attr<std::string>("data_format"), name);
  ctx.SetOutputDims(dx.c_str(), m.out);
  ctx.SetOutputDataType(dx.c_str(), ctx.InputDataType(dout.c_str()));
}

template <typename T, Shuffle kKind>
void ShuffleGradKernel(KernelContext& ctx) {
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const char* name = FactorName(kKind);
  const Move m = InverseMove(ctx.op_type(), kKind, dout.dims(), ctx.Attr<int32_t>(name),
                             ctx.Attr<std::string>("data_format"), name);
  PermuteSplit(m.split, m.perm, dout.data<T>(),
               ctx.Output(GradVarName("X").c_str()).mutable_data<T>(m.out, ctx.place()));
}

template <typename T>
void PixelShuffleKernel(KernelContext& c) {
  ShuffleKernel<T, Shuffle::kPixel>(c);
}
template <typename T>
void PixelUnshuffleKernel(KernelContext& c) {
  ShuffleKernel<T, Shuffle::kUnpixel>(c);
}
template <typename T>
void ChannelShuffleKernel(KernelContext& c) {
  ShuffleKernel<T, Shuffle::kChannel>(c);
}
template <typename T>
void PixelShuffleGradKernel(KernelContext& c) {
  ShuffleGradKernel<T, Shuffle::kPixel>(c);
}
template <typename T>
void PixelUnshuffleGradKernel(KernelContext& c) {
  ShuffleGradKernel<T, Shuffle::kUnpixel>(c);
}
template <typename T>
void ChannelShuffleGradKernel(KernelContext& c) {
  ShuffleGradKernel<T, Shuffle::kChannel>(c);
}

template <Shuffle kKind>
tide::OpSchema ShuffleSchema(const std::string& type, const std::string& what) {
  return tide::OpSchema(type)
      .Comment(what)
      .Input("X", "the 4-D input (data_format)")
      .Output("Out", "X's elements moved")
      .Attr(FactorName(kKind), int32_t{1}, "the factor (groups for channel_shuffle), > 0")
      .GreaterThan(0)
      .Attr("data_format", std::string("NCHW"), "NCHW or NHWC")
      .InSet({"NCHW", "NHWC"})
      .InferShape(ShuffleInferShape<kKind>)
      .Grad([type](tide::GradMaker& g) {
        g.NewOp(type + "_grad")
            .Input(GradVarName("Out"), g.OutputGrad("Out"))
            .Output(GradVarName("X"), g.InputGrad("X"))
            .CopyAttrs();
      });
}

template <Shuffle kKind>
tide::OpSchema ShuffleGradSchema(const std::string& type) {
  return tide::OpSchema(type)
      .Input(GradVarName("Out"))
      .Output(GradVarName("X"))
      .Attr(FactorName(kKind), int32_t{1})
      .Attr("data_format", std::string("NCHW"))
      .InferShape(ShuffleGradInferShape<kKind>);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ShuffleSchema<Shuffle::kPixel>(
    "pixel_shuffle",
    "Out = X's channels moved into the height and width (F.pixel_shuffle): "
    "[N, C*r*r, H, W] -> [N, C, H*r, W*r] for r = upscale_factor."));
TIDE_REGISTER_OP(
    ShuffleSchema<Shuffle::kUnpixel>("pixel_unshuffle",
                                     "Out = X's height and width folded into its channels "
                                     "(F.pixel_unshuffle): [N, C, H*r, W*r] -> [N, C*r*r, H, W]."));
TIDE_REGISTER_OP(ShuffleSchema<Shuffle::kChannel>(
    "channel_shuffle",
    "Out = X's channels as a [groups, C/groups] grid, read transposed "
    "(F.channel_shuffle)."));
TIDE_REGISTER_OP(ShuffleGradSchema<Shuffle::kPixel>("pixel_shuffle_grad"));
TIDE_REGISTER_OP(ShuffleGradSchema<Shuffle::kUnpixel>("pixel_unshuffle_grad"));
TIDE_REGISTER_OP(ShuffleGradSchema<Shuffle::kChannel>("channel_shuffle_grad"));
TIDE_REGISTER_KERNEL("pixel_shuffle", "cpu", PixelShuffleKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("pixel_unshuffle", "cpu", PixelUnshuffleKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("channel_shuffle", "cpu", ChannelShuffleKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("pixel_shuffle_grad", "cpu", PixelShuffleGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("pixel_unshuffle_grad", "cpu", PixelUnshuffleGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("channel_shuffle_grad", "cpu", ChannelShuffleGradKernel, OPS_NN_FLOAT_TYPES);
