// matmul_kernels.cc: mul, matmul and matmul_v2 and their grads in bfloat16 on oneDNN's matmul
// primitive (brgemm with AMX dot products where the CPU has them; oneDNN accumulates in float32
// and rounds the result once; without AMX, in float32 on widened operands: WidenedBf16Gemm). In
// float32 the plain kernels (one GEMM each) stay: these are registered for bfloat16 only, where
// the alternative is the float32 kernel on widened data.
//
// Every operand is a stack of row-major matrices read in place: a transposed operand (matmul's
// transpose_X / trans_x, and the grads' transposes) is the same bytes with swapped strides, so no
// copy is made. Batch dims: equal on both sides, or one side a single matrix (broadcast over the
// other's batch). The grads take what folds into one oneDNN matmul per output (a single-matrix Y
// under a batched, untransposed X: dY sums over the batch as one [B*M, K]^T x [B*M, N] product);
// other batch broadcasts and rank-1 operands decline (the float32 kernel runs them widened).
#include <cstring>
#include <memory>
#include <tide/eigen.hpp>
#include <tide/gemm_skinny.hpp>
#include <tide/ops/dims.hpp>
#include <vector>

#include "mkldnn_context.h"

namespace tide_mkldnn {
namespace {

// A stack of `batch` matrices [rows, cols] at `data`: row-major, or (trans) the transpose of
// row-major [cols, rows] storage.
struct Mat {
  const void* data = nullptr;
  int64_t batch = 1, rows = 0, cols = 0;
  bool trans = false;
};

Mat Transposed(Mat m) {
  std::swap(m.rows, m.cols);
  m.trans = !m.trans;
  return m;
}

memory::desc MatDesc(const Mat& m, memory::data_type dt) {
  const memory::dims strides =
      m.trans ? memory::dims{m.rows * m.cols, 1, m.rows} : memory::dims{m.rows * m.cols, m.cols, 1};
  return memory::desc({m.batch, m.rows, m.cols}, dt, strides);
}

int64_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

struct Matmul {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
};

void Gemm(Exec& e, const char* op, const Mat& a, const Mat& b, void* out, float alpha,
          memory::data_type dt, const Tensor* b_tensor = nullptr);

// Gemm in float32 on widened bfloat16 operands, the result rounded to bfloat16 once: the same
// products (bf16 x bf16 is exact in float32) and float32 accumulation as oneDNN's bfloat16
// kernels, so their results up to the order of the additions. Where the CPU's bfloat16 dot
// products are not faster than its float32 FMAs (AVX-512 BF16 without AMX issues vdpbf16ps at
// half their rate): 128x1024x1024 took 1.7 ms in bf16 against 1.1 ms in float32 on a Xeon.
bool WidenedBf16Gemm(memory::data_type dt) {
  return dt == memory::data_type::bf16 && Bf16Isa() != "AMX";
}
// `b_tensor`: the tensor b views (Y, the weights a training step reads forward and backward),
// whose widened copy is kept until its bytes change; null: b is widened for this call only.
void WidenedGemm(Exec& e, const char* op, const Mat& a, const Mat& b, void* out, float alpha,
                 const Tensor* b_tensor) {
  using dt = memory::data_type;
  auto widen = [&](const Mat& m, const Tensor* kept) {
    const Mat stored = m.trans ? Transposed(m) : m;  // one copy for both uses of a tensor
    const memory bf = e.View(MatDesc(stored, dt::bf16), stored.data);
    memory wide;
    if (kept) {
      wide = e.ConvertKept(*kept, bf, MatDesc(stored, dt::f32));
    } else {
      wide = e.TempMemory(MatDesc(stored, dt::f32));
      e.Reorder(bf, wide);
    }
    Mat w = m;
    w.data = wide.get_data_handle();
    return w;
  };
  const Mat c{out, std::max(a.batch, b.batch), a.rows, b.cols, false};
  memory result = e.TempMemory(MatDesc(c, dt::f32));
  Gemm(e, op, widen(a, nullptr), widen(b, b_tensor), result.get_data_handle(), alpha, dt::f32);
  e.Reorder(result, e.View(MatDesc(c, dt::bf16), out));
}

// out[batch, a.rows, b.cols] = alpha * a x b, written row-major to `out` (a's or b's batch of 1
// broadcast over the other's).
// The cached oneDNN matmul of alpha * a x b (the matrices' dims and strides, not their data; in
// float32 where the bfloat16 product is widened), or a decline (UNIMPLEMENTED) where oneDNN would
// run its reference implementation. A kernel asks for each of its products before it allocates
// an output, since a kernel may decline only before it writes one.
std::shared_ptr<Matmul> GemmPrimitive(Exec& e, const char* op, const Mat& a, const Mat& b,
                                      float alpha, memory::data_type dt) {
  if (WidenedBf16Gemm(dt)) dt = memory::data_type::f32;
  TIDE_CHECK(a.cols == b.rows, "op '", op, "' (oneDNN kernel): inner dims ", a.cols, " and ",
             b.rows, " differ");
  const Mat c{nullptr, std::max(a.batch, b.batch), a.rows, b.cols, false};
  const memory::desc amd = MatDesc(a, dt), bmd = MatDesc(b, dt), cmd = MatDesc(c, dt);
  std::string key = Key(op)(Bits(alpha)).str();
  for (const memory::desc* md : {&amd, &bmd, &cmd})
    key.append(reinterpret_cast<const char*>(&md->data), sizeof(md->data));
  auto entry = e.cache().GetOrCreate<Matmul>(key, [&] {
    dnnl::primitive_attr attr = DefaultAttr();
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, cmd), attr, e.engine());
    return Matmul{pd, dnnl::matmul(pd)};
  });
  DeclineReferenceImpl(op, entry->pd);
  return entry;
}

