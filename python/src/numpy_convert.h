// numpy_convert.h: LoDTensor <-> numpy arrays, sharing memory where the layout allows.
#pragma once

#include <pybind11/numpy.h>

#include "core/framework/tensor.h"

namespace tide::python {

namespace py = pybind11;

core::DataType DataTypeFromNumpy(const py::dtype& dt);
py::dtype NumpyDtype(core::DataType t);

// Makes `t` hold `array` on `place`. On the host, a C-contiguous, writeable, element-aligned array
// is shared, not copied (the tensor keeps the array alive); otherwise the data is copied.
void SetFromNumpy(core::LoDTensor* t, const py::array& array, const core::Place& place,
                  bool share = true);
// A numpy view of a host tensor that keeps its memory alive (a copy for device tensors).
py::array ToNumpy(const core::LoDTensor& t);
// A numpy array with a copy of t's data; unlike ToNumpy's view, the tensor's content version stays.
py::array NumpyCopy(const core::LoDTensor& t);

// Whether ToNumpy views t's memory (a host-accessible place) rather than copying it.
bool NumpyViews(const core::LoDTensor& t);

}  // namespace tide::python
