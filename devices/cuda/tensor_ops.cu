// tensor_ops.cu: ops_nn's data-moving ops on the GPU: lookup_table (+ dense or SelectedRows grad),
// concat (+grad), split, stack / unstack (+grad), transpose/transpose2 (+grads), reshape/reshape2,
// flatten/flatten2, flatten_contiguous_range, squeeze2/unsqueeze2 (+grads), with ops_nn's shape
// rules and messages.
#include <tide/ops/index_shape.hpp>
#include <tide/ops/reshape.hpp>
#include <tide/ops/split_concat.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <tide/ops/transpose.hpp>

#include <string>

#include "gpu.h"
#include "host_ints.h"

namespace tide_cuda {
namespace {

using tide::ops::CheckedPerm;
using tide::ops::FlattenDims;
using tide::ops::ForwardXDims;
using tide::ops::InversePerm;
using tide::ops::NormAxis;
using tide::ops::Permuted;
using tide::ops::ReshapeDims;

// ---------------------------------------------------------------------------------------------
// lookup_table
constexpr int64_t kNoPadding = -1;

Dims LookupOutDims(const char* op, const Dims& w, const Dims& ids) {
  TIDE_CHECK(w.size() == 2, "op '", op, "': W must be 2-D [V, D], got ", tide::ToString(w));
  TIDE_CHECK(!ids.empty(), "op '", op, "': Ids must have rank >= 1");
  Dims out = ids;
  if (ids.size() >= 2) {
    TIDE_CHECK(ids.back() == 1, "op '", op, "': Ids ", tide::ToString(ids),
               " must be [N] or end in 1 (e.g. [N, 1])");
    out.pop_back();
  }
  out.push_back(w[1]);
  return out;
}

// A SelectedRows W (a parameter server's table, looked up by id on the CPU) is not done here.
void RefuseRowsTable(const KernelContext& ctx) {
  tide::Variable w = ctx.InputVar("W");
  if (w && w.IsSelectedRows())
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", ctx.op_type(), "': the CUDA kernel does not take a SelectedRows W ('",
               ctx.InputName("W"), "') yet; run the op on the CPU");
}

const int64_t* IdsOf(const KernelContext& ctx, const Tensor& ids) {
  TIDE_CHECK(ids.dtype() == TIDE_INT64, "op '", ctx.op_type(), "': Ids ('", ctx.InputName("Ids"),
             "') must be int64, got ", tide::DataTypeName(ids.dtype()));
  return ids.data<int64_t>();
}

// Out row i = W[ids[i]], zeros for padding_idx; an id out of range is a device error (zeros).
template <typename T>
__global__ void LookupKernel(const T* w, const int64_t* ids, int64_t padding, int64_t v,
                             int64_t d, T* out, int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / d, j = e - i * d;
    const int64_t id = ids[i];
    if (padding != kNoPadding && id == padding) {
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
  const char* op = ctx.op_type();
  RefuseRowsTable(ctx);
  Tensor w = ctx.Input("W"), ids = ctx.Input("Ids"), out = ctx.Output("Out");
  const int64_t padding = ctx.Attr<int64_t>("padding_idx");
  Dims od = LookupOutDims(op, w.dims(), ids.dims());
  const int64_t v = w.dim(0), d = w.dim(1), n = ids.numel();
  const int64_t* id = IdsOf(ctx, ids);
  const T* wd = w.data<T>();
  T* o = out.mutable_data<T>(od, g.place());
  Launch(g, "LookupKernel", n * d, LookupKernel<T>, wd, id, padding, v, d, o, n * d,
         g.error_word());
}

// Dense W@GRAD: rows summed per id (atomics: an id may repeat), padding_idx skipped.
template <typename T>
__global__ void LookupGradDenseKernel(const int64_t* ids, const T* dout, int64_t padding, int64_t v,
                                      int64_t d, T* dw, int64_t total, int* err) {
  TIDE_CUDA_LOOP(e, total) {
    const int64_t i = e / d, j = e - i * d;
    const int64_t id = ids[i];
    if (padding != kNoPadding && id == padding) continue;
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
  const char* op = ctx.op_type();
  RefuseRowsTable(ctx);
  Tensor w = ctx.Input("W"), ids = ctx.Input("Ids");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  const int64_t padding = ctx.Attr<int64_t>("padding_idx");
  const int64_t v = w.dim(0), d = w.dim(1), n = ids.numel();
  TIDE_CHECK(dout.numel() == n * d, "op '", op, "': Out@GRAD ", tide::ToString(dout.dims()),
             " does not hold one row of ", d, " per id (", n, " ids)");
  const int64_t* id = IdsOf(ctx, ids);
  const T* gd = dout.data<T>();
  const std::string gname = GradVarName("W");
  tide::Variable var = ctx.OutputVar(gname.c_str());
  if (!var) return;  // W needs no gradient
  if (ctx.Attr<bool>("is_sparse") && !(var.IsTensor() && var.GetTensor().initialized())) {
    // SelectedRows rows live on the host: the ids come back (and are checked) there.
    std::vector<int64_t> rows(static_cast<size_t>(n));
    g.CopyToHostSync(rows.data(), id, sizeof(int64_t) * size_t(n));
    for (int64_t i = 0; i < n; ++i) {
      if (padding != kNoPadding && rows[i] == padding) continue;
      TIDE_CHECK(rows[i] >= 0 && rows[i] < v, "op '", op, "': Ids ('", ctx.InputName("Ids"),
                 "')[", i, "] = ", rows[i], " is out of range for W ('", ctx.InputName("W"),
                 "') with ", v, " rows");
    }
    tide::SelectedRows sr = var.GetSelectedRows();
    sr.set_rows(rows);
    sr.set_height(v);
    Tensor value = sr.value();
    T* vd = value.mutable_data<T>({n, d}, g.place());
    g.CopyD2D(vd, gd, sizeof(T) * size_t(n * d));
    if (padding != kNoPadding)
      Launch(g, "ZeroPaddingRowsKernel", n * d, ZeroPaddingRowsKernel<T>, id, padding, d, vd,
             n * d);
    return;
  }
  Tensor dw = ctx.Output(gname.c_str());
  T* dd = dw.mutable_data<T>(w.dims(), g.place());
  g.Zero(dd, sizeof(T) * size_t(v * d));
  Launch(g, "LookupGradDenseKernel", n * d, LookupGradDenseKernel<T>, id, gd, padding, v, d, dd,
         n * d, g.error_word());
}

// ---------------------------------------------------------------------------------------------
// concat / split. The axis: Paddle's AxisTensor (read back to the host) when given, else the
// attribute; split's SectionsTensorList likewise overrides `sections`.
int AxisOf(const KernelContext& ctx, const Gpu& g) {
  return static_cast<int>(ctx.HasInput("AxisTensor") ? HostIntScalar(ctx, g, "AxisTensor")
                                                     : ctx.Attr<int32_t>("axis"));
}

// [pre, n_i, post] blocks of the parts in and out of a [pre, sum n_i, post]
// whole, one strided 2-D copy per part.
template <typename T>
void JoinOrCut(const Gpu& g, bool join, int64_t pre, int64_t post, int64_t total,
               const std::vector<int64_t>& sizes, const std::vector<const T*>& parts_in,
               const std::vector<T*>& parts_out, T* whole_out, const T* whole_in) {
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
void Concat(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  std::vector<Tensor> xs = ctx.Inputs("X");
  std::vector<Dims> dims;
  for (const auto& x : xs) dims.push_back(x.dims());
  int axis = 0;
  Dims od = tide::ops::ConcatDims(op, dims, AxisOf(ctx, g), &axis);
  std::vector<int64_t> sizes;
  std::vector<const T*> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    TIDE_CHECK(xs[i].dtype() == xs[0].dtype(), "op '", op, "': X[", i, "] ('",
               ctx.InputName("X", i), "') is ", tide::DataTypeName(xs[i].dtype()), ", X[0] is ",
               tide::DataTypeName(xs[0].dtype()));
    sizes.push_back(dims[i][axis]);
    parts.push_back(xs[i].data<T>());
  }
  T* out = ctx.Output("Out").mutable_data<T>(od, g.place());
  JoinOrCut<T>(g, true, DimsProduct(od, 0, axis), DimsProduct(od, axis + 1, od.size()), od[axis],
               sizes, parts, {}, out, nullptr);
}

template <typename T>
void ConcatGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  std::vector<Tensor> xs = ctx.Inputs("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  std::vector<Dims> dims;
  for (const auto& x : xs) dims.push_back(x.dims());
  int axis = 0;
  Dims od = tide::ops::ConcatDims(op, dims, AxisOf(ctx, g), &axis);
  tide::ops::CheckGradDims(op, "Out@GRAD", dout.dims(), od);
  const std::string gx = GradVarName("X");
  std::vector<int64_t> sizes;
  std::vector<T*> parts;
  for (size_t i = 0; i < xs.size(); ++i) {
    sizes.push_back(dims[i][axis]);
    Tensor dx = i < ctx.OutputCount(gx.c_str()) ? ctx.OptionalOutput(gx.c_str(), i) : Tensor();
    parts.push_back(dx ? dx.mutable_data<T>(dims[i], g.place()) : nullptr);
  }
  JoinOrCut<T>(g, false, DimsProduct(od, 0, axis), DimsProduct(od, axis + 1, od.size()), od[axis],
               sizes, {}, parts, nullptr, dout.data<T>());
}

template <typename T>
void Split(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  int axis = 0;
  std::vector<int32_t> sections = ctx.Attr<std::vector<int32_t>>("sections");
  if (ctx.HasInput("SectionsTensorList")) {
    const std::vector<int64_t> v = HostIntScalars(ctx, g, "SectionsTensorList");
    sections.assign(v.begin(), v.end());
  }
  auto dims = tide::ops::SplitDims(ctx.op_type(), x.dims(), AxisOf(ctx, g),
                                   ctx.Attr<int32_t>("num"), sections, ctx.OutputCount("Out"),
                                   &axis);
  std::vector<int64_t> sizes;
  std::vector<T*> parts;
  for (size_t i = 0; i < dims.size(); ++i) {
    sizes.push_back(dims[i][axis]);
    Tensor o = ctx.OptionalOutput("Out", i);
    parts.push_back(o ? o.mutable_data<T>(dims[i], g.place()) : nullptr);
  }
  const Dims& xd = x.dims();
  JoinOrCut<T>(g, false, DimsProduct(xd, 0, axis), DimsProduct(xd, axis + 1, xd.size()), xd[axis],
               sizes, {}, parts, nullptr, x.data<T>());
}

// stack: inputs [pre, post] each, Out [pre, n, post]; unstack (also stack's grad) the reverse.
// One strided 2-D copy per input.
template <typename T>
void StackKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  std::vector<Tensor> xs = ctx.Inputs("X");
  std::vector<Dims> dims;
  for (const auto& x : xs) dims.push_back(x.dims());
  const int axis = ctx.Attr<int32_t>("axis");
  const Dims od = tide::ops::StackDims(op, dims, axis);
  const int a = NormAxis(op, axis, dims[0].size() + 1);
  const int64_t pre = DimsProduct(dims[0], 0, a), post = DimsProduct(dims[0], a, dims[0].size());
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<const T*> parts;
  for (const auto& x : xs) parts.push_back(x.data<T>());
  T* o = ctx.Output("Y").mutable_data<T>(od, g.place());
  JoinOrCut<T>(g, true, pre, post, n, std::vector<int64_t>(xs.size(), 1), parts, {}, o, nullptr);
}

template <typename T>
void Unstack(KernelContext& ctx, const Gpu& g, const Tensor& x, int axis,
             std::vector<Tensor> outs) {
  const Dims xd = x.dims();
  const int a = NormAxis(ctx.op_type(), axis, xd.size());
  const int64_t n = xd[a];
  TIDE_CHECK(static_cast<int64_t>(outs.size()) == n, "op '", ctx.op_type(), "': ", outs.size(),
             " outputs for a dim of ", n, " (axis ", axis, " of ", tide::ToString(xd), ")");
  const int64_t pre = DimsProduct(xd, 0, a), post = DimsProduct(xd, a + 1, xd.size());
  Dims od = xd;
  od.erase(od.begin() + a);
  std::vector<T*> parts;
  for (auto& o : outs) parts.push_back(o ? o.mutable_data<T>(od, g.place()) : nullptr);
  JoinOrCut<T>(g, false, pre, post, n, std::vector<int64_t>(outs.size(), 1), {}, parts, nullptr,
               x.data<T>());
}

template <typename T>
void UnstackKernel(KernelContext& ctx) {
  Gpu g(ctx);
  Unstack<T>(ctx, g, ctx.Input("X"), ctx.Attr<int32_t>("axis"), ctx.Outputs("Y"));
}

template <typename T>
void StackGradKernel(KernelContext& ctx) {
  Gpu g(ctx);
  const std::string gx = GradVarName("X");
  std::vector<Tensor> outs;
  for (size_t i = 0; i < ctx.OutputCount(gx.c_str()); ++i)
    outs.push_back(ctx.OptionalOutput(gx.c_str(), i));
  Unstack<T>(ctx, g, ctx.Input(GradVarName("Y").c_str()), ctx.Attr<int32_t>("axis"), outs);
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
  Tensor x = ctx.Input("X"), out = ctx.Output("Out");
  auto perm = CheckedPerm(ctx.op_type(), ctx.Attr<std::vector<int32_t>>("axis"), x.dims());
  const T* xd = x.data<T>();
  T* o = out.mutable_data<T>(Permuted(x.dims(), perm), g.place());
  TransposeData(g, xd, x.dims(), perm, o);
}

template <typename T>
void TransposeGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Tensor dx = ctx.Output(GradVarName("X").c_str());
  Dims xd = ForwardXDims(ctx);
  auto perm = CheckedPerm(op, ctx.Attr<std::vector<int32_t>>("axis"), xd);
  TIDE_CHECK(dout.dims() == Permuted(xd, perm), "op '", op, "': Out@GRAD has dims ",
             tide::ToString(dout.dims()), ", expected ", tide::ToString(Permuted(xd, perm)));
  const std::vector<int> inv = InversePerm(perm);
  const T* gd = dout.data<T>();
  T* d = dx.mutable_data<T>(xd, g.place());
  TransposeData(g, gd, dout.dims(), inv, d);
}

// ---------------------------------------------------------------------------------------------
// reshape / flatten: Out = X's data with new dims (a copy on the stream, unless Out is X).
// The target shape: Paddle's ShapeTensor (one value per variable) or the Shape tensor's values
// (read back to the host, in that order of precedence), else the attribute.
std::vector<int64_t> TargetShape(const KernelContext& ctx, const Gpu& g) {
  if (ctx.HasInput("ShapeTensor")) return HostIntScalars(ctx, g, "ShapeTensor");
  if (ctx.OptionalInput("Shape")) return HostIntValues(ctx, g, "Shape");
  auto a = ctx.Attr<std::vector<int32_t>>("shape");
  return std::vector<int64_t>(a.begin(), a.end());
}

template <typename T>
void CopyWithDims(const Gpu& g, Tensor src, Tensor dst, const Dims& dims) {
  if (dst.c() == src.c()) {
    dst.Resize(dims);
    return;
  }
  const T* s = src.data<T>();
  T* d = dst.mutable_data<T>(dims, g.place());
  g.CopyD2D(d, s, sizeof(T) * size_t(src.numel()));
}

template <typename T>
void Reshape(KernelContext& ctx) {
  Gpu g(ctx);
  Tensor x = ctx.Input("X");
  Dims od = ReshapeDims(ctx.op_type(), TargetShape(ctx, g), x.dims());
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
  CopyWithDims<T>(g, x, ctx.Output("Out"),
                  tide::ops::FlattenRangeDims(ctx.op_type(), x.dims(),
                                              ctx.Attr<int32_t>("start_axis"),
                                              ctx.Attr<int32_t>("stop_axis")));
}

// squeeze2 / unsqueeze2. Paddle 2.x's unsqueeze2: AxesTensor (1-D) or AxesTensorList (one value
// each), read back to the host, override axes.
template <typename T>
void Squeeze(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor x = ctx.Input("X");
  auto axes = ctx.Attr<std::vector<int32_t>>("axes");
  std::vector<int64_t> v;
  if (ctx.HasInput("AxesTensor")) v = HostIntValues(ctx, g, "AxesTensor");
  else if (ctx.HasInput("AxesTensorList")) v = HostIntScalars(ctx, g, "AxesTensorList");
  if (!v.empty()) axes.assign(v.begin(), v.end());
  const Dims od = std::string(op) == "squeeze2" ? tide::ops::SqueezeDims(op, x.dims(), axes)
                                                : tide::ops::UnsqueezeDims(op, x.dims(), axes);
  CopyWithDims<T>(g, x, ctx.Output("Out"), od);
}

// X@GRAD = Out@GRAD with X's dims.
template <typename T>
void ReshapeGrad(KernelContext& ctx) {
  Gpu g(ctx);
  const char* op = ctx.op_type();
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  Dims xd = ForwardXDims(ctx);
  TIDE_CHECK(DimsProduct(xd) == dout.numel(), "op '", op, "': Out@GRAD ",
             tide::ToString(dout.dims()), " does not have X's ", DimsProduct(xd), " elements (X ",
             tide::ToString(xd), ")");
  CopyWithDims<T>(g, dout, ctx.Output(GradVarName("X").c_str()), xd);
}

}  // namespace
}  // namespace tide_cuda

