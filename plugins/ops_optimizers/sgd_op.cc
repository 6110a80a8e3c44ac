// sgd_op.cc: plain stochastic gradient descent, with a dense or a SelectedRows (sparse) Grad;
// a complex Param as its real view (common.h).
#include <string>
#include <tide/ops/dims.hpp>
#include <unordered_map>
#include <vector>

#include "common.h"

namespace ops_optimizers {
namespace {

// Param a SelectedRows (Fluid: a table sliced onto a parameter server, holding some of its rows):
// Grad must be a SelectedRows too, and each of its rows updates the Param row of the same id, in
// place (ParamOut must be Param). An id Param does not hold is an error.
template <typename T>
void SgdOnSelectedRows(KernelContext& ctx) {
  using R = RealType<T>;
  const std::string pname = ctx.InputName("Param");
  tide::Variable gvar = ctx.InputVar("Grad");
  TIDE_CHECK(gvar && gvar.IsSelectedRows(), "op 'sgd': Param ('", pname,
             "') is a SelectedRows, so Grad ('", ctx.InputName("Grad"), "') must be one too");
  TIDE_CHECK(ctx.OutputName("ParamOut") == pname, "op 'sgd': Param ('", pname,
             "') is a SelectedRows, updated in place: ParamOut must be the same variable, got '",
             ctx.OutputName("ParamOut"), "'");
  const R lr = ScalarInput<R>(ctx, "LearningRate");
  tide::SelectedRows p = ctx.InputVar("Param").GetSelectedRows(), g = gvar.GetSelectedRows();
  const std::vector<int64_t> grows = g.rows(), prows = p.rows();
  if (grows.empty()) return;  // a trainer sent no rows this step
  Tensor pv = p.value(), gv = g.value();
  const int64_t pw = pv.rank() ? tide::ops::DimsProduct(pv.dims(), 1, pv.rank()) : 0;
  const int64_t gw = gv.rank() ? tide::ops::DimsProduct(gv.dims(), 1, gv.rank()) : 0;
  TIDE_CHECK(pv.rank() && pv.dim(0) == static_cast<int64_t>(prows.size()), "op 'sgd': Param ('",
             pname, "') lists ", prows.size(), " rows but its value is ",
             tide::ToString(pv.dims()));
  TIDE_CHECK(gv.rank() && gv.dim(0) == static_cast<int64_t>(grows.size()) && gw == pw,
             "op 'sgd': Grad ('", ctx.InputName("Grad"), "') lists ", grows.size(),
             " rows with value ", tide::ToString(gv.dims()), "; Param's rows have ", pw, " values");
  std::unordered_map<int64_t, int64_t> at;
  for (size_t i = 0; i < prows.size(); ++i) at.emplace(prows[i], static_cast<int64_t>(i));
  const R* gd = RealView(gv.data<T>());
  R* out = RealView(pv.mutable_data<T>(ctx.place()));
  const int64_t row = RealCount<T>(pw);
  for (size_t i = 0; i < grows.size(); ++i) {
    auto it = at.find(grows[i]);
    TIDE_CHECK(it != at.end(), "op 'sgd': Grad ('", ctx.InputName("Grad"), "') has row id ",
               grows[i], ", which Param ('", pname, "', a SelectedRows of ", prows.size(),
               " rows) does not hold");
    R* dst = out + it->second * row;
    const R* src = gd + static_cast<int64_t>(i) * row;
    for (int64_t j = 0; j < row; ++j) dst[j] -= lr * src[j];
  }
}

template <typename T>
void SgdKernel(KernelContext& ctx) {
  using R = RealType<T>;
  tide::Variable pvar = ctx.InputVar("Param");
  if (pvar && pvar.IsSelectedRows()) return SgdOnSelectedRows<T>(ctx);
  Tensor param = ctx.Input("Param");
  const R lr = ScalarInput<R>(ctx, "LearningRate");
  const int64_t n = RealCount<T>(param.numel());
  tide::Variable grad = ctx.InputVar("Grad");
  if (grad && grad.IsSelectedRows()) {
    // Only the listed rows move, once per listing (so a repeated row takes the sum of its
    // gradients); the cost is that of the rows, not of Param.
    SparseGrad<T> g = ReadSparseGrad<T>(ctx, param);
    const R* p = RealView(param.data<T>());
    R* out = RealView(OptimizerStateOutput<T>(ctx, "ParamOut", param));
    CopyThrough(p, out, n);
    const R* values = RealView(g.values);
    const int64_t row = RealCount<T>(g.row_size);
    for (size_t i = 0; i < g.rows.size(); ++i) {
      R* dst = out + g.rows[i] * row;
      const R* src = values + static_cast<int64_t>(i) * row;
      for (int64_t j = 0; j < row; ++j) dst[j] -= lr * src[j];
    }
    return;
  }
  const R* g = RealView(OptimizerStateInput<T>(ctx, "Grad", param));
  const R* p = RealView(param.data<T>());
  R* out = RealView(OptimizerStateOutput<T>(ctx, "ParamOut", param));
  ForEach(ctx, n, [=](int64_t i) { out[i] = p[i] - lr * g[i]; });
}

}  // namespace
}  // namespace ops_optimizers

using namespace ops_optimizers;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("sgd")
        .Comment(
            "Stochastic gradient descent: ParamOut = Param - LearningRate * Grad. Grad may be a "
            "SelectedRows (a sparse gradient, e.g. of an embedding): then only its rows are "
            "updated, a row listed twice twice. ParamOut is normally Param itself (in place). "
            "Param may be a SelectedRows (a parameter server's slice of a table) with a "
            "SelectedRows Grad: each Grad row updates Param's row of the same id, in place.")
        .Input("Param",
               "(Tensor) the parameter to update; a complex one is updated as its real view "
               "(each real and imaginary part one element, PyTorch's rule)")
        .Input("LearningRate", "(Tensor, one element, float32 or float64) the learning rate")
        .Input("Grad",
               "(Tensor of Param's dims, or SelectedRows of height Param.dims[0]) the gradient "
               "of the loss with respect to Param")
        .Output("ParamOut", "(Tensor) the updated parameter; normally the same variable as Param")
        .KernelDataTypeFrom("Param")
        .InPlace("Param", "ParamOut")
        .InferShape(OptimizerShapes({"sgd",
                                     {{"Param", "ParamOut"}, {"Grad", ""}},
                                     {"LearningRate"},
                                     /*complex_params=*/true})));
TIDE_REGISTER_KERNEL("sgd", "cpu", SgdKernel, OPS_OPTIMIZERS_FLOAT_AND_COMPLEX_TYPES);
