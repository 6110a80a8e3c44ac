// slice_expand_ops.cc: ops that move a box of elements (Fluid 1.x): slice and strided_slice
// (Input -> Out; the grad scatters back into zeros), pad (constant pad_value; grad slices),
// expand / expand_as / expand_v2 / expand_as_v2 (repeats; the grad sums the repeats). Shape rules:
// tide/ops/tensor_shape.hpp; bounds and repeats from tensors: tide/ops/slice_inputs.hpp,
// tide/ops/expand.hpp.
#include <algorithm>
#include <cstring>
#include <string>
#include <tide/low_precision.hpp>
#include <tide/ops/expand.hpp>
#include <tide/ops/slice_inputs.hpp>
#include <tide/ops/tensor_shape.hpp>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

using tide::ops::SliceGeom;

// The box, its bounds read from the tensors on the host (tide/ops/slice_inputs.hpp).
SliceGeom SliceOf(const KernelContext& ctx, const Dims& x) {
  return tide::ops::SliceGeomFromInputs(
      ctx, x, [&](const char* p) { return IntValues(ctx, p); },
      [&](const char* p) { return IntScalars(ctx, p); });
}

// Offset in X of a box index.
int64_t SliceOffset(const SliceGeom& g, const std::vector<int64_t>& xs,
                    const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += (g.start[d] + idx[d] * g.step[d]) * xs[d];
  return off;
}

// Out row by row (a row: the box's innermost dim), each row's offset in X computed once and its
// elements copied (a run where the innermost step is 1). Per element, SliceOffset's sum over the
// dims made a LLaMA's rotate_half (x[..., :32], x[..., 32:] of [1, 128, 16, 64]) 2 ns an element.
template <typename T>
void SliceKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input");
  const SliceGeom g = SliceOf(ctx, x.dims());
  const std::vector<int64_t> xs = Strides(x.dims());
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(g.out, ctx.place());
  if (g.count.empty()) {  // a rank-0 input: its one element
    ForEachIndex(g.count, [&](const std::vector<int64_t>& idx, int64_t i) {
      o[i] = xd[SliceOffset(g, xs, idx)];
    });
    return;
  }
  const size_t last = g.count.size() - 1;
  const int64_t inner = g.count[last], step = g.step[last] * xs[last];
  const Dims rows(g.count.begin(), g.count.begin() + last);
  ForEachIndex(rows, [&](const std::vector<int64_t>& idx, int64_t row) {
    int64_t off = g.start[last] * xs[last];
    for (size_t d = 0; d < last; ++d) off += (g.start[d] + idx[d] * g.step[d]) * xs[d];
    const T* src = xd + off;
    T* dst = o + row * inner;
    if (step == 1) {
      std::copy(src, src + inner, dst);
    } else {
      for (int64_t j = 0; j < inner; ++j) dst[j] = src[j * step];
    }
  });
}

template <typename T>
void SliceGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("Input"), dout = ctx.Input(GradVarName("Out").c_str());
  const SliceGeom g = SliceOf(ctx, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), g.out);
  const std::vector<int64_t> xs = Strides(x.dims());
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("Input").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  ForEachIndex(g.count, [&](const std::vector<int64_t>& idx, int64_t i) {
    dx[SliceOffset(g, xs, idx)] = gd[i];
  });
}

void SliceInferShape(tide::InferShapeContext& ctx) {
  // With tensor bounds the kernel sets Out's dims; compile time gets the rank.
  if (!tide::ops::SliceBoundsFromTensors(ctx) || !ctx.IsRuntime())
    ctx.SetOutputDims("Out", tide::ops::SliceGeomAtBuild(ctx, ctx.InputDims("Input")).out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("Input"));
  // Rows kept whole: they stay X's sequences, as Fluid's slice shares the LoD.
  const auto axes = ctx.Attr<std::vector<int32_t>>("axes");
  if (std::string(ctx.op_type()) == "slice" && std::find(axes.begin(), axes.end(), 0) == axes.end())
    ctx.ShareLoD("Input", "Out");
}

