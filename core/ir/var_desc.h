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
  void set_shape(std::vector<int64_t> s) { shape_ = std::move(s); }
  int32_t lod_level() const { return lod_level_; }
  void set_lod_level(int32_t l) { lod_level_ = l; }
  bool persistable() const { return persistable_; }
  void set_persistable(bool p) { persistable_ = p; }
  bool stop_gradient() const { return stop_gradient_; }
  void set_stop_gradient(bool s) { stop_gradient_ = s; }

  void ToProto(proto::VarDesc* out) const;
  static VarDesc FromProto(const proto::VarDesc& p);
  std::string ToString() const;  // "x : LOD_TENSOR float32 [-1, 13]"

 private:
  std::string name_;
  TideVarType type_ = TIDE_VAR_LOD_TENSOR;
  DataType dtype_ = TIDE_FP32;
  std::vector<int64_t> shape_;
  int32_t lod_level_ = 0;
  bool persistable_ = false;
  bool stop_gradient_ = false;
};

}  // namespace tide::core
