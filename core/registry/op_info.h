// op_info.h: what the core knows of a registered operator (from a plugin's TideOpDef), of a
// kernel and of a device. The plugin callbacks live as long as the process (plugins are never
// unloaded).
#pragma once

#include <tide/plugin_api.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/attribute.h"
#include "core/registry/kernel_key.h"
#include "framework.pb.h"

namespace tide::core {

struct AttrSpec {
  std::string name;
  TideAttrType type;
  bool has_default = false;
  Attribute default_value;
  TideAttrCheckFn check = nullptr;
  void* check_data = nullptr;
};

struct OpInfo {
  std::string type;
  proto::OpProto proto;
  std::vector<AttrSpec> attrs;
  TideInferShapeFn infer_shape = nullptr;
  void* infer_shape_data = nullptr;
  TideGradMakerFn grad_maker = nullptr;
  void* grad_maker_data = nullptr;
  std::string default_grad_op;
  std::string kernel_dtype_source;          // "" | input parameter | "attr:<name>"
  std::vector<std::string> float32_params;  // inputs declared TIDE_ARG_FLOAT32_PARAM
  bool no_gradient = false;                 // declared: no gradient by design
  // (input, output) parameters its kernels compute in place (TideOpDef.in_place)
  std::vector<std::pair<std::string, std::string>> in_place;
  // (input, output) parameters whose output is a view of the input (TideOpDef.views): every
  // kernel writes the input's bytes, copying nothing when the output's data is the input's
  std::vector<std::pair<std::string, std::string>> views;
  TideOpRunFn run = nullptr;  // set for operators without kernels
  void* run_data = nullptr;
  std::string plugin, plugin_file;  // who registered it

  bool InPlace(const std::string& input, const std::string& output) const {
    for (const auto& [in, out] : in_place)
      if (in == input && out == output) return true;
    return false;
  }
  bool HasGrad() const { return grad_maker != nullptr || !default_grad_op.empty(); }
  const AttrSpec* FindAttr(const std::string& name) const {
    for (const auto& a : attrs)
      if (a.name == name) return &a;
    return nullptr;
  }
  const proto::OpProto::Var* FindInput(const std::string& param) const;
  const proto::OpProto::Var* FindOutput(const std::string& param) const;
};

struct KernelEntry {
  std::string op_type;
  OpKernelType key;
  TideKernelFn compute = nullptr;
  void* user_data = nullptr;
  int32_t priority = 0;
  std::string plugin, plugin_file;
  // Inputs the kernel reads in host memory (TideKernelDef.host_inputs): the data transform hands
  // them over on the CPU place, as they are.
  std::vector<std::string> host_inputs;

  bool ReadsOnHost(const std::string& param) const {
    for (const std::string& p : host_inputs)
      if (p == param) return true;
    return false;
  }
};

// A layout transform or data-type cast a plugin registered for one place kind.
struct TransformEntry {
  int32_t place_kind = -1;
  int32_t from = 0, to = 0;  // TideLayout values, or TideDataType values for casts
  TideTransformFn fn = nullptr;
  void* user_data = nullptr;
  std::string plugin, plugin_file;
};

// A program pass a plugin registered (TideProgramPassDef, issue 33).
struct ProgramPassEntry {
  std::string name;
  int32_t place_kind = -1;  // -1: every place
  TideProgramPassFn run = nullptr;
  void* user_data = nullptr;
  std::string plugin, plugin_file;
};

struct DeviceInfo {
  std::string kind_name;
  int32_t kind = -1;
  TideDeviceDef def{};  // fields past the plugin's struct_size are zero
  // The device contract the core follows for it: def.contract, or 1 where it declares none.
  uint32_t contract = 1;
  // Contract 1: the core synchronises after host-to-device copies and before frees.
  bool legacy_contract() const { return contract < 2; }
  std::string plugin, plugin_file;
};

}  // namespace tide::core
