// module.cc: the tide._C extension: the core's IR, tensors, scopes, executor and plugins.
// The core starts when tide/__init__.py calls its initialize() (tide::core::Initialize()) at
// import.
#include <pybind11/numpy.h>

#include "bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "Tide core bindings (descs, tensors, scopes, executor, plugins)";
  // pybind11's numpy API table is a function-local static whose initialiser imports numpy: made
  // first by two threads at once, one waits on the static's guard holding the GIL while the
  // other's import waits for the GIL (a deadlock at the first LoDTensor(array)). Made here, once.
  pybind11::detail::npy_api::get();
  namespace tp = tide::python;
  tp::BindErrors(m);
  tp::BindIR(m);
  tp::BindTensor(m);
  tp::BindDLPack(m);
  tp::BindExecutor(m);
  tp::BindPlugins(m);
  tp::BindPaddle(m);
  tp::BindAot(m);
}
