// rnn_util.h: what the RNN ops (recurrent, the DynamicRNN ops) share: row-wise copies between
// tensors, done on the host (a tensor on another place is staged through it), and the LoD
// helpers of Fluid's framework (sub-LoD of a range of sequences, LoD from lengths). These ops
// move rows around; the arithmetic runs in the body's ops.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "control_util.h"

namespace ops_control {

using Level = std::vector<uint64_t>;

// Bytes of one row (everything after the first dim) of `t`.
inline size_t RowBytes(const tide::Tensor& t) {
  const tide::Dims d = t.dims();
  int64_t n = 1;
  for (size_t i = 1; i < d.size(); ++i) n *= d[i];
  return static_cast<size_t>(n) * tide::DataTypeSize(t.dtype());
}

// Dims `d` with the first replaced by `rows`.
inline tide::Dims WithRows(tide::Dims d, int64_t rows) {
  if (d.empty())
    d.push_back(rows);
  else
    d[0] = rows;
  return d;
}

// A host tensor being assembled row by row, then copied to the op's place.
class HostRows {
 public:
  HostRows(const tide::Dims& dims, TideDataType dtype) : dtype_(dtype) {
    buf_.Resize(dims);
    data_ = static_cast<char*>(buf_.mutable_data(dtype, tide::Place("cpu", 0)));
    row_ = RowBytes(buf_);
    if (buf_.numel()) std::memset(data_, 0, buf_.numel() * tide::DataTypeSize(dtype));
  }
  // Rows [at, at + src rows) = src (any place).
  void Put(int64_t at, const tide::Tensor& src) {
    tide::OwnedTensor tmp;
    tide::Tensor h = OnHost(src, tmp);
    const size_t bytes = static_cast<size_t>(h.numel()) * tide::DataTypeSize(h.dtype());
    CheckFits(at * row_, bytes, h.dtype());
    if (bytes) std::memcpy(data_ + at * row_, h.raw_data(), bytes);
  }
  // Rows [at, at + n) = rows [from, from + n) of host tensor src.
  void PutRange(int64_t at, const tide::Tensor& host_src, int64_t from, int64_t n) {
    const size_t row = RowBytes(host_src);
    CheckFits(at * row_, n > 0 ? n * row : 0, host_src.dtype());
    TIDE_CHECK(from >= 0 && n >= 0 &&
                   (from + n) * row <= host_src.numel() * tide::DataTypeSize(host_src.dtype()),
               "rows [", from, ", ", from + n, ") are outside a tensor of dims ",
               tide::ToString(host_src.dims()));
    if (n > 0)
      std::memcpy(data_ + at * row_, static_cast<const char*>(host_src.raw_data()) + from * row,
                  n * row);
  }
  void set_lod(const tide::LoD& lod) { buf_.set_lod(lod); }
  // Moves the assembled tensor to `out` on the op's place.
  void CopyTo(tide::OpRunContext& ctx, tide::Tensor out) {
    out.CopyFrom(buf_, ctx.place(), ctx.device_context());
  }
  const tide::Tensor& host() const { return buf_; }

 private:
  // A copy must stay inside the tensor being assembled, in its data type (a wrongly shaped
  // input is an error, never a write past the buffer).
  void CheckFits(size_t offset, size_t bytes, TideDataType dtype) const {
    const size_t total = static_cast<size_t>(buf_.numel()) * tide::DataTypeSize(dtype_);
    TIDE_CHECK(dtype == dtype_ && offset + bytes <= total, "a ", tide::DataTypeName(dtype),
               " block of ", bytes, " bytes at byte ", offset, " does not fit a ",
               tide::DataTypeName(dtype_), " tensor of dims ", tide::ToString(buf_.dims()));
  }

  tide::OwnedTensor buf_;
  TideDataType dtype_;
  char* data_ = nullptr;
  size_t row_ = 0;
};

// out = rows [begin, begin + n) of host tensor `src`, shaped `dims`, on the op's place.
inline void SliceRows(tide::OpRunContext& ctx, const tide::Tensor& host_src, int64_t begin,
                      int64_t n, const tide::Dims& dims, tide::Tensor out) {
  HostRows rows(dims, host_src.dtype());
  rows.PutRange(0, host_src, begin, n);
  rows.CopyTo(ctx, out);
}

// Fluid's GetSubLoDAndAbsoluteOffset: for sequences [start, end) of level `start_level`, the
// lengths of their parts at each level below (start_level included) and the row range they span.
inline std::pair<tide::LoD, std::pair<size_t, size_t>> SubLoDAndOffset(const tide::LoD& lod,
                                                                       size_t start, size_t end,
                                                                       size_t start_level) {
  tide::LoD lengths;
  for (size_t level = start_level; level < lod.size(); ++level) {
    const Level& l = lod[level];
    Level part;
    for (size_t i = start; i < end; ++i) part.push_back(l[i + 1] - l[i]);
    lengths.push_back(part);
    start = l[start];
    end = l[end];
  }
  return {lengths, {start, end}};
}

// Fluid's AppendLoD: appends lengths (per level) to an offset LoD.
inline void AppendLoD(tide::LoD* lod, const tide::LoD& lengths) {
  if (lod->empty())
    for (size_t i = 0; i < lengths.size(); ++i) lod->push_back(Level{0});
  for (size_t level = 0; level < lengths.size() && level < lod->size(); ++level) {
    Level& l = (*lod)[level];
    for (uint64_t n : lengths[level]) l.push_back(l.back() + n);
  }
}

// Why `lod` does not fit a tensor with `rows` rows; empty when it does.
inline std::string LoDMismatch(const tide::LoD& lod, int64_t rows) {
  for (size_t l = 0; l < lod.size(); ++l) {
    const Level& v = lod[l];
    if (v.size() < 1 || v[0] != 0) return "level " + std::to_string(l) + " does not start at 0";
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i] < v[i - 1])
        return "level " + std::to_string(l) + " decreases at position " + std::to_string(i);
    const uint64_t end = l + 1 == lod.size() ? static_cast<uint64_t>(rows) : lod[l + 1].size() - 1;
    if (v.back() != end)
      return "level " + std::to_string(l) + " ends at " + std::to_string(v.back()) + " but " +
             (l + 1 == lod.size() ? "the tensor has " : "the next level has ") +
             std::to_string(end) + (l + 1 == lod.size() ? " rows" : " sequences");
  }
  return "";
}

inline std::string LoDText(const tide::LoD& lod) {
  std::string s = "[";
  for (size_t l = 0; l < lod.size(); ++l) {
    s += l ? ", [" : "[";
    for (size_t i = 0; i < lod[l].size(); ++i) s += (i ? ", " : "") + std::to_string(lod[l][i]);
    s += "]";
  }
  return s + "]";
}

// Checks that `t` (variable `name`, the op's input `param`) has a LoD that fits its rows.
inline void CheckLoDFits(tide::OpRunContext& ctx, const char* param, const std::string& name,
                         const tide::Tensor& t) {
  const tide::LoD lod = t.lod();
  const int64_t rows = t.rank() ? t.dim(0) : 0;
  const std::string err = LoDMismatch(lod, rows);
  TIDE_CHECK(err.empty(), "op '", ctx.op_type(), "': ", param, " ('", name, "') has LoD ",
             LoDText(lod), " that does not fit its ", rows, " rows: ", err);
}

}  // namespace ops_control
