// rnn_cells.h: one row (one sequence, one step) of the rnn op's cells, forward and backward, as
// Paddle 2.x's nn.LSTMCell / nn.GRUCell / nn.SimpleRNNCell compute them. The caller's GEMMs give
// a = x W_ih^T + b_ih + h_prev W_hh^T + b_hh (for GRU the candidate's recurrent part hc = h_prev
// W_hc^T + b_hc apart); a row's gates are stored activated, each H wide:
//   LSTM [i, f, c~, o]: c = f c_prev + i c~, h = o tanh(c)
//   GRU [r, z, c~]: c~ = tanh(a_c + r hc) (reset applied after the product), h = z h_prev +
//   (1 - z) c~
//   RNN_TANH / RNN_RELU [h]: h = act(a)
// Backward: from h's gradient dh (and c's, dc), the gates' pre-activation gradients: da_in (what
// x W_ih^T and b_ih receive) and da_rec (what h_prev W_hh^T and b_hh receive; they differ only in
// GRU's candidate, whose recurrent product the reset gate scales), and h_prev's share that does
// not go through W_hh.
#pragma once

#include "rnn_activations.h"

namespace ops_sequence {

// LSTM: g [4H] holds a on entry, the activated gates on return; c = the new cell state.
template <typename T>
void LstmRowForward(int64_t hd, T* g, const T* c_prev, T* c, T* h) {
  Activate(Act::kSigmoid, g, 2 * hd);
  Activate(Act::kTanh, g + 2 * hd, hd);
  Activate(Act::kSigmoid, g + 3 * hd, hd);
  ConstArrayMap<T> i(g, hd), f(g + hd, hd), cand(g + 2 * hd, hd), o(g + 3 * hd, hd);
  ArrayMap<T> cv(c, hd);
  cv = f * ConstArrayMap<T>(c_prev, hd) + i * cand;
  ArrayMap<T>(h, hd) = o * cv.tanh();
}

// dh: h's total gradient; dc: c's gradient from the next step on entry, c_prev's on return.
template <typename T>
void LstmRowBackward(int64_t hd, const T* g, const T* c_prev, const T* dh, T* dc, T* da) {
  ConstArrayMap<T> i(g, hd), f(g + hd, hd), cand(g + 2 * hd, hd), o(g + 3 * hd, hd);
  ConstArrayMap<T> cp(c_prev, hd), dhv(dh, hd);
  const auto tc = (f * cp + i * cand).tanh().eval();
  ArrayMap<T> dcv(dc, hd);
  dcv += dhv * o * (T(1) - tc.square());
  ArrayMap<T>(da, hd) = dcv * cand;         // i
  ArrayMap<T>(da + hd, hd) = dcv * cp;      // f
  ArrayMap<T>(da + 2 * hd, hd) = dcv * i;   // c~
  ArrayMap<T>(da + 3 * hd, hd) = dhv * tc;  // o
  dcv *= f;                                 // c_prev's
  ScaleByDerivative(Act::kSigmoid, g, da, 2 * hd);
  ScaleByDerivative(Act::kTanh, g + 2 * hd, da + 2 * hd, hd);
  ScaleByDerivative(Act::kSigmoid, g + 3 * hd, da + 3 * hd, hd);
}

// GRU: g [3H] holds a (its candidate part x W_ic^T + b_ic only) on entry, the activated gates on
// return; hc = h_prev W_hc^T + b_hc.
template <typename T>
void GruRowForward(int64_t hd, T* g, const T* hc, const T* h_prev, T* h) {
  Activate(Act::kSigmoid, g, 2 * hd);
  ArrayMap<T>(g + 2 * hd, hd) += ConstArrayMap<T>(g, hd) * ConstArrayMap<T>(hc, hd);
  Activate(Act::kTanh, g + 2 * hd, hd);
  ConstArrayMap<T> z(g + hd, hd), cand(g + 2 * hd, hd);
  ArrayMap<T>(h, hd) = z * ConstArrayMap<T>(h_prev, hd) + (T(1) - z) * cand;
}

// dh_prev = h_prev's direct share (z dh).
template <typename T>
void GruRowBackward(int64_t hd, const T* g, const T* hc, const T* h_prev, const T* dh, T* da_in,
                    T* da_rec, T* dh_prev) {
  ConstArrayMap<T> r(g, hd), z(g + hd, hd), cand(g + 2 * hd, hd), dhv(dh, hd);
  ArrayMap<T> dcand(da_in + 2 * hd, hd);
  dcand = dhv * (T(1) - z);
  ScaleByDerivative(Act::kTanh, g + 2 * hd, da_in + 2 * hd, hd);
  ArrayMap<T>(da_in, hd) = dcand * ConstArrayMap<T>(hc, hd);                  // r
  ArrayMap<T>(da_in + hd, hd) = dhv * (ConstArrayMap<T>(h_prev, hd) - cand);  // z
  ScaleByDerivative(Act::kSigmoid, g, da_in, 2 * hd);
  std::copy(da_in, da_in + 2 * hd, da_rec);
  ArrayMap<T>(da_rec + 2 * hd, hd) = dcand * r;  // hc's
  ArrayMap<T>(dh_prev, hd) = dhv * z;
}

// RNN_TANH / RNN_RELU: g [H] holds a on entry, h on return.
template <typename T>
void SimpleRowForward(Act act, int64_t hd, T* g, T* h) {
  Activate(act, g, hd);
  std::copy(g, g + hd, h);
}

template <typename T>
void SimpleRowBackward(Act act, int64_t hd, const T* g, const T* dh, T* da) {
  std::copy(dh, dh + hd, da);
  ScaleByDerivative(act, g, da, hd);
}

}  // namespace ops_sequence
