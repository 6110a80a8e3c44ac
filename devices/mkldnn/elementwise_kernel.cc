// elementwise_kernel.cc: elementwise_add on the oneDNN binary primitive, with Fluid's broadcast
// (tide/ops/broadcast.hpp): Y becomes a same-rank operand with 1s on the broadcast dims, which
// oneDNN broadcasts. Out keeps X's format (the bias add of Fluid's fc, or a residual add of blocked
// feature maps, stays blocked). Its grad keeps Out@GRAD's format too.
#include <algorithm>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/elementwise.hpp>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

constexpr auto f32 = memory::data_type::f32;

// Issue 17's rule (README.md, "Speed"): on plain operands the plain forward is faster for equal
// dims at every measured size and for a broadcast Y over X of fewer than 65536 elements (the
// MLP's bias add [64, 512] + [512]: 7.6 us against 12.5, 2 threads); above that oneDNN's threads
// win (8x64x56x56 + a channel bias: 334 us against 486). The grad of a broadcast add of plain
// Out@GRAD is as fast or faster in the plain kernel at every size; oneDNN keeps a oneDNN
// kernel's formats, and the grad of an add of equal dims, whose dX and dY share Out@GRAD
// instead of copying it (8x64x56x56: 1073 us against 4491).
constexpr int64_t kPlainBroadcastMaxElements = 65536;
[[noreturn]] void DeclinePlainOperands(const char* op, const char* what) {
  TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): ", what,
             " hold plain data, which the plain kernel runs faster");
}

struct Binary {
  dnnl::binary::primitive_desc pd;
  dnnl::binary prim;
};

template <typename T>
void AddKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
    const Dims xd = x.dims(), yd = y.dims();
    if (tide::ops::ElementwiseNumpyPath(ctx))  // Paddle 2.x's numpy broadcast: the plain kernel's
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(xd),
                 " and Y ", tide::ToString(yd), " broadcast both ways (numpy's)");
    if (!IsBlocked(x) && !IsBlocked(y) && (xd == yd || x.numel() < kPlainBroadcastMaxElements))
      DeclinePlainOperands(op, "X and Y");
    Exec e(ctx);
    memory src0 = e.View(x, op, "X");
    if (StorableTag(src0.get_desc(), ToDnnlDims(xd)) == Tag::undef) src0 = PlainView(e, x, op, "X");
    memory src1;
    if (xd == yd) {
      src1 = e.View(y, op, "Y");
    } else {
      const Dims bd = tide::ops::BroadcastYDims(op, xd, yd, ctx.Attr<int32_t>("axis"));
      memory plain = PlainView(e, y, op, "Y");
      src1 =
          e.View(memory::desc(ToDnnlDims(bd), f32, PlainTag(bd.size())), plain.get_data_handle());
    }
    const memory::desc md0 = src0.get_desc(), md1 = src1.get_desc();
    Key key(op);
    key(xd)(int64_t(StorableTag(md0, ToDnnlDims(xd))))(md1.dims());
    key(IsBlocked(y) && xd == yd ? y.format() : int64_t(0));
    auto entry = e.cache().GetOrCreate<Binary>(key.str(), [&] {
      dnnl::binary::primitive_desc pd(
          dnnl::binary::desc(dnnl::algorithm::binary_add, md0, md1, md0), DefaultAttr(),
          e.engine());
      return Binary{pd, dnnl::binary(pd)};
    });
    memory dst = TryOutput(e, out, xd, md0, ctx.place());
    e.Run(entry->prim, entry->pd,
          {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}});
    e.Wait();
  });
}

// dY[j] = the sum of Out@GRAD over every dim but Y's: rows [pre, n, post] of plain data.
void SumPlain(const float* g, const tide::ops::Broadcast& b, float* dy) {
  std::fill(dy, dy + b.n, 0.0f);
  for (int64_t i = 0; i < b.pre; ++i)
    for (int64_t j = 0; j < b.n; ++j) {
      const float* row = g + (i * b.n + j) * b.post;
      float acc = 0;
      for (int64_t k = 0; k < b.post; ++k) acc += row[k];
      dy[j] += acc;
    }
}

// dY[c] = the column sums of [rows, C] channels-last data (nhwc): vectorised row adds.
void SumChannelsLast(const float* g, int64_t rows, int64_t c, float* dy) {
  std::fill(dy, dy + c, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) dy[j] += g[r * c + j];
}

// elementwise_add_grad where oneDNN training leaves blocked data: X@GRAD is Out@GRAD itself (the
// gradient passes through unchanged; sharing its bytes, as Fluid's in-place add grad does, keeps
// its format for the next oneDNN grad kernel), Y@GRAD its sums over the dims Y is repeated on (a
// conv's per-channel bias: sums over N, H and W, read in place from channels-last data). Any
// other broadcast declines to the plain kernel.
template <typename T>
void AddGradKernel(KernelContext& ctx) {
  static_assert(std::is_same<T, float>::value, "oneDNN kernels are float32");
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y");
    Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
    Tensor dy = ctx.OptionalOutput(tide::GradVarName("Y").c_str());
    const Dims xd = x.dims(), yd = y.dims();
    tide::ops::Broadcast b;
    try {  // Fluid's rule only: numpy's broadcasting stays with the plain kernel
      b = tide::ops::GetBroadcast(op, xd, yd, ctx.Attr<int32_t>("axis"));
    } catch (const std::exception&) {
      b.general = true;
    }
    if (b.general || (!b.same && yd.size() != 1))
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(xd),
                 " and Y ", tide::ToString(yd), " are not equal dims or Y one dim of X");
    tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), xd);
    if (!IsBlocked(dout) && !b.same) DeclinePlainOperands(op, "Out@GRAD of a broadcast add");
    if (dx) dx.ShareDataWith(dout);
    if (!dy) return;
    if (b.same) {
      dy.ShareDataWith(dout);
      return;
    }
    Exec e(ctx);
    float* dyd = dy.mutable_data<float>(yd, ctx.place());
    dy.set_layout(TIDE_LAYOUT_ANY);
    dy.set_format(0);
    const memory::dims dims = ToDnnlDims(xd);
    if (IsBlocked(dout) && xd.size() == 4 && b.axis == 1 && b.n == xd[1]) {  // a channel bias
      memory g = e.Convert(e.View(dout, op, "Out@GRAD"), memory::desc(dims, f32, Tag::nhwc));
      e.Wait();
      SumChannelsLast(static_cast<const float*>(g.get_data_handle()), xd[0] * xd[2] * xd[3], xd[1],
                      dyd);
      return;
    }
    memory g = PlainView(e, dout, op, "Out@GRAD");
    e.Wait();
    SumPlain(static_cast<const float*>(g.get_data_handle()), b, dyd);
  });
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL("elementwise_add", AddKernel);
TIDE_MKLDNN_KERNEL("elementwise_add_grad", AddGradKernel);
