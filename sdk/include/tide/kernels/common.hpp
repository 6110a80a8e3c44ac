// tide/kernels/common.hpp: what the SDK's header-only plain CPU kernels (tide/kernels/*.hpp)
// share: Eigen views of a kernel's inputs and outputs, evaluated inline or on the CPU pool by
// tide::EigenEval.
#ifndef TIDE_KERNELS_COMMON_HPP_
#define TIDE_KERNELS_COMMON_HPP_

#include <cstdint>
#include <tide/eigen.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

template <typename T>
ConstEigenVector<T> In(const Tensor& t) {
  return Flat<T>(t);
}
template <typename T>
EigenVector<T> Out(Tensor& t, const KernelContext& ctx) {
  return FlatMutable<T>(t, ctx.place());
}
// The same over n elements that tide/ops' readers give as pointers.
template <typename T>
ConstEigenVector<T> In(const T* p, int64_t n) {
  return ConstEigenVector<T>(p, n);
}
template <typename T>
EigenVector<T> Out(T* p, int64_t n) {
  return EigenVector<T>(p, n);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_COMMON_HPP_
