// multihead_attention_kernel.cc: fused_multihead_attention (plugins/ops_nn/
// multihead_attention_op.cc) on oneDNN: one batched matmul primitive for every batch and head's
// scores alpha Q K^T (output scale alpha), reading each head's columns of Q and K in place through
// strides (Q [B, Sq, H] is [B, heads, Sq, D] with strides {Sq row, D, row, 1}; K^T likewise with
// its last two strides swapped; QKV's parts are views at offsets 0, H, 2H), the mask added to
// the scores by a binary primitive (its dims of 1 broadcast), a softmax primitive in place, then a
// second batched matmul P V writing each head's columns of Out in place. Declined (the plain kernel
// runs) where oneDNN has only its reference matmul for these strides.
// In bfloat16 (bf16 inference) Q, K, V and Out are bfloat16; the scores, the mask (a float32
// input, AsFloat32Param) and the softmax stay float32, and the probabilities are rounded to
// bfloat16 once for the second matmul.
#include <cstring>
#include <tide/ops/multihead_attention.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

constexpr auto f32 = memory::data_type::f32;
using tide::ops::AttentionShape;

struct AttentionPrims {
  dnnl::matmul::primitive_desc qk_pd, pv_pd;
  dnnl::matmul qk, pv;
  dnnl::softmax_forward::primitive_desc sm_pd;
  dnnl::softmax_forward sm;
};

struct MaskAdd {
  dnnl::binary::primitive_desc pd;
  dnnl::binary prim;
};

// A [B, heads, rows, D] view of one of Q, K, V (type dt): token rows `row` apart, heads D apart.
memory::desc HeadsView(const AttentionShape& s, int64_t rows, int64_t row, bool transposed,
                       memory::data_type dt) {
  const memory::dims dims = transposed ? memory::dims{s.batch, s.heads, s.head_size, rows}
                                       : memory::dims{s.batch, s.heads, rows, s.head_size};
  const memory::dims strides = transposed ? memory::dims{rows * row, s.head_size, 1, row}
                                          : memory::dims{rows * row, s.head_size, row, 1};
  return memory::desc(dims, dt, strides);
}

