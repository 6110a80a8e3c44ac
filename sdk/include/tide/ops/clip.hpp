// tide/ops/clip.hpp: clip's bounds (Paddle 2.x's Min / Max inputs over the attributes) and
// clip_by_norm's max_norm, with their errors, and clip_grad as every kernel reads its inputs.
#ifndef TIDE_OPS_CLIP_HPP_
#define TIDE_OPS_CLIP_HPP_

#include <tide/ops/int_inputs.hpp>
#include <tide/ops/unary.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

// One bound: input `param` (one float32 / float64 element, read with `read`, see
// int_inputs.hpp) when given, else attribute `attr`.
template <typename T, typename Read = ReadOnHost>
T ClipBound(const KernelContext& ctx, const char* param, const char* attr, Read read = {}) {
  if (!ctx.HasInput(param)) return static_cast<T>(ctx.Attr<float>(attr));
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == 1 && (t.dtype() == TIDE_FP32 || t.dtype() == TIDE_FP64), "op '",
             ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') must hold one float32/float64, got ", DataTypeName(t.dtype()), " ",
             ToString(t.dims()));
  if (t.dtype() == TIDE_FP64) {
    double d;
    read(t, &d, sizeof d);
    return static_cast<T>(d);
  }
  float f;
  read(t, &f, sizeof f);
  return static_cast<T>(f);
}

// clip and clip_grad's [lo, hi]: Min / Max or min / max; lo must not exceed hi.
template <typename T>
struct ClipRange {
  T lo, hi;
};

template <typename T, typename Read = ReadOnHost>
ClipRange<T> GetClipRange(const KernelContext& ctx, Read read = {}) {
  const ClipRange<T> r{ClipBound<T>(ctx, "Min", "min", read),
                       ClipBound<T>(ctx, "Max", "max", read)};
  TIDE_CHECK(r.lo <= r.hi, "op '", ctx.op_type(), "': min (", r.lo, ") must not exceed max (", r.hi,
             ")");
  return r;
}

// clip_by_norm's max_norm (> 0).
template <typename T>
T ClipMaxNorm(const KernelContext& ctx) {
  const T max_norm = static_cast<T>(ctx.Attr<float>("max_norm"));
  TIDE_CHECK(max_norm > 0, "op '", ctx.op_type(), "': max_norm must be > 0, got ", max_norm);
  return max_norm;
}

// clip_grad: the range, and X with Out@GRAD and X@GRAD (unary.hpp).
template <typename T>
struct ClipGradArgs {
  ClipRange<T> r;
  UnaryGradArgs<T> io;
};

template <typename T, typename Read = ReadOnHost>
ClipGradArgs<T> GetClipGradArgs(const KernelContext& ctx, Read read = {}) {
  return {GetClipRange<T>(ctx, read), GetUnaryGradArgs<T>(ctx, "X")};
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_CLIP_HPP_
