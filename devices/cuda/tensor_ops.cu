// tensor_ops.cu: ops_nn's data-moving ops on the GPU: lookup_table(_v2) (+ dense or SelectedRows
// grad), concat (+grad), split, stack / unstack (+grad), transpose/transpose2 (+grads),
// reshape/reshape2, flatten/flatten2, flatten_contiguous_range, squeeze2/unsqueeze2 (+grads), with
// ops_nn's shape rules and messages.
#include <string>
#include <tide/ops/index_shape.hpp>
#include <tide/ops/lookup_table.hpp>
#include <tide/ops/reshape.hpp>
#include <tide/ops/split_concat.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <tide/ops/transpose.hpp>

#include "gpu.h"
#include "host_ints.h"

namespace tide_cuda {
namespace {

using tide::ops::FlattenDims;
using tide::ops::ReshapeDims;

// ---------------------------------------------------------------------------------------------
// lookup_table (tide/ops/lookup_table.hpp reads the inputs; the ids are checked on the device)
using tide::ops::kNoPaddingIdx;

// A SelectedRows W (a parameter server's table, looked up by id on the CPU) is not done here.
void RefuseRowsTable(const KernelContext& ctx) {
  tide::Variable w = ctx.InputVar("W");
  if (w && w.IsSelectedRows())
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(),
               "': the CUDA kernel does not take a SelectedRows W ('", ctx.InputName("W"),
               "') yet; run the op on the CPU");
}

// Out row i = W[ids[i]], zeros for padding_idx; an id out of range is a device error (zeros).
template <typename T>
__global__ void LookupKernel(const T* w, const int64_t* ids, int64_t padding, int64_t v, int64_t d,
                             T* out, int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / d, j = e - i * d;
    const int64_t id = ids[i];
    if (padding != kNoPaddingIdx && id == padding) {
      out[e] = T(0);
    } else if (id < 0 || id >= v) {
      if (j == 0) RaiseDeviceError(err, kIdOutOfRange);
      out[e] = T(0);
    } else {
      out[e] = w[id * d + j];
    }
  }
}

template <typename T>
void Lookup(KernelContext& ctx) {
  Gpu g(ctx);
  RefuseRowsTable(ctx);
  const auto a = tide::ops::GetLookupArgs<T>(ctx, /*host_ids=*/false);
  Launch(g, "LookupKernel", a.n * a.d, LookupKernel<T>, a.w, a.ids, a.padding, a.v, a.d, a.out,
         a.n * a.d, g.error_word());
}

// Dense W@GRAD: rows summed per id (atomics: an id may repeat), padding_idx skipped.
template <typename T>
__global__ void LookupGradDenseKernel(const int64_t* ids, const T* dout, int64_t padding, int64_t v,
                                      int64_t d, T* dw, int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / d, j = e - i * d;
    const int64_t id = ids[i];
    if (padding != kNoPaddingIdx && id == padding) continue;
    if (id < 0 || id >= v) {
      if (j == 0) RaiseDeviceError(err, kIdOutOfRange);
      continue;
    }
    atomicAdd(dw + id * d + j, dout[e]);
  }
}

// The SelectedRows value: Out@GRAD's rows, zeros where the id is padding_idx.
template <typename T>
__global__ void ZeroPaddingRowsKernel(const int64_t* ids, int64_t padding, int64_t d, T* value,
                                      int64_t total) {
  TIDE_CUDA_LOOP(e, total) {
    if (ids[e / d] == padding) value[e] = T(0);
  }
}

template <typename T>
void LookupGrad(KernelContext& ctx) {
  Gpu g(ctx);
  RefuseRowsTable(ctx);
  const auto a = tide::ops::GetLookupGradArgs<T>(ctx, /*host_ids=*/false);
  if (!a.dw) return;  // W needs no gradient
  const int64_t v = a.v, d = a.d, n = a.n, padding = a.padding;
  if (a.sparse) {
    // SelectedRows rows live on the host: the ids come back (and are checked) there.
    std::vector<int64_t> rows(static_cast<size_t>(n));
    g.CopyToHostSync(rows.data(), a.ids, sizeof(int64_t) * size_t(n));
    tide::ops::CheckLookupIds(ctx, rows.data(), n, v, padding);
    tide::SelectedRows sr = a.dw.GetSelectedRows();
    sr.set_rows(rows);
    sr.set_height(v);
    Tensor value = sr.value();
    T* vd = value.mutable_data<T>({n, d}, g.place());
    g.CopyD2D(vd, a.dout, sizeof(T) * size_t(n * d));
    if (padding != kNoPaddingIdx)
      Launch(g, "ZeroPaddingRowsKernel", n * d, ZeroPaddingRowsKernel<T>, a.ids, padding, d, vd,
             n * d);
    return;
  }
  T* dd = ctx.Output(GradVarName("W").c_str()).mutable_data<T>(a.w_dims, g.place());
  g.Zero(dd, sizeof(T) * size_t(v * d));
  Launch(g, "LookupGradDenseKernel", n * d, LookupGradDenseKernel<T>, a.ids, a.dout, padding, v, d,
         dd, n * d, g.error_word());
}

