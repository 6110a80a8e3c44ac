// tide/ops/metric.hpp: top_k's output dims and the run-time checks of top_k_grad and accuracy,
// and top_k, top_k_grad and accuracy as every kernel reads their inputs (outputs allocated on the
// kernel's place).
#ifndef TIDE_OPS_METRIC_HPP_
#define TIDE_OPS_METRIC_HPP_

#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>
#include <utility>

namespace tide {
namespace ops {

// top_k: Out and Indices are X's dims with the last one k, which must be in [1, D]; k null:
// unknown until run time (the K input), the last dim -1.
inline Dims TopKOutDims(const char* op, const Dims& x, const int64_t* k) {
  TIDE_CHECK(!x.empty(), "op '", op, "': X must have rank >= 1");
  if (k)
    TIDE_CHECK(*k >= 1 && (x.back() < 0 || *k <= x.back()), "op '", op, "': k = ", *k,
               " must be in [1, the last dim of X ", ToString(x), "]");
  Dims out = x;
  out.back() = k ? *k : -1;
  return out;
}

// top_k_grad: X seen as `rows` rows of `d`; Indices and Out@GRAD hold k values per row.
struct TopKGradView {
  int64_t rows, d, k;
};
inline TopKGradView GetTopKGradView(const char* op, const Dims& x, const Dims& indices,
                                    const Dims& dout) {
  TIDE_CHECK(!x.empty() && !indices.empty(), "op '", op, "': X ", ToString(x), " and Indices ",
             ToString(indices), " must have rank >= 1");
  const int64_t d = x.back(), k = indices.back();
  const int64_t rows = d ? DimsProduct(x) / d : 0;
  TIDE_CHECK(DimsProduct(dout) == rows * k && DimsProduct(indices) == rows * k, "op '", op,
             "': Out@GRAD ", ToString(dout), " and Indices ", ToString(indices), " must hold ", k,
             " values per row of X ", ToString(x));
  return {rows, d, k};
}

// accuracy: Indices [N, k] and Label [N, 1]; returns {N, k}.
inline std::pair<int64_t, int64_t> CheckAccuracyInputs(const char* op, const Dims& indices,
                                                       const Dims& label) {
  TIDE_CHECK(indices.size() == 2 && DimsProduct(label) == indices[0], "op '", op, "': Indices ",
             ToString(indices), " and Label ", ToString(label), " must be [N, k] and [N, 1]");
  return {indices[0], indices[1]};
}

// top_k: X as `rows` rows of `d`, k from the K input (read with `read`, see int_inputs.hpp) or
// the attribute; Out and Indices allocated.
template <typename T>
struct TopKArgs {
  int64_t rows, d, k;
  const T* x;
  T* out;
  int64_t* indices;
};

template <typename T, typename Read = ReadOnHost>
TopKArgs<T> GetTopKArgs(const KernelContext& ctx, Read read = {}) {
  Tensor x = ctx.Input("X");
  TopKArgs<T> a;
  a.k = ctx.HasInput("K") ? IntScalar(ctx, "K", 0, read) : ctx.Attr<int32_t>("k");
  const Dims od = TopKOutDims(ctx.op_type(), x.dims(), &a.k);
  a.d = x.dims().back();
  a.rows = a.d ? x.numel() / a.d : 0;
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  a.indices = ctx.Output("Indices").mutable_data<int64_t>(od, ctx.place());
  return a;
}

// top_k_grad: Indices, Out@GRAD, and X@GRAD allocated with X's dims.
template <typename T>
struct TopKGradArgs {
  TopKGradView v;
  const int64_t* indices;
  const T* dout;
  T* dx;
};

template <typename T>
TopKGradArgs<T> GetTopKGradArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X"), indices = ctx.Input("Indices");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  TopKGradArgs<T> a;
  a.v = GetTopKGradView(ctx.op_type(), x.dims(), indices.dims(), dout.dims());
  a.indices = indices.data<int64_t>();
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(x.dims(), ctx.place());
  return a;
}

// accuracy: Indices [N, k], Label [N, 1], and the outputs Accuracy, Correct and Total ([1] each).
struct AccuracyArgs {
  int64_t n, k;
  const int64_t* indices;
  const int64_t* label;
  float* accuracy;
  int32_t* correct;
  int32_t* total;
};

inline AccuracyArgs GetAccuracyArgs(const KernelContext& ctx) {
  Tensor indices = ctx.Input("Indices"), label = ctx.Input("Label");
  AccuracyArgs a;
  const auto nk = CheckAccuracyInputs(ctx.op_type(), indices.dims(), label.dims());
  a.n = nk.first;
  a.k = nk.second;
  a.indices = indices.data<int64_t>();
  a.label = label.data<int64_t>();
  a.accuracy = ctx.Output("Accuracy").mutable_data<float>({1}, ctx.place());
  a.correct = ctx.Output("Correct").mutable_data<int32_t>({1}, ctx.place());
  a.total = ctx.Output("Total").mutable_data<int32_t>({1}, ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_METRIC_HPP_
