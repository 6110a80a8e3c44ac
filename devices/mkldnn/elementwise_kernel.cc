// elementwise_kernel.cc: elementwise_add (and bfloat16 elementwise_mul / elementwise_sub) on the
// oneDNN binary primitive, with Fluid's broadcast (tide/ops/broadcast.hpp): Y becomes a same-rank
// operand with 1s on the broadcast dims, which oneDNN broadcasts. Out keeps X's format (the bias
// add of Fluid's fc, or a residual add of blocked feature maps, stays blocked). Its grad keeps
// Out@GRAD's format too.
#include <algorithm>
#include <tide/eigen.hpp>
#include <tide/ops/broadcast.hpp>
#include <tide/ops/elementwise.hpp>
#include <vector>

#include "bf16_bits.h"
#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

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

// The binary primitive of dst (md d) = src0 (md 0) (alg) src1 (md 1), cached.
std::shared_ptr<Binary> BinaryPrimitive(Exec& e, const char* op, dnnl::algorithm alg,
                                        const memory::desc& md0, const memory::desc& md1,
                                        const memory::desc& mdd) {
  std::string key = Key(op)(int64_t(alg)).str();
  for (const memory::desc* md : {&md0, &md1, &mdd})
    key.append(reinterpret_cast<const char*>(&md->data), sizeof(md->data));
  return e.cache().GetOrCreate<Binary>(key, [&] {
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg, md0, md1, mdd), DefaultAttr(),
                                    e.engine());
    return Binary{pd, dnnl::binary(pd)};
  });
}

// dst = src0 (alg) src1 on `e`'s stream, src1 broadcast by oneDNN over its dims of 1.
void RunBinary(Exec& e, const char* op, dnnl::algorithm alg, const memory& src0, const memory& src1,
               const memory& dst) {
  auto entry = BinaryPrimitive(e, op, alg, src0.get_desc(), src1.get_desc(), dst.get_desc());
  e.Run(entry->prim, entry->pd,
        {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}});
}

// Y as an operand of X's rank (Fluid's broadcast: 1s where Y is repeated), plain.
memory BroadcastOperand(Exec& e, const KernelContext& ctx, const Tensor& x, const Tensor& y) {
  const char* op = ctx.op_type();
  const Dims xd = x.dims(), yd = y.dims();
  if (xd == yd) return e.View(y, op, "Y");
  const Dims bd = tide::ops::BroadcastYDims(op, xd, yd, ctx.Attr<int32_t>("axis"));
  memory plain = PlainView(e, y, op, "Y");
  return e.View(memory::desc(ToDnnlDims(bd), plain.get_desc().data_type(), PlainTag(bd.size())),
                plain.get_data_handle());
}

template <typename T, dnnl::algorithm kAlg>
void BinaryKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y"), out = ctx.Output("Out");
    const Dims xd = x.dims(), yd = y.dims();
    if (tide::ops::ElementwiseNumpyPath(ctx))  // Paddle 2.x's numpy broadcast: the plain kernel's
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(xd),
                 " and Y ", tide::ToString(yd), " broadcast both ways (numpy's)");
    if (kFloat32Kernel<T> && !IsBlocked(x) && !IsBlocked(y) &&
        (xd == yd || x.numel() < kPlainBroadcastMaxElements))
      DeclinePlainOperands(op, "X and Y");
    Exec e(ctx);
    memory src0 = e.View(x, op, "X");
    if (StorableTag(src0.get_desc(), ToDnnlDims(xd)) == Tag::undef) src0 = PlainView(e, x, op, "X");
    memory src1 = BroadcastOperand(e, ctx, x, y);
    // bfloat16 on plain data: a broadcast oneDNN 2.6 has no jit kernel for (Y repeated over a
    // middle dim: a rotary table [1, S, 1, D] times queries [B, S, heads, D]) runs its reference
    // implementation, ~20x slower than the float32 plain kernel on widened data (45 of ~100 ms
    // of a LLaMA prefill with precision='bf16'): declined before Out is touched. Blocked data
    // (a conv net's chain of oneDNN layouts) keeps oneDNN, which the plain kernel would reorder.
    if (!kFloat32Kernel<T> && !IsBlocked(x) && !IsBlocked(y)) {
      const memory::desc md0 = src0.get_desc();
      DeclineReferenceImpl(op, BinaryPrimitive(e, op, kAlg, md0, src1.get_desc(), md0)->pd);
    }
    memory dst = TryOutput(e, out, xd, src0.get_desc(), ctx.place());
    RunBinary(e, op, kAlg, src0, src1, dst);
    e.Wait();
  });
}

