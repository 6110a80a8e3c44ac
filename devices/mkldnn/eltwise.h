// eltwise.h: one oneDNN eltwise forward kernel and one backward kernel for every activation,
// parameterised by the algorithm and its alpha / beta (made from the op's attributes by the
// caller; see activation_kernels.cc for the table of ops).
#pragma once

#include <string>
#include <vector>

#include "mkldnn_context.h"

namespace tide_mkldnn {

// A oneDNN eltwise algorithm with its two parameters (their meaning is the algorithm's).
struct EltwiseAlgo {
  dnnl::algorithm algo;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// Adds the algorithm and its alpha / beta (their exact bits) to a primitive cache key.
Key& AddAlgo(Key& key, const EltwiseAlgo& a);

// Paddle's fused activation (fused_conv2d's fuse_activation, fuse_alpha, fuse_beta; their meaning
// is in tide/kernels/fused_activation.hpp) as a chain of eltwise post-ops computing what the
// plain kernel computes (activation_kernels.cc; empty for "" / "identity"). False, with *why,
// when no oneDNN 2.6 chain computes it (hard_swish other than Fluid's defaults, an unknown name).
bool FusedActivationChain(const std::string& name, float alpha, float beta,
                          std::vector<EltwiseAlgo>* chain, std::string* why);

// Out = algo(X), in X's format when Tide can store it (a blocked conv output stays blocked),
// else plain.
void EltwiseForward(KernelContext& ctx, const EltwiseAlgo& a);

// X@GRAD = algo's backward of Out@GRAD, reading the op's input `from` ("X" or "Out": what the
// Tide grad op receives). It is bound as oneDNN's dst for the *_use_dst_for_bwd algorithms, else
// as its src. X@GRAD is written plain.
void EltwiseBackward(KernelContext& ctx, const EltwiseAlgo& a, const char* from);

}  // namespace tide_mkldnn
