// int8.h: what the int8 kernels (int8_kernels.cc: quantize, dequantize, fused_conv2d; fc_kernel.cc:
// fc) share: tide/ops/int8.hpp's rule in oneDNN's terms. The primitive computes
//   dst = post * (acc + bias') / (Scale_in * Scale_weights[c])  (output scales, per channel)
//         + sum_scale * dst_before                                (the residual, when fused)
//   then the activation's eltwise post-ops,
// bias' = Bias * Scale_in * Scale_weights[c] (oneDNN adds the bias to the int32 accumulation
// before scaling). Output's Scale_out is folded into the output scales (post = Scale_out) where
// the activation commutes with a positive scale (none, relu), else the last eltwise post-op
// multiplies by it.
#pragma once

#include <string>
#include <tide/ops/int8.hpp>
#include <vector>

#include "eltwise.h"
#include "mkldnn_context.h"

namespace tide_mkldnn {

// How ResidualData reaches the sum post-op: copied into dst's buffer as `type` (its own for u8 /
// s8 data, float32 for a float32 dst), holding `scale` per real unit, and added times 1 / scale.
// A float32 residual of an int8 op (`via_float`) would lose its range as levels of Output's
// scale: the primitive then writes float32 (already times Scale_out) and a reorder rounds it.
struct Int8Residual {
  memory::data_type type = memory::data_type::undef;  // undef: no residual
  float scale = 1.0f;                                 // the copy's scale (1: real values)
  float from_scale = 1.0f;                            // ResidualData's own (1 for float32)
  bool via_float = false;
};
Int8Residual PlanResidual(const Tensor& residual, memory::data_type dst_type,
                          const tide::ops::Int8Scales& s);

// The primitive attributes of an int8 op: per-channel output scales along `channel_mask`, the
// residual's sum, the activation (Scale_out applied as the header says).
// `quantized`: Output is u8 / s8 (Scale_out applies), whatever the primitive's `dst_type`.
dnnl::primitive_attr Int8Attr(const tide::ops::Int8Scales& s, bool quantized,
                              memory::data_type dst_type, const std::vector<EltwiseAlgo>& act,
                              const Int8Residual& residual, int channel_mask);
// Adds an int8 op's scales, output type, activation and residual plan to a primitive cache key.
Key& AddInt8(Key& key, const tide::ops::Int8Scales& s, memory::data_type dst_type,
             const std::vector<EltwiseAlgo>& act, const Int8Residual& residual);

// The float32 weights `w` (viewed as `plain`) quantized to s8 in `want` (the primitive's format)
// by Scale_weights along `mask`: reordered once and kept in the place's ConvertedCache while w's
// bytes and the scales stay the same. `copy`, when given, gets the copy the result views.
memory QuantizedWeights(Exec& e, const Tensor& w, const memory& plain, const memory::desc& want,
                        const std::vector<float>& scales, int mask,
                        std::shared_ptr<ConvertedCopy>* copy = nullptr);

// Bias * Scale_in * Scale_weights[c] (what oneDNN adds to the accumulation), float32 [n], in a
// temporary seen as `md`.
memory ScaledBias(Exec& e, const Tensor& bias, const tide::ops::Int8Scales& s,
                  const memory::desc& md, const char* op);

}  // namespace tide_mkldnn
