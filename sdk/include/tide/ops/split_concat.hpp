// tide/ops/split_concat.hpp: the shape rules of concat (inputs joined along an axis) and split
// (`num` equal parts or `sections` sizes), with their errors, for every implementation of them.
#ifndef TIDE_OPS_SPLIT_CONCAT_HPP_
#define TIDE_OPS_SPLIT_CONCAT_HPP_

#include <tide/ops/axis.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>

#include <cstddef>
#include <cstdint>
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

}  // namespace ops
}  // namespace tide

#endif  // TIDE_OPS_SPLIT_CONCAT_HPP_
