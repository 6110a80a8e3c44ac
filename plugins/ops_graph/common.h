// common.h: helpers shared by the ops_graph kernels (paddle.geometric's message passing): the
// index inputs (int32 / int64, 1-D or [E, 1], every value checked against the rows it indexes),
// the reduce and message attributes, the output rows of out_size / Out_size, and the numpy-style
// broadcast of two operands' feature dims (every dim after the first, trailing dims aligned).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <tide/ops/broadcast_dims.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace ops_graph {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::Tensor;
using tide::ops::DimsProduct;
using tide::ops::IntValues;

// Feature kernels of the forward ops (Paddle's CPU kernels take these); grads are float only.
#define OPS_GRAPH_FLOAT_TYPES float, double
#define OPS_GRAPH_FEATURE_TYPES float, double, int32_t, int64_t

// The reduction of the messages arriving at one node (reduce_op, pooltype).
enum class Reduce { kSum, kMean, kMax, kMin };
inline Reduce ParseReduce(const std::string& s) {
  return s == "MEAN"  ? Reduce::kMean
         : s == "MAX" ? Reduce::kMax
         : s == "MIN" ? Reduce::kMin
                      : Reduce::kSum;
}
inline const std::vector<std::string>& ReduceNames() {
  static const std::vector<std::string> names = {"SUM", "MEAN", "MAX", "MIN"};
  return names;
}

// Checks that index input `param` is int32 / int64 and 1-D (or [E, 1]); returns its length E
// (-1 when unknown at compile time).
inline int64_t CheckIndexInput(tide::InferShapeContext& ctx, const char* param) {
  const TideDataType t = ctx.InputDataType(param);
  TIDE_CHECK(t == TIDE_UNDEFINED || t == TIDE_INT32 || t == TIDE_INT64, "op '", ctx.op_type(),
             "': ", param, " ('", ctx.InputName(param), "') must be int32 or int64, got ",
             tide::DataTypeName(t));
  const Dims d = ctx.InputDims(param);
  TIDE_CHECK(d.size() == 1 || (d.size() == 2 && (d[1] == 1 || d[1] < 0)), "op '", ctx.op_type(),
             "': ", param, " ('", ctx.InputName(param),
             "') must be 1-D (or [E, 1]), but its dims are ", tide::ToString(d));
  return d[0];
}

// The values of index input `param`, each checked to lie in [0, rows) (`what` names the rows).
inline std::vector<int64_t> ReadIndex(const KernelContext& ctx, const char* param, int64_t rows,
                                      const char* what) {
  Tensor t = ctx.Input(param);
  const Dims d = t.dims();
  TIDE_CHECK(d.size() == 1 || (d.size() == 2 && d[1] == 1), "op '", ctx.op_type(), "': ", param,
             " ('", ctx.InputName(param), "') must be 1-D (or [E, 1]), but its dims are ",
             tide::ToString(d));
  std::vector<int64_t> v = IntValues(ctx, param);
  for (size_t i = 0; i < v.size(); ++i)
    TIDE_CHECK(v[i] >= 0 && v[i] < rows, "op '", ctx.op_type(), "': ", param, " ('",
               ctx.InputName(param), "')[", i, "] = ", v[i], " is out of range [0, ", rows,
               ") (the rows of ", what, ")");
  return v;
}

// The rows of Out of send_u_recv / send_ue_recv: Out_size's value when given, else attribute
// out_size's first value; either <= 0 (Paddle's default 0) means X's rows. At compile time an
// Out_size input gives -1.
inline int64_t OutSizeAttr(const std::vector<int64_t>& v) { return v.empty() ? 0 : v[0]; }
inline int64_t OutRows(const KernelContext& ctx, int64_t x_rows) {
  int64_t n = OutSizeAttr(ctx.Attr<std::vector<int64_t>>("out_size"));
  if (ctx.HasInput("Out_size")) {
    const std::vector<int64_t> v = IntValues(ctx, "Out_size");
    TIDE_CHECK(!v.empty(), "op '", ctx.op_type(), "': Out_size ('", ctx.InputName("Out_size"),
               "') is empty");
    n = v[0];
  }
  return n <= 0 ? x_rows : n;
}
inline int64_t OutRowsAtCompileTime(tide::InferShapeContext& ctx, int64_t x_rows) {
  if (ctx.HasInput("Out_size")) return -1;
  const int64_t n = OutSizeAttr(ctx.Attr<std::vector<int64_t>>("out_size"));
  return n <= 0 ? x_rows : n;
}

// Two operands [N, ...] and [M, ...] paired element by element over their feature dims (all but
// the first), broadcast numpy-style with the trailing dims aligned (Paddle's CalcBCastInfo):
// `out` the feature dims of the result, and per result feature element j, the offsets xo[j] and
// yo[j] into one row of each operand.
struct FeaturePairing {
  Dims out;
  int64_t x_len = 1, y_len = 1, out_len = 1;
  std::vector<int64_t> xo, yo;
};

