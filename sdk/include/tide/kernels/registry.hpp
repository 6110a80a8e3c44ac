// tide/kernels/registry.hpp: the SDK's header-only plain CPU kernels, per op type and data type:
// the header that holds each and the function to call. tide.aot.compile reads it: a step of a
// frozen plan whose kernel is one of these (the CPU place's plain kernel of that data type, from
// the op pack named here) becomes, in the generated model.cc, a direct call of the function
// instead of a kernel resolved by its key through the plugin. The op pack registers the very same
// function (one copy of each kernel), so the results are the same bits.
//
// Plain C++ (no plugin.hpp): the core includes it. docs/aot.md says how to add a kernel.
#ifndef TIDE_KERNELS_REGISTRY_HPP_
#define TIDE_KERNELS_REGISTRY_HPP_

#include <tide/plugin_api.h>

#include <cstdint>
#include <cstring>

namespace tide {
namespace kernels {

// Data types as bits of DirectKernel::dtypes.
constexpr uint32_t DTypeBit(TideDataType t) { return uint32_t(1) << static_cast<uint32_t>(t); }
constexpr uint32_t kFloatTypes = DTypeBit(TIDE_FP32) | DTypeBit(TIDE_FP64);
constexpr uint32_t kNumericTypes = kFloatTypes | DTypeBit(TIDE_INT32) | DTypeBit(TIDE_INT64);

// What a kernel needs besides its header when a compiled model builds it (DirectKernel::needs).
// kNeedsGemm: tide/gemm.hpp, built as the op pack built it (oneDNN's sgemm for float32 where the
// pack used it: the generated source then defines TIDE_GEMM_WITH_DNNL and links oneDNN).
constexpr uint32_t kNeedsGemm = 1;

struct DirectKernel {
  const char* op_type;
  const char* plugin;    // the op pack that registers the same function for the CPU place
  const char* header;    // #include <header>
  const char* function;  // a function template; "{T}" stands for the data type's C++ type
  uint32_t dtypes;       // DTypeBit of each data type it has a kernel for
  uint32_t needs;        // kNeeds* bits
};

#define TIDE_KERNELS_ACT(op, functor)                                             \
  {                                                                               \
    op, "ops_math", "tide/kernels/activation.hpp",                                \
        "tide::kernels::Activation<{T}, tide::ops::" #functor ">", kFloatTypes, 0 \
  }
#define TIDE_KERNELS_ELEMENTWISE(op, fn)                                                          \
  {                                                                                               \
    op, "ops_math", "tide/kernels/elementwise.hpp", "tide::kernels::" #fn "<{T}>", kNumericTypes, \
        0                                                                                         \
  }
#define TIDE_KERNELS_VIEW(op, fn) \
  { op, "ops_nn", "tide/kernels/reshape.hpp", "tide::kernels::" #fn "<{T}>", kNumericTypes, 0 }
inline constexpr DirectKernel kDirectKernels[] = {
    {"mul", "ops_math", "tide/kernels/mul.hpp", "tide::kernels::Mul<{T}>", kFloatTypes, kNeedsGemm},
    {"fc", "ops_nn", "tide/kernels/fc.hpp", "tide::kernels::Fc<{T}>", kFloatTypes, kNeedsGemm},
    {"softmax", "ops_math", "tide/kernels/softmax.hpp", "tide::kernels::Softmax<{T}>", kFloatTypes,
     0},
    {"matmul_v2", "ops_math", "tide/kernels/matmul_v2.hpp", "tide::kernels::MatmulV2<{T}>",
     kFloatTypes, kNeedsGemm},
    // The normalisations over groups of X (tide/ops/norm.hpp): one kernel.
    {"layer_norm", "ops_nn", "tide/kernels/norm.hpp", "tide::kernels::Norm<{T}>", kFloatTypes, 0},
    {"group_norm", "ops_nn", "tide/kernels/norm.hpp", "tide::kernels::Norm<{T}>", kFloatTypes, 0},
    {"instance_norm", "ops_nn", "tide/kernels/norm.hpp", "tide::kernels::Norm<{T}>", kFloatTypes,
     0},
    // Convolutions: the GEMM of im2col, and the direct kernel (float32, AVX-512 / AVX2 picked by
    // the CPU at run time: the header builds both into any x86-64 file).
    {"conv2d", "ops_nn", "tide/kernels/conv.hpp", "tide::kernels::Conv2d<{T}>", kFloatTypes,
     kNeedsGemm},
    {"depthwise_conv2d", "ops_nn", "tide/kernels/conv.hpp", "tide::kernels::Conv2d<{T}>",
     kFloatTypes, kNeedsGemm},
    {"fused_conv2d", "ops_nn", "tide/kernels/conv.hpp", "tide::kernels::Conv2d<{T}>", kFloatTypes,
     kNeedsGemm},
    {"pool2d", "ops_nn", "tide/kernels/pool.hpp", "tide::kernels::Pool2d<{T}>", kFloatTypes, 0},
    {"batch_norm", "ops_nn", "tide/kernels/batch_norm.hpp", "tide::kernels::BatchNorm<{T}>",
     kFloatTypes, 0},
    // The view-like ops: X's data with other dims.
    TIDE_KERNELS_VIEW("reshape", Reshape),
    TIDE_KERNELS_VIEW("reshape2", Reshape),
    TIDE_KERNELS_VIEW("flatten", Flatten),
    TIDE_KERNELS_VIEW("flatten2", Flatten),
    TIDE_KERNELS_VIEW("flatten_contiguous_range", FlattenContiguousRange),
    TIDE_KERNELS_VIEW("squeeze2", Squeeze),
    TIDE_KERNELS_VIEW("unsqueeze2", Squeeze),
    // The data-moving ops.
    {"concat", "ops_nn", "tide/kernels/concat.hpp", "tide::kernels::Concat<{T}>", kNumericTypes, 0},
    {"transpose", "ops_nn", "tide/kernels/transpose.hpp", "tide::kernels::Transpose<{T}>",
     kNumericTypes, 0},
    {"transpose2", "ops_nn", "tide/kernels/transpose.hpp", "tide::kernels::Transpose<{T}>",
     kNumericTypes, 0},
    {"scale", "ops_math", "tide/kernels/scale.hpp", "tide::kernels::Scale<{T}>", kNumericTypes, 0},
    TIDE_KERNELS_ELEMENTWISE("elementwise_add", ElementwiseAdd),
    TIDE_KERNELS_ELEMENTWISE("elementwise_sub", ElementwiseSub),
    TIDE_KERNELS_ELEMENTWISE("elementwise_mul", ElementwiseMul),
    TIDE_KERNELS_ELEMENTWISE("elementwise_div", ElementwiseDiv),
    TIDE_KERNELS_ELEMENTWISE("elementwise_max", ElementwiseMax),
    TIDE_KERNELS_ELEMENTWISE("elementwise_min", ElementwiseMin),
    TIDE_KERNELS_ELEMENTWISE("elementwise_pow", ElementwisePow),
    TIDE_KERNELS_ELEMENTWISE("elementwise_mod", ElementwiseMod),
    TIDE_KERNELS_ELEMENTWISE("elementwise_floordiv", ElementwiseFloorDiv),
    // Every activation of tide/ops/activation.hpp (ForEachActivation).
    TIDE_KERNELS_ACT("relu", ReluAct),
    TIDE_KERNELS_ACT("sigmoid", SigmoidAct),
    TIDE_KERNELS_ACT("tanh", TanhAct),
    TIDE_KERNELS_ACT("square", SquareAct),
    TIDE_KERNELS_ACT("abs", AbsAct),
    TIDE_KERNELS_ACT("acos", AcosAct),
    TIDE_KERNELS_ACT("asin", AsinAct),
    TIDE_KERNELS_ACT("atan", AtanAct),
    TIDE_KERNELS_ACT("cos", CosAct),
    TIDE_KERNELS_ACT("sin", SinAct),
    TIDE_KERNELS_ACT("exp", ExpAct),
    TIDE_KERNELS_ACT("log", LogAct),
    TIDE_KERNELS_ACT("reciprocal", ReciprocalAct),
    TIDE_KERNELS_ACT("rsqrt", RsqrtAct),
    TIDE_KERNELS_ACT("ceil", CeilAct),
    TIDE_KERNELS_ACT("floor", FloorAct),
    TIDE_KERNELS_ACT("round", RoundAct),
    TIDE_KERNELS_ACT("logsigmoid", LogSigmoidAct),
    TIDE_KERNELS_ACT("softplus", SoftplusAct),
    TIDE_KERNELS_ACT("softsign", SoftsignAct),
    TIDE_KERNELS_ACT("tanh_shrink", TanhShrinkAct),
    TIDE_KERNELS_ACT("brelu", BReluAct),
    TIDE_KERNELS_ACT("elu", EluAct),
    TIDE_KERNELS_ACT("hard_shrink", HardShrinkAct),
    TIDE_KERNELS_ACT("hard_sigmoid", HardSigmoidAct),
    TIDE_KERNELS_ACT("hard_swish", HardSwishAct),
    TIDE_KERNELS_ACT("leaky_relu", LeakyReluAct),
    TIDE_KERNELS_ACT("pow", PowAct),
    TIDE_KERNELS_ACT("relu6", Relu6Act),
    TIDE_KERNELS_ACT("soft_relu", SoftReluAct),
    TIDE_KERNELS_ACT("softshrink", SoftShrinkAct),
    TIDE_KERNELS_ACT("stanh", STanhAct),
    TIDE_KERNELS_ACT("swish", SwishAct),
    TIDE_KERNELS_ACT("thresholded_relu", ThresholdedReluAct),
    // float32 gelu is ops_math's vectorized kernel (act_simd.cc), which compiled models reach
    // through the plugin so that they compute the executor's bits.
    {"gelu", "ops_math", "tide/kernels/activation.hpp",
     "tide::kernels::Activation<{T}, tide::ops::GeluAct>", DTypeBit(TIDE_FP64), 0},
};
#undef TIDE_KERNELS_ACT
#undef TIDE_KERNELS_ELEMENTWISE
#undef TIDE_KERNELS_VIEW

// The C++ type a "{T}" stands for, or nullptr for a data type no kernel here takes.
inline const char* CTypeOf(int32_t dtype) {
  switch (dtype) {
    case TIDE_FP32:
      return "float";
    case TIDE_FP64:
      return "double";
    case TIDE_INT32:
      return "int32_t";
    case TIDE_INT64:
      return "int64_t";
    default:
      return nullptr;
  }
}

// The header-only kernel of `op_type` for `dtype`, or nullptr.
inline const DirectKernel* FindDirectKernel(const char* op_type, int32_t dtype) {
  if (dtype < 0 || dtype >= 32 || !CTypeOf(dtype)) return nullptr;
  for (const DirectKernel& k : kDirectKernels)
    if (std::strcmp(k.op_type, op_type) == 0 && (k.dtypes & (uint32_t(1) << dtype))) return &k;
  return nullptr;
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_REGISTRY_HPP_
