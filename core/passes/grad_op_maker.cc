// grad_op_maker.cc: running a plugin's grad maker, or the default rule.
#include "core/passes/grad_op_maker.h"

#include <algorithm>

#include "core/platform/enforce.h"
#include "core/platform/status.h"
#include "core/plugin/c_handles.h"
#include "core/registry/registry.h"

namespace tide::core {

OpDesc DefaultGradOp(const OpDesc& fwd, const std::string& grad_type,
                     const std::vector<std::string>& no_grad) {
  OpDesc g;
  g.set_type(grad_type);
  for (const auto& kv : fwd.inputs()) g.SetInput(kv.first, kv.second);
  for (const auto& kv : fwd.outputs()) {
    g.SetInput(kv.first, kv.second);
    std::vector<std::string> grads;
    for (const auto& v : kv.second) grads.push_back(GradVarName(v));
    g.SetInput(GradVarName(kv.first), grads);
  }
  for (const auto& kv : fwd.inputs()) {
    std::vector<std::string> grads;
    for (const auto& v : kv.second)
      grads.push_back(std::binary_search(no_grad.begin(), no_grad.end(), v) ? kEmptyVarName
                                                                            : GradVarName(v));
    g.SetOutput(GradVarName(kv.first), grads);
  }
  *g.mutable_attrs() = fwd.attrs();
  return g;
}

std::vector<OpDesc> MakeGradOps(const OpDesc& fwd, const std::vector<std::string>& no_grad,
                                const std::map<std::string, int32_t>& grad_blocks) {
  const OpInfo& info = Registry::Global().GetOp(fwd.type());
  if (info.grad_maker) {
    TideGradOpMaker maker(fwd, no_grad);
    maker.grad_blocks = grad_blocks;
    CallPlugin([&] { return info.grad_maker(&maker, info.grad_maker_data); },
               "op '" + fwd.type() + "' grad maker", info.plugin_file);
    TIDE_ENFORCE(maker.error.empty(), "op '", fwd.type(), "' grad maker (plugin ", info.plugin_file,
                 "): ", maker.error);
    std::vector<OpDesc> out;
    for (auto& op : maker.ops) {
      TIDE_ENFORCE(op->error.empty(), "op '", fwd.type(), "' grad maker (plugin ", info.plugin_file,
                   "): grad op '", op->desc.type(), "' ", op->error);
      out.push_back(std::move(op->desc));
    }
    return out;
  }
  if (!info.default_grad_op.empty()) return {DefaultGradOp(fwd, info.default_grad_op, no_grad)};
  return {};
}

}  // namespace tide::core
