// param_errors.h: the error for a parameter an op's schema does not declare, shared by the
// OpDesc checks and the grad makers' queries of the forward op (a misspelt parameter).
#pragma once

#include <string>

#include "core/registry/op_info.h"

namespace tide::core {

// "op 'T' has no input parameter 'P' (its inputs are: A, B)", or "" when the op declares `param`
// on that side ("input" or "output").
std::string UndeclaredParamError(const OpInfo& info, const std::string& param,
                                 const std::string& side);

}  // namespace tide::core
