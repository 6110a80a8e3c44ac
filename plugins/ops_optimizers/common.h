// common.h: what the optimizer kernels share: reads of their inputs (the [1] scalars, the
// Param-shaped state, a dense or SelectedRows Grad) checked as tide/ops/optimizer.hpp says, an
// elementwise loop on the CPU pool, the real view of a complex parameter, and the shape rule
// every optimizer op follows.
//
// In-place updates: ParamOut is normally the same variable as Param (and MomentOut as Moment...),
// so an output's buffer may be its input's. Every kernel reads all inputs of element i before it
// writes any output of element i, and never reads element j != i, which keeps aliasing safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <tide/eigen.hpp>
#include <tide/ops/complex.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/optimizer.hpp>
#include <tide/ops/optimizer_update.hpp>
#include <tide/plugin.hpp>
#include <utility>
#include <vector>

namespace ops_optimizers {

using tide::Dims;
using tide::KernelContext;
using tide::Tensor;
// A Param-shaped state input / output (checked / allocated: tide/ops/optimizer_update.hpp).
using tide::ops::OptimizerStateInput;
using tide::ops::OptimizerStateOutput;
using tide::ops::ScalarInput;  // Fluid makes the learning rate float32 even for float64 params

// Complex parameters (sgd, momentum, adam) are updated as their real view, PyTorch's rule
// (torch.view_as_real): each real and each imaginary part is one real element of the update, so
// Adam's second moment is per part (g_re^2, g_im^2), not |g|^2; for SGD and momentum that is
// complex arithmetic with a real learning rate. std::complex<R> is laid out as R[2] (the C++
// standard guarantees it), so a kernel templated on the storage type T reads and writes through
// RealView and runs the real update over RealCount elements; for a real T both are the identity.
using tide::ops::RealType;

template <typename T>
constexpr int64_t RealCount(int64_t n) {
  return tide::ops::kIsComplex<T> ? 2 * n : n;
}

template <typename T>
const RealType<T>* RealView(const T* p) {
  return reinterpret_cast<const RealType<T>*>(p);
}

template <typename T>
RealType<T>* RealView(T* p) {
  return reinterpret_cast<RealType<T>*>(p);
}

// Runs f(i) for i in [0, n), on the CPU pool when n is large enough to benefit.
template <typename F>
void ForEach(const KernelContext& ctx, int64_t n, const F& f) {
  // Per element: a few loads and stores, a sqrt and a division at most.
  tide::ParallelFor(ctx, n, 4, [&f](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) f(i);
  });
}

// A SelectedRows Grad, checked against Param (tide/ops/optimizer.hpp), its values on the host.
template <typename T>
struct SparseGrad {
  std::vector<int64_t> rows;
  const T* values = nullptr;  // rows.size() x row_size
  int64_t row_size = 0;       // elements per Param row
};

template <typename T>
SparseGrad<T> ReadSparseGrad(const KernelContext& ctx, const Tensor& param) {
  tide::ops::SparseGradRows sr = tide::ops::ReadSparseGradRows<T>(ctx, param);
  SparseGrad<T> g;
  g.rows = std::move(sr.rows);
  g.row_size = sr.row_size;
  if (!g.rows.empty()) g.values = sr.value.data<T>();
  return g;
}

// The gradient as Param-shaped dense values (tide/ops/optimizer_update.hpp), a SelectedRows Grad
// scattered into scratch on the host.
using tide::ops::DenseGrad;

template <typename T>
DenseGrad<T> ReadGrad(const KernelContext& ctx, const Tensor& param) {
  return tide::ops::ReadDenseGrad<T>(ctx, param, [&](const tide::ops::SparseGradRows& sr) {
    const int64_t n = param.numel();
    T* dense = ctx.TempBuffer<T>(static_cast<size_t>(std::max<int64_t>(n, 1)));
    std::fill(dense, dense + n, T(0));
    const T* values = sr.rows.empty() ? nullptr : sr.value.data<T>();
    for (size_t i = 0; i < sr.rows.size(); ++i) {
      T* dst = dense + sr.rows[i] * sr.row_size;
      const T* src = values + static_cast<int64_t>(i) * sr.row_size;
      for (int64_t j = 0; j < sr.row_size; ++j) dst[j] += src[j];
    }
    return static_cast<const T*>(dense);
  });
}

// Copies a state input to its output unless they are one buffer (for updates that touch only
// some rows: the rest of the output must still equal the input).
template <typename T>
void CopyThrough(const T* in, T* out, int64_t n) {
  if (in != out) std::copy(in, in + n, out);
}

// Output `param` for an update that writes only some rows (lazy Adam): allocated with Param's
// dims. When it already held Param-shaped data of type T (its input itself, or a variable of its
// own) the other rows stay as they were; otherwise it starts as a copy of its input `in`.
template <typename T>
T* RowStateOutput(const KernelContext& ctx, const char* param, const T* in, const Tensor& p) {
  Tensor t = ctx.Output(param);
  const bool kept = t.initialized() && t.dtype() == tide::DataTypeOf<T>() && t.SameDims(p);
  T* out = OptimizerStateOutput<T>(ctx, param, p);
  if (!kept) CopyThrough(in, out, p.numel());
  return out;
}