// The bounds' tensor inputs: slice's (Paddle 2.x) and strided_slice's (Fluid 1.6+, strides too).
std::vector<const char*> BoundInputs(bool strided) {
  std::vector<const char*> in = {"StartsTensor", "EndsTensor", "StartsTensorList",
                                 "EndsTensorList"};
  if (strided) in.insert(in.end(), {"StridesTensor", "StridesTensorList"});
  return in;
}
bool IsList(const std::string& input) { return input.find("TensorList") != std::string::npos; }

tide::OpSchema SliceSchema(const std::string& type, bool strided) {
  auto s = tide::OpSchema(type)
               .Comment(strided ? "Out = Input[starts:ends:strides] on `axes` (Python's rules); "
                                  "each bound kind may come from a tensor (list first)."
                                : "Out = Input[starts:ends] on `axes`; negative indices count "
                                  "from the end, and both are clamped to the dim.")
               .Input("Input", "the input")
               .Output("Out", "the slice")
               .RequiredAttr("axes", TIDE_ATTR_INTS, "the sliced axes")
               .Attr("starts", std::vector<int32_t>{}, "first index per axis")
               .Attr("ends", std::vector<int32_t>{}, "end (exclusive) per axis");
  if (strided)
    s.Attr("strides", std::vector<int32_t>{}, "step per axis (negative: backwards)");
  else
    s.Attr("mkldnn_data_type", std::string("float32"), "oneDNN precision hint (ignored)");
  for (const char* in : BoundInputs(strided)) {
    if (IsList(in))
      s.Input(in, "the bounds as one-element int tensors (optional; override the rest)")
          .AsDuplicable()
          .AsDispensable();
    else
      s.Input(in, "the bounds as a 1-D int tensor (optional; overrides the attribute)")
          .AsDispensable();
  }
  return s.Attr("infer_flags", std::vector<int32_t>{}, "Fluid's compile-time hints (unused)")
      .Attr("decrease_axis", std::vector<int32_t>{}, "axes (taking one element) to drop")
      .InferShape(SliceInferShape)
      .Grad([type, strided](tide::GradMaker& g) {  // the grad reads the same bounds
        auto op = g.NewOp(type + "_grad");
        op.Input("Input", g.Input("Input"));
        for (const char* in : BoundInputs(strided))
          if (!g.Input(in).empty()) op.Input(in, g.Input(in));
        op.Input(GradVarName("Out"), g.OutputGrad("Out"))
            .Output(GradVarName("Input"), g.InputGrad("Input"))
            .CopyAttrs();
      });
}

tide::OpSchema SliceGradSchema(const std::string& type, bool strided) {
  auto s = tide::OpSchema(type)
               .Input("Input")
               .Input(GradVarName("Out"))
               .Output(GradVarName("Input"))
               .RequiredAttr("axes", TIDE_ATTR_INTS)
               .Attr("starts", std::vector<int32_t>{})
               .Attr("ends", std::vector<int32_t>{});
  if (strided)
    s.Attr("strides", std::vector<int32_t>{});
  else
    s.Attr("mkldnn_data_type", std::string("float32"));
  for (const char* in : BoundInputs(strided)) {
    if (IsList(in))
      s.Input(in).AsDuplicable().AsDispensable();
    else
      s.Input(in).AsDispensable();
  }
  return s.Attr("infer_flags", std::vector<int32_t>{})
      .Attr("decrease_axis", std::vector<int32_t>{})
      .InferShape(GradLike({"Input"}));
}

// ---------------------------------------------------------------------------------------------
// pad: Out = X with paddings[2i] values before and paddings[2i+1] after dim i, set to pad_value.
template <typename T>
void PadKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const auto pads = ctx.Attr<std::vector<int32_t>>("paddings");
  const Dims od = tide::ops::PadDims(ctx.op_type(), x.dims(), pads);
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  std::fill(o, o + DimsProduct(od), static_cast<T>(ctx.Attr<float>("pad_value")));
  const std::vector<int64_t> os = Strides(od);
  const T* xd = x.data<T>();
  ForEachIndex(x.dims(), [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] + pads[2 * d]) * os[d];
    o[off] = xd[i];
  });
}

template <typename T>
void PadGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const auto pads = ctx.Attr<std::vector<int32_t>>("paddings");
  const Dims od = tide::ops::PadDims(ctx.op_type(), x.dims(), pads);
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const std::vector<int64_t> os = Strides(od);
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  ForEachIndex(x.dims(), [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (idx[d] + pads[2 * d]) * os[d];
    dx[i] = gd[off];
  });
}

