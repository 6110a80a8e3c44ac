// tide/plugin/op_run.hpp: operators without kernels (control flow, I/O): tide::OpRunContext,
// with the op's scope, its variable names and sub-block runs.
#ifndef TIDE_PLUGIN_OP_RUN_HPP_
#define TIDE_PLUGIN_OP_RUN_HPP_

#include <cstdint>
#include <string>
#include <tide/plugin/attributes.hpp>
#include <tide/plugin/host.hpp>
#include <tide/plugin/scope.hpp>
#include <tide/plugin/types.hpp>
#include <vector>

namespace tide {

class OpRunContext {
 public:
  explicit OpRunContext(TideOpRunContext* c) : c_(c) {}
  const char* op_type() const { return Host().OpRun_OpType(c_); }
  Scope scope() const { return Scope(Host().OpRun_Scope(c_)); }
  Place place() const { return Place(Host().OpRun_Place(c_)); }
  TideDeviceContext* device_context() const { return Host().OpRun_DeviceContext(c_); }
  template <typename T>
  T Attr(const char* name) const {
    return detail::AttrReader<T>::Read(op_type(), name, Host().OpRun_Attr(c_, name));
  }
  std::vector<std::string> Inputs(const char* param) const {
    size_t n = 0;
    const char* const* v = Host().OpRun_Inputs(c_, param, &n);
    return std::vector<std::string>(v, v + n);
  }
  std::vector<std::string> Outputs(const char* param) const {
    size_t n = 0;
    const char* const* v = Host().OpRun_Outputs(c_, param, &n);
    return std::vector<std::string>(v, v + n);
  }
  void RunBlock(int32_t block_idx, Scope scope) {
    ThrowIfError(Host().OpRun_RunBlock(c_, block_idx, scope.c()));
  }

 private:
  TideOpRunContext* c_;
};

}  // namespace tide

#endif  // TIDE_PLUGIN_OP_RUN_HPP_
