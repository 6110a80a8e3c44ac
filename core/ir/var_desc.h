// var_desc.h: a variable's compile-time description: name, variable type, element type, dims
// (-1 for the batch dim), LoD level, persistable.
#pragma once

#include <tide/plugin_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/platform/data_type.h"
#include "framework.pb.h"

namespace tide::core {

// Shared by its block and whoever holds it (block_desc.h): it outlives its removal from the block.
class VarDesc : public std::enable_shared_from_this<VarDesc> {
 public:
  explicit VarDesc(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  TideVarType type() const { return type_; }
  void set_type(TideVarType t) { type_ = t; }
  DataType dtype() const { return dtype_; }
  void set_dtype(DataType t) { dtype_ = t; }
  const std::vector<int64_t>& shape() const { return shape_; }
  void set_shape(std::vector<int64_t> s) {
    shape_ = std::move(s);
    zero_dim_ = false;
  }
  // A 0-D tensor (shape [], one element; Paddle 2.5+'s `paddle.mean(x)`), as opposed to an empty
  // shape() that says the dims are not known (Fluid's variables before shape inference).
  bool zero_dim() const { return zero_dim_; }
  void set_zero_dim() {
    shape_.clear();
    zero_dim_ = true;
  }
  // Another variable's shape, 0-D or unknown as it is.
  void CopyShapeFrom(const VarDesc& o) {
    shape_ = o.shape_;
    zero_dim_ = o.zero_dim_;
  }
  // The shape as declared: unknown dims (an empty shape that is not 0-D) count as not declared.
  bool shape_unknown() const { return shape_.empty() && !zero_dim_; }
  int32_t lod_level() const { return lod_level_; }
  void set_lod_level(int32_t l) { lod_level_ = l; }
  bool persistable() const { return persistable_; }
  void set_persistable(bool p) { persistable_ = p; }
  bool stop_gradient() const { return stop_gradient_; }
  void set_stop_gradient(bool s) { stop_gradient_ = s; }

  void ToProto(proto::VarDesc* out) const;
  // `empty_dims_zero_d`: the program is Paddle 2.5+'s, whose tensors without dims are 0-D.
  static VarDesc FromProto(const proto::VarDesc& p, bool empty_dims_zero_d = false);
  std::string ToString() const;  // "x : LOD_TENSOR float32 [-1, 13]"

 private:
  std::string name_;
  TideVarType type_ = TIDE_VAR_LOD_TENSOR;
  DataType dtype_ = TIDE_FP32;
  std::vector<int64_t> shape_;
  int32_t lod_level_ = 0;
  bool persistable_ = false;
  bool stop_gradient_ = false;
  bool zero_dim_ = false;
};

}  // namespace tide::core