// ---------------------------------------------------------------------------------------------
// concat / split / stack / unstack: tide/ops/split_concat.hpp reads them (AxisTensor and
// SectionsTensorList read back to the host).
// [pre, n_i, post] blocks of the parts in and out of a [pre, sum n_i, post]
// whole, one strided 2-D copy per part.
template <typename T>
void CopyParts(const Gpu& g, bool join, int64_t pre, int64_t post, int64_t total,
               const std::vector<int64_t>& sizes, const T* const* parts_in, T* const* parts_out,
               T* whole_out, const T* whole_in) {
  int64_t offset = 0;
  const size_t pitch = sizeof(T) * size_t(total * post);
  for (size_t p = 0; p < sizes.size(); ++p) {
    const int64_t width = sizes[p] * post;
    const size_t bytes = sizeof(T) * size_t(width);
    if (pre > 0 && width > 0) {
      if (join && parts_in[p])
        TIDE_CUDA_CHECK(g, cudaMemcpy2DAsync(whole_out + offset, pitch, parts_in[p], bytes, bytes,
                                             size_t(pre), cudaMemcpyDeviceToDevice, g.stream()));
      if (!join && parts_out[p])
        TIDE_CUDA_CHECK(g, cudaMemcpy2DAsync(parts_out[p], bytes, whole_in + offset, pitch, bytes,
                                             size_t(pre), cudaMemcpyDeviceToDevice, g.stream()));
    }
    offset += width;
  }
}
template <typename T>
void Join(const Gpu& g, const tide::ops::JoinArgs<T>& a) {
  CopyParts<T>(g, true, a.pre, a.post, a.total, a.sizes, a.parts.data(), nullptr, a.whole, nullptr);
}
template <typename T>
void Cut(const Gpu& g, const tide::ops::CutArgs<T>& a) {
  CopyParts<T>(g, false, a.pre, a.post, a.total, a.sizes, nullptr, a.parts.data(), nullptr,
               a.whole);
}

template <typename T>
void Concat(KernelContext& ctx) {
  Gpu g(ctx);
  Join(g, tide::ops::GetConcatArgs<T>(ctx, ReadBack{g}));
}

template <typename T>
void ConcatGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Cut(g, tide::ops::GetConcatGradArgs<T>(ctx, ReadBack{g}));
}

template <typename T>
void Split(KernelContext& ctx) {
  Gpu g(ctx);
  Cut(g, tide::ops::GetSplitArgs<T>(ctx, ReadBack{g}));
}

// stack: inputs [pre, post] each, Out [pre, n, post]; unstack (also stack's grad) the reverse.
// One strided 2-D copy per input.
template <typename T>
void StackKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Join(g, tide::ops::GetStackArgs<T>(ctx));
}

template <typename T>
void UnstackKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Cut(g, tide::ops::GetUnstackArgs<T>(ctx));
}

template <typename T>
void StackGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Cut(g, tide::ops::GetStackGradArgs<T>(ctx));
}

// ---------------------------------------------------------------------------------------------
// transpose
constexpr int kMaxRank = 9;

// Out dims and, for each out dim, the input stride it walks.
struct PermView {
  int rank;
  int64_t dims[kMaxRank];
  int64_t strides[kMaxRank];
};

template <typename T>
__global__ void TransposeKernel(const T* in, T* out, PermView v, int64_t n) {
  TIDE_CUDA_LOOP(j, n) {
    int64_t rest = j, src = 0;
    for (int i = v.rank - 1; i >= 0; --i) {
      const int64_t q = rest / v.dims[i];
      src += (rest - q * v.dims[i]) * v.strides[i];
      rest = q;
    }
    out[j] = in[src];
  }
}

