// gemm.h: the SDK's GEMM (tide/gemm.hpp) under this pack's namespace.
#pragma once

#include <tide/gemm.hpp>

#include "common.h"

namespace ops_math {
using tide::Gemm;
}  // namespace ops_math
