// tensor.cc: Tensor memory management and LoD checks.
#include "core/framework/tensor.h"

#include <cstring>

#include "core/memory/memory.h"

namespace tide::core {

void* Tensor::mutable_data(const Place& place, DataType dtype) {
  const size_t elem = SizeOf(dtype);
  TIDE_ENFORCE(elem > 0, "cannot allocate a tensor of data type ", DataTypeName(dtype));
  TIDE_ENFORCE(numel_ >= 0, "cannot allocate a tensor with unknown dims ", dims_.ToString(),
               " (set every -1 before running)");
  int64_t signed_bytes = 0;  // Resize kept the element count in int64; its bytes may not be
  if (__builtin_mul_overflow(numel_, static_cast<int64_t>(elem), &signed_bytes))
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "cannot allocate a ", DataTypeName(dtype),
              " tensor: ", CheckDims(dims_, elem));
  const size_t bytes = static_cast<size_t>(signed_bytes);
  if (!holder_ || holder_->place() != place || holder_->size() < offset_ + bytes) {
    holder_ = memory::AllocShared(place, bytes);
    offset_ = 0;
  } else if (holder_->lent()) {
    LeaveLent(bytes);  // an in-place writer may read what the bytes hold
  } else {
    holder_->Touch();  // the caller is about to write the bytes
  }
  dtype_ = dtype;
  return static_cast<char*>(holder_->ptr()) + offset_;
}

void Tensor::LeaveLent(size_t bytes) {
  TIDE_ENFORCE(holder_->place() == HostPlace(), "a lent allocation on ",
               holder_->place().ToString(), ": only host memory is lent");
  AllocationPtr copy = memory::AllocShared(holder_->place(), bytes);
  if (bytes) std::memcpy(copy->ptr(), data(), bytes);
  holder_ = std::move(copy);
  offset_ = 0;
}

void Tensor::CheckResize(const DDim& dims) {
  std::string bad = CheckDims(dims);
  TIDE_ENFORCE(bad.empty(), "cannot resize a tensor: ", bad);
}

void Tensor::ShareDataWith(const Tensor& src) {
  Resize(src.dims_);
  dtype_ = src.dtype_;
  layout_ = src.layout_;
  format_ = src.format_;
  holder_ = src.holder_;
  offset_ = src.offset_;
}

Tensor Tensor::Slice(int64_t begin, int64_t end) const {
  TIDE_ENFORCE(dims_.size() > 0, "cannot slice a rank-0 tensor");
  TIDE_ENFORCE(0 <= begin && begin <= end && end <= dims_[0], "slice [", begin, ", ", end,
               ") is outside dim 0 of ", dims_.ToString());
  Tensor t;
  t.ShareDataWith(*this);
  DDim d = dims_;
  d[0] = end - begin;
  t.Resize(d);
  int64_t row = dims_[0] ? dims_.product() / dims_[0] : 0;
  t.offset_ = offset_ + static_cast<size_t>(begin * row) * SizeOf(dtype_);
  return t;
}

void Tensor::ResetHolder(AllocationPtr holder, DataType dtype, const DDim& dims, size_t offset) {
  Resize(dims);
  dtype_ = dtype;
  holder_ = std::move(holder);
  offset_ = offset;
}

std::string CheckLoD(const LoD& lod, int64_t rows) {
  // Every level's own form first, so that a malformed level is named as such rather than
  // reported through the level above it (whose end is its sequence count).
  for (size_t l = 0; l < lod.size(); ++l) {
    const auto& level = lod[l];
    if (level.size() < 2) return StrCat("LoD level ", l, " needs at least 2 offsets");
    if (level[0] != 0) return StrCat("LoD level ", l, " must start at 0");
    for (size_t i = 1; i < level.size(); ++i)
      if (level[i] < level[i - 1]) return StrCat("LoD level ", l, " decreases at position ", i);
  }
  for (size_t l = 0; l < lod.size(); ++l) {
    const auto& level = lod[l];
    uint64_t expect = l + 1 < lod.size() ? lod[l + 1].size() - 1 : static_cast<uint64_t>(rows);
    if (level.back() != expect)
      return StrCat("LoD level ", l, " ends at ", level.back(), " but ",
                    l + 1 < lod.size() ? "the next level has " : "the tensor has ", expect,
                    l + 1 < lod.size() ? " sequences" : " rows");
  }
  return "";
}

std::string LoDToString(const LoD& lod) {
  std::string s = "[";
  for (size_t l = 0; l < lod.size(); ++l) {
    s += l ? ", [" : "[";
    for (size_t i = 0; i < lod[l].size(); ++i) s += (i ? ", " : "") + std::to_string(lod[l][i]);
    s += "]";
  }
  return s + "]";
}

}  // namespace tide::core
