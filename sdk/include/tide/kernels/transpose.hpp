// tide/kernels/transpose.hpp: the plain CPU kernel of transpose / transpose2 (Out = X with its
// axes permuted by `axis`; transpose2's XShape holds no data), header-only: ops_nn registers it
// (its grads permute back with TransposeData), and a compiled model (tide.aot.compile) calls it
// directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_TRANSPOSE_HPP_
#define TIDE_KERNELS_TRANSPOSE_HPP_

#include <algorithm>
#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/transpose.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace kernels {

// Rows [row0, row1) of out, a row being out's last dim: out[j] = in[offset(j)], where out dim i
// walks in dim perm[i].
template <typename T>
void TransposeRows(const T* in, const Dims& in_dims, const std::vector<int>& perm, T* out,
                   int64_t row0, int64_t row1) {
  const int r = static_cast<int>(in_dims.size());
  std::vector<int64_t> in_stride(r, 1);
  for (int i = r - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * in_dims[i + 1];
  std::vector<int64_t> od(r), os(r);  // out dims and the input stride of each out dim
  for (int i = 0; i < r; ++i) {
    od[i] = in_dims[perm[i]];
    os[i] = in_stride[perm[i]];
  }
  // The outer index of row0 (an odometer over out's dims but the last) and its input offset.
  std::vector<int64_t> idx(r, 0);
  int64_t src = 0;
  for (int64_t i = r - 2, rest = row0; i >= 0; --i) {
    idx[i] = rest % od[i];
    rest /= od[i];
    src += idx[i] * os[i];
  }
  const int64_t inner = od[r - 1], inner_stride = os[r - 1];
  for (int64_t j = row0 * inner; j < row1 * inner; j += inner) {
    if (inner_stride == 1)  // the last axis stays last: rows are runs of the input
      std::copy(in + src, in + src + inner, out + j);
    else
      for (int64_t t = 0; t < inner; ++t) out[j + t] = in[src + t * inner_stride];
    for (int i = r - 2; i >= 0; --i) {  // advance the outer index
      src += os[i];
      if (++idx[i] < od[i]) break;
      src -= os[i] * od[i];
      idx[i] = 0;
    }
  }
}

// The whole of out, on the calling thread.
template <typename T>
void TransposeData(const T* in, const Dims& in_dims, const std::vector<int>& perm, T* out) {
  const int64_t n = ops::DimsProduct(in_dims);
  if (in_dims.empty() || n == 0) {
    if (n) out[0] = in[0];
    return;
  }
  TransposeRows(in, in_dims, perm, out, 0, n / in_dims[perm.back()]);
}

// The whole of out, split by rows over the CPU pool when large (a transpose only moves memory:
// one thread does not keep the memory system busy).
template <typename T>
void TransposeData(const KernelContext& ctx, const T* in, const Dims& in_dims,
                   const std::vector<int>& perm, T* out) {
  const int64_t n = ops::DimsProduct(in_dims);
  if (in_dims.empty() || n == 0) return TransposeData(in, in_dims, perm, out);
  const int64_t inner = in_dims[perm.back()];
  ParallelFor(ctx, n / inner, inner, [&](int64_t row0, int64_t row1) {
    TransposeRows(in, in_dims, perm, out, row0, row1);
  });
}

template <typename T>
void Transpose(KernelContext& ctx) {
  const auto a = ops::GetTransposeArgs<T>(ctx);
  TransposeData(ctx, a.x, a.x_dims, a.perm, a.out);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_TRANSPOSE_HPP_
