// tide/ops/split_concat.hpp: the shape rules of concat (inputs joined along an axis) and split
// (`num` equal parts or `sections` sizes), with their errors, for every implementation of them;
// and concat, split, stack, unstack and the grads as every kernel reads them: parts of
// [pre, size_i, post] joined into, or cut out of, a [pre, total, post] whole (Paddle 2.x's
// AxisTensor / SectionsTensorList read with a kernel's reader, see int_inputs.hpp; outputs
// allocated on the kernel's place).
#ifndef TIDE_OPS_SPLIT_CONCAT_HPP_
#define TIDE_OPS_SPLIT_CONCAT_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/ops/int_inputs.hpp>
#include <tide/ops/tensor_shape.hpp>
#include <tide/plugin.hpp>
#include <vector>

namespace tide {
namespace ops {

// concat's Out dims; the normalised axis in `axis`. At compile time unknown (-1) dims pass, and
// an unknown size on the axis makes Out's unknown.
inline Dims ConcatDims(const char* op, const std::vector<Dims>& ins, int axis_attr, int* axis) {
  TIDE_CHECK(!ins.empty(), "op '", op, "': X needs at least one input");
  const Dims& first = ins[0];
  *axis = NormAxis(op, axis_attr, first.size());
  Dims out = first;
  for (size_t i = 1; i < ins.size(); ++i) {
    const Dims& d = ins[i];
    TIDE_CHECK(d.size() == first.size(), "op '", op, "': X[", i, "] ", ToString(d),
               " has another rank than X[0] ", ToString(first));
    for (size_t j = 0; j < d.size(); ++j) {
      if (static_cast<int>(j) == *axis) {
        out[j] = (out[j] < 0 || d[j] < 0) ? -1 : out[j] + d[j];
      } else {
        TIDE_CHECK(DimsCompatible(d[j], first[j]), "op '", op, "': X[", i, "] ", ToString(d),
                   " and X[0] ", ToString(first), " differ in dim ", j, " (concat axis is ", *axis,
                   ")");
        if (out[j] < 0) out[j] = d[j];
      }
    }
  }
  return out;
}

// ConcatDims with concat's `axis` attribute read from `ctx` (any context with Attr<T>()).
template <typename Ctx>
Dims ConcatDimsOf(const Ctx& ctx, const std::vector<Dims>& ins, int* axis) {
  return ConcatDims(ctx.op_type(), ins, ctx.template Attr<int32_t>("axis"), axis);
}

// split's Out dims (one per part, `outs` Out variables); the normalised axis in `axis`. One
// section may be -1: it takes what the others leave.
inline std::vector<Dims> SplitDims(const char* op, const Dims& x, int axis_attr, int num,
                                   std::vector<int32_t> sections, size_t outs, int* axis) {
  *axis = NormAxis(op, axis_attr, x.size());
  const int64_t len = x[*axis];
  std::vector<int64_t> sizes;
  if (num > 0) {
    TIDE_CHECK(sections.empty(), "op '", op, "': set num or sections, not both");
    TIDE_CHECK(len < 0 || len % num == 0, "op '", op, "': X ", ToString(x), " has ", len,
               " entries on axis ", *axis, ", not divisible by num = ", num);
    sizes.assign(num, len < 0 ? -1 : len / num);
  } else {
    TIDE_CHECK(!sections.empty(), "op '", op, "': set num > 0 or sections");
    int unknown = -1;
    int64_t known = 0;
    for (size_t i = 0; i < sections.size(); ++i) {
      TIDE_CHECK(sections[i] >= 0 || (sections[i] == -1 && unknown < 0), "op '", op,
                 "': sections may hold one -1 and otherwise sizes >= 0, got ", sections[i], " at ",
                 i);
      if (sections[i] == -1)
        unknown = static_cast<int>(i);
      else
        known += sections[i];
    }
    if (unknown >= 0 && len >= 0) {
      TIDE_CHECK(known <= len, "op '", op, "': sections sum to ", known, ", more than X's ", len,
                 " entries on axis ", *axis);
      sections[unknown] = static_cast<int32_t>(len - known);
    }
    TIDE_CHECK(unknown >= 0 || len < 0 || known == len, "op '", op, "': sections sum to ", known,
               " but X ", ToString(x), " has ", len, " entries on axis ", *axis);
    sizes.assign(sections.begin(), sections.end());
  }
  TIDE_CHECK(sizes.size() == outs, "op '", op, "': ", sizes.size(), " parts but ", outs,
             " Out variables");
  std::vector<Dims> out(sizes.size(), x);
  for (size_t i = 0; i < sizes.size(); ++i) out[i][*axis] = sizes[i];
  return out;
}

// SplitDims with split's attributes (axis, num, sections) read from `ctx` (any context with
// Attr<T>(): kernel or shape inference).
template <typename Ctx>
std::vector<Dims> SplitDimsOf(const Ctx& ctx, const Dims& x, size_t outs, int* axis) {
  return SplitDims(ctx.op_type(), x, ctx.template Attr<int32_t>("axis"),
                   ctx.template Attr<int32_t>("num"),
                   ctx.template Attr<std::vector<int32_t>>("sections"), outs, axis);
}

// Parts joined into a whole: concat (X into Out), stack (X into Y).
template <typename T>
struct JoinArgs {
  int64_t pre, post, total;
  std::vector<int64_t> sizes;
  std::vector<const T*> parts;
  T* whole;
};

// A whole cut into parts: split, concat_grad, unstack, stack_grad. A part nobody wants (a
// gradient left out of the grad op) is null.
template <typename T>
struct CutArgs {
  int64_t pre, post, total;
  std::vector<int64_t> sizes;
  std::vector<T*> parts;
  const T* whole;
};

// concat's axis: AxisTensor's value (read with `read`) when given, else the attribute.
template <typename Read = ReadOnHost>
int ConcatAxisAttr(const KernelContext& ctx, Read read = {}) {
  if (!ctx.HasInput("AxisTensor")) return ctx.Attr<int32_t>("axis");
  return AsInt32s(ctx, "AxisTensor", {IntScalar(ctx, "AxisTensor", 0, read)})[0];
}

template <typename T, typename Read = ReadOnHost>
JoinArgs<T> GetConcatArgs(const KernelContext& ctx, Read read = {}) {
  const char* op = ctx.op_type();
  std::vector<Tensor> xs = ctx.Inputs("X");
  std::vector<Dims> dims;
  for (const auto& x : xs) dims.push_back(x.dims());
  int axis = 0;
  const Dims od = ConcatDims(op, dims, ConcatAxisAttr(ctx, read), &axis);
  JoinArgs<T> a;
  a.pre = DimsProduct(od, 0, axis);
  a.post = DimsProduct(od, axis + 1, od.size());
  a.total = od[axis];
  for (size_t i = 0; i < xs.size(); ++i) {
    TIDE_CHECK(xs[i].dtype() == xs[0].dtype(), "op '", op, "': X[", i, "] ('",
               ctx.InputName("X", i), "') is ", DataTypeName(xs[i].dtype()), ", X[0] is ",
               DataTypeName(xs[0].dtype()));
    a.sizes.push_back(dims[i][axis]);
    a.parts.push_back(xs[i].data<T>());
  }
  a.whole = ctx.Output("Out").mutable_data<T>(od, ctx.place());
  return a;
}

// concat_grad: Out@GRAD (Out's dims) cut into X@GRAD's parts.
template <typename T, typename Read = ReadOnHost>
CutArgs<T> GetConcatGradArgs(const KernelContext& ctx, Read read = {}) {
  const char* op = ctx.op_type();
  std::vector<Tensor> xs = ctx.Inputs("X");
  Tensor dout = ctx.Input(GradVarName("Out").c_str());
  std::vector<Dims> dims;
  for (const auto& x : xs) dims.push_back(x.dims());
  int axis = 0;
  const Dims od = ConcatDims(op, dims, ConcatAxisAttr(ctx, read), &axis);
  CheckGradDims(op, "Out@GRAD", dout.dims(), od);
  CutArgs<T> a;
  a.pre = DimsProduct(od, 0, axis);
  a.post = DimsProduct(od, axis + 1, od.size());
  a.total = od[axis];
  const std::string gx = GradVarName("X");
  for (size_t i = 0; i < xs.size(); ++i) {
    a.sizes.push_back(dims[i][axis]);
    Tensor dx = i < ctx.OutputCount(gx.c_str()) ? ctx.OptionalOutput(gx.c_str(), i) : Tensor();
    a.parts.push_back(dx ? dx.mutable_data<T>(dims[i], ctx.place()) : nullptr);
  }
  a.whole = dout.data<T>();
  return a;
}

// split: X cut into Out's parts (`num` or `sections`; SectionsTensorList's values, read with
// `read`, override `sections`).
template <typename T, typename Read = ReadOnHost>
CutArgs<T> GetSplitArgs(const KernelContext& ctx, Read read = {}) {
  Tensor x = ctx.Input("X");
  std::vector<int32_t> sections = ctx.Attr<std::vector<int32_t>>("sections");
  if (ctx.HasInput("SectionsTensorList")) {
    sections = AsInt32s(ctx, "SectionsTensorList", IntScalars(ctx, "SectionsTensorList", read));
  }
  int axis = 0;
  const std::vector<Dims> dims =
      SplitDims(ctx.op_type(), x.dims(), ConcatAxisAttr(ctx, read), ctx.Attr<int32_t>("num"),
                sections, ctx.OutputCount("Out"), &axis);
  const Dims& xd = x.dims();
  CutArgs<T> a;
  a.pre = DimsProduct(xd, 0, axis);
  a.post = DimsProduct(xd, axis + 1, xd.size());
  a.total = xd[axis];
  for (size_t i = 0; i < dims.size(); ++i) {
    a.sizes.push_back(dims[i][axis]);
    Tensor o = ctx.OptionalOutput("Out", i);
    a.parts.push_back(o ? o.mutable_data<T>(dims[i], ctx.place()) : nullptr);
  }
  a.whole = x.data<T>();
  return a;
}

// stack: the inputs X, of one dims, as parts of size 1 of Y.
template <typename T>
JoinArgs<T> GetStackArgs(const KernelContext& ctx) {
  std::vector<Tensor> xs = ctx.Inputs("X");
  std::vector<Dims> dims;
  for (const auto& x : xs) dims.push_back(x.dims());
  const int axis = ctx.Attr<int32_t>("axis");
  const Dims od = StackDims(ctx.op_type(), dims, axis);
  const int ax = NormAxis(ctx.op_type(), axis, dims[0].size() + 1);
  JoinArgs<T> a;
  a.pre = DimsProduct(dims[0], 0, ax);
  a.post = DimsProduct(dims[0], ax, dims[0].size());
  a.total = static_cast<int64_t>(xs.size());
  a.sizes.assign(xs.size(), 1);
  for (const auto& x : xs) a.parts.push_back(x.data<T>());
  a.whole = ctx.Output("Y").mutable_data<T>(od, ctx.place());
  return a;
}

// unstack (X into Y) and stack_grad (Y@GRAD into X@GRAD): `whole` cut along `axis` into one
// part per output, each `whole`'s dims without the axis.
template <typename T>
CutArgs<T> GetUnstackArgs(const KernelContext& ctx, const Tensor& whole,
                          const std::vector<Tensor>& outs) {
  const Dims xd = whole.dims();
  const int axis = ctx.Attr<int32_t>("axis");
  const int ax = NormAxis(ctx.op_type(), axis, xd.size());
  const int64_t n = xd[ax];
  TIDE_CHECK(static_cast<int64_t>(outs.size()) == n, "op '", ctx.op_type(), "': ", outs.size(),
             " outputs for a dim of ", n, " (axis ", axis, " of ", ToString(xd), ")");
  Dims od = xd;
  od.erase(od.begin() + ax);
  CutArgs<T> a;
  a.pre = DimsProduct(xd, 0, ax);
  a.post = DimsProduct(xd, ax + 1, xd.size());
  a.total = n;
  a.sizes.assign(outs.size(), 1);
  for (Tensor o : outs) a.parts.push_back(o ? o.mutable_data<T>(od, ctx.place()) : nullptr);
  a.whole = whole.data<T>();
  return a;
}

template <typename T>
CutArgs<T> GetUnstackArgs(const KernelContext& ctx) {
  return GetUnstackArgs<T>(ctx, ctx.Input("X"), ctx.Outputs("Y"));
}

template <typename T>
CutArgs<T> GetStackGradArgs(const KernelContext& ctx) {
  const std::string gx = GradVarName("X");
  std::vector<Tensor> outs;
  for (size_t i = 0; i < ctx.OutputCount(gx.c_str()); ++i)
    outs.push_back(ctx.OptionalOutput(gx.c_str(), i));
  return GetUnstackArgs<T>(ctx, ctx.Input(GradVarName("Y").c_str()), outs);
}

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SPLIT_CONCAT_HPP_
