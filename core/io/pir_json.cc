// pir_json.cc: see pir_json.h.
#include "core/io/pir_json.h"

#include <map>
#include <set>

#include "framework.pb.h"

namespace tide::core::pir {

// Paddle's DataType names (a_dtype attributes, Scalar's) and type ids (t_f32 ...) as Fluid's
// VarType values; -1 for "undefined" (full_like: the input's).
std::optional<int> DataTypeFromName(const std::string& n) {
  static const std::map<std::string, int> names = {{"bool", proto::VarType::BOOL},
                                                   {"int16", proto::VarType::INT16},
                                                   {"int32", proto::VarType::INT32},
                                                   {"int64", proto::VarType::INT64},
                                                   {"float16", proto::VarType::FP16},
                                                   {"float32", proto::VarType::FP32},
                                                   {"float64", proto::VarType::FP64},
                                                   {"uint8", proto::VarType::UINT8},
                                                   {"int8", proto::VarType::INT8},
                                                   {"bfloat16", proto::VarType::BF16},
                                                   {"complex64", proto::VarType::COMPLEX64},
                                                   {"complex128", proto::VarType::COMPLEX128},
                                                   {"undefined", -1},
                                                   {"Undefined(ALL_DTYPE)", -1}};
  auto it = names.find(n);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

std::optional<int> DataTypeFromTypeId(const std::string& id) {
  static const std::map<std::string, int> ids = {
      {"0.t_bool", proto::VarType::BOOL},     {"0.t_i16", proto::VarType::INT16},
      {"0.t_i32", proto::VarType::INT32},     {"0.t_i64", proto::VarType::INT64},
      {"0.t_f16", proto::VarType::FP16},      {"0.t_f32", proto::VarType::FP32},
      {"0.t_f64", proto::VarType::FP64},      {"0.t_ui8", proto::VarType::UINT8},
      {"0.t_i8", proto::VarType::INT8},       {"0.t_bf16", proto::VarType::BF16},
      {"0.t_c64", proto::VarType::COMPLEX64}, {"0.t_c128", proto::VarType::COMPLEX128}};
  auto it = ids.find(id);
  if (it == ids.end()) return std::nullopt;
  return it->second;
}

bool IsIntegerType(int t) {
  return t == proto::VarType::INT16 || t == proto::VarType::INT32 || t == proto::VarType::INT64 ||
         t == proto::VarType::UINT8 || t == proto::VarType::INT8;
}

// PIR attributes that say nothing about what an op computes: Paddle's layer names, where it
// would place a tensor, its autograd and role markers.
bool IsIgnoredAttr(const std::string& name) {
  static const std::set<std::string> names = {"struct_name", "place",   "stop_gradient",
                                              "persistable", "op_role", "op_dist_attr"};
  return names.count(name) > 0;
}
}  // namespace tide::core::pir
