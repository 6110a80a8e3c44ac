// tide/kernels/concat.hpp: the plain CPU copies of concat, split, stack and unstack (and their
// grads): parts of [pre, size_i, post] joined into, or cut out of, a [pre, total, post] whole as
// tide/ops/split_concat.hpp reads them; and concat's kernel, header-only: ops_nn registers them,
// and a compiled model (tide.aot.compile) calls concat's directly (tide/kernels/registry.hpp).
#ifndef TIDE_KERNELS_CONCAT_HPP_
#define TIDE_KERNELS_CONCAT_HPP_

#include <cstdint>
#include <cstring>
#include <tide/ops/split_concat.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// Copies a [pre, size_i, post] block of each part into / out of a [pre, total, post] whole.
template <typename T>
void Join(const ops::JoinArgs<T>& a) {
  int64_t offset = 0;
  for (size_t p = 0; p < a.sizes.size(); ++p) {
    const int64_t width = a.sizes[p] * a.post;
    for (int64_t i = 0; i < a.pre; ++i)
      std::memcpy(a.whole + i * a.total * a.post + offset, a.parts[p] + i * width,
                  sizeof(T) * width);
    offset += width;
  }
}
template <typename T>
void Cut(const ops::CutArgs<T>& a) {
  int64_t offset = 0;
  for (size_t p = 0; p < a.sizes.size(); ++p) {
    const int64_t width = a.sizes[p] * a.post;
    for (int64_t i = 0; a.parts[p] && i < a.pre; ++i)
      std::memcpy(a.parts[p] + i * width, a.whole + i * a.total * a.post + offset,
                  sizeof(T) * width);
    offset += width;
  }
}

// Out = the inputs X joined along `axis` (or AxisTensor's).
template <typename T>
void Concat(KernelContext& ctx) {
  Join(ops::GetConcatArgs<T>(ctx));
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONCAT_HPP_
