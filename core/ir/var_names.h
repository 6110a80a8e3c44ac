// var_names.h: variable names with a meaning in a program: a variable's gradient and the empty
// argument (an output nobody wants, e.g. a gradient in no_grad_set).
#pragma once

#include <string>

namespace tide::core {

inline std::string GradVarName(const std::string& name) { return name + "@GRAD"; }
constexpr const char* kEmptyVarName = "@EMPTY@";

}  // namespace tide::core
