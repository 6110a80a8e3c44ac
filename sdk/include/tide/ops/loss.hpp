// tide/ops/loss.hpp: the shape rules of the standard losses: softmax_with_cross_entropy (Logits
// seen as [pre, K, post] around the class axis; Label fits Logits) and cross_entropy (X [..., D];
// Label fits X). Unknown (-1) dims pass at compile time.
#ifndef TIDE_OPS_LOSS_HPP_
#define TIDE_OPS_LOSS_HPP_

#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <cstddef>
#include <cstdint>

namespace tide {
namespace ops {

// Logits viewed as [pre, K, post] around the class axis (-1 where unknown).
struct ClassView {
  int64_t pre, k, post;
};

// softmax_with_cross_entropy's view of Logits; the normalised class axis in `axis`.
inline ClassView GetClassView(const char* op, const Dims& logits, int axis_attr, int* axis) {
  TIDE_CHECK(logits.size() >= 1, "op '", op, "': Logits must have rank >= 1");
  *axis = NormAxis(op, axis_attr, logits.size());
  return {DimsProductOrUnknown(logits, 0, *axis), logits[*axis],
          DimsProductOrUnknown(logits, *axis + 1, logits.size())};
}

// softmax_with_cross_entropy: soft labels have Logits' dims, hard ones 1 on the class axis.
inline void CheckSoftmaxLabel(const char* op, const Dims& logits, const Dims& label, int axis,
                              bool soft) {
  bool ok = label.size() == logits.size();
  for (size_t i = 0; ok && i < label.size(); ++i) {
    int64_t want = (static_cast<int>(i) == axis && !soft) ? 1 : logits[i];
    ok = DimsCompatible(label[i], want);
  }
  TIDE_CHECK(ok, "op '", op, "': Label ", ToString(label), " does not fit Logits ",
             ToString(logits),
             soft ? ": soft labels have Logits' dims"
                  : ": hard labels have Logits' dims with 1 on the class axis");
}

// cross_entropy: X is [..., D] (rank >= 2); soft labels have X's dims, hard ones X's dims with
// a last dim of 1, or X's dims without the last (rank(X) - 1, as Fluid accepts).
inline void CheckCrossEntropyLabel(const char* op, const Dims& x, const Dims& label, bool soft) {
  TIDE_CHECK(x.size() >= 2, "op '", op, "': X must have rank >= 2 ([N, D]), got ", ToString(x));
  bool ok = label.size() == x.size() || (!soft && label.size() + 1 == x.size());
  for (size_t i = 0; ok && i < label.size(); ++i)
    ok = DimsCompatible(label[i], (i + 1 == x.size() && !soft) ? 1 : x[i]);
  TIDE_CHECK(ok, "op '", op, "': Label ", ToString(label), " does not fit X ", ToString(x),
             soft ? ": soft labels have X's dims"
                  : ": hard labels have X's dims with a last dim of 1 (or without the last dim)");
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_LOSS_HPP_
