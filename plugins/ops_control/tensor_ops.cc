// tensor_ops.cc: small tensor ops that programs with control flow need: increment (a loop
// counter, in place), is_empty, fill_constant_batch_size_like, and print (Fluid's Print: logs a
// tensor and passes it through).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tide/low_precision.hpp>
#include <tide/ops/batch_size_like.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/dtype_attr.hpp>
#include <tide/plugin.hpp>
#include <type_traits>
#include <vector>

#include "control_util.h"

namespace ops_control {
namespace {

using tide::Dims;
using tide::KernelContext;
using tide::Tensor;

// ---------------------------------------------------------------------------------------------
// increment: Out = X + step, X of one element. Out may be X itself.
template <typename T>
void Increment(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  TIDE_CHECK(x.numel() == 1, "op 'increment': X ('", ctx.InputName("X"),
             "') must hold exactly one element, its dims are ", tide::ToString(x.dims()));
  const T v = *x.data<T>();  // read before Out is written: they may be one tensor (in place)
  out.Resize(x.dims());
  *out.mutable_data<T>(ctx.place()) = static_cast<T>(v + static_cast<T>(ctx.Attr<float>("step")));
}

void IncrementShape(tide::InferShapeContext& ctx) {
  const Dims x = ctx.InputDims("X");
  const int64_t n = tide::ops::DimsProductOrUnknown(x);  // -1: checked at run time
  TIDE_CHECK(n < 0 || n == 1, "op 'increment': X ('", ctx.InputName("X"),
             "') must hold exactly one element, its dims are ", tide::ToString(x));
  ctx.SetOutputDims("Out", x);
  ctx.SetOutputDataType("Out", ctx.InputDataType("X"));
  ctx.ShareLoD("X", "Out");
}

// ---------------------------------------------------------------------------------------------
// is_empty: Out = [X has no elements].
template <typename T>
void IsEmpty(KernelContext& ctx) {
  Tensor out = ctx.Output("Out");
  *out.mutable_data<bool>({1}, ctx.place()) = ctx.Input("X").numel() == 0;
}

// ---------------------------------------------------------------------------------------------
// fill_constant_batch_size_like: tide/ops/batch_size_like.hpp's rule.
using tide::ops::BatchSizeLikeDims;

template <typename T>
void FillConstantBatchSizeLike(KernelContext& ctx) {
  const auto a = tide::ops::GetBatchSizeLikeArgs<T>(ctx);
  std::fill(a.out, a.out + a.n, static_cast<T>(ctx.Attr<float>("value")));
}

void BatchSizeLikeShape(tide::InferShapeContext& ctx) {
  const int32_t in_idx = ctx.Attr<int32_t>("input_dim_idx");
  const int32_t out_idx = ctx.Attr<int32_t>("output_dim_idx");
  Dims out = BatchSizeLikeDims(ctx.op_type(), ctx.InputName("Input"), ctx.InputDims("Input"),
                               ctx.Attr<std::vector<int64_t>>("shape"), in_idx, out_idx);
  // A LoD Input's batch is its number of sequences, known only at run time.
  if (!ctx.IsRuntime() && in_idx == 0 && ctx.InputLoDLevel("Input") > 0) out[out_idx] = -1;
  ctx.SetOutputDims("Out", out);
  ctx.SetOutputDataType("Out", tide::ops::DataTypeAttr(ctx, "dtype"));
}

// ---------------------------------------------------------------------------------------------
// print: kernel-less as in Fluid, so it runs on any place and for any data type.
std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Fluid's rules: print_phase picks the forward op, its grad op or both; first_n > 0 prints the
// first n runs only. A kernel-less op has no per-op state, so runs are counted per In/Out pair.
bool ShouldPrint(const tide::OpRunContext& ctx, const std::string& key) {
  const std::string phase = Lower(ctx.Attr<std::string>("print_phase"));
  const bool forward = ctx.Attr<bool>("is_forward");
  if ((forward && phase == "backward") || (!forward && phase == "forward")) return false;
  const int32_t first_n = ctx.Attr<int32_t>("first_n");
  if (first_n <= 0) return true;
  static std::mutex mu;
  static std::map<std::string, int64_t> runs;
  std::lock_guard<std::mutex> lock(mu);
  return ++runs[key] <= first_n;
}

template <typename T>
void AppendValues(std::ostringstream& os, const Tensor& host, int64_t count) {
  const T* d = host.data<T>();
  for (int64_t i = 0; i < count; ++i) {
    if (i) os << ", ";
    if constexpr (std::is_same_v<T, bool>)
      os << (d[i] ? "true" : "false");
    else if constexpr (std::is_same_v<T, tide::float16> || std::is_same_v<T, tide::bfloat16>)
      os << static_cast<float>(d[i]);  // exact: float holds every value of both
    else
      os << +d[i];  // + prints int8/uint8 as numbers
  }
}

void AppendData(std::ostringstream& os, const Tensor& t, int32_t summarize) {
  const int64_t n = t.numel();
  const int64_t count = summarize < 0 ? n : std::min<int64_t>(n, summarize);
  os << "data: [";
  if (count > 0) {
    tide::OwnedTensor tmp;  // values on another place are read from a host copy
    Tensor host = OnHost(t, tmp);
    switch (t.dtype()) {
      case TIDE_FP32:
        AppendValues<float>(os, host, count);
        break;
      case TIDE_FP64:
        AppendValues<double>(os, host, count);
        break;
      case TIDE_FP16:
        AppendValues<tide::float16>(os, host, count);
        break;
      case TIDE_BF16:
        AppendValues<tide::bfloat16>(os, host, count);
        break;
      case TIDE_INT32:
        AppendValues<int32_t>(os, host, count);
        break;
      case TIDE_INT64:
        AppendValues<int64_t>(os, host, count);
        break;
      case TIDE_BOOL:
        AppendValues<bool>(os, host, count);
        break;
      case TIDE_INT16:
        AppendValues<int16_t>(os, host, count);
        break;
      case TIDE_INT8:
        AppendValues<int8_t>(os, host, count);
        break;
      case TIDE_UINT8:
        AppendValues<uint8_t>(os, host, count);
        break;
      default:
        os << "(" << tide::DataTypeName(t.dtype()) << " values not shown)";
        break;
    }
  }
  if (count < n) os << (count ? ", " : "") << "...";
  os << "]";
}

std::string LoDString(const tide::LoD& lod) {
  std::ostringstream os;
  os << "{";
  for (size_t l = 0; l < lod.size(); ++l) {
    os << (l ? ", " : "") << "{";
    for (size_t i = 0; i < lod[l].size(); ++i) os << (i ? ", " : "") << lod[l][i];
    os << "}";
  }
  os << "}";
  return os.str();
}

// One line: message, variable name, dtype, dims, LoD and the first values.
std::string Describe(const tide::OpRunContext& ctx, const std::string& name, const Tensor& t) {
  std::ostringstream os;
  const std::string message = ctx.Attr<std::string>("message");
  if (!message.empty()) os << message << "  ";
  if (ctx.Attr<bool>("print_tensor_name"))
    os << "Variable: " << name << (ctx.Attr<bool>("is_forward") ? "" : " (backward)") << "  ";
  if (ctx.Attr<bool>("print_tensor_type")) os << "dtype: " << tide::DataTypeName(t.dtype()) << "  ";
  if (ctx.Attr<bool>("print_tensor_shape")) os << "shape: " << tide::ToString(t.dims()) << "  ";
  if (ctx.Attr<bool>("print_tensor_lod")) os << "lod: " << LoDString(t.lod()) << "  ";
  AppendData(os, t, ctx.Attr<int32_t>("summarize"));
  return os.str();
}

void PrintRun(tide::OpRunContext& ctx) {
  const std::string in_name = OnlyInput(ctx, "In");
  const std::string out_name = OnlyOutput(ctx, "Out");
  tide::Scope scope = ctx.scope();
  tide::Variable in_var = scope.FindVar(in_name);
  TIDE_CHECK(in_var && in_var.IsTensor(), "op 'print': In ('", in_name,
             "') holds no LoDTensor (it is not fed and no earlier op writes it)");
  Tensor in = in_var.GetTensor();
  TIDE_CHECK(in.initialized() || in.rank() > 0, "op 'print': In ('", in_name, "') holds no data");
  if (ShouldPrint(ctx, in_name + "\n" + out_name))
    // A warning, so it shows under the core's default log level: the program asked for it.
    tide::Log(TIDE_LOG_WARNING, "print", Describe(ctx, in_name, in));
  tide::Variable out_var = scope.FindVar(out_name);
  TIDE_CHECK(out_var, "op 'print': Out ('", out_name, "') is not in the scope");
  Tensor out = out_var.GetTensor();
  if (out.c() != in.c()) out.ShareDataWith(in);
  out.set_lod(in.lod());
}

void CheckPhase(const TideAttrValue& v) {
  const std::string p = Lower(v.s ? v.s : "");
  TIDE_CHECK(p == "forward" || p == "backward" || p == "both",
             "op 'print': print_phase must be 'forward', 'backward' or 'both', got '",
             v.s ? v.s : "", "'");
}

}  // namespace
}  // namespace ops_control

