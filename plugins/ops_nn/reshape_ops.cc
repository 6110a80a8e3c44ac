// reshape_ops.cc: reshape / reshape2 (shape with 0 = copy X's dim, one -1 = inferred; an optional
// Shape tensor overrides the attribute at run time) and flatten / flatten2 (to 2-D at `axis`),
// with grads. The *2 variants output XShape ([0] + X's dims, no data) so their grads need no X.
#include <cstring>

#include "common.h"

namespace ops_nn {
namespace {

// Fluid's rule. With X's dims partly unknown (compile time), the -1 is inferred when X's unknown
// dims are all copied by 0s (they cancel), else left -1.
Dims ReshapeDims(const char* op, const std::vector<int64_t>& shape, const Dims& x) {
  Dims out(shape.size());
  int unknown = -1;
  int64_t explicit_product = 1;
  std::vector<bool> copied(x.size(), false);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TIDE_CHECK(unknown < 0, "op '", op, "': shape ", tide::ToString(shape),
                 " has more than one -1");
      unknown = static_cast<int>(i);
    } else if (shape[i] == 0) {
      TIDE_CHECK(i < x.size(), "op '", op, "': shape ", tide::ToString(shape), " copies dim ", i,
                 " (0) but X ", tide::ToString(x), " has rank ", x.size());
      out[i] = x[i];
      copied[i] = true;
    } else {
      TIDE_CHECK(shape[i] > 0, "op '", op, "': shape ", tide::ToString(shape), " holds ", shape[i],
                 " at ", i, " (sizes must be > 0, or 0 to copy, or -1 to infer)");
      out[i] = shape[i];
      explicit_product *= shape[i];
    }
  }
  // X's elements not accounted for by copied dims.
  int64_t rest = 1;
  bool rest_known = true;
  for (size_t i = 0; i < x.size(); ++i)
    if (!copied[i]) {
      if (x[i] < 0)
        rest_known = false;
      else
        rest *= x[i];
    }
  if (unknown >= 0) {
    if (rest_known) {
      TIDE_CHECK(explicit_product > 0 && rest % explicit_product == 0, "op '", op,
                 "': cannot reshape X ", tide::ToString(x), " to ", tide::ToString(shape), ": ",
                 rest, " elements do not divide into ", explicit_product);
      out[unknown] = rest / explicit_product;
    } else {
      out[unknown] = -1;
    }
  } else if (rest_known) {
    TIDE_CHECK(rest == explicit_product, "op '", op, "': cannot reshape X ", tide::ToString(x),
               " (", Product(x), " elements) to ", tide::ToString(shape));
  }
  return out;
}

// The target shape: the Shape tensor's values when given (run time), else the attribute.
std::vector<int64_t> TargetShape(const KernelContext& ctx) {
  if (Tensor s = ctx.OptionalInput("Shape")) {
    std::vector<int64_t> v;
    if (s.dtype() == TIDE_INT32)
      v.assign(s.data<int32_t>(), s.data<int32_t>() + s.numel());
    else if (s.dtype() == TIDE_INT64)
      v.assign(s.data<int64_t>(), s.data<int64_t>() + s.numel());
    else
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", ctx.op_type(),
                 "': Shape must be int32 or int64, got ", tide::DataTypeName(s.dtype()));
    return v;
  }
  auto a = ctx.Attr<std::vector<int32_t>>("shape");
  return std::vector<int64_t>(a.begin(), a.end());
}

void SetXShape(tide::InferShapeContext& ctx, const Dims& x) {
  if (!ctx.HasOutput("XShape")) return;
  Dims xs{0};
  xs.insert(xs.end(), x.begin(), x.end());
  ctx.SetOutputDims("XShape", xs);
  ctx.SetOutputDataType("XShape", ctx.InputDataType("X"));
}

void ReshapeInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  Dims x = ctx.InputDims("X");
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  SetXShape(ctx, x);
  if (ctx.HasInput("Shape")) {
    // The values are only known when the kernel runs; at compile time the rank is.
    if (!ctx.IsRuntime()) {
      Dims s = ctx.InputDims("Shape");
      TIDE_CHECK(s.size() == 1, "op '", op, "': Shape must be 1-D, got ", tide::ToString(s));
      if (s[0] >= 0) ctx.SetOutputDims("Out", Dims(static_cast<size_t>(s[0]), -1));
    }
    return;
  }
  auto a = ctx.Attr<std::vector<int32_t>>("shape");
  Dims out = ReshapeDims(op, std::vector<int64_t>(a.begin(), a.end()), x);
  ctx.SetOutputDims("Out", out);
  if (!x.empty() && !out.empty() && x[0] == out[0]) ctx.ShareLoD("X", "Out");  // rows unchanged
}

// Out = X's data with new dims (a copy, unless Out is X).
template <typename T>
void CopyWithDims(KernelContext& ctx, Tensor src, Tensor dst, const Dims& dims) {
  if (dst.c() == src.c()) {
    dst.Resize(dims);
    return;
  }
  T* d = dst.mutable_data<T>(dims, ctx.place());
  std::memcpy(d, src.data<T>(), sizeof(T) * src.numel());
}

template <typename T>
void ReshapeKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  Dims od = ReshapeDims(ctx.op_type(), TargetShape(ctx), x.dims());
  CopyWithDims<T>(ctx, x, ctx.Output("Out"), od);
}

// X's dims: from X (reshape_grad, flatten_grad) or XShape[1:] (the *2 grads).
Dims ForwardXDims(const KernelContext& ctx) {
  if (ctx.HasInput("XShape")) {
    Dims xs = ctx.Input("XShape").dims();
    return Dims(xs.begin() + 1, xs.end());
  }
  return ctx.Input("X").dims();
}

void GradInferShape(tide::InferShapeContext& ctx) {
  const std::string g = GradVarName("X");
  Dims x;
  if (ctx.HasInput("XShape")) {
    Dims xs = ctx.InputDims("XShape");
    x.assign(xs.begin() + 1, xs.end());
  } else {
    x = ctx.InputDims("X");
  }
  ctx.SetOutputDims(g.c_str(), x);
  ctx.SetOutputDataType(g.c_str(), ctx.InputDataType(GradVarName("Out").c_str()));
}

// X@GRAD = Out@GRAD with X's dims.
template <typename T>
void ReshapeGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Dims xd = ForwardXDims(ctx);
  TIDE_CHECK(Product(xd) == dout.numel(), "op '", op, "': Out@GRAD ", tide::ToString(dout.dims()),
             " does not have X's ", Product(xd), " elements (X ", tide::ToString(xd), ")");
  CopyWithDims<T>(ctx, dout, ctx.Output(GradVarName("X").c_str()), xd);
}

// ---------------------------------------------------------------------------------------------
// flatten: [prod(X.dims[:axis]), prod(X.dims[axis:])]; -1 where unknown.
Dims FlattenDims(const char* op, const Dims& x, int axis) {
  TIDE_CHECK(axis >= 0 && axis <= static_cast<int>(x.size()), "op '", op, "': axis ", axis,
             " must be in [0, ", x.size(), "] for X ", tide::ToString(x));
  return {Product(x, 0, axis), Product(x, axis, x.size())};
}

void FlattenInferShape(tide::InferShapeContext& ctx) {
  Dims x = ctx.InputDims("X");
  ctx.SetOutputDims("Out", FlattenDims(ctx.op_type(), x, ctx.Attr<int32_t>("axis")));
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  SetXShape(ctx, x);
}

