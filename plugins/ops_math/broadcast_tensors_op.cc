// broadcast_tensors_op.cc: Paddle's broadcast_tensors (paddle.broadcast_tensors: every X[i]
// broadcast numpy-style to the dims all of them broadcast to, Out[i]) and its grad (X[i]@GRAD =
// Out[i]@GRAD summed over the dims X[i] was repeated along; 0 where Out[i] took no gradient).
#include <algorithm>
#include <string>
#include <tide/ops/elementwise.hpp>

#include "common.h"

namespace ops_math {
namespace {

using tide::GradVarName;
using tide::ops::GetNumpyBroadcast;
using tide::ops::NumpyBroadcast;

// The dims every X broadcasts to; an unknown (-1) dim stays unknown unless another X fixes it
// (checked again when the kernel runs).
Dims BroadcastAll(const char* op, const std::vector<Dims>& xs) {
  TIDE_CHECK(!xs.empty(), "op '", op, "': X needs at least one tensor");
  size_t rank = 0;
  for (const Dims& d : xs) rank = std::max(rank, d.size());
  Dims out(rank, 1);
  for (size_t k = 0; k < xs.size(); ++k) {
    const Dims& d = xs[k];
    for (size_t i = 0; i < d.size(); ++i) {
      int64_t& o = out[rank - d.size() + i];
      const int64_t v = d[i];
      if (v == 1 || v == o) continue;
      if (o == 1 || (o < 0 && v >= 0)) {
        o = v;
        continue;
      }
      if (v < 0) continue;
      TIDE_CHECK(false, "op '", op, "': X[", k, "] ", tide::ToString(d),
                 " does not broadcast with the others (dim ", rank - d.size() + i,
                 " of the result: ", o, " vs ", v, ")");
    }
  }
  return out;
}

void BroadcastTensorsShape(tide::InferShapeContext& ctx) {
  const std::vector<Dims> xs = ctx.InputsDims("X");
  const Dims out = BroadcastAll(ctx.op_type(), xs);
  TIDE_CHECK(ctx.OutputCount("Out") == xs.size(), "op '", ctx.op_type(), "': Out needs ", xs.size(),
             " tensors (one per X), got ", ctx.OutputCount("Out"));
  const TideDataType t = ctx.InputDataType("X", 0);
  for (size_t i = 0; i < xs.size(); ++i) {
    TIDE_CHECK(ctx.InputDataType("X", i) == t, "op '", ctx.op_type(), "': X[", i, "] ('",
               ctx.InputName("X", i), "') is ", tide::DataTypeName(ctx.InputDataType("X", i)),
               " but X[0] is ", tide::DataTypeName(t));
    ctx.SetOutputDims("Out", out, i);
    ctx.SetOutputDataType("Out", t, i);
  }
}

std::vector<Dims> InputDims(const std::vector<Tensor>& xs) {
  std::vector<Dims> dims;
  for (const Tensor& x : xs) dims.push_back(x.dims());
  return dims;
}

template <typename T>
void BroadcastTensorsKernel(KernelContext& ctx) {
  const std::vector<Tensor> xs = ctx.Inputs("X");
  const Dims out = BroadcastAll(ctx.op_type(), InputDims(xs));
  for (size_t k = 0; k < xs.size(); ++k) {
    const NumpyBroadcast nb = GetNumpyBroadcast(ctx.op_type(), out, xs[k].dims());
    const T* x = xs[k].data<T>();
    T* o = ctx.Output("Out", k).mutable_data<T>(out, ctx.place());
    for (int64_t e = 0, i, j; e < nb.numel; ++e) {
      nb.Index(e, &i, &j);
      o[e] = x[j];
    }
  }
}

template <typename T>
void BroadcastTensorsGradKernel(KernelContext& ctx) {
  const std::string dout = GradVarName("Out"), dx = GradVarName("X");
  const std::vector<Tensor> xs = ctx.Inputs("X");
  const Dims out = BroadcastAll(ctx.op_type(), InputDims(xs));
  for (size_t k = 0; k < xs.size(); ++k) {
    if (!ctx.HasOutput(dx.c_str(), k)) continue;
    T* g = ctx.Output(dx.c_str(), k).mutable_data<T>(xs[k].dims(), ctx.place());
    std::fill(g, g + xs[k].numel(), T(0));
    if (!ctx.HasInput(dout.c_str(), k)) continue;  // that output took no gradient
    Tensor d = ctx.Input(dout.c_str(), k);
    tide::ops::CheckGradDims(ctx.op_type(), "Out@GRAD", d.dims(), out);
    const NumpyBroadcast nb = GetNumpyBroadcast(ctx.op_type(), out, xs[k].dims());
    const T* dd = d.data<T>();
    for (int64_t e = 0, i, j; e < nb.numel; ++e) {
      nb.Index(e, &i, &j);
      g[j] += dd[e];
    }
  }
}

}  // namespace
}  // namespace ops_math

using namespace ops_math;  // NOLINT: registration macros below

TIDE_REGISTER_OP(tide::OpSchema("broadcast_tensors")
                     .Comment("Out[i] = X[i] broadcast numpy-style to the dims every X "
                              "broadcasts to (paddle.broadcast_tensors).")
                     .Input("X", "tensors of one type")
                     .AsDuplicable()
                     .Output("Out", "one per X, the common dims")
                     .AsDuplicable()
                     .InferShape(BroadcastTensorsShape)
                     .Grad([](tide::GradMaker& g) {
                       g.NewOp("broadcast_tensors_grad")
                           .Input("X", g.Input("X"))
                           .Input(GradVarName("Out"), g.OutputGrad("Out"))
                           .Output(GradVarName("X"), g.InputGrad("X"));
                     }));
TIDE_REGISTER_OP(tide::OpSchema("broadcast_tensors_grad")
                     .Input("X")
                     .AsDuplicable()
                     .Input(GradVarName("Out"))
                     .AsDuplicable()
                     .Output(GradVarName("X"))
                     .AsDuplicable()
                     .KernelDataTypeFrom("X")
                     .InferShape([](tide::InferShapeContext& c) {
                       const std::string dx = GradVarName("X");
                       for (size_t i = 0; i < c.OutputCount(dx.c_str()); ++i) {
                         c.SetOutputDims(dx.c_str(), c.InputDims("X", i), i);
                         c.SetOutputDataType(dx.c_str(), c.InputDataType("X", i), i);
                       }
                     }));
TIDE_REGISTER_KERNEL("broadcast_tensors", "cpu", BroadcastTensorsKernel, OPS_MATH_NUMERIC_TYPES,
                     bool);
TIDE_REGISTER_KERNEL("broadcast_tensors_grad", "cpu", BroadcastTensorsGradKernel,
                     OPS_MATH_FLOAT_TYPES);
