// fill_ops.cc: ops that make tensors: fill_constant, fill_zeros_like, fill_any_like,
// uniform_random, gaussian_random, assign (a copy) and assign_value (a numpy array's values).
// fill_constant and uniform_random fill the value of a SelectedRows Out, as Fluid's.
#include <cmath>
#include <random>
#include <string>
#include <tide/low_precision.hpp>
#include <tide/ops/assign_value.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <tide/ops/fill_value.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/ops/random.hpp>
#include <tide/ops/selected_rows.hpp>
#include <tide/ops/shape_inputs.hpp>
#include <vector>

#include "common.h"

namespace ops_math {

// The random ops' shared pieces (declared in common.h).

// fill_constant, uniform_random, gaussian_random, randint: ShapeTensor (1-D) over ShapeTensorList
// (one value each) over the `shape` attribute give Out's dims (Fluid's precedence); with a tensor,
// only the rank is known at compile time.
void ShapeInputsInferShape(tide::InferShapeContext& ctx) {
  const char* op = ctx.op_type();
  ctx.SetOutputDataType("Out", tide::ops::DataTypeAttr(ctx, "dtype"));
  if (ctx.HasInput("ShapeTensor")) {
    const Dims s = ctx.InputDims("ShapeTensor");
    TIDE_CHECK(s.size() == 1, "op '", op, "': ShapeTensor must be 1-D, got ", tide::ToString(s));
    if (!ctx.IsRuntime() && s[0] >= 0) ctx.SetOutputDims("Out", Dims(s[0], -1));
  } else if (ctx.HasInput("ShapeTensorList")) {
    if (!ctx.IsRuntime()) ctx.SetOutputDims("Out", Dims(ctx.InputCount("ShapeTensorList"), -1));
  } else {
    ctx.SetOutputDims("Out", ctx.Attr<std::vector<int64_t>>("shape"));
  }
}

// Out's dims at run time, by the same precedence.
Dims ShapeInputsDims(const KernelContext& ctx) {
  return tide::ops::ShapeFromInputs(
      ctx, [&](const char* p) { return tide::ops::IntValues(ctx, p); },
      [&](const char* p) { return tide::ops::IntScalars(ctx, p); });
}

// A seed of 0 draws a fresh one; any other seed repeats the same numbers on every run.
std::mt19937_64 RandomEngine(const KernelContext& ctx) {
  int seed = ctx.Attr<int32_t>("seed");
  return std::mt19937_64(seed ? static_cast<uint64_t>(seed) : std::random_device{}());
}

// uniform_random, gaussian_random, randint: the shape inputs and attributes, seed, dtype.
tide::OpSchema RandomSchema(const char* type, const char* comment, TideDataType dtype) {
  return tide::OpSchema(type)
      .Comment(comment)
      .Input("ShapeTensor", "Out's dims as a 1-D int tensor (optional; over the others)")
      .AsDispensable()
      .Input("ShapeTensorList", "Out's dims as one-element int tensors (optional; over shape)")
      .AsDuplicable()
      .AsDispensable()
      .Output("Out", "the random tensor")
      .Attr("shape", std::vector<int64_t>{}, "dims of Out")
      .Attr("seed", int32_t(0), "0: a fresh seed each run; otherwise the same numbers each run")
      .Attr("dtype", int32_t(dtype), "element type (TideDataType)")
      .KernelDataTypeFrom("attr:dtype")
      .InferShape(ShapeInputsInferShape);
}

namespace {

template <typename T>
void FillConstant(KernelContext& ctx) {
  Tensor out = tide::ops::OutputValue(ctx, "Out");
  out.Resize(ShapeInputsDims(ctx));
  auto o = Out<T>(out, ctx);
  // The value: ValueTensor, str_value or value (tide/ops/fill_value.hpp).
  const T value =
      tide::ops::FillValue<T>(ctx, [&](const char* p) { return tide::ops::NumberInput(ctx, p); });
  EigenEval(ctx, o, o.constant(value));
}

template <typename T>
void FillZerosLike(KernelContext& ctx) {
  Tensor out = ctx.Output("Out");
  out.Resize(ctx.Input("X").dims());
  auto o = Out<T>(out, ctx);
  EigenEval(ctx, o, o.constant(T(0)));
}

// fill_any_like (Paddle 2.x's full_like / ones_like / zeros_like): X's dims, `value` in `dtype`
// (-1: X's), refused where that type cannot hold it.
void FillAnyLikeInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", ctx.InputDims("X"));
  const int32_t dtype = ctx.Attr<int32_t>("dtype");
  ctx.SetOutputDataType(
      "Out", dtype == -1 ? ctx.InputDataType("X") : tide::ops::DataTypeAttr(ctx, "dtype"));
}

template <typename T>
void FillAnyLike(KernelContext& ctx) {
  const T value = tide::ops::FitValue<T>(ctx.op_type(), ctx.Attr<float>("value"), "value");
  Tensor out = ctx.Output("Out");
  out.Resize(ctx.Input("X").dims());
  auto o = Out<T>(out, ctx);
  EigenEval(ctx, o, o.constant(value));
}

template <typename T>
void UniformRandom(KernelContext& ctx) {
  const auto [lo, hi] = tide::ops::GetUniformRange<T>(ctx);
  Tensor out = tide::ops::OutputValue(ctx, "Out");
  out.Resize(ShapeInputsDims(ctx));
  const tide::ops::UniformDiag diag = tide::ops::GetUniformDiag(ctx, out.numel());
  T* o = out.mutable_data<T>(ctx.place());
  auto engine = RandomEngine(ctx);
  std::uniform_real_distribution<T> dist(lo, hi);
  // dist computes lo + u * (hi - lo), which rounds up to hi itself when u is close to 1 and the
  // type's grid near hi is coarse (e.g. float on [10000, 10001): about 1 draw in 2000). Redraw
  // those, so Out stays in [min, max) as documented.
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    T v;
    do v = dist(engine);
    while (!(v < hi));
    o[i] = v;
  }
  for (int64_t k = 0; k < diag.num; ++k) o[diag.Position(k)] = static_cast<T>(diag.value);
}

