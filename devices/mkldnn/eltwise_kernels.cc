// eltwise_kernels.cc: the generic oneDNN eltwise forward and backward kernels (eltwise.h). The
// primitive cache keys hold the algorithm and alpha / beta, so ops sharing an algorithm with other
// attribute values get their own primitives.
#include <cstring>

#include "eltwise.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

struct EltwiseFwd {
  dnnl::eltwise_forward::primitive_desc pd;
  dnnl::eltwise_forward prim;
};

struct EltwiseBwd {
  dnnl::eltwise_backward::primitive_desc pd;
  dnnl::eltwise_backward prim;
};

// A float's bits, for cache keys (exact, unlike a decimal rendering).
int64_t Bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

bool UsesDst(algorithm a) {
  switch (a) {
    case algorithm::eltwise_relu_use_dst_for_bwd:
    case algorithm::eltwise_tanh_use_dst_for_bwd:
    case algorithm::eltwise_elu_use_dst_for_bwd:
    case algorithm::eltwise_sqrt_use_dst_for_bwd:
    case algorithm::eltwise_logistic_use_dst_for_bwd:
    case algorithm::eltwise_exp_use_dst_for_bwd:
    case algorithm::eltwise_clip_v2_use_dst_for_bwd:
      return true;
    default:
      return false;
  }
}

}  // namespace

Key& AddAlgo(Key& key, const EltwiseAlgo& a) {
  return key(int64_t(a.algo))(Bits(a.alpha))(Bits(a.beta));
}

namespace {

// Issue 17's rule (README.md, "Speed"): a piecewise-linear function (relu, leaky_relu, relu6,
// brelu, abs, linear) of plain data runs faster in the plain kernel (the MLP's relu of [64, 512]:
// 13 us against oneDNN's 27 us per call, its grad 10 against 44); oneDNN keeps the functions it
// computes faster (tanh, exp, gelu, ...) and data in a oneDNN format, whose reorder to plain
// would cost more.
bool IsCheap(const EltwiseAlgo& a) {
  using dnnl::algorithm;
  switch (a.algo) {
    case algorithm::eltwise_relu:
    case algorithm::eltwise_relu_use_dst_for_bwd:
    case algorithm::eltwise_clip_v2:
    case algorithm::eltwise_clip_v2_use_dst_for_bwd:
    case algorithm::eltwise_abs:
    case algorithm::eltwise_linear:
      return true;
    default:
      return false;
  }
}

[[noreturn]] void DeclineCheapOnPlain(const char* op, const char* what) {
  TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): ", what,
             " is plain data, which the plain kernel runs faster for this function");
}

}  // namespace

void EltwiseForward(KernelContext& ctx, const EltwiseAlgo& a) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    if (x.dtype() == TIDE_BF16) DeclineWithoutBf16Isa(op);
    if (IsCheap(a) && !IsBlocked(x) && x.dtype() == TIDE_FP32) DeclineCheapOnPlain(op, "X");
    Exec e(ctx);
    const Dims d = x.dims();
    memory src = e.View(x, op, "X");
    // A format Tide cannot store the output in (none of ours): compute on plain data.
    if (StorableTag(src.get_desc(), ToDnnlDims(d)) == Tag::undef) src = PlainView(e, x, op, "X");
    const memory::desc md = src.get_desc();
    Key key(op);
    AddAlgo(key(d)(int64_t(StorableTag(md, ToDnnlDims(d))))(int64_t(x.dtype())), a);
    auto entry = e.cache().GetOrCreate<EltwiseFwd>(key.str(), [&] {
      dnnl::eltwise_forward::primitive_desc pd(
          dnnl::eltwise_forward::desc(prop_kind::forward_inference, a.algo, md, a.alpha, a.beta),
          DefaultAttr(), e.engine());
      return EltwiseFwd{pd, dnnl::eltwise_forward(pd)};
    });
    memory dst = TryOutput(e, out, d, md, ctx.place());
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

void EltwiseBackward(KernelContext& ctx, const EltwiseAlgo& a, const char* from) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor v = ctx.Input(from), dout = ctx.Input(tide::GradVarName("Out").c_str());
    Tensor dx = ctx.Output(tide::GradVarName("X").c_str());
    const Dims d = v.dims();
    TIDE_CHECK(dout.dims() == d, "op '", op, "': Out@GRAD has dims ", tide::ToString(dout.dims()),
               ", ", from, " has ", tide::ToString(d));
    if (v.dtype() == TIDE_BF16) DeclineWithoutBf16Isa(op);
    if (IsCheap(a) && !IsBlocked(v) && !IsBlocked(dout) && v.dtype() == TIDE_FP32)
      DeclineCheapOnPlain(op, from);
    Exec e(ctx);
    memory data = e.View(v, op, from);
    const memory::desc md = data.get_desc();
    Key key(op);
    AddAlgo(key(v), a);
    auto entry = e.cache().GetOrCreate<EltwiseBwd>(key.str(), [&] {
      dnnl::eltwise_forward::primitive_desc hint(
          dnnl::eltwise_forward::desc(prop_kind::forward_training, a.algo, md, a.alpha, a.beta),
          DefaultAttr(), e.engine());
      dnnl::eltwise_backward::primitive_desc pd(
          dnnl::eltwise_backward::desc(a.algo, md, md, a.alpha, a.beta), DefaultAttr(), e.engine(),
          hint);
      return EltwiseBwd{pd, dnnl::eltwise_backward(pd)};
    });
    memory diff_dst = e.Convert(e.View(dout, op, "Out@GRAD"), entry->pd.diff_dst_desc());
    bool direct = false;
    memory diff_src =
        StorableOutputOrTemp(e, dx, d, entry->pd.diff_src_desc(), ctx.place(), &direct);
    e.Run(entry->prim, entry->pd,
          {{UsesDst(a.algo) ? DNNL_ARG_DST : DNNL_ARG_SRC, data},
           {DNNL_ARG_DIFF_DST, diff_dst},
           {DNNL_ARG_DIFF_SRC, diff_src}});
    if (!direct) StorePlain(e, diff_src, dx, d, ctx.place());
    e.Wait();
  });
}

}  // namespace tide_mkldnn
