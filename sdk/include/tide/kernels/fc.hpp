// tide/kernels/fc.hpp: the plain CPU kernel of Paddle's fc (Out = act(Input [M, K] @ W [K, N] +
// Bias), Input flattened at in_num_col_dims, tide/ops/fc.hpp; act: activation_type or
// fuse_activation with fuse_alpha / fuse_beta, tide/kernels/fused_activation.hpp): one GEMM
// (tide/gemm.hpp), then the bias and activation in one pass over Out. Header-only: ops_nn
// registers it, and a compiled model (tide.aot.compile) calls it directly
// (tide/kernels/registry.hpp; the GEMM built as the pack builds it, as for mul).
#ifndef TIDE_KERNELS_FC_HPP_
#define TIDE_KERNELS_FC_HPP_

#include <cstdint>
#include <string>
#include <tide/eigen.hpp>
#include <tide/gemm.hpp>
#include <tide/kernels/fused_activation.hpp>
#include <tide/ops/fc.hpp>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// fuse_activation when set, else activation_type.
inline FusedActParams FcActivation(const KernelContext& ctx) {
  const std::string fused = ctx.Attr<std::string>("fuse_activation");
  if (!fused.empty())
    return FusedActOf(fused, ctx.Attr<float>("fuse_alpha"), ctx.Attr<float>("fuse_beta"));
  return FusedActOf(ctx.Attr<std::string>("activation_type"), 0.0f, 0.0f);
}

template <typename T>
void Fc(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("Input"), w = ctx.Input("W");
  const ops::FcShape s =
      ops::GetFcShape(op, x.dims(), w.dims(), ctx.Attr<int32_t>("in_num_col_dims"));
  const T* bias = nullptr;
  if (ctx.HasInput("Bias")) {
    Tensor b = ctx.Input("Bias");
    ops::CheckFcBias(op, b.dims(), s.n);
    bias = b.data<T>();
  }
  T* out = ctx.Output("Out").mutable_data<T>(s.out, ctx.place());
  Gemm<T>(ctx, false, false, s.m, s.n, s.k, T(1), x.data<T>(), w.data<T>(), T(0), out);
  const FusedActParams act = FcActivation(ctx);
  if (!bias && act.act == FusedAct::kNone) return;
  WithFusedAct(act, [&](const auto& f) {
    ParallelFor(ctx, s.m, s.n * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        T* o = out + r * s.n;
        for (int64_t j = 0; j < s.n; ++j) o[j] = f.Fwd(o[j] + (bias ? bias[j] : T(0)));
      }
    });
  });
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_FC_HPP_