template <typename T>
void GaussianRandom(KernelContext& ctx) {
  const auto [mean, stddev] = tide::ops::GetGaussianParams<T>(ctx);
  Tensor out = ctx.Output("Out");
  out.Resize(ShapeInputsDims(ctx));
  T* o = out.mutable_data<T>(ctx.place());
  auto engine = RandomEngine(ctx);
  std::normal_distribution<T> dist(mean, stddev);
  for (int64_t i = 0, n = out.numel(); i < n; ++i) o[i] = dist(engine);
}

template <typename T>
void Assign(KernelContext& ctx) {
  Tensor out = ctx.Output("Out");
  out.CopyFrom(ctx.Input("X"), ctx.place(), ctx.device_context());
}

template <typename T>
void AssignValue(KernelContext& ctx) {
  const Dims dims = tide::ops::AssignValueDims(ctx);
  const std::vector<T> values = tide::ops::AssignValues<T>(ctx, dims);
  T* o = ctx.Output("Out").mutable_data<T>(dims, ctx.place());
  std::copy(values.begin(), values.end(), o);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("fill_constant")
                     .Comment("Out = a tensor of `shape` and `dtype` filled with `value`. Paddle "
                              "2.x: ShapeTensor or ShapeTensorList override `shape`, ValueTensor "
                              "or a non-empty str_value override `value`.")
                     .Input("ValueTensor", "the value as a one-element tensor (optional)")
                     .AsDispensable()
                     .Input("ShapeTensor", "Out's dims as a 1-D int tensor (optional)")
                     .AsDispensable()
                     .Input("ShapeTensorList", "Out's dims as one-element int tensors (optional)")
                     .AsDuplicable()
                     .AsDispensable()
                     .Output("Out", "the filled tensor")
                     .Attr("shape", std::vector<int64_t>{}, "dims of Out")
                     .Attr("value", 0.0f, "the fill value")
                     .Attr("str_value", std::string(""),
                           "the fill value as text (exact for int64; inf, -inf, nan); used when "
                           "not empty")
                     .Attr("dtype", int32_t(TIDE_FP32), "element type (TideDataType)")
                     .Attr("force_cpu", false, "accepted for Fluid compatibility")
                     .Attr("place_type", int32_t(-1), "Paddle's placement hint (ignored)")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape(ShapeInputsInferShape));
