// multihead_attention_op.cc: fused_multihead_attention, the attention of
// paddle.nn.MultiHeadAttention in one inference op (InferenceTranspiler makes it of the reshape /
// transpose of Q, K and V, scale, Q K^T, the mask's add, softmax, the product with V and the
// transpose / reshape back): per batch b and head h,
//   Out[b, :, h] = softmax(alpha Q[b, :, h] K[b, :, h]^T + Mask[b, h]) V[b, :, h]
// with head h's columns h * D .. (h + 1) * D - 1 of Q, K, V and Out
// (tide/ops/multihead_attention.hpp). The plain kernel: per batch, each head's scores by one GEMM
// reading the head's columns in place (row stride H), the mask and softmax over the rows of every
// head at once, then one GEMM per head writing its columns of Out. No gradient.
#include <algorithm>
#include <cmath>
#include <tide/ops/multihead_attention.hpp>

#include "gemm.h"

namespace ops_nn {
namespace {

using tide::ops::AttentionShape;

AttentionShape ShapeOf(const char* op, bool qkv, const Dims& q, const Dims& k, const Dims& v,
                       bool has_mask, const Dims& mask, int heads) {
  return tide::ops::GetAttentionShape(op, qkv, q, k, v, has_mask, mask, heads);
}

void AttentionInferShape(tide::InferShapeContext& ctx) {
  const char* op = "fused_multihead_attention";
  const bool qkv = ctx.HasInput("QKV");
  TIDE_CHECK(qkv != (ctx.HasInput("Q") || ctx.HasInput("K") || ctx.HasInput("V")), "op '", op,
             "' takes QKV or Q, K and V");
  TIDE_CHECK(qkv || (ctx.HasInput("Q") && ctx.HasInput("K") && ctx.HasInput("V")), "op '", op,
             "' takes QKV or all of Q, K and V");
  const Dims q = ctx.InputDims(qkv ? "QKV" : "Q");
  const Dims k = qkv ? Dims{} : ctx.InputDims("K"), v = qkv ? Dims{} : ctx.InputDims("V");
  const bool has_mask = ctx.HasInput("Mask");
  const AttentionShape s =
      ShapeOf(op, qkv, q, k, v, has_mask, has_mask ? ctx.InputDims("Mask") : Dims{},
              ctx.Attr<int32_t>("head_number"));
  ctx.SetOutputDims("Out", s.out);
  ctx.SetOutputDataType("Out", ctx.InputDataType(qkv ? "QKV" : "Q"));
}

// In place: the rows [r0, r1) of `len` scores each get the mask added (its values `step`
// apart: 0 for a mask broadcast along Sk) and softmax applied (as the softmax op: the row's max
// subtracted first).
template <typename T, typename MaskAt>
void MaskedSoftmax(T* scores, int64_t r0, int64_t r1, int64_t len, const MaskAt& mask_at,
                   int64_t step) {
  for (int64_t r = r0; r < r1; ++r) {
    T* s = scores + r * len;
    const T* m = mask_at(r);
    if (m && step == 1) {
      for (int64_t j = 0; j < len; ++j) s[j] += m[j];
    } else if (m) {
      for (int64_t j = 0; j < len; ++j) s[j] += m[j * step];
    }
    T mx = s[0];
    for (int64_t j = 1; j < len; ++j) mx = std::max(mx, s[j]);
    T sum = 0;
    for (int64_t j = 0; j < len; ++j) {
      s[j] = std::exp(s[j] - mx);
      sum += s[j];
    }
    const T inv = T(1) / sum;
    for (int64_t j = 0; j < len; ++j) s[j] *= inv;
  }
}

template <typename T>
void AttentionKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  const bool qkv = ctx.HasInput("QKV");
  Tensor q = ctx.Input(qkv ? "QKV" : "Q");
  Tensor k = qkv ? q : ctx.Input("K"), v = qkv ? q : ctx.Input("V");
  Tensor mask = ctx.HasInput("Mask") ? ctx.Input("Mask") : Tensor();
  const AttentionShape s = ShapeOf(op, qkv, q.dims(), k.dims(), v.dims(), bool(mask),
                                   mask ? mask.dims() : Dims{}, ctx.Attr<int32_t>("head_number"));
  const T alpha = static_cast<T>(ctx.Attr<float>("alpha"));
  const T* qd = q.data<T>() + s.q_off;
  const T* kd = k.data<T>() + s.k_off;
  const T* vd = v.data<T>() + s.v_off;
  const T* md = mask ? mask.data<T>() : nullptr;
  T* out = ctx.Output("Out").mutable_data<T>(s.out, ctx.place());
  const int64_t hs = s.head_size, sq = s.sq, sk = s.sk, heads = s.heads;
  if (s.batch == 0 || sq == 0 || heads == 0) return;
  T* scores = ctx.TempBuffer<T>(static_cast<size_t>(heads * sq * sk));
  for (int64_t b = 0; b < s.batch; ++b) {
    const T* qb = qd + b * sq * s.q_row;
    const T* kb = kd + b * sk * s.k_row;
    const T* vb = vd + b * sk * s.v_row;
    T* ob = out + b * sq * s.hidden;
    for (int64_t h = 0; h < heads; ++h)
      Gemm<T>(ctx, false, true, sq, sk, hs, alpha, qb + h * hs, s.q_row, kb + h * hs, s.k_row, T(0),
              scores + h * sq * sk, sk);
    // Row r of the heads' scores is head r / sq, query r % sq.
    auto mask_at = [&](int64_t r) -> const T* {
      if (!md) return nullptr;
      return md + b * s.mask_stride[0] + (r / sq) * s.mask_stride[1] + (r % sq) * s.mask_stride[2];
    };
    ParallelFor(ctx, heads * sq, sk * 8, [&](int64_t r0, int64_t r1) {
      MaskedSoftmax(scores, r0, r1, sk, mask_at, s.mask_stride[3]);
    });
    for (int64_t h = 0; h < heads; ++h)
      Gemm<T>(ctx, false, false, sq, hs, sk, T(1), scores + h * sq * sk, sk, vb + h * hs, s.v_row,
              T(0), ob + h * hs, s.hidden);
  }
}

}  // namespace
}  // namespace ops_nn