// The broadcast feature dims (a dim unknown at compile time gives the other's, or -1).
inline Dims BroadcastFeatureDims(const char* op, const char* xn, const Dims& x, const char* yn,
                                 const Dims& y) {
  TIDE_CHECK(!x.empty() && !y.empty(), "op '", op, "': ", xn, " ", tide::ToString(x), " and ", yn,
             " ", tide::ToString(y), " must have at least one dim (rows first)");
  Dims out;
  tide::ops::DimsClash c;
  TIDE_CHECK(tide::ops::BroadcastDims(Dims(x.begin() + 1, x.end()), Dims(y.begin() + 1, y.end()),
                                      &out, &c),
             "op '", op, "': the feature dims of ", xn, " ", tide::ToString(x), " and ", yn, " ",
             tide::ToString(y), " do not broadcast (", c.a, " vs ", c.b, ")");
  return out;
}

inline FeaturePairing PairFeatures(const char* op, const char* xn, const Dims& x, const char* yn,
                                   const Dims& y) {
  FeaturePairing p;
  p.out = BroadcastFeatureDims(op, xn, x, yn, y);
  const size_t r = p.out.size(), rx = x.size() - 1, ry = y.size() - 1;
  p.x_len = DimsProduct(x, 1, x.size());
  p.y_len = DimsProduct(y, 1, y.size());
  p.out_len = DimsProduct(p.out);
  p.xo.assign(p.out_len, 0);
  p.yo.assign(p.out_len, 0);
  // Strides of each operand's feature dims as seen from the result's (0 where repeated).
  std::vector<int64_t> sx(r, 0), sy(r, 0);
  for (int64_t i = static_cast<int64_t>(r) - 1, stx = 1, sty = 1; i >= 0; --i) {
    const int64_t a = static_cast<size_t>(i) + rx >= r ? x[1 + i + rx - r] : 1;
    const int64_t b = static_cast<size_t>(i) + ry >= r ? y[1 + i + ry - r] : 1;
    sx[i] = a == 1 ? 0 : stx;
    sy[i] = b == 1 ? 0 : sty;
    stx *= a;
    sty *= b;
  }
  for (int64_t j = 0; j < p.out_len; ++j) {
    int64_t rem = j, ox = 0, oy = 0;
    for (int64_t i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
      const int64_t c = rem % p.out[i];
      rem /= p.out[i];
      ox += c * sx[i];
      oy += c * sy[i];
    }
    p.xo[j] = ox;
    p.yo[j] = oy;
  }
  return p;
}

// The wanted gradient `param`@GRAD of a grad kernel, with `dims`, zeroed (the kernels add into
// it); nullptr when the backward pass does not want it.
template <typename T>
T* ZeroedGrad(KernelContext& ctx, const char* param, const Dims& dims) {
  Tensor t = ctx.OptionalOutput(GradVarName(param).c_str());
  if (!t) return nullptr;
  T* d = t.mutable_data<T>(dims, ctx.place());
  std::fill(d, d + DimsProduct(dims), T(0));
  return d;
}

// Grad shape inference: each wanted `param`@GRAD gets input `param`'s dims and type.
using tide::ops::GradsLikeInputs;
inline void GradsLikeXY(tide::InferShapeContext& ctx) { GradsLikeInputs(ctx, {"X", "Y"}); }

// The messages' reduction into `rows` rows of `len` elements: out[dst[e]] (reduce)= msg(e, j).
// Rows no message reaches are 0 (also for MAX / MIN), as Paddle's. `count` gets each row's number
// of messages; MEAN divides by it.
template <typename T, typename Msg>
void ReduceMessages(Reduce reduce, const std::vector<int64_t>& dst, int64_t rows, int64_t len,
                    Msg msg, T* out, int32_t* count) {
  std::fill(out, out + rows * len, T(0));
  std::fill(count, count + rows, 0);
  for (size_t e = 0; e < dst.size(); ++e) {
    T* o = out + dst[e] * len;
    const bool first = count[dst[e]]++ == 0;
    for (int64_t j = 0; j < len; ++j) {
      const T v = msg(static_cast<int64_t>(e), j);
      if (reduce == Reduce::kSum || reduce == Reduce::kMean)
        o[j] += v;
      else if (first)
        o[j] = v;
      else
        o[j] = reduce == Reduce::kMax ? std::max(o[j], v) : std::min(o[j], v);
    }
  }
  if (reduce == Reduce::kMean)
    for (int64_t r = 0; r < rows; ++r)
      if (count[r] > 0)
        for (int64_t j = 0; j < len; ++j) out[r * len + j] /= static_cast<T>(count[r]);
}

// The weight of message (e, j) in its row's reduction, for the grads: 1 (SUM), 1 / count (MEAN),
// and for MAX / MIN 1 where the message equals the result (every tie gets it, as Paddle's), else 0.
template <typename T>
T MessageWeight(Reduce reduce, T msg, T out, int32_t count) {
  switch (reduce) {
    case Reduce::kSum:
      return T(1);
    case Reduce::kMean:
      return T(1) / static_cast<T>(count);
    default:
      return msg == out ? T(1) : T(0);
  }
}

}  // namespace ops_graph
