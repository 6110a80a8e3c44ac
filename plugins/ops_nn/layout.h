// layout.h: Paddle 2.x's data_format attribute of conv2d / pool2d: the SDK's
// tide/kernels/layout.hpp (shared with the header-only conv and pool kernels), under this pack's
// namespace.
#pragma once

#include <tide/kernels/layout.hpp>

#include "common.h"

namespace ops_nn {

using tide::kernels::AsNchw;
using tide::kernels::ChannelLast;
using tide::kernels::NchwOutput;
using tide::kernels::NchwToNhwcDims;
using tide::kernels::NhwcToNchwDims;
using tide::kernels::StoreNhwc;

}  // namespace ops_nn
