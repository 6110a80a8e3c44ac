// tide/kernels/transpose.hpp: the plain CPU kernel of transpose / transpose2 (Out = X with its
// axes permuted by `axis`; transpose2's XShape holds no data), header-only: ops_nn registers it
// (its grads permute back with TransposeData), and a compiled model (tide.aot.compile) calls it
// directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_TRANSPOSE_HPP_
#define TIDE_KERNELS_TRANSPOSE_HPP_

#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/ops/transpose.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace kernels {

// out[j] = in[offset(j)], where out dim i walks in dim perm[i].
template <typename T>
void TransposeData(const T* in, const Dims& in_dims, const std::vector<int>& perm, T* out) {
  const int r = static_cast<int>(in_dims.size());
  int64_t n = ops::DimsProduct(in_dims);
  if (r == 0 || n == 0) {
    if (n) out[0] = in[0];
    return;
  }
  std::vector<int64_t> in_stride(r, 1);
  for (int i = r - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * in_dims[i + 1];
  std::vector<int64_t> od(r), os(r);  // out dims and the input stride of each out dim
  for (int i = 0; i < r; ++i) {
    od[i] = in_dims[perm[i]];
    os[i] = in_stride[perm[i]];
  }
  std::vector<int64_t> idx(r, 0);
  int64_t src = 0;
  const int64_t inner = od[r - 1], inner_stride = os[r - 1];
  for (int64_t j = 0; j < n; j += inner) {
    for (int64_t t = 0; t < inner; ++t) out[j + t] = in[src + t * inner_stride];
    for (int i = r - 2; i >= 0; --i) {  // advance the outer index (odometer)
      src += os[i];
      if (++idx[i] < od[i]) break;
      src -= os[i] * od[i];
      idx[i] = 0;
    }
  }
}

template <typename T>
void Transpose(KernelContext& ctx) {
  const auto a = ops::GetTransposeArgs<T>(ctx);
  TransposeData(a.x, a.x_dims, a.perm, a.out);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_TRANSPOSE_HPP_
