// linspace_numel_ops.cc: Paddle's linspace (paddle.linspace: Num evenly spaced values from
// Start to Stop, both ends included, in `dtype`; Paddle's rule: start and stop cast to dtype,
// the step in double, the first half counted up from Start and the second down from Stop) and
// size (paddle.numel, PIR's pd_op.numel: Input's element count, an int64 0-D tensor), and
// logspace (paddle.logspace: Base to the powers of linspace(Start, Stop, Num); Paddle's rule:
// Start, Stop and Base cast to dtype first, the step in double, each power computed in double
// and cast to dtype).
#include <cmath>
#include <tide/ops/dtype_attr.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin/data_type_visit.hpp>

#include "common.h"

namespace ops_math {
namespace {

// The one value of a Start / Stop input, any number type, as double.
double OneNumber(const KernelContext& ctx, const char* param) {
  Tensor t = ctx.Input(param);
  TIDE_CHECK(t.numel() == 1, "op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param),
             "') must hold one element, got ", tide::ToString(t.dims()));
  return tide::VisitDataType<float, double, int32_t, int64_t>(
      t.dtype(), std::string("op '") + ctx.op_type() + "' input " + param, [&](auto tag) {
        using V = typename decltype(tag)::type;
        return static_cast<double>(t.data<V>()[0]);
      });
}

template <typename T>
void LinspaceKernel(KernelContext& ctx) {
  const T start = static_cast<T>(OneNumber(ctx, "Start"));
  const T stop = static_cast<T>(OneNumber(ctx, "Stop"));
  const int64_t num = tide::ops::IntScalar(ctx, "Num");
  TIDE_CHECK(num > 0, "op '", ctx.op_type(), "': Num ('", ctx.InputName("Num"),
             "') must be > 0, got ", num);
  T* o = ctx.Output("Out").mutable_data<T>({num}, ctx.place());
  if (num == 1) {
    o[0] = start;
    return;
  }
  const double step = (static_cast<double>(stop) - static_cast<double>(start)) / (num - 1);
  const int64_t half = num / 2;
  for (int64_t i = 0; i < num; ++i)
    o[i] =
        i < half ? static_cast<T>(start + step * i) : static_cast<T>(stop - step * (num - i - 1));
}

template <typename T>
void LogspaceKernel(KernelContext& ctx) {
  const T start = static_cast<T>(OneNumber(ctx, "Start"));
  const T stop = static_cast<T>(OneNumber(ctx, "Stop"));
  const T base = static_cast<T>(OneNumber(ctx, "Base"));
  const int64_t num = tide::ops::IntScalar(ctx, "Num");
  TIDE_CHECK(num > 0, "op '", ctx.op_type(), "': Num ('", ctx.InputName("Num"),
             "') must be > 0, got ", num);
  T* o = ctx.Output("Out").mutable_data<T>({num}, ctx.place());
  const double b = static_cast<double>(base);
  if (num == 1) {
    o[0] = static_cast<T>(std::pow(b, static_cast<double>(start)));
    return;
  }
  // The difference in T first, as Paddle.
  const double step = static_cast<double>(static_cast<T>(stop - start)) / (num - 1);
  const int64_t half = num / 2;
  for (int64_t i = 0; i < num; ++i)
    o[i] = static_cast<T>(i < half ? std::pow(b, start + step * i)
                                   : std::pow(b, stop - step * (num - i - 1)));
}

void LinspaceInferShape(tide::InferShapeContext& ctx) {
  ctx.SetOutputDims("Out", {-1});  // Num's value
  ctx.SetOutputDataType("Out", tide::ops::DataTypeAttr(ctx, "dtype"));
}

// Any input type: the kernel reads only the dims.
template <typename T>
void NumelKernel(KernelContext& ctx) {
  const Dims d = ctx.Input("Input").dims();
  ctx.Output("Out").mutable_data<int64_t>(Dims{}, ctx.place())[0] = DimsProduct(d);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("linspace")
                     .NoGradient()
                     .Comment("Out = Num evenly spaced values from Start to Stop, both included, "
                              "in dtype (paddle.linspace).")
                     .Input("Start", "the first value: one element")
                     .Input("Stop", "the last value: one element")
                     .Input("Num", "the count: one int32 / int64 element, > 0")
                     .Output("Out", "[Num]")
                     .Attr("dtype", int32_t(TIDE_FP32), "Out's element type (TideDataType)")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape(LinspaceInferShape));
TIDE_REGISTER_KERNEL("linspace", "cpu", LinspaceKernel, OPS_MATH_NUMERIC_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("logspace")
                     .NoGradient()
                     .Comment("Out = Base ** (Num evenly spaced values from Start to Stop, both "
                              "included), in dtype (paddle.logspace).")
                     .Input("Start", "the first exponent: one element")
                     .Input("Stop", "the last exponent: one element")
                     .Input("Num", "the count: one int32 / int64 element, > 0")
                     .Input("Base", "the base: one element")
                     .Output("Out", "[Num]")
                     .Attr("dtype", int32_t(TIDE_FP32), "Out's element type (TideDataType)")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape(LinspaceInferShape));
TIDE_REGISTER_KERNEL("logspace", "cpu", LogspaceKernel, OPS_MATH_NUMERIC_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("size")
                     .NoGradient()
                     .Comment("Out = Input's element count, int64 0-D (paddle.numel).")
                     .Input("Input", "any tensor")
                     .Output("Out", "int64 []")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", Dims{});
                       c.SetOutputDataType("Out", TIDE_INT64);
                     }));
TIDE_REGISTER_KERNEL("size", "cpu", NumelKernel, float, double, int32_t, int64_t, bool);
