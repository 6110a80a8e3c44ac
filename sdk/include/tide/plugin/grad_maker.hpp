// tide/plugin/grad_maker.hpp: gradients: tide::GradMaker (what a grad maker reads of the forward
// op) and tide::GradOp (a grad op it makes), GradVarName and kEmptyVarName.
#ifndef TIDE_PLUGIN_GRAD_MAKER_HPP_
#define TIDE_PLUGIN_GRAD_MAKER_HPP_

#include <cstdint>
#include <string>
#include <tide/plugin/attributes.hpp>
#include <tide/plugin/host.hpp>
#include <vector>

namespace tide {

inline std::string GradVarName(const std::string& name) { return name + "@GRAD"; }
constexpr const char* kEmptyVarName = "@EMPTY@";

class GradOp {
 public:
  explicit GradOp(TideGradOp* op) : op_(op) {}
  GradOp& Input(const std::string& param, const std::vector<std::string>& args) {
    Set(Host().GradOp_SetInput, param, args);
    return *this;
  }
  GradOp& Output(const std::string& param, const std::vector<std::string>& args) {
    Set(Host().GradOp_SetOutput, param, args);
    return *this;
  }
  GradOp& Attr(const std::string& name, const AttrValue& v) {
    Host().GradOp_SetAttr(op_, name.c_str(), v.c());
    return *this;
  }
  GradOp& CopyAttrs() {
    Host().GradOp_CopyAttrs(op_);
    return *this;
  }

 private:
  template <typename F>
  void Set(F f, const std::string& param, const std::vector<std::string>& args) {
    std::vector<const char*> ptrs;
    for (const auto& a : args) ptrs.push_back(a.c_str());
    f(op_, param.c_str(), ptrs.data(), ptrs.size());
  }
  TideGradOp* op_;
};

class GradMaker {
 public:
  explicit GradMaker(TideGradOpMaker* m) : m_(m) {}
  const char* op_type() const { return Host().GradMaker_OpType(m_); }
  std::vector<std::string> InputParams() const {
    return List(Host().GradMaker_InputParams(m_, &n_));
  }
  std::vector<std::string> OutputParams() const {
    return List(Host().GradMaker_OutputParams(m_, &n_));
  }
  std::vector<std::string> Input(const char* p) const {
    return List(Host().GradMaker_Input(m_, p, &n_));
  }
  std::vector<std::string> Output(const char* p) const {
    return List(Host().GradMaker_Output(m_, p, &n_));
  }
  std::vector<std::string> InputGrad(const char* p) const {
    return List(Host().GradMaker_InputGrad(m_, p, &n_));
  }
  std::vector<std::string> OutputGrad(const char* p) const {
    return List(Host().GradMaker_OutputGrad(m_, p, &n_));
  }
  template <typename T>
  T Attr(const char* name) const {
    return detail::AttrReader<T>::Read(op_type(), name, Host().GradMaker_Attr(m_, name));
  }
  GradOp NewOp(const std::string& type) { return GradOp(Host().GradMaker_NewOp(m_, type.c_str())); }
  // The gradient block the core built for block attribute `attr` of the forward op (a
  // control-flow op's body), for the grad op to run; an error when there is none.
  int32_t GradBlock(const char* attr = "sub_block") const {
    int32_t idx = Host().GradMaker_GradBlock(m_, attr);
    if (idx < 0)
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op_type(), "': no gradient block for attribute '",
                 attr, "'");
    return idx;
  }

 private:
  std::vector<std::string> List(const char* const* names) const {
    return std::vector<std::string>(names, names + n_);
  }
  TideGradOpMaker* m_;
  mutable size_t n_ = 0;
};

}  // namespace tide

#endif  // TIDE_PLUGIN_GRAD_MAKER_HPP_
