// tensor.h: Tensor (dims, dtype, layout, a view into a shared allocation) and LoDTensor (a
// Tensor plus its level-of-detail offsets for variable-length sequences).
#pragma once

#include <cstdint>
#include <vector>

#include "core/memory/allocation.h"
#include "core/platform/data_type.h"
#include "core/platform/ddim.h"
#include "core/platform/enforce.h"

namespace tide::core {

class Tensor {
 public:
  const DDim& dims() const { return dims_; }
  // Changes dims; memory is (re)allocated on the next mutable_data. Refuses dims no tensor can
  // have (a dim below -1, an element count past int64), so numel() never overflows.
  void Resize(const DDim& dims) {
    if (dims != dims_) {
      CheckResize(dims);
      dims_ = dims;
      numel_ = dims_.product();
      ++version_;
    }
  }
  int64_t numel() const { return numel_; }  // -1 when a dim is unknown
  DataType dtype() const { return dtype_; }
  TideLayout layout() const { return layout_; }
  void set_layout(TideLayout l) { layout_ = l; }
  // A layout's own format code (e.g. a library's tag for one of its blocked layouts); 0: none.
  int64_t format() const { return format_; }
  void set_format(int64_t f) { format_ = f; }
  // The place of the data; invalid when the tensor holds none.
  Place place() const { return holder_ ? holder_->place() : Place(); }
  bool initialized() const { return holder_ != nullptr; }
  size_t memory_size() const { return holder_ ? holder_->size() - offset_ : 0; }
  const AllocationPtr& holder() const { return holder_; }
  size_t offset() const { return offset_; }
  // Bumped whenever dims (or, for a LoDTensor, the LoD) change: lets the executor skip shape
  // inference when nothing moved.
  uint64_t version() const { return version_; }

  const void* data() const {
    return holder_ ? static_cast<const char*>(holder_->ptr()) + offset_ : nullptr;
  }
  // The data, to write in place (renews the allocation's content version; a lent allocation's
  // bytes are copied first).
  void* raw_mutable_data() {
    if (holder_) {
      if (holder_->lent()) LeaveLent(memory_size());
      holder_->Touch();
    }
    return const_cast<void*>(data());
  }
  template <typename T>
  const T* data() const {
    TIDE_ENFORCE(dtype_ == DataTypeOf<T>(), "tensor holds ", DataTypeName(dtype_), ", read as ",
                 DataTypeName(DataTypeOf<T>()));
    return static_cast<const T*>(data());
  }

  // Memory for the current dims on `place` (reusing the allocation when it fits).
  void* mutable_data(const Place& place, DataType dtype);
  template <typename T>
  T* mutable_data(const Place& place) {
    return static_cast<T*>(mutable_data(place, DataTypeOf<T>()));
  }
  template <typename T>
  T* mutable_data(const DDim& dims, const Place& place) {
    Resize(dims);
    return mutable_data<T>(place);
  }

  // Views src's memory (no copy): dims, dtype, layout, allocation.
  void ShareDataWith(const Tensor& src);
  // Rows [begin, end) of dim 0, sharing memory.
  Tensor Slice(int64_t begin, int64_t end) const;
  // Adopts an existing allocation (e.g. a numpy buffer) as this tensor's data.
  void ResetHolder(AllocationPtr holder, DataType dtype, const DDim& dims, size_t offset = 0);
  // Drops the data, keeping dims.
  void Clear() {
    holder_.reset();
    offset_ = 0;
  }

 protected:
  void BumpVersion() { ++version_; }

 private:
  static void CheckResize(const DDim& dims);
  // Moves to a copy of the first `bytes` of the data (a lent allocation is never written).
  void LeaveLent(size_t bytes);

 private:
  DDim dims_;
  int64_t numel_ = 1;  // dims_.product(), kept: kernels ask for it several times a run
  DataType dtype_ = TIDE_UNDEFINED;
  TideLayout layout_ = TIDE_LAYOUT_ANY;
  int64_t format_ = 0;
  AllocationPtr holder_;
  size_t offset_ = 0;
  uint64_t version_ = 0;
};

// Level-of-detail: per level, offsets into the next level (the last level into rows of dim 0).
using LoD = std::vector<std::vector<uint64_t>>;

// Empty when `lod` is valid for a tensor with `rows` rows; else why not.
std::string CheckLoD(const LoD& lod, int64_t rows);
std::string LoDToString(const LoD& lod);

class LoDTensor : public Tensor {
 public:
  const LoD& lod() const { return lod_; }
  void set_lod(const LoD& lod) {
    if (lod != lod_) {
      lod_ = lod;
      BumpVersion();
    }
  }
  size_t lod_levels() const { return lod_.size(); }
  // Number of sequences at `level`.
  size_t NumSequences(size_t level = 0) const {
    return lod_.size() > level && !lod_[level].empty() ? lod_[level].size() - 1 : 0;
  }

 private:
  LoD lod_;
};

}  // namespace tide::core
