// special_math.h: the special functions of paddle_math_activations.h (erfinv, lgamma, digamma and
// digamma's derivative trigamma), in double: the C library lacks erfinv, digamma and trigamma.
#pragma once

#include <cmath>
#include <limits>

namespace ops_math {
namespace special {

constexpr double kPi = 3.14159265358979323846;

// erf^-1(x): M. Giles' single-precision approximation ("Approximating the erfinv function",
// 2010), refined by two Newton steps on erf(y) = x to double precision. +-inf from +-1 on, as
// Paddle's kernel (Eigen's ndtri((x + 1) / 2) / sqrt(2)) gives.
inline double Erfinv(double x) {
  if (std::isnan(x)) return x;
  if (x >= 1.0 || x <= -1.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
  double w = -std::log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  double y = p * x;
  for (int i = 0; i < 2; ++i) {
    const double slope = 2.0 / std::sqrt(kPi) * std::exp(-y * y);  // erf'(y)
    if (slope > 0.0) y -= (std::erf(y) - x) / slope;
  }
  return y;
}

// log|gamma(x)| without the C library's global `signgam` (lgamma is not thread-safe).
inline double Lgamma(double x) {
#if defined(__GLIBC__)
  int sign;
  return ::lgamma_r(x, &sign);
#else
  return std::lgamma(x);
#endif
}

// digamma(x) = d/dx ln gamma(x): the reflection formula below 0, the recurrence
// psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series. At the poles what
// Paddle's kernel (Eigen's) gives: -inf at 0, NaN at -1, -2, ...
inline double Digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (x < 0.0 && std::floor(x) == x) return std::numeric_limits<double>::quiet_NaN();
  if (x < 0.0) return Digamma(1.0 - x) - kPi / std::tan(kPi * x);
  double acc = 0.0;
  for (; x < 10.0; x += 1.0) acc -= 1.0 / x;
  const double r = 1.0 / (x * x);
  // ln x - 1/(2x) - sum B_2k / (2k x^2k), k = 1..7.
  const double series =
      r * (1.0 / 12 - r * (1.0 / 120 -
                           r * (1.0 / 252 -
                                r * (1.0 / 240 - r * (1.0 / 132 - r * (691.0 / 32760 - r / 12))))));
  return acc + std::log(x) - 0.5 / x - series;
}

// trigamma(x) = digamma'(x): the reflection formula below 0, the recurrence
// psi1(x) = psi1(x + 1) + 1/x^2 up to x >= 10, then the asymptotic series. +inf at the poles.
inline double Trigamma(double x) {
  if (std::isnan(x)) return x;
  if (x <= 0.0 && std::floor(x) == x) return std::numeric_limits<double>::infinity();
  if (x < 0.0) {
    const double s = std::sin(kPi * x);
    return kPi * kPi / (s * s) - Trigamma(1.0 - x);
  }
  double acc = 0.0;
  for (; x < 10.0; x += 1.0) acc += 1.0 / (x * x);
  const double r = 1.0 / (x * x);
  // 1/x + 1/(2x^2) + sum B_2k / x^(2k+1), k = 1..7.
  const double series =
      r * (1.0 / 6 -
           r * (1.0 / 30 -
                r * (1.0 / 42 - r * (1.0 / 30 - r * (5.0 / 66 - r * (691.0 / 2730 - r * 7 / 6))))));
  return acc + 1.0 / x + 0.5 * r + series / x;
}

}  // namespace special
}  // namespace ops_math