// float16 and bfloat16 get kernels of their own where the op only moves or makes values: they
// copy the bits (every other op runs its float32 kernel on them: docs/data_types.md).
// A complex Out takes the (real) value as its real part, imaginary 0 (tide/ops/fill_value.hpp).
TIDE_REGISTER_KERNEL("fill_constant", "cpu", FillConstant, OPS_MATH_NUMERIC_TYPES, bool,
                     tide::float16, tide::bfloat16, OPS_MATH_COMPLEX_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("fill_zeros_like")
                     .NoGradient()
                     .Comment("Out = zeros with X's dims and dtype.")
                     .Input("X", "the tensor whose dims and dtype Out takes")
                     .Output("Out", "zeros")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("fill_zeros_like", "cpu", FillZerosLike, OPS_MATH_NUMERIC_TYPES, tide::float16,
                     tide::bfloat16, OPS_MATH_COMPLEX_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("fill_any_like")
                     .NoGradient()
                     .Comment("Out = X's dims filled with `value`, of `dtype` (-1: X's dtype); "
                              "Paddle 2.x's full_like, ones_like, zeros_like.")
                     .Input("X", "the tensor whose dims Out takes")
                     .Output("Out", "the filled tensor")
                     .Attr("value", 0.0f, "the value")
                     .Attr("dtype", int32_t(-1), "element type (TideDataType); -1: X's")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape(FillAnyLikeInferShape));
TIDE_REGISTER_KERNEL("fill_any_like", "cpu", FillAnyLike, OPS_MATH_NUMERIC_TYPES, bool,
                     tide::float16, tide::bfloat16, OPS_MATH_COMPLEX_TYPES);

TIDE_REGISTER_OP(RandomSchema("uniform_random",
                              "Out ~ U[min, max), then diag_num elements "
                              "set to diag_val (flat positions k * "
                              "(diag_step + 1)).")
                     .Attr("min", -1.0f, "lower bound")
                     .Attr("max", 1.0f, "upper bound (exclusive)")
                     .Attr("diag_num", int32_t(0), "how many diagonal elements to set")
                     .Attr("diag_step", int32_t(0), "the gap between diagonal elements")
                     .Attr("diag_val", 1.0f, "the diagonal's value"));
TIDE_REGISTER_KERNEL("uniform_random", "cpu", UniformRandom, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(RandomSchema("gaussian_random", "Out ~ N(mean, std^2).")
                     .Attr("mean", 0.0f, "mean")
                     .Attr("std", 1.0f, "standard deviation"));
TIDE_REGISTER_KERNEL("gaussian_random", "cpu", GaussianRandom, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("assign")
        .Comment("Out = a copy of X.")
        .Input("X", "the source")
        .Output("Out", "the copy")
        .InferShape(tide::SameShapeAsInput("X", "Out"))
        .Grad([](tide::GradMaker& g) {
          g.NewOp("assign").Input("X", g.OutputGrad("Out")).Output("Out", g.InputGrad("X"));
        }));
TIDE_REGISTER_KERNEL("assign", "cpu", Assign, float, double, int32_t, int64_t, bool, uint8_t,
                     tide::float16, tide::bfloat16, OPS_MATH_COMPLEX_TYPES);

// Tensor.detach() in a Paddle 2.x static program (a legacy dynamic-to-static model: RevIN's
// statistics, RT-DETR's queries): Out holds X's values and takes no gradient (Paddle declares it
// stop_gradient). Paddle shares X's memory; a copy reads the same.
TIDE_REGISTER_OP(tide::OpSchema("share_data")
                     .NoGradient()
                     .Comment("Out = X's values, detached: no gradient flows back to X.")
                     .Input("X", "the source")
                     .Output("Out", "the detached values")
                     .InferShape(tide::SameShapeAsInput("X", "Out")));
TIDE_REGISTER_KERNEL("share_data", "cpu", Assign, float, double, int32_t, int64_t, bool, uint8_t,
                     tide::float16, tide::bfloat16, OPS_MATH_COMPLEX_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("assign_value")
                     .NoGradient()
                     .Comment("Out = the values of the attribute of `dtype` (fp32_values, "
                              "int32_values, int64_values or bool_values) in `shape`: Fluid's "
                              "assign of a numpy array.")
                     .Output("Out", "the tensor")
                     .Attr("shape", std::vector<int32_t>{}, "dims of Out")
                     .Attr("dtype", int32_t(TIDE_FP32), "element type (TideDataType)")
                     .Attr("fp32_values", std::vector<float>{}, "the values of a float32 Out")
                     .Attr("fp64_values", std::vector<double>{},
                           "the values of a float64 Out (Paddle 2.6)")
                     .Attr("int32_values", std::vector<int32_t>{}, "the values of an int32 Out")
                     .Attr("int64_values", std::vector<int64_t>{}, "the values of an int64 Out")
                     .Attr("bool_values", std::vector<int32_t>{},
                           "the values of a bool Out "
                           "(non-zero is true)")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       ctx.SetOutputDims("Out", tide::ops::AssignValueDims(ctx));
                       ctx.SetOutputDataType("Out", tide::ops::DataTypeAttr(ctx, "dtype"));
                     }));
TIDE_REGISTER_KERNEL("assign_value", "cpu", AssignValue, float, double, int32_t, int64_t, bool);
