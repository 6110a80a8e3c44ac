// attr_convert.h: Python values <-> op attributes.
#pragma once

#include <pybind11/pybind11.h>

#include "core/ir/attribute.h"

namespace tide::python {

namespace py = pybind11;

// bool, int (int32, or int64 when it does not fit), float, str, BlockDesc, and lists of these
// (an empty list has no element type; the op's attribute checker gives it one).
core::Attribute PyToAttr(py::handle value);
py::object AttrToPy(const core::Attribute& a);

}  // namespace tide::python
