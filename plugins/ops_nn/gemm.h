// gemm.h: the SDK's GEMM (tide/gemm.hpp) under this pack's namespace.
#pragma once

#include <tide/gemm.hpp>

#include "common.h"

namespace ops_nn {
using tide::Gemm;
}  // namespace ops_nn
