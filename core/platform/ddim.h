// ddim.h: tensor dimensions, a small fixed-capacity vector (no heap), -1 for an unknown dim.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tide::core {

class DDim {
 public:
  static constexpr int kMaxRank = 9;

  DDim() = default;
  DDim(std::initializer_list<int64_t> dims);
  explicit DDim(const std::vector<int64_t>& dims);
  DDim(const int64_t* dims, int rank);

  int size() const { return rank_; }
  const int64_t* data() const { return d_.data(); }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t& operator[](int i) { return d_[i]; }
  // Index from the end with a negative i; throws when out of range.
  int64_t at(int i) const;

  // Number of elements; -1 when a dim is unknown. A rank-0 DDim holds one element. Throws
  // (naming the dims) when the count does not fit in int64.
  int64_t product() const;
  bool HasUnknown() const;
  std::vector<int64_t> ToVector() const {
    return std::vector<int64_t>(d_.begin(), d_.begin() + rank_);
  }
  std::string ToString() const;  // "[2, 3]"
  DDim Slice(int begin, int end) const;

  bool operator==(const DDim& o) const;
  bool operator!=(const DDim& o) const { return !(*this == o); }

 private:
  std::array<int64_t, kMaxRank> d_{};
  int rank_ = 0;
};

// Empty when `dims` can describe a tensor in memory (every dim >= -1, the element count and its
// size in bytes at `elem_size` bytes each fit in int64); else why not.
std::string CheckDims(const DDim& dims, size_t elem_size = 1);

// Fluid's flatten_to_2d: dims [0, num_col_dims) become rows, the rest columns.
DDim FlattenTo2D(const DDim& dims, int num_col_dims);

}  // namespace tide::core
