// conv_common.h: what the float32 / bfloat16 convolutions (conv_kernels.cc) and the int8 one
// (int8_kernels.cc) share: the geometry of tide/ops/conv.hpp in oneDNN's terms, the filter's plain
// descriptor and fused_conv2d's fusions.
#pragma once

#include <string>
#include <tide/ops/conv.hpp>
#include <vector>

#include "eltwise.h"
#include "mkldnn_context.h"

namespace tide_mkldnn {

// The geometry of tide/ops/conv.hpp in oneDNN's terms.
struct ConvParams {
  bool nhwc = false;  // Input/Output are [N, H, W, C]; x and out below are their NCHW dims
  memory::data_type dt = memory::data_type::f32;  // Input's, Filter's and Output's
  Dims x, f, out;
  int64_t groups;
  memory::dims src, weights, dst;  // oneDNN dims (weights grouped when groups > 1)
  memory::dims d_strides, d_dils, pad_l, pad_r;
};

inline ConvParams GetParams(const KernelContext& ctx, const Tensor& x, const Tensor& f) {
  ConvParams p;
  p.nhwc = DataFormatNhwc(ctx);
  p.dt = ToDnnlType(x.dtype());
  const Dims xd = x.dims();
  p.x = p.nhwc && xd.size() == 4 ? Dims{xd[0], xd[3], xd[1], xd[2]} : xd;
  p.f = f.dims();
  const tide::ops::ConvGeom g = tide::ops::GetConvGeom(ctx, ctx.op_type(), p.x, p.f);
  p.out = g.out_dims();
  p.groups = g.groups;
  p.src = ToDnnlDims(p.x);
  p.dst = ToDnnlDims(p.out);
  if (p.groups > 1)
    p.weights = {p.groups, p.f[0] / p.groups, p.f[1], p.f[2], p.f[3]};
  else
    p.weights = ToDnnlDims(p.f);
  p.d_strides = {g.sh, g.sw};
  p.d_dils = {g.dh - 1, g.dw - 1};  // oneDNN counts the gaps
  p.pad_l = {g.ph, g.pw};
  p.pad_r = {g.ph_end, g.pw_end};  // oneDNN's floor-division check matches Fluid's output size
  return p;
}

// [N, C, H, W] -> [N, H, W, C]: the Tide dims of an NHWC tensor.
inline Dims Nhwc(const Dims& d) { return {d[0], d[2], d[3], d[1]}; }

// The filter's plain descriptor in oneDNN's terms (oihw, or goihw over the same bytes) in type
// `dt`.
inline memory::desc UserWeightsDesc(const ConvParams& p, memory::data_type dt) {
  return memory::desc(p.weights, dt, p.groups > 1 ? Tag::goihw : Tag::oihw);
}

// fused_conv2d's fusions (plugins/ops_nn/conv_op.cc has the plain kernel and the checks).
struct Fusion {
  bool fused = false;            // the op is fused_conv2d
  std::vector<EltwiseAlgo> act;  // the activation's post-ops (none: empty)
  Tensor bias, residual;         // empty when absent
};

inline Fusion GetFusion(const KernelContext& ctx) {
  Fusion fu;
  const char* op = ctx.op_type();
  if (std::string(op) != "fused_conv2d") return fu;
  fu.fused = true;
  std::string act = ctx.Attr<std::string>("fuse_activation");
  if ((act.empty() || act == "identity") && ctx.Attr<bool>("fuse_relu")) act = "relu";
  const float alpha = ctx.Attr<float>("fuse_alpha"), beta = ctx.Attr<float>("fuse_beta");
  std::string why;
  if (!FusedActivationChain(act, alpha, beta, &fu.act, &why))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): fuse_activation '", act,
               "' with fuse_alpha = ", alpha, ", fuse_beta = ", beta, ": ", why,
               "; run it without use_mkldnn (the plain kernel computes it)");
  if (ctx.HasInput("Bias")) fu.bias = ctx.Input("Bias");
  if (ctx.Attr<bool>("fuse_residual_connection")) fu.residual = ctx.Input("ResidualData");
  return fu;
}

}  // namespace tide_mkldnn