using namespace tide_cuda;  // NOLINT: registration macros below

#define TIDE_CUDA_MOVE_TYPES float, double, int32_t, int64_t
TIDE_REGISTER_KERNEL("lookup_table", "gpu", Lookup, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("lookup_table_grad", "gpu", LookupGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("concat", "gpu", Concat, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("concat_grad", "gpu", ConcatGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("split", "gpu", Split, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("stack", "gpu", StackKernel, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("stack_grad", "gpu", StackGradKernel, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("unstack", "gpu", UnstackKernel, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("transpose", "gpu", Transpose, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("transpose2", "gpu", Transpose, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("transpose_grad", "gpu", TransposeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("transpose2_grad", "gpu", TransposeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reshape", "gpu", Reshape, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("reshape2", "gpu", Reshape, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("flatten", "gpu", Flatten, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("flatten2", "gpu", Flatten, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("reshape_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("reshape2_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("flatten_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("flatten2_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("flatten_contiguous_range", "gpu", FlattenRange, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("flatten_contiguous_range_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("squeeze2", "gpu", Squeeze, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("unsqueeze2", "gpu", Squeeze, TIDE_CUDA_MOVE_TYPES);
TIDE_REGISTER_KERNEL("squeeze2_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
TIDE_REGISTER_KERNEL("unsqueeze2_grad", "gpu", ReshapeGrad, TIDE_CUDA_FLOAT_TYPES);
