// ddim.cc: DDim operations.
#include "core/platform/ddim.h"

#include "core/platform/enforce.h"

namespace tide::core {

DDim::DDim(const int64_t* dims, int rank) {
  TIDE_ENFORCE(rank >= 0 && rank <= kMaxRank, "rank ", rank, " is outside [0, ", kMaxRank, "]");
  for (int i = 0; i < rank; ++i) d_[i] = dims[i];
  rank_ = rank;
}

DDim::DDim(std::initializer_list<int64_t> dims)
    : DDim(dims.begin(), static_cast<int>(dims.size())) {}

DDim::DDim(const std::vector<int64_t>& dims) : DDim(dims.data(), static_cast<int>(dims.size())) {}

int64_t DDim::at(int i) const {
  int j = i < 0 ? i + rank_ : i;
  TIDE_ENFORCE(j >= 0 && j < rank_, "dim index ", i, " out of range for rank ", rank_);
  return d_[j];
}

int64_t DDim::product() const {
  int64_t p = 1;
  bool overflow = false;
  for (int i = 0; i < rank_; ++i) {
    if (d_[i] < 0) return -1;
    overflow |= __builtin_mul_overflow(p, d_[i], &p);
  }
  // A zero dim makes the count 0 even when other dims overflow together.
  if (overflow) {
    for (int i = 0; i < rank_; ++i)
      if (d_[i] == 0) return 0;
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "dims ", ToString(), " hold more than 2^63 elements");
  }
  return p;
}

std::string CheckDims(const DDim& dims, size_t elem_size) {
  for (int i = 0; i < dims.size(); ++i)
    if (dims[i] < -1) return StrCat("dims ", dims.ToString(), " have a negative dim ", dims[i]);
  int64_t n = 1;
  bool overflow = false, zero = false;
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return "";  // unknown: checked once it is set
    zero |= dims[i] == 0;
    overflow |= __builtin_mul_overflow(n, dims[i], &n);
  }
  if (zero) return "";
  if (overflow) return StrCat("dims ", dims.ToString(), " hold more than 2^63 elements");
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(elem_size), &bytes))
    return StrCat("dims ", dims.ToString(), " of ", elem_size,
                  "-byte elements need more than 2^63 bytes");
  return "";
}

bool DDim::HasUnknown() const {
  for (int i = 0; i < rank_; ++i)
    if (d_[i] < 0) return true;
  return false;
}

std::string DDim::ToString() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) s += (i ? ", " : "") + std::to_string(d_[i]);
  return s + "]";
}

DDim DDim::Slice(int begin, int end) const {
  TIDE_ENFORCE(0 <= begin && begin <= end && end <= rank_, "bad dims slice [", begin, ", ", end,
               ") of ", ToString());
  return DDim(d_.data() + begin, end - begin);
}

bool DDim::operator==(const DDim& o) const {
  if (rank_ != o.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (d_[i] != o.d_[i]) return false;
  return true;
}

DDim FlattenTo2D(const DDim& dims, int num_col_dims) {
  TIDE_ENFORCE(num_col_dims > 0 && num_col_dims <= dims.size(), "num_col_dims ", num_col_dims,
               " must be in [1, ", dims.size(), "] for dims ", dims.ToString());
  return DDim(
      {dims.Slice(0, num_col_dims).product(), dims.Slice(num_col_dims, dims.size()).product()});
}

}  // namespace tide::core
