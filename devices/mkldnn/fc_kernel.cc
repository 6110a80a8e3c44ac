// fc_kernel.cc: Paddle's fc (plugins/ops_nn/fc_op.cc) on a oneDNN matmul primitive: Input
// flattened to [M, K] (tide/ops/fc.hpp) times W [K, N], the bias and the activation
// (fuse_activation, else activation_type; eltwise.h's FusedActivationChain, as fused_conv2d) as
// the primitive's bias and eltwise post-ops, so Out is written once. W is reordered once into the
// format the primitive picks and kept until its bytes change (ConvertedCache); Input and Out are
// plain. Activations no oneDNN 2.6 chain computes are declined (the plain kernel runs them).
// A float32 fc of at most tide/gemm_skinny.hpp's rows (a decode step's tokens) runs the plain
// kernel's code here (tide/kernels/fc.hpp): the skinny GEMM reads W once as saved (a LLaMA decode
// step at batch 1: 13.8 ms, against 15.2 on the primitive's packed W; at batch 4 about even),
// and a program whose row count varies (prefill, then decode) keeps this kernel for its long
// runs (a decline would be for good).
// In bfloat16 Input and Out are bfloat16 and W and Bias float32 (the op declares them
// AsFloat32Param, as Paddle's bf16 fc): W is reordered into bfloat16 once, with its blocking, and
// the bias is added in float32 (oneDNN accumulates in float32); with force_fp32_output Out is
// float32 (bf16 inference's fc writing a fetched value, as Paddle's cpu_bfloat16_pass).
#include <string>
#include <tide/gemm_skinny.hpp>
#include <tide/kernels/fc.hpp>
#include <tide/ops/fc.hpp>

#include "eltwise.h"
#include "int8.h"
#include "plain_as.h"

namespace tide_mkldnn {
namespace {

struct FcPrim {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
};

std::vector<EltwiseAlgo> Activation(const KernelContext& ctx) {
  const char* op = ctx.op_type();
  std::string act = ctx.Attr<std::string>("fuse_activation");
  float alpha = ctx.Attr<float>("fuse_alpha"), beta = ctx.Attr<float>("fuse_beta");
  if (act.empty()) {
    act = ctx.Attr<std::string>("activation_type");
    alpha = beta = 0.0f;
  }
  std::vector<EltwiseAlgo> chain;
  std::string why;
  if (!FusedActivationChain(act, alpha, beta, &chain, &why))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): activation '", act, "': ", why,
               " (the plain kernel computes it)");
  return chain;
}

template <typename T>
void FcKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("Input"), w = ctx.Input("W");
    const tide::ops::FcShape s =
        tide::ops::GetFcShape(op, x.dims(), w.dims(), ctx.Attr<int32_t>("in_num_col_dims"));
    if constexpr (std::is_same_v<T, float>)  // it checks Bias and reads the activation itself
      if (s.m <= tide::skinny::kMaxRows) return tide::kernels::Fc<float>(ctx);
    const bool bias = ctx.HasInput("Bias");
    if (bias) tide::ops::CheckFcBias(op, ctx.Input("Bias").dims(), s.n);
    const std::vector<EltwiseAlgo> act = Activation(ctx);
    Exec e(ctx);
    Key key(op);
    constexpr auto dt = DnnlTypeOf<T>();
    // bfloat16 with force_fp32_output: Out float32, oneDNN's float32 sums written as they are.
    const bool fp32_out = !std::is_same_v<T, float> && ctx.Attr<bool>("force_fp32_output");
    const auto out_dt = fp32_out ? memory::data_type::f32 : dt;
    key(s.m)(s.k)(s.n)(int64_t(bias))(int64_t(act.size()))(int64_t(dt))(int64_t(out_dt));
    for (const EltwiseAlgo& a : act) AddAlgo(key, a);
    const memory::desc src_md({s.m, s.k}, dt, Tag::ab), dst_md({s.m, s.n}, out_dt, Tag::ab);
    const memory::desc w_md({s.k, s.n}, ToDnnlType(w.dtype()), Tag::ab);
    const memory::desc b_md({1, s.n}, memory::data_type::f32, Tag::ab);
    auto entry = e.cache().GetOrCreate<FcPrim>(key.str(), [&] {
      dnnl::primitive_attr attr = DefaultAttr();
      dnnl::post_ops ops;
      for (const EltwiseAlgo& a : act) ops.append_eltwise(1.0f, a.algo, a.alpha, a.beta);
      attr.set_post_ops(ops);
      const memory::desc any_w({s.k, s.n}, dt, Tag::any);
      auto d = bias ? dnnl::matmul::desc(src_md, any_w, b_md, dst_md)
                    : dnnl::matmul::desc(src_md, any_w, dst_md);
      dnnl::matmul::primitive_desc pd(d, attr, e.engine());
      return FcPrim{pd, dnnl::matmul(pd)};
    });
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = PlainInputAs(e, x, src_md, op, "Input");
    args[DNNL_ARG_WEIGHTS] =
        e.ConvertKept(w, PlainInputAs(e, w, w_md, op, "W"), entry->pd.weights_desc());
    if (bias) args[DNNL_ARG_BIAS] = PlainInputAs(e, ctx.Input("Bias"), b_md, op, "Bias");
    Tensor out = ctx.Output("Out");
    args[DNNL_ARG_DST] = PlainOutputAs(e, out, s.out, dst_md, ctx.place());
    e.Run(entry->prim, entry->pd, std::move(args));
    e.Wait();
  });
}