// ---------------------------------------------------------------------------------------------
// expand / expand_as: Out[i] = X[i mod X's dims] (nd_index.h's RepeatCopy); the grad sums
// every repeat.

std::vector<int32_t> ExpandTimes(const KernelContext& ctx, const Dims& x) {
  if (ctx.HasInput("target_tensor"))
    return tide::ops::ExpandAsTimes(ctx.op_type(), x, ctx.Input("target_tensor").dims());
  return tide::ops::ExpandTimesFromInputs(
      ctx, [&](const char* p) { return IntValues(ctx, p); },
      [&](const char* p) { return IntScalars(ctx, p); });
}

bool TensorTimes(const tide::InferShapeContext& ctx) {
  return ctx.HasInput("ExpandTimes") || ctx.HasInput("expand_times_tensor");
}

template <typename T>
void ExpandKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims od = tide::ops::ExpandDims(ctx.op_type(), x.dims(), ExpandTimes(ctx, x.dims()));
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  RepeatCopy(xd, x.dims(), od, o);
}

template <typename T>
void ExpandGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const Dims od = tide::ops::ExpandDims(ctx.op_type(), x.dims(), ExpandTimes(ctx, x.dims()));
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  ForEachRepeat(x.dims(), od, [&](int64_t i, int64_t off) { dx[off] += gd[i]; });
}

void ExpandInferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  if (ctx.HasInput("target_tensor")) {
    const Dims t = ctx.InputDims("target_tensor");
    tide::ops::ExpandAsTimes(ctx.op_type(), x, t);
    ctx.SetOutputDims("Out", t);
  } else if (!TensorTimes(ctx) || !ctx.IsRuntime()) {  // else the kernel sets Out's dims
    ctx.SetOutputDims("Out", tide::ops::ExpandDimsAtBuild(ctx, x));
  }
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// expand_v2: X (with 1s in front) repeated to the target shape (tide/ops/expand.hpp).
Dims ExpandV2OutDims(const KernelContext& ctx, const Dims& x) {
  return tide::ops::ExpandV2Dims(ctx.op_type(), x,
                                 tide::ops::ExpandV2ShapeFromInputs(
                                     ctx, [&](const char* p) { return IntValues(ctx, p); },
                                     [&](const char* p) { return IntScalars(ctx, p); }));
}

template <typename T>
void ExpandV2Kernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const Dims od = ExpandV2OutDims(ctx, x.dims());
  const T* xd = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  RepeatCopy(xd, tide::ops::ExpandV2XDims(x.dims(), od.size()), od, o);
}

template <typename T>
void ExpandV2GradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const Dims od = ExpandV2OutDims(ctx, x.dims());
  tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), od);
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  ForEachRepeat(tide::ops::ExpandV2XDims(x.dims(), od.size()), od,
                [&](int64_t i, int64_t off) { dx[off] += gd[i]; });
}

