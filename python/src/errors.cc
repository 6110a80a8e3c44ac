// errors.cc: the core's errors as Python exceptions. Each TideCode maps to a class that also
// derives from the matching built-in (InvalidArgumentError is a ValueError, ...).
#include <cstring>
#include <map>

#include "bindings.h"
#include "core/platform/enforce.h"

namespace tide::python {
namespace {

std::map<TideCode, PyObject*>& Classes() {
  static std::map<TideCode, PyObject*> classes;
  return classes;
}

PyObject* MakeClass(py::module_& m, const char* name, PyObject* base, PyObject* builtin) {
  std::string qualified = std::string("tide._C.") + name;
  py::tuple bases = builtin ? py::make_tuple(py::handle(base), py::handle(builtin))
                            : py::make_tuple(py::handle(base));
  PyObject* cls = PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
  m.add_object(name, py::handle(cls));
  return cls;
}

// PyErr_SetString decodes the message as strict UTF-8: a name or path with other bytes in it
// would replace the error with a bare UnicodeDecodeError. Such bytes are shown escaped instead.
void SetError(PyObject* cls, const char* message) {
  PyObject* text = PyUnicode_DecodeUTF8(message, static_cast<Py_ssize_t>(std::strlen(message)),
                                        "backslashreplace");
  if (!text) {
    PyErr_Clear();
    PyErr_SetString(cls, "(an error whose message could not be decoded)");
    return;
  }
  PyErr_SetObject(cls, text);
  Py_DECREF(text);
}

}  // namespace

void BindErrors(py::module_& m) {
  PyObject* base = PyErr_NewException("tide._C.TideError", PyExc_RuntimeError, nullptr);
  m.add_object("TideError", py::handle(base));
  auto& c = Classes();
  c[TIDE_INVALID_ARGUMENT] = MakeClass(m, "InvalidArgumentError", base, PyExc_ValueError);
  c[TIDE_NOT_FOUND] = MakeClass(m, "NotFoundError", base, PyExc_LookupError);
  c[TIDE_OUT_OF_RANGE] = MakeClass(m, "OutOfRangeError", base, PyExc_IndexError);
  c[TIDE_UNIMPLEMENTED] = MakeClass(m, "UnimplementedError", base, PyExc_NotImplementedError);
  c[TIDE_RESOURCE_EXHAUSTED] = MakeClass(m, "ResourceExhaustedError", base, PyExc_MemoryError);
  c[TIDE_FAILED_PRECONDITION] = MakeClass(m, "PreconditionError", base, nullptr);
  c[TIDE_ALREADY_EXISTS] = MakeClass(m, "AlreadyExistsError", base, nullptr);
  c[TIDE_UNAVAILABLE] = MakeClass(m, "UnavailableError", base, nullptr);
  c[TIDE_INTERNAL] = MakeClass(m, "InternalError", base, nullptr);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tide::core::Error& e) {
      auto it = Classes().find(e.code());
      SetError(it == Classes().end() ? PyExc_RuntimeError : it->second, e.what());
    }
  });
}

}  // namespace tide::python
