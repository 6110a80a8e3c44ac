// fused_activation.h: the activation of Paddle's fusion ops (fused_conv2d's fuse_activation,
// fuse_alpha, fuse_beta), computed by the standalone activation ops' functors: the SDK's
// tide/kernels/fused_activation.hpp (shared with the header-only fc kernel), under this pack's
// namespace.
#pragma once

#include <tide/kernels/fused_activation.hpp>

#include "common.h"

namespace ops_nn {

using tide::kernels::FusedAct;
using tide::kernels::FusedActNameList;
using tide::kernels::FusedActNames;
using tide::kernels::FusedActOf;
using tide::kernels::FusedActParams;
using tide::kernels::GetFusedAct;
using tide::kernels::WithFusedAct;

}  // namespace ops_nn