using namespace ops_nn;  // NOLINT: registration macros below

TIDE_REGISTER_OP(
    tide::OpSchema("fused_multihead_attention")
        .Comment("Out[b, :, h] = softmax(alpha Q[b, :, h] K[b, :, h]^T + Mask) V[b, :, h] for "
                 "each head h (columns h * D .. (h + 1) * D - 1, D = H / head_number), Mask "
                 "broadcast numpy-style to the scores [B, head_number, Sq, Sk]. Q, K, V come "
                 "separately or side by side in QKV. The attention of "
                 "paddle.nn.MultiHeadAttention; made by tide.transpiler.InferenceTranspiler. "
                 "No gradient.")
        .Input("Q", "the queries, [B, Sq, H]")
        .AsDispensable()
        .Input("K", "the keys, [B, Sk, H]")
        .AsDispensable()
        .Input("V", "the values, [B, Sk, H]")
        .AsDispensable()
        .Input("QKV", "instead of Q, K and V: [B, S, 3H], the three side by side")
        .AsDispensable()
        .Input("Mask", "added to the scores, broadcast to [B, head_number, Sq, Sk]")
        .AsDispensable()
        .AsFloat32Param()  // a bfloat16 kernel adds it to float32 scores
        .Output("Out", "[B, Sq, H], the heads side by side")
        .InferShape(AttentionInferShape)
        .Attr("head_number", int32_t(1), "the number of heads")
        .Attr("alpha", 1.0f, "the scores' scale, 1 / sqrt(D) in Paddle's attention"));
TIDE_REGISTER_KERNEL("fused_multihead_attention", "cpu", AttentionKernel, OPS_NN_FLOAT_TYPES);
