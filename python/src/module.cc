// module.cc: the tide._C extension: the core's IR, tensors, scopes, executor and plugins.
// The core starts when tide/__init__.py calls its initialize() (tide::core::Initialize()) at
// import.
#include "bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "Tide core bindings (descs, tensors, scopes, executor, plugins)";
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