void Gemm(Exec& e, const char* op, const Mat& a, const Mat& b, void* out, float alpha,
          memory::data_type dt, const Tensor* b_tensor) {
  if (WidenedBf16Gemm(dt)) return WidenedGemm(e, op, a, b, out, alpha, b_tensor);
  const std::shared_ptr<Matmul> entry = GemmPrimitive(e, op, a, b, alpha, dt);
  const Mat c{out, std::max(a.batch, b.batch), a.rows, b.cols, false};
  e.Run(entry->prim, entry->pd,
        {{DNNL_ARG_SRC, e.View(MatDesc(a, dt), a.data)},
         {DNNL_ARG_WEIGHTS, e.View(MatDesc(b, dt), b.data)},
         {DNNL_ARG_DST, e.View(MatDesc(c, dt), c.data)}});
}

// out [a.rows, N] = alpha * a x op(Y) in bfloat16 for a few rows of a (a decode step's tokens)
// against one Y matrix, y_storage as stored ([K, N], or [N, K] used transposed with ty):
// tide/gemm_skinny.hpp reads Y once, in bfloat16, widening it as it goes, with a's rows widened
// first and the sums in float32, rounded to bfloat16 once. oneDNN's bfloat16 matmul read a LLaMA
// decode step's weights at batch 4 at under half the rate the float32 skinny kernel reads
// float32 ones, so that bfloat16 weights, half the bytes, ran slower than float32.
void SkinnyBf16(const KernelContext& ctx, const Mat& a, const Mat& y_storage, bool ty, void* out,
                float alpha) {
  const int64_t m = a.rows, k = a.cols, n = ty ? y_storage.rows : y_storage.cols;
  const auto* ad = static_cast<const tide::bfloat16*>(a.data);
  std::vector<float> wide(static_cast<size_t>(m * k)), c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<float>(ad[i]);
  const auto* yd = static_cast<const uint16_t*>(y_storage.data);
  constexpr int64_t kQ = tide::skinny::kColumnQuantum;
  tide::ParallelFor(ctx, (n + kQ - 1) / kQ, 2 * m * k * kQ, [&](int64_t q0, int64_t q1) {
    const int64_t n0 = q0 * kQ, n1 = std::min(n, q1 * kQ);
    tide::SkinnyGemmColumnsBf16(ty, m, n0, n1, k, alpha, wide.data(), k, yd, y_storage.cols, 0.0f,
                                c.data(), n);
    auto* od = static_cast<tide::bfloat16*>(out);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = n0; j < n1; ++j) od[i * n + j] = tide::bfloat16(c[i * n + j]);
  });
}

// The op's operands in matrix terms: X and Y as stored ([batch, rows, cols]), the transposes the
// op applies, Out's dims.
struct Problem {
  Mat x, y;  // storage views (never transposed)
  bool tx = false, ty = false;
  float alpha = 1.0f;
  Dims out;
};

// The batch of dims `d` above its last two, and whether `d` has any.
int64_t Batch(const Dims& d) { return DimsProduct(Dims(d.begin(), d.end() - 2)); }

Problem MulProblem(const KernelContext& ctx, const Tensor& x, const Tensor& y) {
  const int xc = ctx.Attr<int32_t>("x_num_col_dims"), yc = ctx.Attr<int32_t>("y_num_col_dims");
  const auto [m, k] = tide::ops::Flatten2D(x.dims(), xc);
  const auto [k2, n] = tide::ops::Flatten2D(y.dims(), yc);
  TIDE_CHECK(k == k2, "op '", ctx.op_type(), "': X's ", k, " columns (x_num_col_dims ", xc,
             ") do not match Y's ", k2, " rows (y_num_col_dims ", yc, ")");
  Problem p;
  p.x = {x.raw_data(), 1, m, k};
  p.y = {y.raw_data(), 1, k, n};
  const Dims xd = x.dims(), yd = y.dims();
  p.out.assign(xd.begin(), xd.begin() + xc);
  p.out.insert(p.out.end(), yd.begin() + yc, yd.end());
  return p;
}

