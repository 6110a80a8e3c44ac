// paddle_op_versions.cc: the Paddle op versions Tide's op packs implement.
#include "core/io/paddle_op_versions.h"

namespace tide::core {

const std::map<std::string, int>& KnownPaddleOpVersions() {
  // Each of these versions added an attribute or an input (or fixed leaky_relu's alpha outside
  // [0, 1], and mish's softplus above `threshold`, which Tide computes as Paddle now does): a
  // program that uses what Tide's op lacks is refused by the op's own attribute and input checks.
  static const std::map<std::string, int> known = {{"conv2d", 1},
                                                   {"depthwise_conv2d", 1},
                                                   {"conv3d", 1},
                                                   {"conv2d_transpose", 2},
                                                   {"depthwise_conv2d_transpose", 1},
                                                   // 1: output_padding
                                                   {"conv3d_transpose", 1},
                                                   {"elementwise_add", 1},
                                                   {"elementwise_sub", 1},
                                                   {"elementwise_mul", 1},
                                                   {"elementwise_div", 1},
                                                   {"elementwise_pow", 1},
                                                   {"fill_constant", 2},
                                                   {"clip", 1},
                                                   {"gather", 1},
                                                   {"matmul", 1},
                                                   {"leaky_relu", 1},
                                                   {"softplus", 1},
                                                   {"equal", 1},
                                                   {"not_equal", 1},
                                                   {"less_than", 1},
                                                   {"less_equal", 1},
                                                   {"greater_than", 1},
                                                   {"greater_equal", 1},
                                                   {"cumsum", 1},
                                                   {"momentum", 1},
                                                   {"lookup_table", 1},
                                                   {"lookup_table_v2", 1},
                                                   {"linspace", 1},
                                                   {"argsort", 1},
                                                   {"p_norm", 1},
                                                   {"flip", 1},
                                                   {"roll", 2},
                                                   {"instance_norm", 1},
                                                   {"mish", 1},
                                                   // 1: data_format; 1: axis1 / axis2
                                                   // (were dim1 / dim2)
                                                   {"pixel_shuffle", 1},
                                                   {"trace", 1},
                                                   // 1: mode; 1: align_corners
                                                   {"grid_sampler", 1},
                                                   {"affine_grid", 1},
                                                   // 1: Weight, density (indexops)
                                                   {"histogram", 1},
                                                   // 1-3: steps and the bound lists,
                                                   // decrease_axes, none_axes; 4: the constant
                                                   // in `values` (Scalars)
                                                   {"set_value", 4},
                                                   // 1: RoisNum, MultiLevelRoIsNum; 2: pixel_offset
                                                   {"distribute_fpn_proposals", 2},
                                                   // 1: pixel_offset
                                                   {"generate_proposals_v2", 1},
                                                   // 1: RpnRoisLod removed; 2: RoisNum; 3: aligned
                                                   {"roi_align", 3}};
  return known;
}

}  // namespace tide::core
