// reduce_kernel.cc: Fluid's reduce_sum / reduce_mean / reduce_max / reduce_min / reduce_prod
// (plugins/ops_math/reduce_dim_ops.cc) forward on oneDNN reduction, for reductions over trailing
// dims (dim, keep_dim, reduce_all: tide/ops/reduce.hpp): X as [kept, reduced], Out's plain data
// as [kept, 1] whether keep_dim holds the 1s or not. The grads stay on the plain kernels (oneDNN
// has no backward reduction).
#include <tide/ops/reduce.hpp>
#include <utility>

#include "plain_as.h"

namespace tide_mkldnn {
namespace {

using dnnl::algorithm;
constexpr auto f32 = memory::data_type::f32;

// Fewer elements in all, or fewer reduced into each Out element, than these run faster on the
// plain kernel (README.md, "Speed"): oneDNN's jit pays per Out element.
constexpr int64_t kMinElements = 16384;
constexpr int64_t kMinReduced = 1000;

struct Reduction {
  dnnl::reduction::primitive_desc pd;
  dnnl::reduction prim;
};

// X seen as [kept, reduced] (or [reduced] when every dim is): oneDNN 2.6 reduces with its jit
// only over trailing dims, and a reference loop elsewhere (50x slower than the plain kernel), so
// size-1 dims are dropped, neighbours merged, and anything but this pattern declined.
memory::dims KeptThenReduced(const Dims& x, const std::vector<bool>& reduced) {
  int64_t kept = 1, red = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 1) continue;
    if (!reduced[i] && red > 1) return {};  // a kept dim after a reduced one
    (reduced[i] ? red : kept) *= x[i];
  }
  if (red == 1) return {};  // only 1s reduced: a copy, which oneDNN refuses
  if (kept == 1) return {red};
  return {kept, red};
}

template <algorithm kAlgo>
void Reduce(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), out = ctx.Output("Out");
    const Dims d = x.dims();
    const tide::ops::ReduceShape s =
        tide::ops::GetReduceShape(op, d, ctx.Attr<std::vector<int32_t>>("dim"),
                                  ctx.Attr<bool>("keep_dim"), ctx.Attr<bool>("reduce_all"));
    const memory::dims src_dims = KeptThenReduced(d, s.reduced);
    if (src_dims.empty())
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(d),
                 " reduced to ", tide::ToString(s.keep),
                 " is not a reduction over trailing dims (the plain kernel runs it faster)");
    // Empty X (a 0 dim) is the plain kernel's to judge.
    if (DimsProduct(d) < kMinElements || src_dims.back() < kMinReduced)
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(d),
                 " has fewer than ", kMinElements, " elements or reduces fewer than ", kMinReduced,
                 " into each Out element (the plain kernel runs it faster)");
    memory::dims dst_dims = src_dims;
    dst_dims.back() = 1;
    const memory::desc src_md(src_dims, f32, PlainTag(src_dims.size()));
    const memory::desc dst_md(dst_dims, f32, PlainTag(dst_dims.size()));
    Exec e(ctx);
    Key key(op);
    key(src_dims);
    auto entry = e.cache().GetOrCreate<Reduction>(key.str(), [&] {
      dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(kAlgo, src_md, dst_md, 0.0f, 0.0f),
                                         DefaultAttr(), e.engine());
      return Reduction{pd, dnnl::reduction(pd)};
    });
    memory src = PlainInputAs(e, x, src_md, op, "X");
    memory dst = PlainOutputAs(e, out, s.out, dst_md, ctx.place());
    e.Run(entry->prim, entry->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

TIDE_ON_REGISTER([](tide::Registrar& r) {
  using namespace tide_mkldnn;  // NOLINT
  using dnnl::algorithm;
  const std::pair<const char*, tide::KernelFn> kernels[] = {
      {"reduce_sum", &Reduce<algorithm::reduction_sum>},
      {"reduce_mean", &Reduce<algorithm::reduction_mean>},
      {"reduce_max", &Reduce<algorithm::reduction_max>},
      {"reduce_min", &Reduce<algorithm::reduction_min>},
      {"reduce_prod", &Reduce<algorithm::reduction_mul>}};
  for (const auto& [op, fn] : kernels)
    r.Kernel(op, "cpu", TIDE_FP32, fn, TIDE_LAYOUT_ONEDNN, "mkldnn");
});
