// tide/ops/random.hpp: the distributions of uniform_random ([min, max), and its diagonal) and
// gaussian_random (mean, std) as every kernel reads them, with their errors. Each device draws
// from its own generator; Out's dims are tide/ops/shape_inputs.hpp's.
#ifndef TIDE_OPS_RANDOM_HPP_
#define TIDE_OPS_RANDOM_HPP_

#include <cmath>
#include <tide/plugin.hpp>

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

// uniform_random's diagonal (Fluid 1.x's diag_num, diag_step, diag_val): after the draw, the
// elements at flat positions k * (diag_step + 1), k < diag_num, are set to diag_val. The last of
// them must lie inside Out (`numel` elements).
struct UniformDiag {
  int64_t num, step;
  float value;
  int64_t Position(int64_t k) const { return k * (step + 1); }
};

inline UniformDiag GetUniformDiag(const KernelContext& ctx, int64_t numel) {
  const UniformDiag d{ctx.Attr<int32_t>("diag_num"), ctx.Attr<int32_t>("diag_step"),
                      ctx.Attr<float>("diag_val")};
  TIDE_CHECK(d.num >= 0 && d.step >= 0, "op '", ctx.op_type(), "': diag_num (", d.num,
             ") and diag_step (", d.step, ") must be >= 0");
  TIDE_CHECK(d.num == 0 || d.Position(d.num - 1) < numel, "op '", ctx.op_type(), "': diag_num ",
             d.num, " with diag_step ", d.step, " puts a diagonal element at ",
             d.Position(d.num - 1), ", past Out's ", numel, " elements");
  return d;
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
