// tide/kernels/conv.hpp: the plain CPU kernel of conv2d, depthwise_conv2d and fused_conv2d
// (NCHW or Paddle 2.x's NHWC data_format, strides, paddings, padding_algorithm, dilations,
// groups; geometry from tide/ops/conv.hpp): float32 NCHW with one group by Winograd's
// F(2x2, 3x3) for 3x3 stride-1 filters (conv_winograd.hpp) or the direct kernel (conv_direct.hpp;
// both AVX-512 or AVX2 by the CPU at run time) where they are faster, the rest by im2col + GEMM
// (conv_gemm.hpp); fused_conv2d's epilogue (Paddle's oneDNN fusion op: Output =
// act(conv + Bias + ResidualData)) applied as the output is stored. Header-only: ops_nn registers
// it for the three ops, and a compiled model (tide.aot.compile) calls it directly
// (tide/kernels/registry.hpp; the GEMM built as the pack builds it, as for mul).
#ifndef TIDE_KERNELS_CONV_HPP_
#define TIDE_KERNELS_CONV_HPP_

#include <algorithm>
#include <cstdint>
#include <string>
#include <tide/eigen.hpp>
#include <tide/kernels/conv_direct.hpp>
#include <tide/kernels/conv_gemm.hpp>
#include <tide/kernels/conv_winograd.hpp>
#include <tide/kernels/fused_activation.hpp>
#include <tide/kernels/layout.hpp>
#include <tide/ops/conv.hpp>
#include <tide/plugin.hpp>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tide {
namespace kernels {

// fused_conv2d's epilogue (Paddle's semantics): Output = act(conv + Bias + ResidualData).
// Output may be ResidualData's own variable (InferenceTranspiler's in-place residual).
struct ConvFusion {
  FusedActParams
      act;  // fuse_activation with fuse_alpha / fuse_beta (tide/kernels/fused_activation.hpp)
  Tensor bias, residual;  // empty when absent
};

inline ConvFusion GetConvFusion(const KernelContext& ctx) {
  ConvFusion fu;
  if (std::string(ctx.op_type()) != "fused_conv2d") return fu;
  fu.act = GetFusedAct(ctx);
  if (ctx.HasInput("Bias")) fu.bias = ctx.Input("Bias");
  if (ctx.Attr<bool>("fuse_residual_connection")) fu.residual = ctx.Input("ResidualData");
  return fu;
}

// Bias's and ResidualData's values (null where absent), checked against the conv; ResidualData
// as NCHW.
template <typename T>
std::pair<const T*, const T*> ConvFusionOperands(const KernelContext& ctx, const ConvFusion& fu,
                                                 const ops::ConvGeom& g, bool nhwc) {
  const char* op = ctx.op_type();
  const T* b = nullptr;
  const T* r = nullptr;
  if (fu.bias) {
    TIDE_CHECK(fu.bias.numel() == g.m, "op '", op, "': Bias must hold M = ", g.m,
               " values, got dims ", ToString(fu.bias.dims()));
    b = fu.bias.data<T>();
  }
  if (fu.residual) {
    const Dims want = nhwc ? NchwToNhwcDims(g.out_dims()) : g.out_dims();
    TIDE_CHECK(fu.residual.dims() == want, "op '", op, "': ResidualData must have Output's dims ",
               ToString(want), ", got ", ToString(fu.residual.dims()));
    r = AsNchw<T>(ctx, fu.residual, nhwc);
  }
  return {b, r};
}

// Channels [m0, m1) at positions [p0, p1) of od's image n (NCHW) = act(od + Bias +
// ResidualData), with ConvFusionOperands' b and r.
template <typename T>
void ApplyConvFusion(const ops::ConvGeom& g, const FusedActParams& act, const T* b, const T* r,
                     T* od, int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  const int64_t ohw = g.oh * g.ow;
  if constexpr (std::is_same_v<T, float>) {
    // float with relu or none: the CPU's vector rows (the pointwise GEMMs' epilogue, per tile).
    const DirectConvIsa* isa = DirectConvForCpu();
    const bool relu = act.IsRelu();
    if (isa && (relu || act.act == FusedAct::kNone)) {
      for (int64_t m = m0; m < m1; ++m) {
        const int64_t at = (n * g.m + m) * ohw + p0;
        isa->epilogue_row(od + at, r ? r + at : nullptr, p1 - p0, b ? b[m] : 0.0f, relu);
      }
      return;
    }
  }
  WithFusedAct(act, [&](const auto& f) {
    for (int64_t m = m0; m < m1; ++m) {
      T* o = od + (n * g.m + m) * ohw;
      const T* rr = r ? r + (n * g.m + m) * ohw : nullptr;
      const T bm = b ? b[m] : T(0);
      for (int64_t i = p0; i < p1; ++i) {
        T v = o[i] + bm;
        if (rr) v += rr[i];
        o[i] = f.template Fwd<T>(v);
      }
    }
  });
}

// The direct kernel (tide/kernels/conv_direct.hpp), or for 3x3 stride-1 filters Winograd's
// F(2x2, 3x3) (conv_winograd.hpp), for float32 NCHW with one group, with Bias, ResidualData and
// relu applied as it stores (any other activation after, as ApplyConvFusion does). False where
// neither runs.
template <typename T>
bool ConvDirectRuns(const ops::ConvGeom& g) {
  if constexpr (!std::is_same_v<T, float>) return false;
  return DirectConvForCpu() && (WinogradFits(g) || DirectConvFits(g));
}

template <typename T>
bool ConvDirectIfFits(KernelContext& ctx, const ops::ConvGeom& g, const ConvFusion& fu,
                      const Tensor& x, const Tensor& f, Tensor& out) {
  if (!ConvDirectRuns<T>(g)) return false;
  const DirectConvIsa* isa = DirectConvForCpu();
  const bool winograd = WinogradFits(g);
  const char* op = ctx.op_type();
  const float* b = nullptr;
  const float* r = nullptr;
  std::tie(b, r) = ConvFusionOperands<float>(ctx, fu, g, false);
  // In place (ResidualData is Output's variable): the kernel reads each value before it writes
  // it.
  const bool in_place = r && r == out.raw_data();
  const bool relu = fu.act.IsRelu();
  const float* filter = winograd ? WinogradFilterFor(ctx, g, f) : PackedFilterFor(ctx, *isa, g, f);
  float* od = out.mutable_data<float>(g.out_dims(), ctx.place());
  TIDE_CHECK(!in_place || od == r, "op '", op,
             "': Output, ResidualData's variable, moved when it was written");
  if (winograd)
    ConvForwardWinograd(ctx, *isa, g, x.data<float>(), filter, b, r, relu, od);
  else
    ConvForwardDirect(ctx, *isa, g, x.data<float>(), filter, b, r, relu, od);
  if (!relu && fu.act.act != FusedAct::kNone)
    WithFusedAct(fu.act, [&](const auto& act) {
      ParallelFor(ctx, out.numel(), 8, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) od[i] = act.template Fwd<float>(od[i]);
      });
    });
  return true;
}