// Runs f(i) only for the elements of the listed rows (sorted, distinct) of a [rows, row_size]
// tensor.
template <typename F>
void ForEachInRows(const KernelContext& ctx, const std::vector<int64_t>& rows, int64_t row_size,
                   const F& f) {
  const int64_t n = static_cast<int64_t>(rows.size()) * row_size;
  ForEach(ctx, n, [&](int64_t k) { f(rows[k / row_size] * row_size + k % row_size); });
}

// The shape rule of the optimizer ops. `state` lists the Param-shaped inputs, Param first, each
// with the output it becomes ("" for none, e.g. Grad); an input absent from the op (a dispensable
// one) is skipped. `scalars` lists the one-element inputs. Checks that the inputs agree with Param
// (dims and dtype; a SelectedRows Grad is checked by the kernel, against its height), then gives
// each output its input's dims and dtype. At compile time, -1 dims and unknown shapes match any.
// `complex_params`: the op has complex64 / complex128 kernels; the others refuse a complex Param
// by name (rather than failing later to find a kernel).
struct ShapeRule {
  std::string op;
  std::vector<std::pair<std::string, std::string>> state;
  std::vector<std::string> scalars;
  bool complex_params = false;
};

namespace detail {
inline bool Known(const Dims& d) {
  for (int64_t x : d)
    if (x < 0) return false;
  return true;
}
inline bool DimsAgree(const Dims& a, const Dims& b, bool runtime) {
  if (runtime) return a == b;
  return a.empty() || b.empty() || tide::ops::DimsCompatible(a, b);  // empty: not declared
}
}  // namespace detail

inline tide::InferShapeFn OptimizerShapes(ShapeRule rule) {
  return [rule](tide::InferShapeContext& ctx) {
    const bool runtime = ctx.IsRuntime();
    const char* op = rule.op.c_str();
    auto label = [&](const std::string& param) {
      return tide::detail::Concat(param, " ('", ctx.InputName(param.c_str()), "')");
    };
    const Dims pdims = ctx.InputDims("Param");
    const TideDataType pdt = ctx.InputDataType("Param");
    TIDE_CHECK(rule.complex_params || !tide::ops::IsComplexType(pdt), "op '", op,
               "': ", label("Param"), " is ", tide::DataTypeName(pdt), "; ", op,
               " updates float32 and float64 parameters only (sgd, momentum and adam take "
               "complex ones)");
    for (const auto& [in, out] : rule.state) {
      if (!ctx.HasInput(in.c_str())) {
        TIDE_CHECK(out.empty() || !ctx.HasOutput(out.c_str()), "op '", op, "': output ", out, " ('",
                   ctx.OutputName(out.c_str()), "') is set but input ", in, " is not");
        continue;
      }
      const TideDataType dt = ctx.InputDataType(in.c_str());
      TIDE_CHECK(dt == TIDE_UNDEFINED || pdt == TIDE_UNDEFINED || dt == pdt, "op '", op,
                 "': ", label(in), " is ", tide::DataTypeName(dt), ", ", label("Param"), " is ",
                 tide::DataTypeName(pdt), "; they must agree");
      if (ctx.InputVarType(in.c_str()) == TIDE_VAR_SELECTED_ROWS) continue;
      const Dims d = ctx.InputDims(in.c_str());
      TIDE_CHECK(detail::DimsAgree(d, pdims, runtime), "op '", op, "': ", label(in), " has dims ",
                 tide::ToString(d), ", ", label("Param"), " has ", tide::ToString(pdims),
                 "; they must agree");
    }
    for (const auto& s : rule.scalars) {
      const Dims d = ctx.InputDims(s.c_str());
      int64_t n = 1;
      for (int64_t x : d) n *= x;
      if (runtime || (!d.empty() && detail::Known(d)))
        TIDE_CHECK(n == 1, "op '", op, "': ", label(s), " must hold 1 element, has dims ",
                   tide::ToString(d));
      const TideDataType dt = ctx.InputDataType(s.c_str());
      TIDE_CHECK(dt == TIDE_UNDEFINED || dt == TIDE_FP32 || dt == TIDE_FP64, "op '", op,
                 "': ", label(s), " is ", tide::DataTypeName(dt),
                 "; it must be float32 or float64");
    }
    for (const auto& [in, out] : rule.state) {
      if (out.empty() || !ctx.HasInput(in.c_str()) || !ctx.HasOutput(out.c_str())) continue;
      ctx.SetOutputDims(out.c_str(), ctx.InputDims(in.c_str()));
      ctx.SetOutputDataType(out.c_str(), ctx.InputDataType(in.c_str()));
    }
  };
}

// Kernels for float and double; those of sgd, momentum and adam for complex64 / complex128 too.
#define OPS_OPTIMIZERS_FLOAT_TYPES float, double
#define OPS_OPTIMIZERS_FLOAT_AND_COMPLEX_TYPES \
  float, double, std::complex<float>, std::complex<double>

}  // namespace ops_optimizers
