// activation_kernels.cc: Fluid's activations (ops_math/activation_ops.cc) on oneDNN eltwise, with
// grads: relu, tanh, sigmoid, abs, exp, log, sqrt, square, reciprocal, rsqrt, leaky_relu, elu,
// relu6, brelu, swish, silu, gelu, logsigmoid, softplus, pow, hard_swish. Each op maps its
// attributes to a oneDNN 2.6 algorithm whose formula is the op's (checked against oneDNN's eltwise
// documentation and by tests/cpp/mkldnn/eltwise_test.cc); one generic kernel pair
// (eltwise_kernels.cc) runs them all. A grad reads what the Tide grad op receives (X or Out, per
// the activation's kDep). FusedActivationChain gives fused_conv2d's post-ops the same algorithms
// for Paddle's fused activations (fuse_alpha / fuse_beta), with hard_sigmoid as linear then clip.
//
// hard_swish runs oneDNN's hardswish, which is fixed to Fluid's defaults (threshold = scale = 6,
// offset = 3): other values are declined, so the plain kernel runs them; so are plain X (forward)
// and small X (grad).
//
// Left to the plain kernels, as no 2.6 algorithm computes Fluid's result:
// - round: oneDNN rounds halves to even (nearbyint), Fluid away from zero.
// - hard_sigmoid, stanh, soft_relu (threshold): need linear / clip around the function, a chain
//   of post-ops; thresholded_relu, hard_shrink, softshrink, softsign, tanh_shrink, ceil, floor,
//   acos, asin, atan, cos, sin: no algorithm.
#include <tide/ops/activation.hpp>
#include <utility>

#include "eltwise.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;

// An op's algorithm from its attributes.
using Map = EltwiseAlgo (*)(const KernelContext&);

template <Map kMap>
void Forward(KernelContext& ctx) {
  EltwiseForward(ctx, kMap(ctx));
}
template <Map kMap>
void GradFromX(KernelContext& ctx) {
  EltwiseBackward(ctx, kMap(ctx), "X");
}
template <Map kMap>
void GradFromOut(KernelContext& ctx) {
  EltwiseBackward(ctx, kMap(ctx), "Out");
}

// An algorithm without parameters.
template <algorithm kAlgo>
EltwiseAlgo Fixed(const KernelContext&) {
  return {kAlgo};
}

float F(const KernelContext& ctx, const char* attr) { return ctx.Attr<float>(attr); }

// relu's alpha is the slope for X <= 0.
EltwiseAlgo LeakyRelu(const KernelContext& c) { return {algorithm::eltwise_relu, F(c, "alpha")}; }
EltwiseAlgo Elu(const KernelContext& c) { return {algorithm::eltwise_elu, F(c, "alpha")}; }
// swish: X / (1 + exp(-alpha X)).
EltwiseAlgo Swish(const KernelContext& c) { return {algorithm::eltwise_swish, F(c, "beta")}; }
// silu (Paddle 2.x's F.silu, LLaMA's SwiGLU): swish at alpha 1, X sigmoid(X). The plain kernel's
// scalar exp per element took 0.45 ms for a [128, 2816] gate, oneDNN's jit kernel ~0.05.
EltwiseAlgo Silu(const KernelContext&) { return {algorithm::eltwise_swish, 1.0f}; }
// pow: alpha * X^beta; with an integer beta a negative X gives std::pow's value, else NaN as
// std::pow.
EltwiseAlgo Pow(const KernelContext& c) {
  return {algorithm::eltwise_pow, 1.0f, tide::ops::PowFactor(c)};  // FactorTensor over factor
}
EltwiseAlgo Reciprocal(const KernelContext&) { return {algorithm::eltwise_pow, 1.0f, -1.0f}; }
EltwiseAlgo Rsqrt(const KernelContext&) { return {algorithm::eltwise_pow, 1.0f, -0.5f}; }
// Their grads read Out: pow's backward taken at Out, dX = dOut * alpha * beta * Out^(beta - 1),
// gives -dOut * Out^2 (alpha = -1/3, beta = 3) and -0.5 dOut * Out^3 (alpha = -1/8, beta = 4).
EltwiseAlgo ReciprocalGrad(const KernelContext&) {
  return {algorithm::eltwise_pow, -1.0f / 3.0f, 3.0f};
}
EltwiseAlgo RsqrtGrad(const KernelContext&) { return {algorithm::eltwise_pow, -0.125f, 4.0f}; }
// softplus with Paddle's defaults (beta 1, threshold 20; above it oneDNN's log(1 + exp(X)) is X
// to float precision); other values are declined (the plain kernel has them).
EltwiseAlgo Softplus(const KernelContext& c) {
  const float beta = F(c, "beta"), threshold = F(c, "threshold");
  if (beta != 1.0f || threshold != 20.0f)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", c.op_type(), "' (oneDNN kernel): beta ", beta,
               ", threshold ", threshold, " are not oneDNN soft_relu's 1, 20");
  return {algorithm::eltwise_soft_relu};
}
EltwiseAlgo Gelu(const KernelContext& c) {
  return {c.Attr<bool>("approximate") ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf};
}

