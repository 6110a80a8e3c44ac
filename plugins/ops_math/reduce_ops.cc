// reduce_ops.cc: mean (of all elements), sum (of a list of tensors) and their grads.
#include <algorithm>
#include <mutex>
#include <tide/low_precision.hpp>
#include <tide/ops/reduce.hpp>
#include <tide/ops/sum.hpp>
#include <type_traits>
#include <utility>
#include <vector>

#include "bf16_convert.h"
#include "common.h"
#include "selected_rows.h"

namespace ops_math {
namespace {

using tide::GradVarName;

template <typename T>
void MeanKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetMeanArgs<T>(ctx);
  // Partial sums over the CPU pool's ranges, added in range order.
  std::mutex mu;
  std::vector<std::pair<int64_t, T>> parts;
  tide::ParallelFor(ctx, a.n, 1, [&](int64_t b, int64_t e) {
    T s = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(a.x + b, e - b).sum();
    std::lock_guard<std::mutex> lock(mu);
    parts.emplace_back(b, s);
  });
  // By range (their starts differ): complex values have no order to break ties with.
  std::sort(parts.begin(), parts.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  T sum = 0;
  for (const auto& p : parts) sum += p.second;
  a.out[0] = sum / static_cast<T>(a.n);
}

template <typename T>
void MeanGradKernel(KernelContext& ctx) {
  const auto a = tide::ops::GetScalarReduceGradArgs<T>(ctx);
  tide::EigenVector<T> d(a.dx, a.n);
  EigenEval(ctx, d, d.constant(a.dout[0] / static_cast<T>(a.n)));
}

// Dense and SelectedRows inputs: the dense ones summed, each sparse row added to its row.
template <typename T>
void SumMixed(KernelContext& ctx, size_t n) {
  const tide::ops::MixedSum in = tide::ops::GetMixedSum(ctx, n);
  const int64_t total = DimsProduct(in.dims), width = in.width;
  T* acc = ctx.TempBuffer<T>(static_cast<size_t>(total));
  std::fill(acc, acc + total, T(0));
  for (const Tensor& t : in.dense) {
    const T* d = t.data<T>();
    for (int64_t k = 0; k < total; ++k) acc[k] += d[k];
  }
  for (const auto& sp : in.sparse) {
    if (sp.rows.empty()) continue;
    const T* d = sp.value.data<T>();
    for (size_t r = 0; r < sp.rows.size(); ++r)
      for (int64_t k = 0; k < width; ++k) acc[sp.rows[r] * width + k] += d[r * width + k];
  }
  T* o = ctx.Output("Out").mutable_data<T>(in.dims, ctx.place());
  std::copy(acc, acc + total, o);
}

// bfloat16 tensors: summed in float32 and rounded once (as oneDNN's sum), range by range, so
// Out may be one of the inputs. AMP's gradient accumulation (a residual's two branches).
void SumBfloat16(KernelContext& ctx, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (ctx.InputVar("X", i).IsSelectedRows())
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op 'sum': bfloat16 SelectedRows inputs (input ", i, ")");
  const std::vector<Tensor> xs = tide::ops::GetDenseSumInputs(ctx);
  const int64_t numel = xs[0].numel();
  std::vector<const uint16_t*> in;
  for (const Tensor& x : xs) in.push_back(reinterpret_cast<const uint16_t*>(x.raw_data()));
  Tensor out = ctx.Output("Out");
  out.Resize(xs[0].dims());
  auto* o = reinterpret_cast<uint16_t*>(out.mutable_data(TIDE_BF16, ctx.place()));
  float* acc = ctx.TempBuffer<float>(static_cast<size_t>(numel));
  ParallelFor(ctx, numel, static_cast<int64_t>(in.size()), [&](int64_t b, int64_t e) {
    Bfloat16ToFloat(in[0] + b, acc + b, e - b);
    for (size_t i = 1; i < in.size(); ++i) AddBfloat16(in[i] + b, acc + b, e - b);
    FloatToBfloat16(acc + b, o + b, e - b);
  });
}

template <typename T>
void SumNumeric(KernelContext& ctx) {
  const size_t count = ctx.InputCount("X");
  size_t sparse = 0;
  for (size_t i = 0; i < count; ++i) sparse += ctx.InputVar("X", i).IsSelectedRows() ? 1 : 0;
  // All sparse: as Fluid's sum, their rows merged (selected_rows.h); each distinct row once.
  if (sparse == count && count > 0) return MergeInputsIntoOut<T>(ctx, count);
  if (sparse > 0) return SumMixed<T>(ctx, count);
  const std::vector<Tensor> xs = tide::ops::GetDenseSumInputs(ctx);
  // Out may be one of the inputs (in-place accumulation): sum into a scratch buffer first.
  const int64_t numel = xs[0].numel();
  T* acc = ctx.TempBuffer<T>(static_cast<size_t>(numel));
  tide::EigenVector<T> a(acc, numel);
  EigenEval(ctx, a, In<T>(xs[0]));
  for (size_t i = 1; i < xs.size(); ++i) EigenEval(ctx, a, a + In<T>(xs[i]));
  Tensor out = ctx.Output("Out");
  out.Resize(xs[0].dims());
  EigenEval(ctx, Out<T>(out, ctx), a);
}

template <typename T>
void SumKernel(KernelContext& ctx) {
  if constexpr (std::is_same_v<T, tide::bfloat16>)
    SumBfloat16(ctx, ctx.InputCount("X"));
  else
    SumNumeric<T>(ctx);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("mean")
                     .Comment("Out = the mean of all elements of X, as a [1] tensor.")
                     .Input("X", "input")
                     .Output("Out", "[1]")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", {1});
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .DefaultGrad());
TIDE_REGISTER_OP(tide::OpSchema("mean_grad")
                     .Input("X")
                     .Input("Out")
                     .AsDispensable()
                     .Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("mean", "cpu", MeanKernel, OPS_MATH_FLOAT_TYPES, OPS_MATH_COMPLEX_TYPES);
// Of complex values too: the mean is linear with a real factor, so X@GRAD = Out@GRAD / n.
TIDE_REGISTER_KERNEL("mean_grad", "cpu", MeanGradKernel, OPS_MATH_FLOAT_TYPES,
                     OPS_MATH_COMPLEX_TYPES);

TIDE_REGISTER_OP(
    tide::OpSchema("sum")
        .Comment(
            "Out = the elementwise sum of the X tensors (all of one shape); SelectedRows "
            "inputs add their rows in (all sparse: a SelectedRows listing each row once, merged).")
        .Input("X", "tensors to add")
        .AsDuplicable()
        .Output("Out", "their sum")
        .InferShape([](tide::InferShapeContext& c) {
          // All sparse inputs give a sparse sum; any dense one, a dense sum.
          bool all_sparse = true;
          for (size_t i = 0; i < c.InputCount("X"); ++i)
            all_sparse = all_sparse && c.InputVarType("X", i) == TIDE_VAR_SELECTED_ROWS;
          c.SetOutputVarType("Out", all_sparse ? TIDE_VAR_SELECTED_ROWS : TIDE_VAR_LOD_TENSOR);
          c.SetOutputDims("Out", c.InputDims("X", 0));
          c.SetOutputDataType("Out", c.InputDataType("X", 0));
          if (!all_sparse && c.InputVarType("X", 0) == TIDE_VAR_LOD_TENSOR) c.ShareLoD("X", "Out");
        })
        .Grad([](tide::GradMaker& g) {
          std::vector<std::string> dxs = g.InputGrad("X");
          for (const auto& dx : dxs) {
            if (dx == tide::kEmptyVarName) continue;
            g.NewOp("scale")
                .Input("X", g.OutputGrad("Out"))
                .Output("Out", {dx})
                .Attr("scale", 1.0f);
          }
        }));
TIDE_REGISTER_KERNEL("sum", "cpu", SumKernel, OPS_MATH_NUMERIC_TYPES, tide::bfloat16,
                     OPS_MATH_COMPLEX_TYPES);
