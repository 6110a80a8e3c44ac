// bindings.h: the parts of the tide._C module, each bound in its own file.
#pragma once

#include <pybind11/pybind11.h>

namespace tide::python {

namespace py = pybind11;

void BindErrors(py::module_& m);
void BindIR(py::module_& m);
void BindTensor(py::module_& m);
void BindDLPack(py::module_& m);
void BindExecutor(py::module_& m);
void BindPlugins(py::module_& m);
void BindPaddle(py::module_& m);
void BindAot(py::module_& m);

}  // namespace tide::python
