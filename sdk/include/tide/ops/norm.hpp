// tide/ops/norm.hpp: the shape rules of Fluid's layer_norm, group_norm and instance_norm, with
// their errors, for every implementation of them: X seen as `groups` blocks of `size` elements
// normalised on their own (contiguous, but for group_norm's NHWC), and the Scale/Bias element an
// element of X uses. The index functions run on the host and on a device.
#ifndef TIDE_OPS_NORM_HPP_
#define TIDE_OPS_NORM_HPP_

#include <tide/ops/dims.hpp>
#include <tide/ops/host_device.hpp>
#include <tide/plugin.hpp>

#include <cstdint>

namespace tide {
namespace ops {

struct NormGroups {
  int64_t groups = 1, size = 1;  // blocks normalised on their own
  int64_t affine = 1;            // Scale/Bias length
  int64_t inner = 1;             // elements per channel (group/instance norm); 0 for layer_norm
  // group_norm's NHWC: X is [N, ..., C]; group k holds the channels of one group at every pixel
  // of one sample, strided in X.
  bool channels_last = false;

  // The Scale/Bias index of X's element e.
  TIDE_OPS_HOST_DEVICE int64_t AffineIndex(int64_t e) const {
    if (channels_last) return e % affine;
    return inner ? (e / inner) % affine : e % size;
  }
  // The group of X's element e.
  TIDE_OPS_HOST_DEVICE int64_t GroupOf(int64_t e) const {
    if (!channels_last) return e / size;
    const int64_t per = size / inner;  // channels per group
    return e / (inner * affine) * (affine / per) + e % affine / per;
  }
  // X's offset of the j-th element (j in [0, size)) of group k, in the order a group is summed.
  TIDE_OPS_HOST_DEVICE int64_t Offset(int64_t k, int64_t j) const {
    if (!channels_last) return k * size + j;
    const int64_t per = size / inner, per_sample = affine / per;
    return (k / per_sample * inner + j / per) * affine + k % per_sample * per + j % per;
  }
};

// layer_norm: X flattened to [left, right] at begin_norm_axis; each row is a group; Scale and
// Bias have `right` elements.
inline NormGroups LayerNormGroups(const char* op, const Dims& x, int begin_norm_axis) {
  TIDE_CHECK(begin_norm_axis >= 1 && begin_norm_axis <= static_cast<int>(x.size()),
             "op '", op, "': begin_norm_axis ", begin_norm_axis, " must be in [1, rank] for X ",
             ToString(x));
  NormGroups g;
  g.groups = DimsProductOrUnknown(x, 0, begin_norm_axis);
  g.size = DimsProductOrUnknown(x, begin_norm_axis, x.size());
  g.affine = g.size;
  g.inner = 0;
  return g;
}

// group_norm (groups > 0) and instance_norm (groups = C): X [N, C, ...], or [N, ..., C] when
// channels_last (group_norm's NHWC); each (sample, group) is a group; Scale and Bias have C
// elements.
inline NormGroups ChannelNormGroups(const char* op, const Dims& x, int64_t groups,
                                    bool channels_last = false) {
  TIDE_CHECK(x.size() >= 2, "op '", op, "': X must be ",
             channels_last ? "[N, ..., C]" : "[N, C, ...]", ", got ", ToString(x));
  const int64_t c = channels_last ? x.back() : x[1];
  if (groups <= 0) groups = c;  // instance_norm
  TIDE_CHECK(c < 0 || (groups >= 1 && c % groups == 0), "op '", op, "': groups (", groups,
             ") must divide the channels (", c, ")");
  NormGroups g;
  g.channels_last = channels_last;
  g.inner = channels_last ? DimsProductOrUnknown(x, 1, x.size() - 1)
                          : DimsProductOrUnknown(x, 2, x.size());
  g.affine = c;
  g.groups = x[0] < 0 ? -1 : x[0] * groups;
  g.size = (c < 0 || g.inner < 0) ? -1 : (c / groups) * g.inner;
  return g;
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_NORM_HPP_
