// common.h: helpers shared by the ops_nn kernels: dims arithmetic that tolerates unknown (-1)
// compile-time dims and grad shape rules (Eigen evaluation and the parallel loop are the SDK's).
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <tide/eigen.hpp>
#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/grad_outputs.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace ops_nn {

using tide::Dims;
using tide::GradVarName;
using tide::KernelContext;
using tide::kParallelThreshold;
using tide::ParallelFor;
using tide::Tensor;
// out = expr, on the CPU pool when large enough (tide::EigenEval).
using tide::EigenEval;
using tide::ops::DimsCompatible;
using tide::ops::DimsProduct;
using tide::ops::DimsProductOrUnknown;
using tide::ops::IntScalar;
using tide::ops::IntScalars;
using tide::ops::IntValues;
using tide::ops::NormAxis;

// True when every dim is known.
inline bool Known(const Dims& d) {
  return std::all_of(d.begin(), d.end(), [](int64_t v) { return v >= 0; });
}

// For each forward input `p` whose gradient the grad op outputs: p@GRAD gets p's dims and dtype.
using tide::ops::GradsLikeInputs;
inline tide::InferShapeFn GradLike(std::initializer_list<const char*> params) {
  std::vector<std::string> names(params.begin(), params.end());
  return [names](tide::InferShapeContext& ctx) {
    for (const auto& n : names) GradsLikeInputs(ctx, {n.c_str()});
  };
}

// A bool attribute that must stay false / a string that must stay empty: Paddle's oneDNN fusion
// passes set them in an optimised program (a saved model has them at their defaults).
inline tide::AttrCheckFn NotFused(std::string name) {
  return [name](const TideAttrValue& v) {
    const bool set = v.type == TIDE_ATTR_BOOLEAN ? v.i != 0 : (v.s != nullptr && v.s[0] != 0);
    TIDE_CHECK(!set, "attribute '", name,
               "' (a Paddle oneDNN fusion) is not supported; export "
               "the model without Paddle's inference optimisations");
  };
}

// An ints attribute check: exactly `n` values, each > `lower_bound`.
inline tide::AttrCheckFn IntsCheck(std::string name, size_t n, int lower_bound) {
  return [name, n, lower_bound](const TideAttrValue& v) {
    TIDE_CHECK(v.count == n, "attribute '", name, "' needs ", n, " values, got ", v.count);
    for (size_t i = 0; i < v.count; ++i) {
      int64_t x = v.type == TIDE_ATTR_LONGS ? v.longs[i] : v.ints[i];
      TIDE_CHECK(x > lower_bound, "attribute '", name, "' values must be > ", lower_bound, ", got ",
                 x, " at index ", i);
    }
  };
}

// The paddings attribute of conv2d / pool2d: 2 values (h, w) or 4 (top, bottom, left, right),
// each >= 0.
inline tide::AttrCheckFn PaddingsCheck() {
  return [](const TideAttrValue& v) {
    TIDE_CHECK(v.count == 2 || v.count == 4,
               "attribute 'paddings' needs 2 values (h, w) or 4 "
               "(top, bottom, left, right), got ",
               v.count);
    for (size_t i = 0; i < v.count; ++i) {
      int64_t x = v.type == TIDE_ATTR_LONGS ? v.longs[i] : v.ints[i];
      TIDE_CHECK(x >= 0, "attribute 'paddings' values must be >= 0, got ", x, " at index ", i);
    }
  };
}

// Input `b` must have input `a`'s dims (unknown -1 dims pass) / its dtype; the errors name the
// op, both inputs and `b`'s variable. Losses of a prediction and a same-shaped target use them.
inline void CheckSameDims(tide::InferShapeContext& ctx, const char* a, const char* b) {
  const Dims da = ctx.InputDims(a), db = ctx.InputDims(b);
  bool ok = da.size() == db.size();
  for (size_t i = 0; ok && i < da.size(); ++i) ok = DimsCompatible(da[i], db[i]);
  TIDE_CHECK(ok, "op '", ctx.op_type(), "': ", b, " ('", ctx.InputName(b), "') must have ", a,
             "'s dims ", tide::ToString(da), ", but has ", tide::ToString(db));
}

inline void CheckSameType(tide::InferShapeContext& ctx, const char* a, const char* b) {
  const TideDataType ta = ctx.InputDataType(a), tb = ctx.InputDataType(b);
  TIDE_CHECK(ta == TIDE_UNDEFINED || tb == TIDE_UNDEFINED || ta == tb, "op '", ctx.op_type(),
             "': ", b, " ('", ctx.InputName(b), "') must be ", tide::DataTypeName(ta), " as ", a,
             " is, but is ", tide::DataTypeName(tb));
}

// The kernel's check of the same: tensor `b` (input `bn`) has tensor `a`'s (input `an`) dims.
inline void CheckSameDims(const KernelContext& ctx, const Tensor& a, const Tensor& b,
                          const char* an, const char* bn) {
  TIDE_CHECK(a.dims() == b.dims(), "op '", ctx.op_type(), "': ", bn, " ('", ctx.InputName(bn),
             "') must have ", an, "'s dims ", tide::ToString(a.dims()), ", but has ",
             tide::ToString(b.dims()));
}

// Kernels for float and double.
#define OPS_NN_FLOAT_TYPES float, double
// Kernels for shape-only ops (data moves, no arithmetic).
#define OPS_NN_MOVE_TYPES float, double, int32_t, int64_t
// Also bool and the byte types, for the ops that reshape, slice, join and gather (masks are bool
// in Paddle's models; images uint8).
#define OPS_NN_BYTE_TYPES bool, uint8_t, int8_t
// complex64 and complex128, for the ops that only move values (reshape, slice, join, gather, flip,
// tile, pad with its real value ...) and their grads, which move Out@GRAD back or sum its repeats
// (with X@GRAD = dL/dRe(X) + i dL/dIm(X), the real rule is the complex one): never for those that
// compare values (top_k, sort, cummax).
#define OPS_NN_COMPLEX_TYPES std::complex<float>, std::complex<double>

}  // namespace ops_nn
