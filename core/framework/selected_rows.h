// selected_rows.h: a sparse slice of a [height, ...] tensor: the listed rows and their values
// (Fluid's developer guide: what sparse gradients such as lookup_table's are).
#pragma once

#include <cstdint>
#include <vector>

#include "core/framework/tensor.h"

namespace tide::core {

class SelectedRows {
 public:
  int64_t height() const { return height_; }
  void set_height(int64_t h) { height_ = h; }
  const std::vector<int64_t>& rows() const { return rows_; }
  std::vector<int64_t>* mutable_rows() { return &rows_; }
  const LoDTensor& value() const { return value_; }
  LoDTensor* mutable_value() { return &value_; }
  // Dims of the dense tensor this represents: [height, value dims[1:]...].
  DDim dense_dims() const {
    DDim d = value_.dims();
    if (d.size() > 0) d[0] = height_;
    return d;
  }

 private:
  int64_t height_ = 0;
  std::vector<int64_t> rows_;
  LoDTensor value_;
};

}  // namespace tide::core
