// tide/ops/multihead_attention.hpp: the shape rule of fused_multihead_attention (the op
// InferenceTranspiler makes of the attention of paddle.nn.MultiHeadAttention), with its errors,
// for every implementation: Q [B, Sq, H], K and V [B, Sk, H] (or one QKV [B, S, 3H], Q, K and V
// side by side on the last axis, as a fused QKV projection writes them), H = head_number * D;
// Mask, optional, added to the scores [B, head_number, Sq, Sk] broadcast numpy-style (Paddle's
// [B, 1, 1, Sk] padding mask, a causal [Sq, Sk], ...); Out [B, Sq, H], heads side by side.
#ifndef TIDE_OPS_MULTIHEAD_ATTENTION_HPP_
#define TIDE_OPS_MULTIHEAD_ATTENTION_HPP_

#include <cstdint>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace ops {

struct AttentionShape {
  int64_t batch = 0, heads = 0, head_size = 0, sq = 0, sk = 0, hidden = 0;
  // Each of Q, K, V: the offset of its first element in its tensor and the distance between two
  // tokens' rows (H, or 3H inside QKV); head h's columns start h * head_size further.
  int64_t q_off = 0, k_off = 0, v_off = 0, q_row = 0, k_row = 0, v_row = 0;
  bool mask = false;
  int64_t mask_stride[4] = {0, 0, 0, 0};  // over [B, heads, Sq, Sk]; 0 along a broadcast dim
  Dims out;
};

// `qkv`: the one-input form (q is QKV's dims; k and v are ignored). `mask` empty when absent
// (has_mask false). Unknown (-1) dims pass at compile time.
inline AttentionShape GetAttentionShape(const char* op, bool qkv, const Dims& q, const Dims& k,
                                        const Dims& v, bool has_mask, const Dims& mask, int heads) {
  AttentionShape s;
  TIDE_CHECK(heads > 0, "op '", op, "': head_number must be positive, got ", heads);
  TIDE_CHECK(q.size() == 3, "op '", op, "': ", qkv ? "QKV" : "Q", " must be [B, S, ",
             qkv ? "3H" : "H", "], got ", ToString(q));
  s.batch = q[0];
  s.sq = q[1];
  s.heads = heads;
  if (qkv) {
    TIDE_CHECK(q[2] < 0 || q[2] % (3 * heads) == 0, "op '", op, "': QKV ", ToString(q),
               ": its last dim must be 3 * head_number (", heads, ") * head size");
    s.hidden = q[2] < 0 ? -1 : q[2] / 3;
    s.sk = s.sq;
    s.q_row = s.k_row = s.v_row = q[2];
    s.q_off = 0;
    s.k_off = s.hidden;
    s.v_off = 2 * s.hidden;
  } else {
    TIDE_CHECK(k.size() == 3 && v.size() == 3, "op '", op, "': K and V must be [B, Sk, H], got ",
               ToString(k), " and ", ToString(v));
    for (size_t i = 0; i < 3; ++i)
      TIDE_CHECK(DimsCompatible(k[i], v[i]) && (i == 1 || DimsCompatible(q[i], k[i])), "op '", op,
                 "': Q ", ToString(q), ", K ", ToString(k), ", V ", ToString(v),
                 " must be [B, Sq, H], [B, Sk, H], [B, Sk, H]");
    TIDE_CHECK(q[2] < 0 || q[2] % heads == 0, "op '", op, "': Q ", ToString(q),
               ": H must be a multiple of head_number ", heads);
    s.hidden = q[2];
    s.sk = k[1] < 0 ? v[1] : k[1];
    s.q_row = s.k_row = s.v_row = s.hidden;
  }
  s.head_size = s.hidden < 0 ? -1 : s.hidden / heads;
  s.out = {s.batch, s.sq, s.hidden};
  s.mask = has_mask;
  if (!has_mask) return s;
  TIDE_CHECK(mask.size() <= 4, "op '", op, "': Mask ", ToString(mask),
             " must broadcast to the scores [B, head_number, Sq, Sk] (rank <= 4)");
  const int64_t full[4] = {s.batch, s.heads, s.sq, s.sk};
  int64_t stride = 1;
  for (size_t i = 4; i-- > 0;) {
    const size_t from_end = 3 - i;
    if (from_end >= mask.size()) break;  // a missing leading dim broadcasts
    const int64_t d = mask[mask.size() - 1 - from_end];
    TIDE_CHECK(d == 1 || d < 0 || full[i] < 0 || d == full[i], "op '", op, "': Mask ",
               ToString(mask), " does not broadcast to the scores [", s.batch, ", ", s.heads, ", ",
               s.sq, ", ", s.sk, "]");
    s.mask_stride[i] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return s;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_MULTIHEAD_ATTENTION_HPP_