using namespace ops_control;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("increment")
                     .NoGradient()
                     .Comment("Out = X + step; X holds one element. Out may be X (in place).")
                     .Input("X", "a one-element tensor")
                     .Output("Out", "X + step, X's dims")
                     .Attr("step", 1.0f, "the amount added")
                     .InPlace("X", "Out")
                     .InferShape(IncrementShape));
TIDE_REGISTER_KERNEL("increment", "cpu", Increment, float, double, int32_t, int64_t);

TIDE_REGISTER_OP(tide::OpSchema("is_empty")
                     .NoGradient()
                     .Comment("Out = [X has no elements], a one-element bool tensor.")
                     .Input("X", "any tensor")
                     .Output("Out", "bool, dims [1]")
                     .InferShape([](tide::InferShapeContext& ctx) {
                       ctx.SetOutputDims("Out", {1});
                       ctx.SetOutputDataType("Out", TIDE_BOOL);
                     }));
TIDE_REGISTER_KERNEL("is_empty", "cpu", IsEmpty, float, double, int32_t, int64_t, bool);

TIDE_REGISTER_OP(tide::OpSchema("fill_constant_batch_size_like")
                     .NoGradient()
                     .Comment("Out = `value` in `shape`, whose dim output_dim_idx is Input's dim "
                              "input_dim_idx (for a LoD Input and input_dim_idx 0: its number of "
                              "sequences).")
                     .Input("Input", "the tensor whose dim gives the batch size")
                     .Output("Out", "the filled tensor")
                     .Attr("shape", std::vector<int64_t>{}, "dims of Out")
                     .Attr("value", 0.0f, "the fill value")
                     .Attr("dtype", int32_t(TIDE_FP32), "element type (TideDataType)")
                     .Attr("input_dim_idx", int32_t(0), "the dim of Input taken")
                     .Attr("output_dim_idx", int32_t(0), "the dim of Out it replaces")
                     .KernelDataTypeFrom("attr:dtype")
                     .InferShape(BatchSizeLikeShape));
