// reduce_ops.cc: mean (of all elements), sum (of a list of tensors) and their grads.
#include <tide/ops/sum.hpp>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "common.h"
#include "selected_rows.h"

namespace ops_math {
namespace {

using tide::GradVarName;

template <typename T>
void MeanKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  TIDE_CHECK(x.numel() > 0, "op 'mean': X ('", ctx.InputName("X"), "') is empty");
  out.Resize({1});
  // Partial sums over the CPU pool's ranges, added in range order.
  const T* xd = x.data<T>();
  std::mutex mu;
  std::vector<std::pair<int64_t, T>> parts;
  tide::ParallelFor(ctx, x.numel(), 1, [&](int64_t b, int64_t e) {
    T s = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(xd + b, e - b).sum();
    std::lock_guard<std::mutex> lock(mu);
    parts.emplace_back(b, s);
  });
  std::sort(parts.begin(), parts.end());
  T sum = 0;
  for (const auto& p : parts) sum += p.second;
  out.mutable_data<T>(ctx.place())[0] = sum / static_cast<T>(x.numel());
}

template <typename T>
void MeanGradKernel(KernelContext& ctx) {
  Tensor x = ctx.Input("X"), dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  dx.Resize(x.dims());
  T g = dout.data<T>()[0] / static_cast<T>(x.numel());
  auto d = Out<T>(dx, ctx);
  EigenEval(ctx, d, d.constant(g));
}

// Dense and sparse inputs: the dense sum, then each sparse row added to its row.
template <typename T>
void SumMixed(KernelContext& ctx, size_t n) {
  Tensor out = ctx.Output("Out");
  Dims dims;
  for (size_t i = 0; i < n && dims.empty(); ++i)
    if (ctx.InputVar("X", i).IsTensor()) dims = ctx.Input("X", i).dims();
  const int64_t total = DimsProduct(dims);
  T* acc = ctx.TempBuffer<T>(static_cast<size_t>(total));
  std::fill(acc, acc + total, T(0));
  const int64_t width = dims.empty() ? 0 : total / dims[0];
  for (size_t i = 0; i < n; ++i) {
    tide::Variable v = ctx.InputVar("X", i);
    if (v.IsTensor()) {
      Tensor t = v.GetTensor();
      TIDE_CHECK(t.dims() == dims, "op 'sum': input ", i, " ('", ctx.InputName("X", i), "') has dims ",
                 tide::ToString(t.dims()), ", the dense inputs ", tide::ToString(dims));
      const T* d = t.data<T>();
      for (int64_t k = 0; k < total; ++k) acc[k] += d[k];
      continue;
    }
    tide::SelectedRows sr = v.GetSelectedRows();
    TIDE_CHECK(sr.height() == dims[0], "op 'sum': sparse input ", i, " ('", ctx.InputName("X", i),
               "') has height ", sr.height(), ", the dense inputs ", dims[0], " rows");
    std::vector<int64_t> rows = sr.rows();
    const T* d = sr.value().data<T>();
    for (size_t r = 0; r < rows.size(); ++r) {
      TIDE_CHECK(rows[r] >= 0 && rows[r] < dims[0], "op 'sum': sparse input ", i, " lists row ", rows[r],
                 " outside [0, ", dims[0], ")");
      for (int64_t k = 0; k < width; ++k) acc[rows[r] * width + k] += d[r * width + k];
    }
  }
  T* o = out.mutable_data<T>(dims, ctx.place());
  std::copy(acc, acc + total, o);
}

template <typename T>
void SumKernel(KernelContext& ctx) {
  const size_t count = ctx.InputCount("X");
  size_t sparse = 0;
  for (size_t i = 0; i < count; ++i) sparse += ctx.InputVar("X", i).IsSelectedRows() ? 1 : 0;
  // All sparse: as Fluid's sum, their rows merged (selected_rows.h); each distinct row once.
  if (sparse == count && count > 0) return MergeInputsIntoOut<T>(ctx, count);
  if (sparse > 0) return SumMixed<T>(ctx, count);
  std::vector<Tensor> xs = ctx.Inputs("X");
  TIDE_CHECK(!xs.empty(), "op 'sum' needs at least one input");
  Tensor out = ctx.Output("Out");
  for (size_t i = 1; i < xs.size(); ++i)
    TIDE_CHECK(xs[i].dims() == xs[0].dims(), "op 'sum': input ", i, " ('", ctx.InputName("X", i),
               "') has dims ", tide::ToString(xs[i].dims()), ", input 0 has ",
               tide::ToString(xs[0].dims()));
  // Out may be one of the inputs (in-place accumulation): sum into a scratch buffer first.
  const int64_t numel = xs[0].numel();
  T* acc = ctx.TempBuffer<T>(static_cast<size_t>(numel));
  tide::EigenVector<T> a(acc, numel);
  EigenEval(ctx, a, In<T>(xs[0]));
  for (size_t i = 1; i < xs.size(); ++i) EigenEval(ctx, a, a + In<T>(xs[i]));
  out.Resize(xs[0].dims());
  EigenEval(ctx, Out<T>(out, ctx), a);
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("mean")
                     .Comment("Out = the mean of all elements of X, as a [1] tensor.")
                     .Input("X", "input").Output("Out", "[1]")
                     .InferShape([](tide::InferShapeContext& c) {
                       c.SetOutputDims("Out", {1});
                       c.SetOutputDataType("Out", c.InputDataType("X"));
                     })
                     .DefaultGrad());
TIDE_REGISTER_OP(tide::OpSchema("mean_grad")
                     .Input("X").Input("Out").AsDispensable().Input(GradVarName("Out"))
                     .Output(GradVarName("X"))
                     .InferShape(tide::SameShapeAsInput("X", GradVarName("X"))));
TIDE_REGISTER_KERNEL("mean", "cpu", MeanKernel, OPS_MATH_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("mean_grad", "cpu", MeanGradKernel, OPS_MATH_FLOAT_TYPES);

TIDE_REGISTER_OP(tide::OpSchema("sum")
                     .Comment("Out = the elementwise sum of the X tensors (all of one shape); SelectedRows "
                              "inputs add their rows in (all sparse: a SelectedRows listing each row once, merged).")
                     .Input("X", "tensors to add").AsDuplicable()
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
                         g.NewOp("scale").Input("X", g.OutputGrad("Out")).Output("Out", {dx})
                             .Attr("scale", 1.0f);
                       }
                     }));
TIDE_REGISTER_KERNEL("sum", "cpu", SumKernel, OPS_MATH_NUMERIC_TYPES);
