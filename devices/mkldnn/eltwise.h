// eltwise.h: one oneDNN eltwise forward kernel and one backward kernel for every activation,
// parameterised by the algorithm and its alpha / beta (made from the op's attributes by the
// caller; see activation_kernels.cc for the table of ops).
#pragma once

#include "mkldnn_context.h"

namespace tide_mkldnn {

// A oneDNN eltwise algorithm with its two parameters (their meaning is the algorithm's).
struct EltwiseAlgo {
  dnnl::algorithm algo;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// Out = algo(X), in X's format when Tide can store it (a blocked conv output stays blocked),
// else plain.
void EltwiseForward(KernelContext& ctx, const EltwiseAlgo& a);

// X@GRAD = algo's backward of Out@GRAD, reading the op's input `from` ("X" or "Out": what the
// Tide grad op receives). It is bound as oneDNN's dst for the *_use_dst_for_bwd algorithms, else
// as its src. X@GRAD is written plain.
void EltwiseBackward(KernelContext& ctx, const EltwiseAlgo& a, const char* from);

}  // namespace tide_mkldnn