TIDE_REGISTER_KERNEL("fill_constant_batch_size_like", "cpu", FillConstantBatchSizeLike, float,
                     double, int32_t, int64_t, bool);

TIDE_REGISTER_OP(tide::OpSchema("print")
                     .Comment("Logs In (name, dtype, dims, LoD, first values) through the core's "
                              "log and passes it on: Out shares In's data and LoD.")
                     .Input("In", "the tensor to print")
                     .Output("Out", "In, passed through")
                     .Attr("first_n", int32_t(-1), "print only the first n runs; <= 0: every run")
                     .Attr("message", std::string(), "text printed before the tensor")
                     .Attr("summarize", int32_t(-1), "how many values to print; -1: all")
                     .Attr("print_tensor_name", true, "print the variable's name")
                     .Attr("print_tensor_type", true, "print the data type")
                     .Attr("print_tensor_shape", true, "print the dims")
                     .Attr("print_tensor_lod", true, "print the LoD")
                     .Attr("print_phase", std::string("both"), "forward, backward or both")
                     .Check(CheckPhase)
                     .Attr("is_forward", true, "false on the grad op (its maker sets it)")
                     .InferShape(tide::SameShapeAsInput("In", "Out"))
                     // Fluid's print grad: the gradient passes through, printed in the backward.
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("print")
                           .Input("In", g.OutputGrad("Out"))
                           .Output("Out", g.InputGrad("In"))
                           .CopyAttrs()
                           .Attr("is_forward", false);
                     })
                     .Run(PrintRun));