// int8 (tide/ops/int8.hpp, int8.h): u8 / s8 Input [M, K], W quantized to s8 per column (kept),
// the scaled bias, Scale_out and the activation in the attributes; Out u8 / s8 / float32, plain.
void Int8FcKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("Input"), w = ctx.Input("W");
    DeclineEmpty(op, {&x, &w});
    const tide::ops::FcShape s =
        tide::ops::GetFcShape(op, x.dims(), w.dims(), ctx.Attr<int32_t>("in_num_col_dims"));
    TIDE_CHECK(w.dtype() == TIDE_FP32, "op '", op, "' (int8): W must be float32, got ",
               tide::DataTypeName(w.dtype()));
    const bool bias = ctx.HasInput("Bias");
    if (bias) tide::ops::CheckFcBias(op, ctx.Input("Bias").dims(), s.n);
    const std::vector<EltwiseAlgo> act = Activation(ctx);
    const tide::ops::Int8Scales sc = tide::ops::GetInt8Scales(ctx, op, s.n);
    const memory::data_type dst_type = ToDnnlType(tide::ops::Int8OutputTypeOf(ctx));
    const memory::data_type src_type = ToDnnlType(x.dtype());
    const Int8Residual none;
    Key key("fc int8");
    key(s.m)(s.k)(s.n)(int64_t(bias))(int64_t(src_type));
    AddInt8(key, sc, dst_type, act, none);
    Exec e(ctx);
    const memory::desc src_md({s.m, s.k}, src_type, Tag::ab), dst_md({s.m, s.n}, dst_type, Tag::ab);
    const memory::desc w_md({s.k, s.n}, memory::data_type::f32, Tag::ab);
    const memory::desc b_md({1, s.n}, memory::data_type::f32, Tag::ab);
    auto entry = e.cache().GetOrCreate<FcPrim>(key.str(), [&] {
      const memory::desc any_w({s.k, s.n}, memory::data_type::s8, Tag::any);
      auto d = bias ? dnnl::matmul::desc(src_md, any_w, b_md, dst_md)
                    : dnnl::matmul::desc(src_md, any_w, dst_md);
      dnnl::matmul::primitive_desc pd(
          d, Int8Attr(sc, dst_type != memory::data_type::f32, dst_type, act, none, 1 << 1),
          e.engine());
      return FcPrim{pd, dnnl::matmul(pd)};
    });
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = PlainInputAs(e, x, src_md, op, "Input");
    args[DNNL_ARG_WEIGHTS] = QuantizedWeights(e, w, PlainInputAs(e, w, w_md, op, "W"),
                                              entry->pd.weights_desc(), sc.weights, 1 << 1);
    if (bias) args[DNNL_ARG_BIAS] = ScaledBias(e, ctx.Input("Bias"), sc, b_md, op);
    Tensor out = ctx.Output("Out");
    args[DNNL_ARG_DST] = PlainOutputAs(e, out, s.out, dst_md, ctx.place());
    e.Run(entry->prim, entry->pd, std::move(args));
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL_F32_BF16("fc", FcKernel);
TIDE_ON_REGISTER([](tide::Registrar& r) {
  for (TideDataType t : {TIDE_UINT8, TIDE_INT8})
    r.Kernel("fc", "cpu", t, &Int8FcKernel, TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
});
