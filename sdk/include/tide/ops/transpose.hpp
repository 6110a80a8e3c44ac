// tide/ops/transpose.hpp: the shape rules of transpose / transpose2: `axis` must be a permutation
// of X's axes, and Out.dims[i] = X.dims[axis[i]]; transpose and its grad as every kernel reads
// their inputs (outputs allocated on the kernel's place).
#ifndef TIDE_OPS_TRANSPOSE_HPP_
#define TIDE_OPS_TRANSPOSE_HPP_

#include <cstddef>
#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// The `axis` attribute checked against X's dims: as many entries as X has dims, each axis once.
inline std::vector<int> CheckedPerm(const char* op, const std::vector<int32_t>& axis,
                                    const Dims& x) {
  TIDE_CHECK(axis.size() == x.size(), "op '", op, "': axis has ", axis.size(), " entries but X ",
             ToString(x), " has rank ", x.size());
  std::vector<int> perm(axis.size());
  std::vector<bool> seen(axis.size(), false);
  for (size_t i = 0; i < axis.size(); ++i) {
    int a = axis[i];
    TIDE_CHECK(a >= 0 && a < static_cast<int>(x.size()) && !seen[a], "op '", op,
               "': axis must be a permutation of [0, ", x.size(), "), got entry ", a, " at ", i);
    seen[a] = true;
    perm[i] = a;
  }
  return perm;
}

// Dims permuted: out[i] = x[perm[i]].
inline Dims Permuted(const Dims& x, const std::vector<int>& perm) {
  Dims out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = x[perm[i]];
  return out;
}

// The permutation that undoes `perm` (the grad's).
inline std::vector<int> InversePerm(const std::vector<int>& perm) {
  std::vector<int> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int>(i);
  return inv;
}

// transpose / transpose2: X, the permutation; Out allocated with the permuted dims.
template <typename T>
struct TransposeArgs {
  Dims x_dims;
  std::vector<int> perm;
  const T* x;
  T* out;
};

template <typename T>
TransposeArgs<T> GetTransposeArgs(const KernelContext& ctx) {
  Tensor x = ctx.Input("X");
  TransposeArgs<T> a;
  a.x_dims = x.dims();
  a.perm = CheckedPerm(ctx.op_type(), ctx.Attr<std::vector<int32_t>>("axis"), a.x_dims);
  a.x = x.data<T>();
  a.out = ctx.Output("Out").mutable_data<T>(Permuted(a.x_dims, a.perm), ctx.place());
  return a;
}

// The grads: X's dims (XShape or X), Out@GRAD (the permuted dims) to transpose back with
// `inverse`; X@GRAD allocated.
template <typename T>
struct TransposeGradArgs {
  Dims dout_dims;
  std::vector<int> inverse;
  const T* dout;
  T* dx;
};

template <typename T>
TransposeGradArgs<T> GetTransposeGradArgs(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const Dims xd = ForwardXDims(ctx);
  const std::vector<int> perm = CheckedPerm(op, ctx.Attr<std::vector<int32_t>>("axis"), xd);
  TIDE_CHECK(dout.dims() == Permuted(xd, perm), "op '", op, "': Out@GRAD has dims ",
             ToString(dout.dims()), ", expected ", ToString(Permuted(xd, perm)));
  TransposeGradArgs<T> a;
  a.dout_dims = dout.dims();
  a.inverse = InversePerm(perm);
  a.dout = dout.data<T>();
  a.dx = ctx.Output(GradVarName("X").c_str()).mutable_data<T>(xd, ctx.place());
  return a;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_TRANSPOSE_HPP_
