// op_instance.cc: building an op instance from its OpDesc and binding it to a scope.
#include "core/executor/op_instance.h"

#include "core/executor/aliased_inputs.h"
#include "core/ir/var_names.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {
std::vector<ArgBinding> MakeBindings(const VariableNameMap& m) {
  std::vector<ArgBinding> out;
  for (const auto& kv : m) {
    ArgBinding b;
    b.param = kv.first;
    b.names = kv.second;
    out.push_back(std::move(b));
  }
  for (auto& b : out)  // after the vector stops moving
    for (const auto& n : b.names) b.name_ptrs.push_back(n.c_str());
  return out;
}
}  // namespace

OpInstance::OpInstance(const OpDesc& desc, const BlockDesc& block, int block_idx, size_t index,
                       const OpInfo* info)
    : info_(info ? info : &Registry::Global().GetOp(desc.type())),
      type_(desc.type()),
      label_(StrCat("op '", desc.type(), "' (block ", block_idx, ", #", index, ")")),
      attrs_(desc.attrs()) {
  try {
    CheckArguments(*info_, desc);
    CheckAndFillAttrs(*info_, &attrs_);
  } catch (const Error& e) {
    TIDE_FAIL(e.code(), label_, ": ", e.what());
  }
  views_ = std::make_unique<AttrViews>(attrs_);
  inputs_ = MakeBindings(desc.inputs());
  outputs_ = MakeBindings(desc.outputs());
  for (auto& b : inputs_)
    for (const std::string& p : info_->float32_params) b.float32_param |= b.param == p;

  std::string src = info_->kernel_dtype_source;
  if (src.rfind("attr:", 0) == 0) {
    const TideAttrValue* v = views_->Find(src.c_str() + 5);
    TIDE_ENFORCE(v && v->type == TIDE_ATTR_INT, label_, ": its kernel dtype comes from attribute '",
                 src.substr(5), "', which is not an int attribute");
    // Paddle's -1: "the input's" (fill_any_like's dtype); the inputs' rule below picks it.
    if (v->i == -1) src.clear();
  }
  if (src.rfind("attr:", 0) == 0) {
    const TideAttrValue* v = views_->Find(src.c_str() + 5);
    TIDE_ENFORCE(IsValidDataType(static_cast<int>(v->i)), label_, ": attribute '", src.substr(5),
                 "' is ", v->i, ", which is not a data type");
    dtype_from_attr_ = static_cast<DataType>(v->i);
  } else {
    // The named input, or the first input in the proto's declared order that is bound.
    for (const auto& decl : info_->proto.inputs()) {
      if (!src.empty() && decl.name() != src) continue;
      for (size_t i = 0; i < inputs_.size(); ++i)
        if (inputs_[i].param == decl.name() && !inputs_[i].names.empty())
          dtype_input_ = static_cast<int>(i);
      if (dtype_input_ >= 0) break;
    }
  }
  if (info_->run) return;  // no kernel, so no fallback kernel whose outputs go back or round
  for (size_t b = 0; b < outputs_.size(); ++b)
    for (size_t i = 0; i < outputs_[b].names.size(); ++i) {
      const VarDesc* v = block.FindVarRecursive(outputs_[b].names[i]);
      if (v && v->persistable()) persistable_outputs_.emplace_back(b, i);
      if (v && v->zero_dim() && v->type() == TIDE_VAR_LOD_TENSOR)
        zero_dim_outputs_.emplace_back(b, i);
      if (v && v->type() == TIDE_VAR_LOD_TENSOR && IsLowPrecision(v->dtype()))
        low_precision_outputs_.push_back({b, i, v->dtype()});
    }
}

void OpInstance::Bind(const Scope& scope) {
  auto bind = [&](std::vector<ArgBinding>& list, const char* side) {
    for (auto& b : list) {
      b.vars.clear();
      for (const auto& name : b.names) {
        if (name == kEmptyVarName) {  // an output nobody wants (e.g. a gradient in no_grad_set)
          b.vars.push_back(nullptr);
          continue;
        }
        Variable* v = scope.FindVar(name);
        if (!v)
          TIDE_FAIL(TIDE_NOT_FOUND, label_, " ", side, " '", b.param, "': variable '", name,
                    "' is not declared in the program nor present in the scope");
        b.vars.push_back(v);
      }
    }
  };
  bind(inputs_, "input");
  bind(outputs_, "output");
  for (auto& b : inputs_) {
    b.transforms.clear();
    b.transforms.resize(b.vars.size());
  }
  FindAliasedInputs(*this);
  shape_cache_.Reset();
  outputs_checked_ = false;
}

}  // namespace tide::core