template <typename T>
void TransposeData(const Gpu& g, const T* in, const Dims& in_dims, const std::vector<int>& perm,
                   T* out) {
  const int r = static_cast<int>(in_dims.size());
  const int64_t n = DimsProduct(in_dims);
  if (n == 0) return;
  TIDE_CHECK(r <= kMaxRank, "op '", g.op(), "': the GPU kernel takes rank <= ", kMaxRank,
             ", X has rank ", r);
  PermView v{};
  v.rank = r;
  std::vector<int64_t> in_stride(r, 1);
  for (int i = r - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * in_dims[i + 1];
  for (int i = 0; i < r; ++i) {
    v.dims[i] = in_dims[perm[i]];
    v.strides[i] = in_stride[perm[i]];
  }
  Launch(g, "TransposeKernel", n, TransposeKernel<T>, in, out, v, n);
}

template <typename T>
void Transpose(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetTransposeArgs<T>(ctx);
  TransposeData(g, a.x, a.x_dims, a.perm, a.out);
}

template <typename T>
void TransposeGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const auto a = tide::ops::GetTransposeGradArgs<T>(ctx);
  TransposeData(g, a.dout, a.dout_dims, a.inverse, a.dx);
}

// ---------------------------------------------------------------------------------------------
// reshape / flatten: Out = X's data with new dims (a copy on the stream, unless Out is X or
// Out's memory is X's: the executor moved a dying X's memory into Out, TideOpDef.views).
template <typename T>
void CopyWithDims(const Gpu& g, Tensor src, Tensor dst, const Dims& dims) {
  if (dst.c() == src.c()) {
    dst.Resize(dims);
    return;
  }
  const T* s = src.data<T>();
  T* d = dst.mutable_data<T>(dims, g.place());
  if (d != s) g.CopyD2D(d, s, sizeof(T) * size_t(src.numel()));
}

template <typename T>
void Reshape(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  Dims od = ReshapeDims(ctx.op_type(), tide::ops::ReshapeTarget(ctx, ReadBack{g}), x.dims());
  CopyWithDims<T>(g, x, ctx.Output("Out"), od);
}

template <typename T>
void Flatten(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  CopyWithDims<T>(g, x, ctx.Output("Out"),
                  FlattenDims(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("axis")));
}

// Paddle 2.x's flatten_contiguous_range: dims [start_axis, stop_axis] merged.
template <typename T>
void FlattenRange(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  CopyWithDims<T>(
      g, x, ctx.Output("Out"),
      tide::ops::FlattenRangeDims(ctx.op_type(), x.dims(), ctx.Attr<int32_t>("start_axis"),
                                  ctx.Attr<int32_t>("stop_axis")));
}

// squeeze2 / unsqueeze2. Paddle 2.x's unsqueeze2: AxesTensor (1-D) or AxesTensorList (one value
// each), read back to the host, override axes.
template <typename T>
void Squeeze(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  CopyWithDims<T>(g, x, ctx.Output("Out"), tide::ops::SqueezeOutDims(ctx, x.dims(), ReadBack{g}));
}

// X@GRAD = Out@GRAD with X's dims.
template <typename T>
void ReshapeGrad(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  CopyWithDims<T>(g, dout, ctx.Output(GradVarName("X").c_str()),
                  tide::ops::ReshapeGradXDims(ctx, dout));
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

#define TIDE_CUDA_MOVE_TYPES float, double, int32_t, int64_t
TIDE_REGISTER_KERNEL("lookup_table", "gpu", Lookup, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lookup_table_grad", "gpu", LookupGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lookup_table_v2", "gpu", Lookup, TIDE_CUDA_FLOAT_TYPES);  // int64 Ids
TIDE_REGISTER_KERNEL("lookup_table_v2_grad", "gpu", LookupGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("concat", "gpu", TIDE_HOST_INPUTS("AxisTensor"), Concat,
                                 TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("concat_grad", "gpu", TIDE_HOST_INPUTS("AxisTensor"), ConcatGrad,
                                 TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("split", "gpu",
                                 TIDE_HOST_INPUTS("AxisTensor", "SectionsTensorList"), Split,
                                 TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("stack", "gpu", StackKernel, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("stack_grad", "gpu", StackGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("unstack", "gpu", UnstackKernel, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("transpose", "gpu", Transpose, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("transpose2", "gpu", Transpose, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("transpose_grad", "gpu", TransposeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("transpose2_grad", "gpu", TransposeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("reshape", "gpu", TIDE_HOST_INPUTS("Shape", "ShapeTensor"),
                                 Reshape, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("reshape2", "gpu", TIDE_HOST_INPUTS("Shape", "ShapeTensor"),
                                 Reshape, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("flatten", "gpu", Flatten, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("flatten2", "gpu", Flatten, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("reshape_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reshape2_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("flatten_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("flatten2_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("flatten_contiguous_range", "gpu", FlattenRange, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("flatten_contiguous_range_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("squeeze2", "gpu", Squeeze, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL_HOST_INPUTS("unsqueeze2", "gpu",
                                 TIDE_HOST_INPUTS("AxesTensor", "AxesTensorList"), Squeeze,
                                 TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("squeeze2_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("unsqueeze2_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