// matmul (v1: transpose_X / transpose_Y, alpha) and matmul_v2 (trans_x / trans_y).
Problem MatmulProblem(const KernelContext& ctx, const Tensor& x, const Tensor& y) {
  const char* op = ctx.op_type();
  const bool v2 = ctx.HasAttr("trans_x");
  Problem p;
  p.tx = ctx.Attr<bool>(v2 ? "trans_x" : "transpose_X");
  p.ty = ctx.Attr<bool>(v2 ? "trans_y" : "transpose_Y");
  if (!v2) p.alpha = ctx.Attr<float>("alpha");
  const Dims xd = x.dims(), yd = y.dims();
  if (xd.size() < 2 || yd.size() < 2)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(xd),
               " or Y ", tide::ToString(yd), " is a vector");
  const Dims xb(xd.begin(), xd.end() - 2), yb(yd.begin(), yd.end() - 2);
  if (!xb.empty() && !yb.empty() && xb != yb)
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): X ", tide::ToString(xd),
               " and Y ", tide::ToString(yd), " have different batch dims");
  p.x = {x.raw_data(), Batch(xd), xd[xd.size() - 2], xd.back()};
  p.y = {y.raw_data(), Batch(yd), yd[yd.size() - 2], yd.back()};
  const Mat a = p.tx ? Transposed(p.x) : p.x, b = p.ty ? Transposed(p.y) : p.y;
  TIDE_CHECK(a.cols == b.rows, "op '", op, "': X ", tide::ToString(xd), " and Y ",
             tide::ToString(yd), " (transpose ", p.tx, ", ", p.ty, ") have inner dims ", a.cols,
             " and ", b.rows);
  p.out = xb.empty() ? yb : xb;
  p.out.push_back(a.rows);
  p.out.push_back(b.cols);
  return p;
}

using ProblemFn = Problem (*)(const KernelContext&, const Tensor&, const Tensor&);

// X and Y plain (a blocked X, e.g. a pooled feature map read by mul, is reordered first).
struct Operands {
  Tensor x, y;
  memory xm, ym;
};
Operands PlainOperands(Exec& e, const KernelContext& ctx) {
  Operands o{ctx.Input("X"), ctx.Input("Y"), {}, {}};
  o.xm = PlainView(e, o.x, ctx.op_type(), "X");
  o.ym = PlainView(e, o.y, ctx.op_type(), "Y");
  return o;
}

template <ProblemFn kProblem, typename T>
void Forward(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Exec e(ctx);
    Operands o = PlainOperands(e, ctx);
    Problem p = kProblem(ctx, o.x, o.y);
    p.x.data = o.xm.get_data_handle();
    p.y.data = o.ym.get_data_handle();
    Mat a = p.tx ? Transposed(p.x) : p.x;
    // A batch of X's matrices over one Y matrix, X untransposed (a linear layer on [B, S, K]):
    // one [B * S, K] x [K, N] product, as the grads fold it. oneDNN's batch broadcast of Y ran
    // a LLaMA decode step's projections at batch 4 (S = 1) at a third of the float32 GEMM's
    // speed.
    if (!p.tx && p.y.batch == 1 && p.x.batch > 1) a = {a.data, 1, a.batch * a.rows, a.cols};
    bool skinny = false;
    if constexpr (std::is_same_v<T, tide::bfloat16>)
      skinny = !a.trans && a.batch == 1 && p.y.batch == 1 && a.rows <= tide::skinny::kMaxRows;
    const Mat b = p.ty ? Transposed(p.y) : p.y;
    if (!skinny) GemmPrimitive(e, op, a, b, p.alpha, DnnlTypeOf<T>());  // declines before Out
    Tensor out = ctx.Output("Out");
    out.Resize(p.out);
    void* od = out.mutable_data(tide::DataTypeOf<T>(), ctx.place());
    out.set_layout(TIDE_LAYOUT_ANY);
    out.set_format(0);
    if (skinny) {
      e.Wait();  // a reorder of a blocked X to plain may still be running
      SkinnyBf16(ctx, a, p.y, p.ty, od, p.alpha);
      return;
    }
    Gemm(e, op, a, b, od, p.alpha, DnnlTypeOf<T>(), &o.y);
    e.Wait();
  });
}