// min(max(X, lo), hi): clip_v2 (its bounds are exclusive in the gradient, as Fluid's). oneDNN
// refuses hi < lo, where Fluid's value is hi everywhere and its gradient 0: a linear 0 * X + hi.
EltwiseAlgo Clip(float lo, float hi, algorithm clip) {
  if (hi < lo) return {algorithm::eltwise_linear, 0.0f, hi};
  return {clip, lo, hi};
}
EltwiseAlgo ClipGrad(float lo, float hi, algorithm clip) {
  if (hi < lo) return {algorithm::eltwise_linear, 0.0f, 0.0f};
  return {clip, lo, hi};
}
EltwiseAlgo BRelu(const KernelContext& c) {
  return Clip(F(c, "t_min"), F(c, "t_max"), algorithm::eltwise_clip_v2);
}
EltwiseAlgo BReluGrad(const KernelContext& c) {  // from X
  return ClipGrad(F(c, "t_min"), F(c, "t_max"), algorithm::eltwise_clip_v2);
}
EltwiseAlgo Relu6(const KernelContext& c) {
  return Clip(0.0f, F(c, "threshold"), algorithm::eltwise_clip_v2);
}
EltwiseAlgo Relu6Grad(const KernelContext& c) {  // from Out: 0 < Out < threshold
  return ClipGrad(0.0f, F(c, "threshold"), algorithm::eltwise_clip_v2_use_dst_for_bwd);
}

// X * min(max(X + 3, 0), 6) / 6, and its grad from X; other attribute values are declined. Speed
// (README.md, "Speed"): on plain X the plain forward is as fast at every size, so the forward
// runs only on blocked X (a oneDNN conv's output, which the plain kernel would have to reorder);
// the grad is faster from 16384 elements.
constexpr int64_t kHardSwishGradMinElements = 16384;

EltwiseAlgo HardSwish(const KernelContext& c) {
  const float t = F(c, "threshold"), s = F(c, "scale"), o = F(c, "offset");
  if (t != 6.0f || s != 6.0f || o != 3.0f)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", c.op_type(), "' (oneDNN kernel): threshold ", t,
               ", scale ", s, ", offset ", o, " are not oneDNN 2.6 hardswish's fixed 6, 6, 3");
  return {algorithm::eltwise_hardswish};
}
EltwiseAlgo HardSwishOnBlocked(const KernelContext& c) {
  const EltwiseAlgo a = HardSwish(c);
  if (!IsBlocked(c.Input("X")))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", c.op_type(),
               "' (oneDNN kernel): X is plain data, which the plain kernel runs as fast");
  return a;
}
EltwiseAlgo HardSwishGrad(const KernelContext& c) {
  const EltwiseAlgo a = HardSwish(c);
  const int64_t n = c.Input("X").numel();
  if (n < kHardSwishGradMinElements)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", c.op_type(), "' (oneDNN kernel): X has ", n,
               " elements, fewer than ", kHardSwishGradMinElements,
               " (the plain kernel runs it faster)");
  return a;
}

struct Entry {
  const char* op;
  tide::KernelFn fwd, grad;
  bool bf16 = false;  // registered for bfloat16 too (issue 32: the activations AMP runs low)
};

