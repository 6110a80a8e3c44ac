// skip_layernorm_kernel.cc: skip_layernorm and preln_skip_layernorm
// (plugins/ops_nn/skip_layernorm_op.cc) on oneDNN: oneDNN 2.6's layer normalization has no add
// pre-op, so a binary add writes the sum (Out, or preln's Out_1) and a layer normalization
// forward_inference normalises it (in place for skip_layernorm). Everything plain, float32.
// 1.5-2x as fast as the plain kernel's one pass at BERT-base's [128, 768] and [1024, 768]
// (AVX-512 and AVX2 alike), slower below 16384 elements, which it declines (README.md, "Speed").
#include <cstring>
#include <tide/ops/norm.hpp>

#include "plain_as.h"

namespace tide_mkldnn {
namespace {

// Fewer elements than this run faster on the plain kernel (README.md, "Speed").
constexpr int64_t kMinElements = 16384;

struct AddLn {
  dnnl::binary::primitive_desc add_pd;
  dnnl::binary add;
  dnnl::layer_normalization_forward::primitive_desc ln_pd;
  dnnl::layer_normalization_forward ln;
};

// Both ops (Out_0 and Out_1 for preln, Out for skip_layernorm), as the plain kernel.
template <typename T>
void AddLayerNormKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  const bool preln = std::strcmp(op, "preln_skip_layernorm") == 0;
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y");
    const Dims d = x.dims();
    TIDE_CHECK(y.dims() == d, "op '", op, "': X ", tide::ToString(d), " and Y ",
               tide::ToString(y.dims()), " must have the same dims");
    const tide::ops::NormGroups g =
        tide::ops::LayerNormGroups(op, d, ctx.Attr<int32_t>("begin_norm_axis"));
    for (const char* param : {"Scale", "Bias"}) {
      const int64_t n = ctx.Input(param).numel();
      TIDE_CHECK(n == g.size, "op '", op, "': ", param, " ('", ctx.InputName(param), "') has ", n,
                 " elements, expected ", g.size, " (X ", tide::ToString(d), ")");
    }
    if (x.numel() < kMinElements)
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(d),
                 " has fewer than ", kMinElements, " elements (the plain kernel runs it faster)");
    const float eps = ctx.Attr<float>("epsilon");
    const auto dt = ToDnnlType(x.dtype());
    const memory::desc data({g.groups, g.size}, dt, Tag::ab);
    const memory::desc stat({g.groups}, memory::data_type::f32, Tag::a);
    const memory::desc vec({g.size}, memory::data_type::f32, Tag::a);
    Exec e(ctx);
    int32_t eps_bits;
    std::memcpy(&eps_bits, &eps, sizeof(eps_bits));
    const std::string key = Key(op)(g.groups)(g.size)(int64_t(eps_bits))(int64_t(dt)).str();
    auto entry = e.cache().GetOrCreate<AddLn>(key, [&] {
      dnnl::binary::primitive_desc add_pd(
          dnnl::binary::desc(dnnl::algorithm::binary_add, data, data, data), DefaultAttr(),
          e.engine());
      dnnl::layer_normalization_forward::primitive_desc ln_pd(
          dnnl::layer_normalization_forward::desc(
              dnnl::prop_kind::forward_inference, data, stat, eps,
              dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift),
          DefaultAttr(), e.engine());
      return AddLn{add_pd, dnnl::binary(add_pd), ln_pd, dnnl::layer_normalization_forward(ln_pd)};
    });
    Tensor out = ctx.Output(preln ? "Out_0" : "Out");
    memory out_m = PlainOutputAs(e, out, d, data, ctx.place());
    memory sum_m = out_m;
    Tensor sum;
    if (preln) {
      sum = ctx.Output("Out_1");
      sum_m = PlainOutputAs(e, sum, d, data, ctx.place());
    }
    e.Run(entry->add, entry->add_pd,
          {{DNNL_ARG_SRC_0, PlainInputAs(e, x, data, op, "X")},
           {DNNL_ARG_SRC_1, PlainInputAs(e, y, data, op, "Y")},
           {DNNL_ARG_DST, sum_m}});
    e.Run(entry->ln, entry->ln_pd,
          {{DNNL_ARG_SRC, sum_m},
           {DNNL_ARG_DST, out_m},
           {DNNL_ARG_SCALE, PlainInputAs(e, ctx.Input("Scale"), vec, op, "Scale")},
           {DNNL_ARG_SHIFT, PlainInputAs(e, ctx.Input("Bias"), vec, op, "Bias")}});
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("skip_layernorm", AddLayerNormKernel);
TIDE_MKLDNN_KERNEL("preln_skip_layernorm", AddLayerNormKernel);