// A = op(X) [b, M, K], B = op(Y) [b, K, N], G = Out@GRAD [b, M, N]:
// dX = tx ? alpha B G^T : alpha G B^T; dY = ty ? alpha G^T A : alpha A^T G.
template <ProblemFn kProblem, typename T>
void Backward(KernelContext& ctx) {
  const char* op = ctx.op_type();
  Guarded(op, [&] {
    Tensor dx = ctx.OptionalOutput(tide::GradVarName("X").c_str());
    Tensor dy = ctx.OptionalOutput(tide::GradVarName("Y").c_str());
    if (!dx && !dy) return;
    Tensor x = ctx.Input("X"), y = ctx.Input("Y");
    Tensor dout = ctx.Input(tide::GradVarName("Out").c_str());
    Problem p = kProblem(ctx, x, y);
    tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), p.out);
    // Batch broadcasts the grads fold into one matmul: Y a single matrix under an untransposed X.
    const bool y_broadcast = p.y.batch == 1 && p.x.batch > 1;
    if ((y_broadcast && p.tx) || (p.x.batch == 1 && p.y.batch > 1))
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): the grad of X ",
                 tide::ToString(x.dims()), " times Y ", tide::ToString(y.dims()),
                 " sums over a broadcast batch");
    Exec e(ctx);
    Operands o = PlainOperands(e, ctx);
    p.x.data = o.xm.get_data_handle();
    p.y.data = o.ym.get_data_handle();
    memory gm = PlainView(e, dout, op, "Out@GRAD");
    const Mat a = p.tx ? Transposed(p.x) : p.x, b = p.ty ? Transposed(p.y) : p.y;
    const Mat g{gm.get_data_handle(), std::max(a.batch, b.batch), a.rows, b.cols};
    const auto dt = DnnlTypeOf<T>();
    auto alloc = [&](Tensor& t, const Dims& d) {
      t.Resize(d);
      void* ptr = t.mutable_data(tide::DataTypeOf<T>(), ctx.place());
      t.set_layout(TIDE_LAYOUT_ANY);
      t.set_format(0);
      return ptr;
    };
    // Each grad's product (lhs x rhs), asked of oneDNN before either grad is allocated.
    Mat dx_l = p.tx ? b : g, dx_r = p.tx ? Transposed(g) : Transposed(b);
    Mat af = a, gf = g;  // a broadcast Y's grad sums over the batch: [B*M, K]^T x [B*M, N]
    if (y_broadcast) {
      af = {a.data, 1, a.batch * a.rows, a.cols};
      gf = {g.data, 1, g.batch * g.rows, g.cols};
    }
    Mat dy_l = p.ty ? Transposed(gf) : Transposed(af), dy_r = p.ty ? af : gf;
    if (dx) GemmPrimitive(e, op, dx_l, dx_r, p.alpha, dt);
    if (dy) GemmPrimitive(e, op, dy_l, dy_r, p.alpha, dt);
    if (dx) Gemm(e, op, dx_l, dx_r, alloc(dx, x.dims()), p.alpha, dt, p.tx ? nullptr : &o.y);
    if (dy) Gemm(e, op, dy_l, dy_r, alloc(dy, y.dims()), p.alpha, dt);
    e.Wait();
  });
}

template <typename T>
void MulKernel(KernelContext& ctx) {
  Forward<MulProblem, T>(ctx);
}
template <typename T>
void MulGradKernel(KernelContext& ctx) {
  Backward<MulProblem, T>(ctx);
}
template <typename T>
void MatmulKernel(KernelContext& ctx) {
  Forward<MatmulProblem, T>(ctx);
}
template <typename T>
void MatmulGradKernel(KernelContext& ctx) {
  Backward<MatmulProblem, T>(ctx);
}

}  // namespace
}  // namespace tide_mkldnn

TIDE_ON_REGISTER([](tide::Registrar& r) {
  using namespace tide_mkldnn;  // NOLINT
  using BF16 = tide::bfloat16;
  const std::pair<const char*, tide::KernelFn> kernels[] = {
      {"mul", &OnBf16Isa<&MulKernel<BF16>>},
      {"mul_grad", &OnBf16Isa<&MulGradKernel<BF16>>},
      {"matmul", &OnBf16Isa<&MatmulKernel<BF16>>},
      {"matmul_grad", &OnBf16Isa<&MatmulGradKernel<BF16>>},
      {"matmul_v2", &OnBf16Isa<&MatmulKernel<BF16>>},
      {"matmul_v2_grad", &OnBf16Isa<&MatmulGradKernel<BF16>>},
  };
  for (const auto& [op, fn] : kernels)
    r.Kernel(op, "cpu", TIDE_BF16, fn, TIDE_LAYOUT_ONEDNN, "mkldnn", 0);
});
