// op_checks.h: checks an OpDesc against its op's registered proto: parameters known, required
// inputs set, single-variable parameters given one variable; attributes converted to their
// declared types, defaults filled and the plugin's value checks run. Errors name the op, the
// parameter or attribute, and what was expected.
#pragma once

#include "core/ir/op_desc.h"
#include "core/registry/op_info.h"

namespace tide::core {

void CheckAndFillAttrs(const OpInfo& info, AttributeMap* attrs);
void CheckArguments(const OpInfo& info, const OpDesc& op);

// Both, on `op` in place.
inline void CheckOpDesc(const OpInfo& info, OpDesc* op) {
  CheckArguments(info, *op);
  CheckAndFillAttrs(info, op->mutable_attrs());
}

}  // namespace tide::core