template <typename T>
void FlattenKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  CopyWithDims<T>(ctx, x, ctx.Output("Out"),
                  FlattenDims(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis")));
}

// Grad op of reshape/flatten (v1: reads X's dims from X) or the *2 ops (from XShape).
tide::GradMakerFn CopyGradMaker(const std::string& grad_type, bool v2) {
  return [grad_type, v2](tide::GradMaker& g) {
    auto op = g.NewOp(grad_type);
    if (v2)
      op.Input("XShape", g.Output("XShape"));
    else
      op.Input("X", g.Input("X"));
    op.Input(GradVarName("Out"), g.OutputGrad("Out"))
        .Output(GradVarName("X"), g.InputGrad("X"))
        .CopyAttrs();
  };
}

tide::OpSchema ReshapeSchema(const std::string& type, bool v2) {
  auto s = tide::OpSchema(type)
               .Comment(
                   "Out = X's data with dims `shape`: 0 copies X's dim at that index, one "
                   "-1 is inferred from the element count. A Shape tensor, when given, "
                   "overrides the attribute at run time.")
               .Input("X", "the input")
               .Input("Shape", "int32 target shape (optional; overrides `shape`)")
               .AsDispensable()
               .Output("Out", "the reshaped input");
  if (v2) s.Output("XShape", "[0] + X's dims (no data), for the grad").AsIntermediate();
  return s.RequiredAttr("shape", TIDE_ATTR_INTS, "the target shape (0: copy, -1: infer)")
      .Attr("inplace", false, "Fluid's hint that Out may share X's memory (Out == X is supported)")
      .KernelDataTypeFrom("X")
      .InferShape(ReshapeInferShape)
      .Grad(CopyGradMaker(type + "_grad", v2));
}

tide::OpSchema FlattenSchema(const std::string& type, bool v2) {
  auto s = tide::OpSchema(type)
               .Comment("Out = X as a matrix [prod(dims[:axis]), prod(dims[axis:])].")
               .Input("X", "the input")
               .Output("Out", "the 2-D result");
  if (v2) s.Output("XShape", "[0] + X's dims (no data), for the grad").AsIntermediate();
  return s
      .Attr("axis", int32_t(1), "dims before it become rows, the rest columns (0 <= axis <= rank)")
      .InferShape(FlattenInferShape)
      .Grad(CopyGradMaker(type + "_grad", v2));
}

tide::OpSchema CopyGradSchema(const std::string& type, bool v2, tide::OpSchema s) {
  if (v2)
    s.Input("XShape", "the forward XShape");
  else
    s.Input("X", "the forward input (for its dims)");
  return s.Comment("X@GRAD = Out@GRAD with X's dims.")
      .Input(GradVarName("Out"), "gradient of Out")
      .Output(GradVarName("X"), "gradient of X")
      .KernelDataTypeFrom(GradVarName("Out"))
      .InferShape(GradInferShape);
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(ReshapeSchema("reshape", false));
TIDE_REGISTER_OP(ReshapeSchema("reshape2", true));
TIDE_REGISTER_OP(CopyGradSchema("reshape_grad", false, tide::OpSchema("reshape_grad"))
                     .RequiredAttr("shape", TIDE_ATTR_INTS, "the forward target shape")
                     .Attr("inplace", false, "the forward inplace hint"));
TIDE_REGISTER_OP(CopyGradSchema("reshape2_grad", true, tide::OpSchema("reshape2_grad"))
                     .RequiredAttr("shape", TIDE_ATTR_INTS, "the forward target shape")
                     .Attr("inplace", false, "the forward inplace hint"));
TIDE_REGISTER_OP(FlattenSchema("flatten", false));
TIDE_REGISTER_OP(FlattenSchema("flatten2", true));
TIDE_REGISTER_OP(CopyGradSchema("flatten_grad", false, tide::OpSchema("flatten_grad"))
                     .Attr("axis", int32_t(1), "the forward axis"));
TIDE_REGISTER_OP(CopyGradSchema("flatten2_grad", true, tide::OpSchema("flatten2_grad"))
                     .Attr("axis", int32_t(1), "the forward axis"));
TIDE_REGISTER_KERNEL("reshape", "cpu", ReshapeKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("reshape2", "cpu", ReshapeKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("flatten", "cpu", FlattenKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("flatten2", "cpu", FlattenKernel, OPS_NN_MOVE_TYPES);
TIDE_REGISTER_KERNEL("reshape_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reshape2_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("flatten_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("flatten2_grad", "cpu", ReshapeGradKernel, OPS_NN_FLOAT_TYPES);
