// concat_kernel.cc: Fluid's concat (inputs X[0..n) joined along `axis`, negative from the end;
// shapes from tide/ops/split_concat.hpp) on the oneDNN concat primitive. Inputs may be plain or
// blocked, each in its own format; the output takes the format oneDNN picks (blocked inputs
// joined on channels stay blocked) when Tide can store it, else plain. Empty inputs are skipped.
#include <tide/ops/split_concat.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

constexpr auto f32 = memory::data_type::f32;

struct Concat {
  dnnl::concat::primitive_desc pd;
  dnnl::concat prim;
};

template <typename T>
void ConcatKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    std::vector<Tensor> xs = ctx.Inputs("X");
    Tensor out = ctx.Output("Out");
    std::vector<Dims> dims;
    for (const auto& x : xs) dims.push_back(x.dims());
    int axis = 0;
    int axis_attr = ctx.Attr<int32_t>("axis");
    if (ctx.HasInput("AxisTensor")) {  // Paddle 2.x: the axis as a one-element int tensor
      Tensor a = ctx.Input("AxisTensor");
      TIDE_CHECK(a.numel() == 1 && (a.dtype() == TIDE_INT32 || a.dtype() == TIDE_INT64), "op '", op,
                 "': AxisTensor must hold one int32/int64, got ", tide::DataTypeName(a.dtype()),
                 " ", tide::ToString(a.dims()));
      const int64_t v = a.dtype() == TIDE_INT32 ? a.data<int32_t>()[0] : a.data<int64_t>()[0];
      TIDE_CHECK(v >= INT32_MIN && v <= INT32_MAX, "op '", op, "': AxisTensor ('",
                 ctx.InputName("AxisTensor"), "') holds ", v, ", outside int32");
      axis_attr = static_cast<int>(v);
    }
    const Dims od = tide::ops::ConcatDims(op, dims, axis_attr, &axis);
    Exec e(ctx);
    std::vector<memory> srcs;
    std::vector<memory::desc> mds;
    Key key(op);
    key(axis);
    for (size_t i = 0; i < xs.size(); ++i) {
      if (DimsProduct(dims[i]) == 0) continue;
      srcs.push_back(e.View(xs[i], op, "X"));
      mds.push_back(srcs.back().get_desc());
      key(xs[i]);
    }
    if (srcs.empty()) {  // nothing to copy
      out.Resize(od);
      out.mutable_data<float>(ctx.place());
      out.set_layout(TIDE_LAYOUT_ANY);
      out.set_format(0);
      return;
    }
    const memory::dims dst_dims = ToDnnlDims(od);
    auto entry = e.cache().GetOrCreate<Concat>(key.str(), [&] {
      dnnl::concat::primitive_desc pd(axis, mds, e.engine(), DefaultAttr());
      if (StorableTag(pd.dst_desc(), dst_dims) == Tag::undef)
        pd = dnnl::concat::primitive_desc(memory::desc(dst_dims, f32, PlainTag(od.size())), axis,
                                          mds, e.engine(), DefaultAttr());
      return Concat{pd, dnnl::concat(pd)};
    });
    memory dst = TryOutput(e, out, od, entry->pd.dst_desc(), ctx.place());
    std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}};
    for (size_t i = 0; i < srcs.size(); ++i)
      args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = srcs[i];
    e.Run(entry->prim, entry->pd, args);
    e.Wait();
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("concat", ConcatKernel);
