// gru_common.h: one GRU row, forward and backward, shared by gru (batched sequences) and
// gru_unit (one step). A row's gates are [u, r, c~], each d wide (Fluid's layout); the
// hidden-state products (h W_ur, (r h) W_c) come from the caller's GEMMs. A null previous
// hidden state means zero (a sequence's first step without H0).
#pragma once

#include "rnn_activations.h"

namespace ops_sequence {

struct GruActs {
  Act gate, cand;
  bool origin_mode;  // h' = u h + (1 - u) c~ rather than (1 - u) h + u c~
};

// g[0, 2d) += hw_ur (if given), activated; rhp = r * ph.
template <typename T>
void GruGatesForward(const GruActs& a, int64_t d, T* g, const T* hw_ur, const T* ph, T* rhp) {
  if (hw_ur) ArrayMap<T>(g, 2 * d) += ConstArrayMap<T>(hw_ur, 2 * d);
  Activate(a.gate, g, 2 * d);
  if (ph)
    ArrayMap<T>(rhp, d) = ConstArrayMap<T>(g + d, d) * ConstArrayMap<T>(ph, d);
  else
    ArrayMap<T>(rhp, d).setZero();
}

// g[2d, 3d) += hw_c (if given), activated; h = the new hidden state.
template <typename T>
void GruOutputForward(const GruActs& a, int64_t d, T* g, const T* hw_c, const T* ph, T* h) {
  if (hw_c) ArrayMap<T>(g + 2 * d, d) += ConstArrayMap<T>(hw_c, d);
  Activate(a.cand, g + 2 * d, d);
  ConstArrayMap<T> u(g, d), c(g + 2 * d, d);
  ArrayMap<T> hv(h, d);
  if (!ph && a.origin_mode)
    hv = (T(1) - u) * c;
  else if (!ph)
    hv = u * c;
  else if (a.origin_mode)
    hv = u * ConstArrayMap<T>(ph, d) + (T(1) - u) * c;
  else
    hv = (T(1) - u) * ConstArrayMap<T>(ph, d) + u * c;
}

// From h's gradient dh: u's and c~'s pre-activation gradients (du: dur[0, d); dc) and the part of
// ph's gradient through the interpolation (added to dph when given).
template <typename T>
void GruOutputBackward(const GruActs& a, int64_t d, const T* g, const T* ph, const T* dh, T* dur,
                       T* dc, T* dph) {
  ConstArrayMap<T> u(g, d), c(g + 2 * d, d), dhv(dh, d);
  ArrayMap<T> du(dur, d), dcv(dc, d);
  if (a.origin_mode) {  // h' = u ph + (1 - u) c~
    if (ph)
      du = dhv * (ConstArrayMap<T>(ph, d) - c);
    else
      du = -dhv * c;
    dcv = dhv * (T(1) - u);
    if (dph) ArrayMap<T>(dph, d) += dhv * u;
  } else {  // h' = (1 - u) ph + u c~
    if (ph)
      du = dhv * (c - ConstArrayMap<T>(ph, d));
    else
      du = dhv * c;
    dcv = dhv * u;
    if (dph) ArrayMap<T>(dph, d) += dhv * (T(1) - u);
  }
  ScaleByDerivative(a.gate, g, dur, d);
  ScaleByDerivative(a.cand, g + 2 * d, dc, d);
}

// From (r h)'s gradient drhp: r's pre-activation gradient (dur[d, 2d)) and ph's share (added).
template <typename T>
void GruResetBackward(const GruActs& a, int64_t d, const T* g, const T* ph, const T* drhp, T* dur,
                      T* dph) {
  ConstArrayMap<T> drh(drhp, d);
  ArrayMap<T>(dur + d, d) = drh * ConstArrayMap<T>(ph, d);
  ScaleByDerivative(a.gate, g + d, dur + d, d);
  ArrayMap<T>(dph, d) += drh * ConstArrayMap<T>(g + d, d);
}

}  // namespace ops_sequence
