// tide/ops/random.hpp: the distributions of uniform_random ([min, max)) and gaussian_random
// (mean, std) as every kernel reads them, with their errors. Each device draws from its own
// generator; Out's dims are tide/ops/shape_inputs.hpp's.
#ifndef TIDE_OPS_RANDOM_HPP_
#define TIDE_OPS_RANDOM_HPP_

#include <tide/plugin.hpp>

#include <cmath>

namespace tide {
namespace ops {

// uniform_random: min < max, and max - min finite in T.
template <typename T>
struct UniformRange {
  T lo, hi;
};

template <typename T>
UniformRange<T> GetUniformRange(const KernelContext& ctx) {
  const UniformRange<T> r{static_cast<T>(ctx.Attr<float>("min")),
                          static_cast<T>(ctx.Attr<float>("max"))};
  TIDE_CHECK(r.lo < r.hi, "op '", ctx.op_type(), "': min (", r.lo, ") must be below max (", r.hi,
             ")");
  TIDE_CHECK(std::isfinite(r.hi - r.lo), "op '", ctx.op_type(), "': the range [", r.lo, ", ", r.hi,
             ") is too wide for ", DataTypeName(DataTypeOf<T>()));
  return r;
}

// gaussian_random: std >= 0.
template <typename T>
struct GaussianParams {
  T mean, std;
};

template <typename T>
GaussianParams<T> GetGaussianParams(const KernelContext& ctx) {
  const GaussianParams<T> p{static_cast<T>(ctx.Attr<float>("mean")),
                            static_cast<T>(ctx.Attr<float>("std"))};
  TIDE_CHECK(p.std >= 0, "op '", ctx.op_type(), "': std must be >= 0, got ", p.std);
  return p;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_RANDOM_HPP_
