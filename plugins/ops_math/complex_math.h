// complex_math.h: numpy's complex functions where std::'s differ or are missing, for the complex
// kernels of complex_math_kernels.cc and elementwise_ops.cc: power (numpy's npy_cpow), expm1
// (numpy's formula), log1p (accurate near 0, where numpy's log(1 + z) is not), and power's partial
// derivatives with their values at z = 0. R is float or double; complex64 computes in float, as
// numpy does.
#pragma once

#include <cmath>
#include <complex>
#include <limits>

namespace ops_math {

// numpy's complex product: the textbook formula (std::complex's recovers infinities from NaNs,
// numpy's does not; for finite values they agree).
template <typename R>
std::complex<R> TextbookMul(const std::complex<R>& a, const std::complex<R>& b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// numpy's z ** w (npy_cpow): z^0 = 1 (0^0 too); 0^w = 0 for Re(w) > 0, else NaN; a whole real w
// with |w| < 100 by repeated multiplication (exact for small powers, and 1 / z^-w for w < 0);
// otherwise exp(w log z) (the C library's cpow, principal branch: the cut along z's negative real
// axis).
template <typename R>
std::complex<R> NumpyPow(const std::complex<R>& z, const std::complex<R>& w) {
  using C = std::complex<R>;
  if (w == C(0)) return C(1);
  if (z == C(0)) {
    if (w.real() > 0) return C(0);
    const R nan = std::numeric_limits<R>::quiet_NaN();
    return C(nan, nan);
  }
  const R n = w.real();
  if (w.imag() == 0 && n > -100 && n < 100 && n == std::trunc(n)) {
    if (n == 1) return z;
    if (n == 2) return TextbookMul(z, z);
    if (n == 3) return TextbookMul(z, TextbookMul(z, z));
    // binary powers of z, multiplied in for each set bit of |n| (numpy's order of rounding)
    C acc(1), p = z;
    for (int bits = static_cast<int>(n < 0 ? -n : n); bits; bits >>= 1) {
      if (bits & 1) acc = TextbookMul(acc, p);
      if (bits > 1) p = TextbookMul(p, p);
    }
    return n < 0 ? C(1) / acc : acc;
  }
  return std::pow(z, w);
}

// d(z^w)/dz = w z^(w-1), with z^(w-1) as NumpyPow gives it; 0 for w = 0, where z^w is 1 for
// every z (PyTorch's choice). At z = 0 it is w 0^(w-1): 0 for Re(w) > 1, 1 for w = 1, NaN for
// other w (the power is not differentiable there).
template <typename R>
std::complex<R> PowDerivBase(const std::complex<R>& z, const std::complex<R>& w) {
  using C = std::complex<R>;
  if (w == C(0)) return C(0);
  return w * NumpyPow(z, w - C(1));
}

// d(z^w)/dw = z^w log(z); at z = 0, 0 where Re(w) > 0 or w = 0 (numpy's 0^w is 0, 1, a constant
// in w near there; PyTorch's 0 too), else NaN (0^w is NaN).
template <typename R>
std::complex<R> PowDerivExponent(const std::complex<R>& z, const std::complex<R>& w) {
  using C = std::complex<R>;
  if (z == C(0) && (w.real() > 0 || w == C(0))) return C(0);
  return NumpyPow(z, w) * std::log(z);
}

// exp(z) - 1 by numpy's formula: Re = expm1(x) cos(y) - 2 sin^2(y / 2), Im = exp(x) sin(y);
// exact to rounding near 0, where exp(z) - 1 cancels.
template <typename R>
std::complex<R> Expm1(const std::complex<R>& z) {
  const R x = z.real(), y = z.imag();
  const R s = std::sin(y / 2);
  return {std::expm1(x) * std::cos(y) - 2 * s * s, std::exp(x) * std::sin(y)};
}

// log(1 + z), principal branch (the cut along z's real axis below -1). Near 0 the real part is
// log1p(|1 + z|^2 - 1) / 2 with |1 + z|^2 - 1 = x (2 + x) + y^2 formed without adding 1 (PyTorch's
// method): numpy's log(|1 + z|) loses the digits of a small z there.
template <typename R>
std::complex<R> Log1p(const std::complex<R>& z) {
  const R x = z.real(), y = z.imag();
  const R theta = std::atan2(y, x + 1);
  if (std::abs(z) < R(0.5)) {
    const R r = x * (2 + x) + y * y;
    if (r == 0) return {x, theta};  // underflowed: log1p(z) = z to rounding
    return {std::log1p(r) / 2, theta};
  }
  return {std::log(std::hypot(x + 1, y)), theta};
}

}  // namespace ops_math