template <typename T>
void Conv2d(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), f = ctx.Input("Filter"), out = ctx.Output("Output");
  const bool nhwc = ChannelLast(ctx);
  ops::ConvGeom g = ops::GetConvGeom(ctx, op, nhwc ? NhwcToNchwDims(x.dims()) : x.dims(), f.dims());
  ConvFusion fusion = GetConvFusion(ctx);
  if (!nhwc && ConvDirectIfFits<T>(ctx, g, fusion, x, f, out)) return;
  const T* b = nullptr;
  const T* r = nullptr;
  std::tie(b, r) = ConvFusionOperands<T>(ctx, fusion, g, nhwc);
  T* od = NchwOutput<T>(ctx, out, g.out_dims(), nhwc);
  // The GEMMs add the conv to the residual in od (beta 1) and the epilogue adds Bias: one
  // rounding, (conv + ResidualData) + Bias, whether ResidualData is Output's own variable
  // (InferenceTranspiler's in place: nothing to copy) or apart (a compiled model, whose plan
  // tables do not carry the op's in-place pairs, gets it apart), so both agree bit for bit.
  const bool accumulate = r != nullptr;
  if (accumulate && r != od) {
    const int64_t numel = fusion.residual.numel();
    ParallelFor(ctx, numel, 1, [&](int64_t i0, int64_t i1) { std::copy(r + i0, r + i1, od + i0); });
  }
  if (accumulate) r = nullptr;
  const bool epilogue = b || fusion.act.act != FusedAct::kNone;
  const T* xd = AsNchw<T>(ctx, x, nhwc);
  const T* fd = f.data<T>();
  // The epilogue on each chunk's images as they are done (in cache, on the chunk's thread).
  ConvForwardNchw<T>(ctx, g, xd, fd, od, accumulate,
                     [&](int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
                       if (epilogue) ApplyConvFusion<T>(g, fusion.act, b, r, od, n, m0, m1, p0, p1);
                     });
  StoreNhwc(ctx, od, out, g.out_dims(), nhwc);
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_CONV_HPP_
