// fft_1d.h: the 1-D transforms the FFT ops run, on Eigen's FFT module (kissfft). kissfft handles
// any length, but a prime factor p of the length costs it n * p operations (one transform of the
// prime length 65537 took it 39 s); lengths with a prime factor over kBluesteinAbove go through
// Bluestein's chirp-z identity instead (0.1 s there), which turns the n-point DFT into a circular
// convolution computed by Eigen's FFT at a power of two >= 2n - 1: O(n log n), in double
// precision for both types (pocketfft, numpy's and Paddle's CPU FFT, does the same for such
// lengths). Every transform is unscaled; the ops apply Paddle's normalization once.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <tide/plugin.hpp>
#include <unsupported/Eigen/FFT>
#include <vector>

namespace ops_fft {

// Lengths whose largest prime factor exceeds this go through Bluestein's algorithm. Measured on
// a 2-core Xeon: kissfft is faster up to factors of about 30 at lengths under 100 and about 60 to
// 90 at lengths near 10^5 (a factor of 89: equal); a prime of 127 takes it 6 times as long.
constexpr int kBluesteinAbove = 64;

inline int LargestPrimeFactor(int n) {
  int largest = 1;
  for (int p = 2; static_cast<int64_t>(p) * p <= n; ++p)
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  return n > 1 ? n : largest;
}

// Bluestein's algorithm for one length n: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}) with
// w_m = exp(-i pi m^2 / n), the sum a circular convolution of length m (a power of two).
class Bluestein {
 public:
  using C = std::complex<double>;
  Bluestein(const char* op, int n) : n_(n) {
    m_ = 1;
    while (m_ < 2 * static_cast<int64_t>(n) - 1) m_ *= 2;
    TIDE_CHECK(m_ <= (int64_t{1} << 30), "op '", op, "': an FFT of ", n,
               " points with a prime factor over ", kBluesteinAbove,
               " is more than this kernel takes (2^29)");
    chirp_.resize(n);
    fft_.SetFlag(Eigen::FFT<double>::Unscaled);
    const double pi = std::acos(-1.0);
    for (int64_t j = 0; j < n; ++j) {  // j^2 mod 2n exactly: the angle stays accurate
      const int64_t r = (j * j) % (2 * static_cast<int64_t>(n));
      chirp_[j] = std::polar(1.0, -pi * static_cast<double>(r) / n);
    }
    std::vector<C> b(m_, C(0));
    for (int64_t j = 0; j < n; ++j) b[j] = b[(m_ - j) % m_] = std::conj(chirp_[j]);
    kernel_.resize(m_);
    fft_.fwd(kernel_.data(), b.data(), static_cast<int>(m_));
    a_.resize(m_);
    t_.resize(m_);
  }
  // x (n values) -> its forward DFT, in place.
  void Forward(C* x) {
    std::fill(a_.begin(), a_.end(), C(0));
    for (int j = 0; j < n_; ++j) a_[j] = x[j] * chirp_[j];
    fft_.fwd(t_.data(), a_.data(), static_cast<int>(m_));
    for (int64_t i = 0; i < m_; ++i) t_[i] *= kernel_[i];
    fft_.inv(a_.data(), t_.data(), static_cast<int>(m_));
    const double scale = 1.0 / static_cast<double>(m_);
    for (int k = 0; k < n_; ++k) x[k] = a_[k] * chirp_[k] * scale;
  }

 private:
  int n_;
  int64_t m_;
  std::vector<C> chirp_, kernel_, a_, t_;
  Eigen::FFT<double> fft_;
};

// The 1-D transforms of one kernel call: one Eigen FFT object (its plans cache per length) and
// one Bluestein plan per long-prime length.
template <typename R>
class Fft1D {
 public:
  using C = std::complex<R>;
  explicit Fft1D(const char* op) : op_(op) { fft_.SetFlag(Eigen::FFT<R>::Unscaled); }

  // out = the n-point DFT of in: exponent -i (forward) or +i.
  void Complex(const C* in, C* out, int n, bool forward) {
    if (n == 1) {  // kissfft's plan of one point crashes
      out[0] = in[0];
    } else if (Bluestein* b = Long(n)) {
      buf_.assign(in, in + n);
      Direction(b, forward);
      for (int i = 0; i < n; ++i) out[i] = C(buf_[i]);
    } else if (forward) {
      fft_.fwd(out, in, n);
    } else {
      fft_.inv(out, in, n);
    }
  }

  // out = the forward DFT of real in: its n/2+1 first bins (half) or all n.
  void RealForward(const R* in, C* out, int n, bool half) {
    if (n == 1) {
      out[0] = C(in[0]);
    } else if (Bluestein* b = Long(n)) {
      buf_.assign(in, in + n);
      b->Forward(buf_.data());
      for (int i = 0, bins = half ? n / 2 + 1 : n; i < bins; ++i) out[i] = C(buf_[i]);
    } else {
      if (half)
        fft_.SetFlag(Eigen::FFT<R>::HalfSpectrum);
      else
        fft_.ClearFlag(Eigen::FFT<R>::HalfSpectrum);
      fft_.fwd(out, in, n);
    }
  }

  // out = the real n-point inverse DFT (exponent +i) of the Hermitian spectrum whose first n/2+1
  // bins are in (the imaginary parts of in[0] and, n even, in[n/2] ignored, as numpy's).
  void RealInverse(const C* in, R* out, int n) {
    if (n == 1) {
      out[0] = in[0].real();
    } else if (Bluestein* b = Long(n)) {
      buf_.assign(n, std::complex<double>(0));
      buf_[0] = in[0].real();
      for (int k = 1; k <= n / 2; ++k) {
        buf_[k] = std::complex<double>(in[k]);
        buf_[n - k] = std::conj(buf_[k]);
      }
      if (n % 2 == 0) buf_[n / 2] = in[n / 2].real();
      Direction(b, false);
      for (int i = 0; i < n; ++i) out[i] = static_cast<R>(buf_[i].real());
    } else {
      fft_.inv(out, in, n);
    }
  }

 private:
  // The Bluestein plan of length n when n has a prime factor over kBluesteinAbove, else null.
  Bluestein* Long(int n) {
    auto it = long_.find(n);
    if (it == long_.end()) {
      Bluestein* b = LargestPrimeFactor(n) > kBluesteinAbove ? new Bluestein(op_, n) : nullptr;
      it = long_.emplace(n, std::unique_ptr<Bluestein>(b)).first;
    }
    return it->second.get();
  }
  // buf_ transformed in place; the inverse is the conjugate of the forward of the conjugate.
  void Direction(Bluestein* b, bool forward) {
    if (!forward)
      for (auto& v : buf_) v = std::conj(v);
    b->Forward(buf_.data());
    if (!forward)
      for (auto& v : buf_) v = std::conj(v);
  }

  const char* op_;
  Eigen::FFT<R> fft_;
  std::map<int, std::unique_ptr<Bluestein>> long_;
  std::vector<std::complex<double>> buf_;
};

}  // namespace ops_fft