// dY[j] = the sum of Out@GRAD over every dim but Y's: rows [pre, n, post] of plain data
// (accumulated in float32).
template <typename T>
void SumPlain(const T* g, const tide::ops::Broadcast& b, T* dy) {
  std::vector<float> acc(b.n, 0.0f);
  for (int64_t i = 0; i < b.pre; ++i)
    for (int64_t j = 0; j < b.n; ++j) {
      const T* row = g + (i * b.n + j) * b.post;
      float sum = 0;
      for (int64_t k = 0; k < b.post; ++k) sum += static_cast<float>(row[k]);
      acc[j] += sum;
    }
  for (int64_t j = 0; j < b.n; ++j) dy[j] = static_cast<T>(acc[j]);
}

// dY[c] = the column sums of [rows, C] data (channels-last maps, or an fc's [batch, C] bias grad).
// Rows go in fixed blocks, each block's partial sums over the CPU pool (by column ranges too
// where C is wide), then the blocks are added in order: the same sums on any number of threads.
// An MLP's [128, 1024] bfloat16 bias grad took 78 us in one scalar loop of float conversions.
template <typename T>
void SumColumns(const KernelContext& ctx, const T* g, int64_t rows, int64_t c, T* dy) {
  constexpr int64_t kRowBlock = 256, kColChunk = 512;
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock,
                chunks = (c + kColChunk - 1) / kColChunk;
  std::vector<float> part(blocks * c, 0.0f);
  tide::ParallelFor(
      ctx, blocks * chunks, kRowBlock * std::min(c, kColChunk), [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t b = t / chunks, j0 = t % chunks * kColChunk,
                        j1 = std::min(c, j0 + kColChunk);
          float* acc = part.data() + b * c;
          for (int64_t r = b * kRowBlock; r < std::min(rows, (b + 1) * kRowBlock); ++r) {
            const T* row = g + r * c;
            for (int64_t j = j0; j < j1; ++j) acc[j] += Widened(row[j]);
          }
        }
      });
  for (int64_t b = 1; b < blocks; ++b)
    for (int64_t j = 0; j < c; ++j) part[j] += part[b * c + j];
  for (int64_t j = 0; j < c; ++j) dy[j] = static_cast<T>(part[j]);
}

// The grads' broadcast of Y over X: Fluid's rule only (numpy's broadcasting stays with the plain
// kernel: marked `general`, which the grads decline).
tide::ops::Broadcast FluidBroadcast(const KernelContext& ctx, const Dims& xd, const Dims& yd) {
  try {
    return tide::ops::GetBroadcast(ctx.op_type(), xd, yd, ctx.Attr<int32_t>("axis"));
  } catch (const std::exception&) {
    tide::ops::Broadcast b;
    b.general = true;
    return b;
  }
}

// elementwise_add_grad where oneDNN training leaves blocked data: X@GRAD is Out@GRAD itself (the
// gradient passes through unchanged; sharing its bytes, as Fluid's in-place add grad does, keeps
// its format for the next oneDNN grad kernel), Y@GRAD its sums over the dims Y is repeated on (a
// conv's per-channel bias: sums over N, H and W, read in place from channels-last data). Any
// other broadcast declines to the plain kernel.
template <typename T>
void AddGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y");
    Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
    Tensor dy = ctx.OptionalOutput(tide::GradVarName("Y").c_str());
    const Dims xd = x.dims(), yd = y.dims();
    const tide::ops::Broadcast b = FluidBroadcast(ctx, xd, yd);
    if (b.general || (!b.same && yd.size() != 1))
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(xd),
                 " and Y ", tide::ToString(yd), " are not equal dims or Y one dim of X");
    tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), xd);
    if (kFloat32Kernel<T> && !IsBlocked(dout) && !b.same)
      DeclinePlainOperands(op, "Out@GRAD of a broadcast add");
    // Before X@GRAD is written: ToDnnlDims declines ranks oneDNN does not take.
    const memory::dims dims = dy && !b.same ? ToDnnlDims(xd) : memory::dims();
    if (dx) dx.ShareDataWith(dout);
    if (!dy) return;
    if (b.same) {
      dy.ShareDataWith(dout);
      return;
    }
    Exec e(ctx);
    T* dyd = dy.mutable_data<T>(yd, ctx.place());
    dy.set_layout(TIDE_LAYOUT_ANY);
    dy.set_format(0);
    if (IsBlocked(dout) && xd.size() == 4 && b.axis == 1 && b.n == xd[1]) {  // a channel bias
      memory g =
          e.Convert(e.View(dout, op, "Out@GRAD"), memory::desc(dims, DnnlTypeOf<T>(), Tag::nhwc));
      e.Wait();
      SumColumns(ctx, static_cast<const T*>(g.get_data_handle()), xd[0] * xd[2] * xd[3], xd[1],
                 dyd);
      return;
    }
    memory g = PlainView(e, dout, op, "Out@GRAD");
    e.Wait();
    if (b.post == 1)  // Y over the last dims ([batch, C] + [C]): its sums are column sums
      SumColumns(ctx, static_cast<const T*>(g.get_data_handle()), b.pre, b.n, dyd);
    else
      SumPlain(static_cast<const T*>(g.get_data_handle()), b, dyd);
  });
}