void ExpandV2InferShape(tide::InferShapeContext& ctx) {
  const bool from_tensor = ctx.HasInput("Shape") || ctx.HasInput("expand_shapes_tensor");
  if (!from_tensor || !ctx.IsRuntime())  // else the kernel sets Out's dims
    ctx.SetOutputDims("Out", tide::ops::ExpandV2DimsAtBuild(ctx, ctx.InputDims("X")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// expand_as_v2 (Paddle 2.x's expand_as): X expanded to Y's dims where Y is given, else to the
// target_shape attribute (-1: X's dim), by expand_v2's rules. The grad reads Out@GRAD's dims.
Dims ExpandAsV2Target(const char* op, const Dims& x, const Dims* y,
                      const std::vector<int32_t>& target) {
  if (y) return tide::ops::ExpandV2Dims(op, x, std::vector<int64_t>(y->begin(), y->end()));
  TIDE_CHECK(!target.empty(), "op '", op, "': needs Y or the target_shape attribute");
  return tide::ops::ExpandV2Dims(op, x, std::vector<int64_t>(target.begin(), target.end()));
}

template <typename T>
void ExpandAsV2Kernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  Tensor y = ctx.OptionalInput("Y");
  const Dims yd = y ? y.dims() : Dims{};
  const Dims od = ExpandAsV2Target(ctx.op_type(), x.dims(), y ? &yd : nullptr,
                                   ctx.Attr<std::vector<int32_t>>("target_shape"));
  const T* xv = x.data<T>();
  T* o = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  RepeatCopy(xv, tide::ops::ExpandV2XDims(x.dims(), od.size()), od, o);
}

template <typename T>
void ExpandAsV2GradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  const Dims od = dout.dims();
  tide::ops::ExpandV2Dims(ctx.op_type(), x.dims(), std::vector<int64_t>(od.begin(), od.end()));
  const T* gd = dout.data<T>();
  T* dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  std::fill(dx, dx + x.numel(), T(0));
  ForEachRepeat(tide::ops::ExpandV2XDims(x.dims(), od.size()), od,
                [&](int64_t i, int64_t off) { dx[off] += gd[i]; });
}

void ExpandAsV2InferShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const auto target = ctx.Attr<std::vector<int32_t>>("target_shape");
  if (ctx.HasInput("Y")) {
    const Dims y = ctx.InputDims("Y");
    // at build time an unknown dim of Y (the batch) stays unknown
    Dims shape(y.size());
    for (size_t i = 0; i < y.size(); ++i) shape[i] = y[i] < 0 ? -2 : y[i];
    ctx.SetOutputDims("Out",
                      tide::ops::ExpandV2Dims(ctx.op_type(), x,
                                              std::vector<int64_t>(shape.begin(), shape.end())));
  } else {
    ctx.SetOutputDims("Out", ExpandAsV2Target(ctx.op_type(), x, nullptr, target));
  }
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

tide::GradMakerFn XGradMaker(const std::string& grad_type, std::vector<std::string> extra) {
  return [grad_type, extra](tide::GradMaker& g) {
    auto op = g.NewOp(grad_type);
    op.Input("X", g.Input("X"));
    for (const auto& e : extra)
      if (!g.Input(e.c_str()).empty()) op.Input(e, g.Input(e.c_str()));  // dispensable ones too
    op.Input(GradVarName("Out"), g.OutputGrad("Out"))
        .Output(GradVarName("X"), g.InputGrad("X"))
        .CopyAttrs();
  };
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(SliceSchema("slice", false));
TIDE_REGISTER_OP(SliceGradSchema("slice_grad", false));
TIDE_REGISTER_OP(SliceSchema("strided_slice", true));
TIDE_REGISTER_OP(SliceGradSchema("strided_slice_grad", true));
// float16 and bfloat16 get kernels of their own where the op only moves or makes values: they
// copy the bits (every other op runs its float32 kernel on them: docs/data_types.md).
TIDE_REGISTER_KERNEL("slice", "cpu", SliceKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("slice_grad", "cpu", SliceGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("strided_slice", "cpu", SliceKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     OPS_NN_BYTE_TYPES, tide::float16, tide::bfloat16);
TIDE_REGISTER_KERNEL("strided_slice_grad", "cpu", SliceGradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("pad")
                     .Comment("Out = X padded with pad_value: paddings[2i] before and "
                              "paddings[2i+1] after dim i.")
                     .Input("X", "the input")
                     .Output("Out", "the padded input")
                     .RequiredAttr("paddings", TIDE_ATTR_INTS, "(before, after) per dim")
                     .Attr("pad_value", 0.0f, "the padding value")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims(
                           "Out", tide::ops::PadDims(c.op_type(), c.InputDims("X"),
                                                     c.Attr<std::vector<int32_t>>("paddings")));
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .Grad(XGradMaker("pad_grad", {})));
TIDE_REGISTER_OP(tide::OpSchema("pad_grad")
                     .Input("X")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .RequiredAttr("paddings", TIDE_ATTR_INTS)
                     .Attr("pad_value", 0.0f)
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("pad", "cpu", PadKernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("pad_grad", "cpu", PadGradKernel, OPS_NN_FLOAT_TYPES, OPS_NN_COMPLEX_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("expand")
                     .Comment("Out = X repeated expand_times[i] times along dim i. Fluid 1.6+: "
                              "ExpandTimes, else expand_times_tensor, overrides the attribute.")
                     .Input("X", "the input")
                     .Input("ExpandTimes",
                            "the repeats as a 1-D int tensor (optional; over the "
                            "others)")
                     .AsDispensable()
                     .Input("expand_times_tensor",
                            "the repeats as one-element int tensors, one "
                            "per dim (optional; over expand_times)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out", "the repeated input")
                     .Attr("expand_times", std::vector<int32_t>{},
                           "repeats per dim (-1 where expand_times_tensor gives it)")
                     .InferShape(ExpandInferShape)
                     .Grad(XGradMaker("expand_grad", {"ExpandTimes", "expand_times_tensor"})));
TIDE_REGISTER_OP(tide::OpSchema("expand_grad")
                     .Input("X")
                     .Input("ExpandTimes")
                     .AsDispensable()
                     .Input("expand_times_tensor")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("expand_times", std::vector<int32_t>{})
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_OP(tide::OpSchema("expand_as")
                     .Comment("Out = X repeated to target_tensor's dims (each a multiple of X's).")
                     .Input("X", "the input")
                     .Input("target_tensor", "gives Out's dims")
                     .Output("Out", "the repeated input")
                     .KernelDataTypeFrom("X")
                     .InferShape(ExpandInferShape)
                     .Grad(XGradMaker("expand_as_grad", {"target_tensor"})));
TIDE_REGISTER_OP(tide::OpSchema("expand_as_grad")
                     .Input("X")
                     .Input("target_tensor")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_OP(tide::OpSchema("expand_v2")
                     .Comment("Out = X expanded to a shape (Paddle 2.x's Tensor.expand): X's dims "
                              "aligned to its end, a dim of 1 repeated, -1 keeps X's dim. Shape, "
                              "else expand_shapes_tensor, overrides the attribute.")
                     .Input("X", "the input")
                     .Input("Shape",
                            "the target shape as a 1-D int tensor (optional; over the others)")
                     .AsDispensable()
                     .Input("expand_shapes_tensor",
                            "the target shape as one-element int tensors, "
                            "one per dim (optional; over shape)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out", "the expanded input")
                     .Attr("shape", std::vector<int32_t>{},
                           "the target shape (-1: X's dim; -2: a tensor gives it)")
                     .KernelDataTypeFrom("X")
                     .InferShape(ExpandV2InferShape)
                     .Grad(XGradMaker("expand_v2_grad", {"Shape", "expand_shapes_tensor"})));
TIDE_REGISTER_OP(tide::OpSchema("expand_v2_grad")
                     .Input("X")
                     .Input("Shape")
                     .AsDispensable()
                     .Input("expand_shapes_tensor")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("shape", std::vector<int32_t>{})
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_OP(
    tide::OpSchema("expand_as_v2")
        .Comment("Out = X expanded to Y's dims, else to target_shape (paddle.expand_as): "
                 "expand_v2's rules, X's dims aligned to the end, a dim of 1 repeated.")
        .Input("X", "the input")
        .Input("Y", "gives Out's dims (optional; over target_shape)")
        .AsDispensable()
        .Output("Out", "the expanded input")
        .Attr("target_shape", std::vector<int32_t>{}, "Out's dims (-1: X's dim)")
        .KernelDataTypeFrom("X")
        .InferShape(ExpandAsV2InferShape)
        .Grad(XGradMaker("expand_as_v2_grad", {})));
TIDE_REGISTER_OP(tide::OpSchema("expand_as_v2_grad")
                     .Input("X")
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("target_shape", std::vector<int32_t>{})
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("expand_as_v2", "cpu", ExpandAsV2Kernel, OPS_NN_MOVE_TYPES,
                     OPS_NN_COMPLEX_TYPES, bool);
TIDE_REGISTER_KERNEL("expand_as_v2_grad", "cpu", ExpandAsV2GradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("expand_v2", "cpu", ExpandV2Kernel, OPS_NN_MOVE_TYPES, OPS_NN_COMPLEX_TYPES,
                     bool);
TIDE_REGISTER_KERNEL("expand_v2_grad", "cpu", ExpandV2GradKernel, OPS_NN_FLOAT_TYPES,
                     OPS_NN_COMPLEX_TYPES);
TIDE_REGISTER_KERNEL("expand", "cpu", ExpandKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("expand_grad", "cpu", ExpandGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("expand_as", "cpu", ExpandKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("expand_as_grad", "cpu", ExpandGradKernel, OPS_NN_FLOAT_TYPES);