template <typename T>
void AttentionKernel(KernelContext& ctx) {
  constexpr auto dt = DnnlTypeOf<T>();
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    const bool qkv = ctx.HasInput("QKV");
    Tensor q = ctx.Input(qkv ? "QKV" : "Q");
    Tensor k = qkv ? q : ctx.Input("K"), v = qkv ? q : ctx.Input("V");
    Tensor mask = ctx.HasInput("Mask") ? ctx.Input("Mask") : Tensor();
    const AttentionShape s =
        tide::ops::GetAttentionShape(op, qkv, q.dims(), k.dims(), v.dims(), bool(mask),
                                     mask ? mask.dims() : Dims{}, ctx.Attr<int32_t>("head_number"));
    const float alpha = ctx.Attr<float>("alpha");
    Exec e(ctx);
    // Out is allocated only once nothing can decline (a kernel may decline only before it writes
    // an output): after the primitives are checked and the inputs viewed.
    auto alloc_out = [&] {
      Tensor out = ctx.Output("Out");
      out.Resize(s.out);
      void* od = out.mutable_data(q.dtype(), ctx.place());
      out.set_layout(TIDE_LAYOUT_ANY);
      out.set_format(0);
      return od;
    };
    if (s.batch * s.sq * s.hidden == 0) {
      alloc_out();
      return;
    }
    const memory::desc scores_md({s.batch, s.heads, s.sq, s.sk}, f32, Tag::abcd);
    const memory::desc probs_md({s.batch, s.heads, s.sq, s.sk}, dt, Tag::abcd);  // P V's input
    Key key(op);
    key(int64_t(dt));
    key(std::vector<int64_t>{s.batch, s.heads, s.head_size, s.sq, s.sk, s.q_row, s.k_row, s.v_row});
    int32_t alpha_bits;
    std::memcpy(&alpha_bits, &alpha, sizeof(alpha_bits));
    key(int64_t(alpha_bits));
    auto entry = e.cache().GetOrCreate<AttentionPrims>(key.str(), [&] {
      dnnl::primitive_attr scaled = DefaultAttr();
      scaled.set_output_scales(0, {alpha});
      dnnl::matmul::primitive_desc qk_pd(
          dnnl::matmul::desc(HeadsView(s, s.sq, s.q_row, false, dt),
                             HeadsView(s, s.sk, s.k_row, true, dt), scores_md),
          scaled, e.engine());
      const memory::desc out_md({s.batch, s.heads, s.sq, s.head_size}, dt,
                                memory::dims{s.sq * s.hidden, s.head_size, s.hidden, 1});
      dnnl::matmul::primitive_desc pv_pd(
          dnnl::matmul::desc(probs_md, HeadsView(s, s.sk, s.v_row, false, dt), out_md),
          DefaultAttr(), e.engine());
      dnnl::softmax_forward::primitive_desc sm_pd(
          dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, scores_md, 3),
          DefaultAttr(), e.engine());
      return AttentionPrims{qk_pd,
                            pv_pd,
                            dnnl::matmul(qk_pd),
                            dnnl::matmul(pv_pd),
                            sm_pd,
                            dnnl::softmax_forward(sm_pd)};
    });
    DeclineReferenceImpl(op, entry->qk_pd);
    DeclineReferenceImpl(op, entry->pv_pd);
    memory qm = PlainView(e, q, op, qkv ? "QKV" : "Q");
    memory km = qkv ? qm : PlainView(e, k, op, "K");
    memory vm = qkv ? qm : PlainView(e, v, op, "V");
    memory mask_m = mask ? PlainView(e, mask, op, "Mask") : memory();
    void* od = alloc_out();
    auto at = [&](const memory& m, int64_t off) {
      return static_cast<T*>(m.get_data_handle()) + off;
    };
    memory scores = e.TempMemory(scores_md);
    e.Run(entry->qk, entry->qk_pd,
          {{DNNL_ARG_SRC, e.View(entry->qk_pd.src_desc(), at(qm, s.q_off))},
           {DNNL_ARG_WEIGHTS, e.View(entry->qk_pd.weights_desc(), at(km, s.k_off))},
           {DNNL_ARG_DST, scores}});
    if (mask) {  // scores += Mask, its dims of 1 broadcast (a binary primitive, in place)
      memory::dims md_dims(4, 1);
      const Dims& m = mask.dims();
      for (size_t i = 0; i < m.size(); ++i) md_dims[4 - m.size() + i] = m[i];
      const memory::desc mask_md(md_dims, f32, Tag::abcd);
      Key mkey(op);
      mkey("mask")(std::vector<int64_t>{s.batch, s.heads, s.sq, s.sk})(m);
      auto add = e.cache().GetOrCreate<MaskAdd>(mkey.str(), [&] {
        dnnl::binary::primitive_desc pd(
            dnnl::binary::desc(dnnl::algorithm::binary_add, scores_md, mask_md, scores_md),
            DefaultAttr(), e.engine());
        return MaskAdd{pd, dnnl::binary(pd)};
      });
      e.Run(add->prim, add->pd,
            {{DNNL_ARG_SRC_0, scores},
             {DNNL_ARG_SRC_1, e.View(mask_md, mask_m.get_data_handle())},
             {DNNL_ARG_DST, scores}});
    }
    e.Run(entry->sm, entry->sm_pd, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}});
    memory probs = kFloat32Kernel<T> ? scores : e.Convert(scores, probs_md);
    e.Run(entry->pv, entry->pv_pd,
          {{DNNL_ARG_SRC, probs},
           {DNNL_ARG_WEIGHTS, e.View(entry->pv_pd.weights_desc(), at(vm, s.v_off))},
           {DNNL_ARG_DST, e.View(entry->pv_pd.dst_desc(), od)}});
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL_F32_BF16("fused_multihead_attention", AttentionKernel);