// elementwise_mul_grad (bfloat16): X@GRAD = Out@GRAD * Y (Y broadcast), Y@GRAD = Out@GRAD * X,
// summed over the dims Y is repeated on (in float32) for Fluid's broadcasts; numpy's decline.
template <typename T>
void MulGradKernel(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor x = ctx.Input("X"), y = ctx.Input("Y");
    Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
    Tensor dy = ctx.OptionalOutput(tide::GradVarName("Y").c_str());
    const Dims xd = x.dims(), yd = y.dims();
    const tide::ops::Broadcast b = FluidBroadcast(ctx, xd, yd);
    if (b.general)
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(xd),
                 " and Y ", tide::ToString(yd), " are not Fluid's broadcast of Y over X");
    tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), xd);
    Exec e(ctx);
    memory g = PlainView(e, dout, op, "Out@GRAD");
    if (dx) {
      memory dst = TryOutput(e, dx, xd, g.get_desc(), ctx.place());
      RunBinary(e, op, dnnl::algorithm::binary_mul, g, BroadcastOperand(e, ctx, x, y), dst);
    }
    if (dy) {
      memory xm = PlainView(e, x, op, "X");
      if (b.same) {
        memory dst = TryOutput(e, dy, yd, g.get_desc(), ctx.place());
        RunBinary(e, op, dnnl::algorithm::binary_mul, g, xm, dst);
      } else {
        memory prod = e.TempMemory(g.get_desc());
        RunBinary(e, op, dnnl::algorithm::binary_mul, g, xm, prod);
        e.Wait();
        T* dyd = dy.mutable_data<T>(yd, ctx.place());
        dy.set_layout(TIDE_LAYOUT_ANY);
        dy.set_format(0);
        SumPlain(static_cast<const T*>(prod.get_data_handle()), b, dyd);
      }
    }
    e.Wait();
  });
}

template <typename T>
void AddKernel(KernelContext& ctx) {
  BinaryKernel<T, dnnl::algorithm::binary_add>(ctx);
}
template <typename T>
void MulKernel(KernelContext& ctx) {
  BinaryKernel<T, dnnl::algorithm::binary_mul>(ctx);
}
template <typename T>
void SubKernel(KernelContext& ctx) {
  BinaryKernel<T, dnnl::algorithm::binary_sub>(ctx);
}

}  // namespace
}  // namespace tide_mkldnn

using namespace tide_mkldnn;  // NOLINT: registration macros below

TIDE_MKLDNN_KERNEL_F32_BF16("elementwise_add", AddKernel);
TIDE_MKLDNN_KERNEL_F32_BF16("elementwise_add_grad", AddGradKernel);
// elementwise_mul in bfloat16 only: in float32 the plain kernel measured faster on plain data
// (issue 17's rule for the add), and the mul's grad here runs on plain data.
TIDE_ON_REGISTER([](tide::Registrar& r) {
  using tide_mkldnn::OnBf16Isa;
  r.Kernel("elementwise_mul", "cpu", TIDE_BF16, &OnBf16Isa<&MulKernel<tide::bfloat16>>,
           TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
  r.Kernel("elementwise_mul_grad", "cpu", TIDE_BF16, &OnBf16Isa<&MulGradKernel<tide::bfloat16>>,
           TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
  // The sub forward only (bf16 inference: an interleaved rotary embedding's x0 cos - x1 sin
  // between bfloat16 products); AMP training keeps it float32 for want of a bfloat16 grad.
  r.Kernel("elementwise_sub", "cpu", TIDE_BF16, &OnBf16Isa<&SubKernel<tide::bfloat16>>,
           TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
});
