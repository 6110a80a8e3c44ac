// var_desc.cc: VarDesc <-> protobuf.
#include "core/ir/var_desc.h"

#include "core/platform/enforce.h"

namespace tide::core {

namespace {
proto::VarType::TensorDesc* TensorDescOf(proto::VarType* t, TideVarType type) {
  switch (type) {
    case TIDE_VAR_LOD_TENSOR:
      return t->mutable_lod_tensor()->mutable_tensor();
    case TIDE_VAR_SELECTED_ROWS:
      return t->mutable_selected_rows();
    case TIDE_VAR_LOD_TENSOR_ARRAY:
      return t->mutable_tensor_array()->mutable_tensor();
    default:
      return nullptr;
  }
}

std::string ShapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}
}  // namespace

void VarDesc::ToProto(proto::VarDesc* out) const {
  out->Clear();
  out->set_name(name_);
  out->set_persistable(persistable_);
  if (stop_gradient_) out->set_stop_gradient(true);
  proto::VarType* t = out->mutable_type();
  t->set_type(static_cast<proto::VarType::Type>(type_));
  if (auto* td = TensorDescOf(t, type_)) {
    td->set_data_type(
        static_cast<proto::VarType::Type>(dtype_ == TIDE_UNDEFINED ? TIDE_FP32 : dtype_));
    for (int64_t d : shape_) td->add_dims(d);
    if (zero_dim_) td->set_zero_dim(true);
    if (type_ == TIDE_VAR_LOD_TENSOR) t->mutable_lod_tensor()->set_lod_level(lod_level_);
    if (type_ == TIDE_VAR_LOD_TENSOR_ARRAY) t->mutable_tensor_array()->set_lod_level(lod_level_);
  }
}

VarDesc VarDesc::FromProto(const proto::VarDesc& p, bool empty_dims_zero_d) {
  TIDE_ENFORCE(!p.name().empty(), "a VarDesc has an empty name");
  VarDesc v(p.name());
  const proto::VarType::Type t = p.type().type();
  const bool known = (t >= proto::VarType::LOD_TENSOR && t <= proto::VarType::LOD_TENSOR_ARRAY) ||
                     t == proto::VarType::RAW;
  TIDE_ENFORCE(known, "variable '", p.name(), "' has variable type ", proto::VarType::Type_Name(t),
               " (", int(t),
               "), which Tide does not hold (it holds LOD_TENSOR, SELECTED_ROWS, FEED_MINIBATCH, "
               "FETCH_LIST, STEP_SCOPES, LOD_RANK_TABLE, LOD_TENSOR_ARRAY and RAW)");
  v.type_ = static_cast<TideVarType>(t);
  v.persistable_ = p.persistable();
  v.stop_gradient_ = p.stop_gradient();
  const proto::VarType::TensorDesc* td = nullptr;
  if (v.type_ == TIDE_VAR_LOD_TENSOR && p.type().has_lod_tensor()) {
    td = &p.type().lod_tensor().tensor();
    v.lod_level_ = p.type().lod_tensor().lod_level();
  } else if (v.type_ == TIDE_VAR_SELECTED_ROWS && p.type().has_selected_rows()) {
    td = &p.type().selected_rows();
  } else if (v.type_ == TIDE_VAR_LOD_TENSOR_ARRAY && p.type().has_tensor_array()) {
    td = &p.type().tensor_array().tensor();
    v.lod_level_ = p.type().tensor_array().lod_level();
  }
  if (td) {
    TIDE_ENFORCE(IsValidDataType(td->data_type()), "variable '", p.name(), "' has data type ",
                 int(td->data_type()), ", which is not an element type");
    v.dtype_ = static_cast<DataType>(td->data_type());
    v.shape_.assign(td->dims().begin(), td->dims().end());
    v.zero_dim_ = td->dims().empty() &&
                  (td->zero_dim() || (empty_dims_zero_d && v.type_ == TIDE_VAR_LOD_TENSOR));
  } else {
    v.dtype_ = TIDE_UNDEFINED;
  }
  return v;
}

std::string VarDesc::ToString() const {
  std::string s = (persistable_ ? "persist " : "") + name_ + " : " + VarTypeName(type_);
  if (type_ == TIDE_VAR_LOD_TENSOR || type_ == TIDE_VAR_SELECTED_ROWS ||
      type_ == TIDE_VAR_LOD_TENSOR_ARRAY) {
    // [] is a 0-D tensor; dims not known yet (to be filled by shape inference) print as such.
    const bool unknown = shape_.empty() && !zero_dim_;
    s += std::string(" ") + DataTypeName(dtype_) + " " +
         (unknown ? std::string("[dims unknown]") : ShapeString(shape_));
    if (lod_level_) s += " lod_level=" + std::to_string(lod_level_);
  }
  if (stop_gradient_) s += " stop_gradient";
  return s;
}

}  // namespace tide::core
