// tide/ops/optimizer.hpp: the input checks of Tide's optimizer ops (sgd, momentum, adam, adagrad,
// rmsprop, lars_momentum) and their messages, for every implementation of their kernels.
#ifndef TIDE_OPS_OPTIMIZER_HPP_
#define TIDE_OPS_OPTIMIZER_HPP_

#include <cstdint>
#include <string>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// "op 'adam': Moment1 ('m1')": how the checks name an input.
template <typename Ctx>
std::string InputLabel(const Ctx& ctx, const char* param) {
  return detail::Concat("op '", ctx.op_type(), "': ", param, " ('", ctx.InputName(param), "')");
}

// A one-element input (LearningRate, Beta1Pow, ...): one element, float32 or float64 whatever
// Param's type (Fluid makes the learning rate float32 even for float64 parameters).
template <typename Ctx>
void CheckScalarInput(const Ctx& ctx, const char* param, const Tensor& t) {
  TIDE_CHECK(t.numel() == 1, InputLabel(ctx, param), " must hold 1 element, has dims ",
             ToString(t.dims()));
  TIDE_CHECK(t.dtype() == TIDE_FP32 || t.dtype() == TIDE_FP64, InputLabel(ctx, param), " holds ",
             DataTypeName(t.dtype()), "; it must be float32 or float64");
}

// The value of a one-element input on the host (a CPU kernel's), checked, as T.
template <typename T>
T ScalarInput(const KernelContext& ctx, const char* param) {
  Tensor t = ctx.Input(param);
  CheckScalarInput(ctx, param, t);
  return t.dtype() == TIDE_FP64 ? static_cast<T>(t.data<double>()[0])
                                : static_cast<T>(t.data<float>()[0]);
}

// A dense input that must match Param `p` in dtype (T) and dims: a moment, a velocity, a Grad.
template <typename T, typename Ctx>
void CheckStateInput(const Ctx& ctx, const char* param, const Tensor& t, const Tensor& p) {
  TIDE_CHECK(t.dtype() == DataTypeOf<T>(), InputLabel(ctx, param), " holds ",
             DataTypeName(t.dtype()), ", Param ('", ctx.InputName("Param"), "') holds ",
             DataTypeName(DataTypeOf<T>()));
  TIDE_CHECK(t.dims() == p.dims(), InputLabel(ctx, param), " has dims ", ToString(t.dims()),
             ", Param ('", ctx.InputName("Param"), "') has ", ToString(p.dims()),
             "; they must agree");
}

// A SelectedRows Grad, checked against Param: its height is Param's row count, its value holds
// one Param row per listed row, and every listed row is inside [0, height). Rows may repeat.
struct SparseGradRows {
  std::vector<int64_t> rows;
  int64_t row_size = 0;  // elements per Param row
  Tensor value;          // rows.size() x row_size of T; not set when no rows are listed
};

template <typename T, typename Ctx>
SparseGradRows ReadSparseGradRows(const Ctx& ctx, const Tensor& param) {
  const std::string label = InputLabel(ctx, "Grad") + " (a SelectedRows)";
  SelectedRows sr = ctx.InputVar("Grad").GetSelectedRows();
  const Dims pd = param.dims();
  TIDE_CHECK(!pd.empty(), "op '", ctx.op_type(), "': Param ('", ctx.InputName("Param"),
             "') must have at least one dim to take a SelectedRows Grad");
  const int64_t height = sr.height();
  TIDE_CHECK(height == pd[0], label, " has height ", height, ", Param ('", ctx.InputName("Param"),
             "') has ", pd[0], " rows (dims ", ToString(pd), "); they must agree");
  SparseGradRows g;
  g.rows = sr.rows();
  g.row_size = pd[0] > 0 ? param.numel() / pd[0] : 0;
  for (size_t i = 0; i < g.rows.size(); ++i)
    TIDE_CHECK(g.rows[i] >= 0 && g.rows[i] < height, label, " lists row ", g.rows[i],
               " (at position ", i, "); rows must be in [0, height ", height, ")");
  if (g.rows.empty()) return g;
  Tensor v = sr.value();
  TIDE_CHECK(v.initialized(), label, " lists ", g.rows.size(), " rows but holds no values");
  TIDE_CHECK(v.dtype() == DataTypeOf<T>(), label, " holds ", DataTypeName(v.dtype()),
             ", Param holds ", DataTypeName(DataTypeOf<T>()));
  TIDE_CHECK(v.numel() == static_cast<int64_t>(g.rows.size()) * g.row_size, label,
             " has values of dims ", ToString(v.dims()), " for ", g.rows.size(),
             " rows; each row must hold ", g.row_size, " elements like a row of Param (dims ",
             ToString(pd), ")");
  g.value = v;
  return g;
}

// lars_momentum takes a dense Grad only, as Fluid 1.8's kernels do (they enforce a LoDTensor): a
// SelectedRows Grad (an is_sparse embedding's) is refused when the op is built and when it runs.
// `is_sparse`: whether Grad is a SelectedRows (its variable type, or what it holds).
template <typename Ctx>
void CheckDenseGrad(const Ctx& ctx, bool is_sparse) {
  TIDE_CHECK(!is_sparse, InputLabel(ctx, "Grad"), " is a SelectedRows (a sparse gradient); ",
             ctx.op_type(),
             " takes a dense Grad only, as Fluid's (give the embedding is_sparse=False, or use "
             "another optimizer)");
}

// adam: Beta1Pow = 1 makes the bias correction infinite.
template <typename T, typename Ctx>
void CheckBeta1Pow(const Ctx& ctx, T beta1_pow) {
  TIDE_CHECK(beta1_pow != T(1), InputLabel(ctx, "Beta1Pow"),
             " is 1, which makes the bias correction 1 / (1 - Beta1Pow) infinite");
}

// rmsprop: centered = true keeps a mean gradient.
template <typename Ctx>
void CheckRmspropCentered(const Ctx& ctx) {
  TIDE_CHECK(ctx.HasInput("MeanGrad") && ctx.HasOutput("MeanGradOut"), "op '", ctx.op_type(),
             "': centered = true needs input MeanGrad and output MeanGradOut");
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_OPTIMIZER_HPP_