// oneDNN 2.6's soft_relu is log(1 + exp(X)) (its alpha is ignored) and logsigmoid
// -log(1 + exp(-X)): near 0 they are off by up to ~8e-6 absolute (where Fluid's value is below
// that), as float32 arithmetic on 1 + exp(X) is.
const Entry kEntries[] = {
    {"relu", &Forward<Fixed<algorithm::eltwise_relu>>,
     &GradFromOut<Fixed<algorithm::eltwise_relu_use_dst_for_bwd>>, true},
    {"tanh", &Forward<Fixed<algorithm::eltwise_tanh>>,
     &GradFromOut<Fixed<algorithm::eltwise_tanh_use_dst_for_bwd>>, true},
    {"sigmoid", &Forward<Fixed<algorithm::eltwise_logistic>>,
     &GradFromOut<Fixed<algorithm::eltwise_logistic_use_dst_for_bwd>>, true},
    {"exp", &Forward<Fixed<algorithm::eltwise_exp>>,
     &GradFromOut<Fixed<algorithm::eltwise_exp_use_dst_for_bwd>>},
    {"sqrt", &Forward<Fixed<algorithm::eltwise_sqrt>>,
     &GradFromOut<Fixed<algorithm::eltwise_sqrt_use_dst_for_bwd>>},
    {"abs", &Forward<Fixed<algorithm::eltwise_abs>>, &GradFromX<Fixed<algorithm::eltwise_abs>>},
    {"log", &Forward<Fixed<algorithm::eltwise_log>>, &GradFromX<Fixed<algorithm::eltwise_log>>},
    {"square", &Forward<Fixed<algorithm::eltwise_square>>,
     &GradFromX<Fixed<algorithm::eltwise_square>>},
    {"softplus", &Forward<Softplus>, &GradFromX<Softplus>},
    {"logsigmoid", &Forward<Fixed<algorithm::eltwise_logsigmoid>>,
     &GradFromX<Fixed<algorithm::eltwise_logsigmoid>>},
    {"reciprocal", &Forward<Reciprocal>, &GradFromOut<ReciprocalGrad>},
    {"rsqrt", &Forward<Rsqrt>, &GradFromOut<RsqrtGrad>},
    {"leaky_relu", &Forward<LeakyRelu>, &GradFromX<LeakyRelu>},
    {"elu", &Forward<Elu>, &GradFromX<Elu>},
    {"swish", &Forward<Swish>, &GradFromX<Swish>},
    {"silu", &Forward<Silu>, &GradFromX<Silu>, true},
    {"pow", &Forward<Pow>, &GradFromX<Pow>},
    {"gelu", &Forward<Gelu>, &GradFromX<Gelu>, true},
    {"brelu", &Forward<BRelu>, &GradFromX<BReluGrad>},
    {"relu6", &Forward<Relu6>, &GradFromOut<Relu6Grad>},
    {"hard_swish", &Forward<HardSwishOnBlocked>, &GradFromX<HardSwishGrad>},
};

}  // namespace

// The same algorithms for Paddle's fused activations, from fuse_alpha / fuse_beta.
bool FusedActivationChain(const std::string& name, float alpha, float beta,
                          std::vector<EltwiseAlgo>* chain, std::string* why) {
  chain->clear();
  auto one = [&](EltwiseAlgo a) {
    chain->push_back(a);
    return true;
  };
  if (name.empty() || name == "identity") return true;
  if (name == "relu" || name == "leaky_relu") return one({algorithm::eltwise_relu, alpha});
  if (name == "relu6" || name == "clip") {
    if (name == "relu6" && beta == 0 && alpha > 0) std::swap(alpha, beta);  // Paddle < oneDNN 3
    return one(Clip(alpha, beta, algorithm::eltwise_clip_v2));
  }
  if (name == "swish") return one({algorithm::eltwise_swish, alpha});
  if (name == "hard_sigmoid") {  // min(max(alpha X + beta, 0), 1)
    chain->push_back({algorithm::eltwise_linear, alpha, beta});
    return one(Clip(0.0f, 1.0f, algorithm::eltwise_clip_v2));
  }
  if (name == "hard_swish") {
    if (alpha == 0 && beta == 0) return one({algorithm::eltwise_hardswish});  // Paddle's older
    if (alpha == 1.0f / 6 && beta == 0.5f) return one({algorithm::eltwise_hardswish});
    *why =
        "oneDNN 2.6's hardswish is fixed to X min(max(X / 6 + 1 / 2, 0), 1) (fuse_alpha = "
        "1/6, fuse_beta = 1/2)";
    return false;
  }
  if (name == "sigmoid") return one({algorithm::eltwise_logistic});
  if (name == "tanh") return one({algorithm::eltwise_tanh});
  if (name == "abs") return one({algorithm::eltwise_abs});
  if (name == "sqrt") return one({algorithm::eltwise_sqrt});
  if (name == "mish") return one({algorithm::eltwise_mish});
  if (name == "gelu" || name == "gelu_erf") return one({algorithm::eltwise_gelu_erf});
  if (name == "gelu_tanh") return one({algorithm::eltwise_gelu_tanh});
  *why = "not one of Paddle's fused activations";
  return false;
}

}  // namespace tide_mkldnn

TIDE_ON_REGISTER([](tide::Registrar& r) {
  using namespace tide_mkldnn;  // NOLINT
  for (const Entry& e : kEntries) {
    for (TideDataType t : {TIDE_FP32, TIDE_BF16}) {
      if (t == TIDE_BF16 && !e.bf16) continue;  // the kernels decline without bf16 jit kernels
      r.Kernel(e.op, "cpu", t, e.fwd, TIDE_LAYOUT_ONEDNN, "mkldnn");
      r.Kernel(std::string(e.op) + "_grad", "cpu", t, e.grad, TIDE_LAYOUT_ONEDNN, "mkldnn");
    }
  }
});
