// sum_kernel.cc: Fluid's sum (gradient accumulation: the grads of a value read twice, as a
// residual block's input) of tensors that oneDNN kernels left blocked, on oneDNN's
// sum primitive in the format of the first blocked input (others reordered to it). The plain
// kernel would have every input reordered to plain and its result reordered back by the next
// oneDNN grad: a ResNet-ish training step's sums took 0.78 ms (bfloat16) and 1.23 ms (float32)
// each that way. SelectedRows and all-plain inputs decline to the plain kernel (as fast there).
#include <tide/ops/sum.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

struct Sum {
  dnnl::sum::primitive_desc pd;
  dnnl::sum prim;
};

[[noreturn]] void Decline(const char* op, const char* why) {
  TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): ", why);
}

template <typename T>
void SumKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    const size_t n = ctx.InputCount("X");
    if (n < 2) Decline(op, "fewer than two inputs");
    for (size_t i = 0; i < n; ++i)
      if (!ctx.InputVar("X", i).IsTensor()) Decline(op, "an input is not a LoDTensor");
    const std::vector<Tensor> xs = tide::ops::GetDenseSumInputs(ctx);  // equal dims, checked
    const Tensor* blocked = nullptr;  // the format of the first blocked input is Out's
    for (const Tensor& x : xs) {
      if (x.dtype() != xs[0].dtype()) Decline(op, "inputs of different data types");
      if (!blocked && IsBlocked(x)) blocked = &x;
    }
    if (!blocked) Decline(op, "plain inputs");
    DeclineEmpty(op, {&xs[0]});
    // In place (Out is X[0]) suits oneDNN's sum; Out as a later input would be overwritten
    // before it is read.
    const std::string out_name = ctx.OutputName("Out");
    for (size_t i = 1; i < n; ++i)
      if (ctx.InputName("X", i) == out_name) Decline(op, "Out is one of the later inputs");
    Exec e(ctx);
    const memory::desc md = e.View(*blocked, op, "X").get_desc();
    // Inputs in other formats are reordered to it: a grad's branches often differ (a
    // convolution's Input@GRAD and an add's).
    std::vector<memory> srcs;
    for (const Tensor& x : xs) srcs.push_back(e.Convert(e.View(x, op, "X"), md));
    Key key(op);
    key(*blocked);
    key(int64_t(n));
    const std::vector<memory::desc> mds(n, md);
    auto entry = e.cache().GetOrCreate<Sum>(key.str(), [&] {
      dnnl::sum::primitive_desc pd(mds[0], std::vector<float>(n, 1.0f), mds, e.engine(),
                                   DefaultAttr());
      return Sum{pd, dnnl::sum(pd)};
    });
    // oneDNN 2.6 sums float32 in "simple:any", a vectorised loop over its threads (not the
    // reference loops DeclineReferenceImpl means); only a "ref" one declines.
    if (std::string(entry->pd.impl_info_str()).rfind("ref", 0) == 0)
      DeclineReferenceImpl(op, entry->pd);
    const tide::LoD lod = xs[0].lod();  // read before Out (maybe X[0] itself) is written
    Tensor out = ctx.Output("Out");
    memory dst = TryOutput(e, out, xs[0].dims(), mds[0], ctx.place());
    if (!dst) Decline(op, "Out cannot hold the inputs' format");
    std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}};
    for (size_t i = 0; i < n; ++i) args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = srcs[i];
    e.Run(entry->prim, entry->pd, args);
    e.Wait();
    out.set_lod(lod);
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL_F32_BF16("sum", SumKernel);
