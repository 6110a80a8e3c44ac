// crop_tensor_op.cc: Paddle 2.x's crop_tensor (paddle.crop, PIR pd_op.crop): Out = X[offsets :
// offsets + shape] for an X of any rank; shape from ShapeTensor (one value per variable), else
// Shape (a 1-D int tensor), else the attribute, -1 taking the rest of the dim; offsets likewise
// from OffsetsTensor, Offsets or the attribute (empty: zeros). The grad puts Out@GRAD back in the
// box of a zero X@GRAD.
#include <cstring>

#include "common.h"
#include "nd_index.h"

namespace ops_nn {
namespace {

// Out's dims and the box's first index in X, checked.
struct CropBox {
  Dims shape;
  std::vector<int64_t> offsets;
};

std::vector<int64_t> BoxValues(const KernelContext& ctx, const char* list, const char* tensor,
                               const char* attr) {
  if (ctx.HasInput(list)) return IntScalars(ctx, list);
  if (ctx.HasInput(tensor)) return IntValues(ctx, tensor);
  const auto v = ctx.Attr<std::vector<int32_t>>(attr);
  return std::vector<int64_t>(v.begin(), v.end());
}

CropBox GetCropBox(const KernelContext& ctx, const Dims& x) {
  const char* op = ctx.op_type();
  CropBox b;
  b.shape = BoxValues(ctx, "ShapeTensor", "Shape", "shape");
  b.offsets = BoxValues(ctx, "OffsetsTensor", "Offsets", "offsets");
  if (b.offsets.empty()) b.offsets.assign(x.size(), 0);
  TIDE_CHECK(b.shape.size() == x.size() && b.offsets.size() == x.size(), "op '", op, "': shape ",
             tide::ToString(b.shape), " and offsets ", tide::ToString(Dims(b.offsets)),
             " need one value per dim of X ", tide::ToString(x));
  for (size_t i = 0; i < x.size(); ++i) {
    TIDE_CHECK(b.shape[i] > 0 || b.shape[i] == -1, "op '", op, "': shape ", tide::ToString(b.shape),
               " must hold values > 0 or -1 (the rest of the dim), got ", b.shape[i], " for dim ",
               i);
    if (b.shape[i] == -1) b.shape[i] = x[i] - b.offsets[i];
    TIDE_CHECK(b.offsets[i] >= 0 && b.shape[i] >= 0 && b.offsets[i] + b.shape[i] <= x[i], "op '",
               op, "': the box at offset ", b.offsets[i], " of size ", b.shape[i],
               " leaves X's dim ", i, " (", x[i], "; X ", tide::ToString(x), ")");
  }
  return b;
}

void CropTensorShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  const Dims x = ctx.InputDims("X");
  Dims out;
  if (ctx.HasInput("ShapeTensor")) {
    out.assign(ctx.InputCount("ShapeTensor"), -1);
  } else if (ctx.HasInput("Shape")) {
    const Dims s = ctx.InputDims("Shape");
    TIDE_CHECK(s.size() == 1, "op '", op, "': Shape ('", ctx.InputName("Shape"),
               "') must be 1-D, got ", tide::ToString(s));
    out.assign(s[0] < 0 ? x.size() : s[0], -1);
  } else {
    const auto s = ctx.Attr<std::vector<int32_t>>("shape");
    out.assign(s.begin(), s.end());
    const bool offsets_known = !ctx.HasInput("OffsetsTensor") && !ctx.HasInput("Offsets");
    auto o = ctx.Attr<std::vector<int32_t>>("offsets");
    if (o.empty()) o.assign(x.size(), 0);
    for (size_t i = 0; i < out.size(); ++i) {
      TIDE_CHECK(out[i] > 0 || out[i] == -1, "op '", op, "': shape ", tide::ToString(out),
                 " must hold values > 0 or -1 (the rest of the dim), got ", out[i], " for dim ", i);
      if (out[i] == -1 && i < x.size() && i < o.size())
        out[i] = offsets_known && x[i] >= 0 ? x[i] - o[i] : -1;
    }
  }
  TIDE_CHECK(out.size() == x.size(), "op '", op, "': the shape needs one value per dim of X ",
             tide::ToString(x), ", got ", out.size());
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
}

// Copies the box of X into Out (kGrad: Out@GRAD into the box of a zero X@GRAD).
template <typename T, bool kGrad>
void CropTensor(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  const CropBox b = GetCropBox(ctx, x.dims());
  const std::vector<int64_t> xs = Strides(x.dims());
  const T* src;
  T* dst;
  if constexpr (!kGrad) {
    src = x.data<T>();
    dst = ctx.Output("Out").mutable_data<T>(b.shape, ctx.place());
  } else {
    Tensor dout = ctx.Input(GradVarName("Out").c_str());
    tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", dout.dims(), b.shape);
    src = dout.data<T>();
    dst = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
    std::fill(dst, dst + x.numel(), T(0));
  }
  ForEachIndex(b.shape, [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t at = 0;
    for (size_t d = 0; d < idx.size(); ++d) at += (idx[d] + b.offsets[d]) * xs[d];
    if constexpr (!kGrad)
      dst[i] = src[at];
    else
      dst[at] = src[i];
  });
}
template <typename T>
void CropTensorKernel(KernelContext& c) {
  CropTensor<T, false>(c);
}
template <typename T>
void CropTensorGradKernel(KernelContext& c) {
  CropTensor<T, true>(c);
}

constexpr const char* kBoxInputs[] = {"Shape", "Offsets", "ShapeTensor", "OffsetsTensor"};

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("crop_tensor")
                     .Comment("Out = X[offsets : offsets + shape] (paddle.crop; a shape of -1 "
                              "takes the rest of the dim).")
                     .Input("X", "any rank")
                     .Input("Shape", "int32 / int64 [rank]: the box's dims (optional)")
                     .AsDispensable()
                     .Input("Offsets", "int32 / int64 [rank]: the box's first index (optional)")
                     .AsDispensable()
                     .Input("ShapeTensor", "one-element int tensors, one per dim (optional)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("OffsetsTensor", "one-element int tensors, one per dim (optional)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out", "the box")
                     .Attr("shape", std::vector<int32_t>{}, "the box's dims (-1: the rest)")
                     .Attr("offsets", std::vector<int32_t>{}, "the box's first index per dim")
                     .KernelDataTypeFrom("X")
                     .InferShape(CropTensorShape)
                     .Grad([](tide::GradMaker& g) {
                       auto op = g.NewOp("crop_tensor_grad");
                       op.Input("X", g.Input("X"));
                       for (const char* in : kBoxInputs)
                         if (!g.Input(in).empty()) op.Input(in, g.Input(in));
                       op.Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"))
                           .CopyAttrs();
                     }));
TIDE_REGISTER_OP(tide::OpSchema("crop_tensor_grad")
                     .Input("X")
                     .Input("Shape")
                     .AsDispensable()
                     .Input("Offsets")
                     .AsDispensable()
                     .Input("ShapeTensor")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input("OffsetsTensor")
                     .AsDuplicable()
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .Attr("shape", std::vector<int32_t>{})
                     .Attr("offsets", std::vector<int32_t>{})
                     .KernelDataTypeFrom("X")
                     .InferShape(GradLike({"X"})));
TIDE_REGISTER_KERNEL("crop_tensor", "cpu", CropTensorKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("crop_tensor_grad", "cpu", CropTensorGradKernel, OPS_NN_FLOAT_TYPES);
