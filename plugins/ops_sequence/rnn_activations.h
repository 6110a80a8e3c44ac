// rnn_activations.h: the activations of the recurrent ops (Fluid's math/detail
// activation_functions: sigmoid, tanh, relu, identity), applied in place over a run of elements,
// and their derivatives written in terms of the activated value (what the ops keep for the grad).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <tide/plugin.hpp>
#include <type_traits>

#include "rnn_simd.h"

namespace ops_sequence {

enum class Act { kIdentity = 0, kSigmoid = 1, kTanh = 2, kRelu = 3 };  // gru_unit's int codes

// The activation an attribute names (Fluid's strings); an error names the op and the attribute.
inline Act ActOf(const char* op, const char* attr, const std::string& name) {
  if (name == "sigmoid") return Act::kSigmoid;
  if (name == "tanh") return Act::kTanh;
  if (name == "relu") return Act::kRelu;
  if (name == "identity" || name == "linear" || name.empty()) return Act::kIdentity;
  TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op, "': ", attr, " '", name,
             "' is not one of sigmoid, tanh, relu, identity");
}

// gru_unit's enum attribute: 0 identity, 1 sigmoid, 2 tanh, 3 relu.
inline Act ActOfCode(const char* op, const char* attr, int code) {
  TIDE_CHECK(code >= 0 && code <= 3, "op '", op, "': ", attr, " ", code,
             " is not one of 0 (identity), 1 (sigmoid), 2 (tanh), 3 (relu)");
  return static_cast<Act>(code);
}

template <typename T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// x[0, n) = act(x[0, n)). sigmoid(x) = (1 + tanh(x / 2)) / 2, through a vectorized tanh (float:
// rnn_simd.cc's, compiled for the CPU at hand; double: Eigen's).
template <typename T>
void Activate(Act act, T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {  // vectorized for the CPU at hand
    if (act == Act::kTanh) return TanhInPlace(x, n);
    if (act == Act::kSigmoid) return SigmoidInPlace(x, n);
  }
  ArrayMap<T> v(x, n);
  switch (act) {
    case Act::kIdentity:
      break;
    case Act::kSigmoid:
      v = T(0.5) * (T(0.5) * v).tanh() + T(0.5);
      break;
    case Act::kTanh:
      v = v.tanh();
      break;
    case Act::kRelu:
      v = v.max(T(0));
      break;
  }
}

// d[0, n) *= act'(x) where y = act(x) is given.
template <typename T>
void ScaleByDerivative(Act act, const T* y, T* d, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (act == Act::kTanh) return ScaleByTanhDerivative(y, d, n);
    if (act == Act::kSigmoid) return ScaleBySigmoidDerivative(y, d, n);
  }
  ConstArrayMap<T> yv(y, n);
  ArrayMap<T> dv(d, n);
  switch (act) {
    case Act::kIdentity:
      break;
    case Act::kSigmoid:
      dv *= yv * (T(1) - yv);
      break;
    case Act::kTanh:
      dv *= T(1) - yv.square();
      break;
    case Act::kRelu:
      dv = (yv > T(0)).select(dv, T(0));
      break;
  }
}

}  // namespace ops_sequence
