// numpy_convert.cc: numpy <-> LoDTensor.
#include "numpy_convert.h"

#include "core/device/device_context.h"
#include "core/framework/tensor_util.h"
#include "core/platform/enforce.h"

namespace tide::python {

using namespace tide::core;  // NOLINT

namespace {
// Whether `dt` is ml_dtypes' bfloat16 (numpy has none of its own; another extension's dtype of
// that name is not taken for it). Attributes, not pybind11's struct reads (see below).
bool IsMlDtypesBfloat16(const py::dtype& dt) {
  const py::object type = dt.attr("type");
  return dt.attr("itemsize").cast<int>() == 2 && py::hasattr(type, "__module__") &&
         type.attr("__module__").cast<std::string>().rfind("ml_dtypes", 0) == 0;
}
}  // namespace

// Tide's data-type names (the SDK's table) are numpy's, for every type numpy has; bfloat16 is
// ml_dtypes'. The name is read as a Python attribute: pybind11 2.10 reads numpy 1.x's descriptor
// struct directly, and numpy 2 moved its fields.
DataType DataTypeFromNumpy(const py::dtype& dt) {
  const std::string name = dt.attr("name").cast<std::string>();
  DataType t = TIDE_UNDEFINED;
  if (ParseDataTypeName(name.c_str(), &t, /*canonical_only=*/true) &&
      (t != TIDE_BF16 || IsMlDtypesBfloat16(dt)))
    return t;
  TIDE_FAIL(
      TIDE_INVALID_ARGUMENT, "numpy dtype ",
      py::str(static_cast<const py::object&>(dt)).cast<std::string>(),
      " has no Tide data type (use float16/32/64, complex64/128, int8/16/32/64, uint8, bool or "
      "ml_dtypes.bfloat16)");
}

py::dtype NumpyDtype(DataType t) {
  if (!IsValidDataType(t))
    TIDE_FAIL(TIDE_UNIMPLEMENTED, "a ", DataTypeName(t), " tensor has no numpy dtype");
  if (t != TIDE_BF16) return py::dtype(DataTypeName(t));
  try {  // tide.core.bfloat16_dtype: ml_dtypes', or an ImportError saying to install it
    return py::module_::import("tide.core").attr("bfloat16_dtype")().cast<py::dtype>();
  } catch (py::error_already_set& e) {
    TIDE_FAIL(TIDE_UNIMPLEMENTED, "a bfloat16 tensor has no numpy dtype here: ", e.what());
  }
}

namespace {
// Releases a Python reference from any thread, holding the GIL (and not after interpreter exit).
void ReleasePyObject(py::object* o) {
  if (!Py_IsInitialized()) return;  // the interpreter is gone: leak rather than crash
  py::gil_scoped_acquire gil;
  delete o;
}

bool HostAccessible(const Place& p) {
  return DeviceContextPool::Global().Get(p)->host_accessible();
}

// The host reads or writes a host-accessible device's memory directly: the device's queued work
// on it (an asynchronous kernel still writing, or reading the old values) must finish first.
void WaitForDevice(const Place& p) { DeviceContextPool::Global().Get(p)->Synchronize(); }
}  // namespace

// What numpy's array-making calls raise (MemoryError above all) as a Tide error naming the array.
[[noreturn]] void ConversionFailed(const py::array& array, const char* doing) {
  std::string why = "unknown error";
  if (PyErr_Occurred()) {
    py::error_already_set e;
    why = e.what();
  }
  TIDE_FAIL(TIDE_RESOURCE_EXHAUSTED, "cannot ", doing, " a numpy array of shape ",
            DDim(std::vector<int64_t>(array.shape(), array.shape() + array.ndim())).ToString(),
            " (", py::str(static_cast<const py::object&>(array.dtype())).cast<std::string>(),
            "): ", why);
}

// `array` in the machine's byte order and C order; numpy raises (e.g. MemoryError) into a Tide
// error. A big-endian array is byte-swapped here, not read as little-endian.
py::array NativeContiguous(const py::array& array, DataType dt) {
  const char order = array.dtype().attr("byteorder").cast<std::string>().at(0);
  const bool swapped = order == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? '>' : '<');
  PyObject* out = nullptr;
  if (swapped) {
    out = PyObject_CallMethod(array.ptr(), "astype", "O", NumpyDtype(dt).ptr());
  } else {
    // pybind11's array::ensure swallows numpy's error and returns a null array.
    using api = py::detail::npy_api;
    out = api::get().PyArray_FromAny_(array.ptr(), nullptr, 0, 0,
                                      api::NPY_ARRAY_ENSUREARRAY_ | api::NPY_ARRAY_C_CONTIGUOUS_,
                                      nullptr);
  }
  if (!out) ConversionFailed(array, swapped ? "byte-swap" : "make a contiguous copy of");
  return py::reinterpret_steal<py::array>(out);
}

void SetFromNumpy(LoDTensor* t, const py::array& array, const Place& place, bool share) {
  DataType dt = DataTypeFromNumpy(array.dtype());
  TIDE_ENFORCE(array.ndim() <= DDim::kMaxRank, "a numpy array of rank ", array.ndim(), " (shape ",
               py::str(array.attr("shape")).cast<std::string>(), "): Tide tensors have at most ",
               DDim::kMaxRank, " dims");
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  std::string bad = CheckDims(DDim(dims), SizeOf(dt));
  TIDE_ENFORCE(bad.empty(), "a numpy array that no tensor can hold: ", bad);
  const char order = array.dtype().attr("byteorder").cast<std::string>().at(0);
  const bool native = order != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? '>' : '<');
  bool contiguous = native && (array.flags() & py::array::c_style);
  bool writeable = array.writeable();
  size_t itemsize = SizeOf(dt);
  auto addr = reinterpret_cast<uintptr_t>(array.data());
  bool aligned = addr % itemsize == 0;
  size_t bytes = static_cast<size_t>(array.size()) * itemsize;
  Place host = HostPlace();
  if (share && contiguous && writeable && aligned && place == host) {
    auto* keep = new py::object(array);
    auto holder = std::make_shared<Allocation>(const_cast<void*>(array.data()), bytes, host,
                                               [keep](void*) { ReleasePyObject(keep); });
    holder->MarkShared();  // numpy may write it
    t->ResetHolder(std::move(holder), dt, DDim(dims));
    return;
  }
  py::array c = NativeContiguous(array, dt);
  if (HostAccessible(place)) {
    if (place != host) WaitForDevice(place);
    t->Resize(DDim(dims));
    std::memcpy(t->mutable_data(place, dt), c.data(), bytes);
  } else {  // stage on the host, then copy to the device
    LoDTensor staged;
    SetFromNumpy(&staged, c, host, /*share=*/false);
    TensorUpload(staged, place, t);  // on the device's copy stream where it has one
  }
}

namespace {
// A dense row-major view's numpy shape and byte strides.
void ShapeAndStrides(const LoDTensor& t, std::vector<py::ssize_t>* shape,
                     std::vector<py::ssize_t>* strides) {
  for (int i = 0; i < t.dims().size(); ++i) shape->push_back(t.dims()[i]);
  strides->resize(shape->size());
  py::ssize_t stride = static_cast<py::ssize_t>(SizeOf(t.dtype()));
  for (size_t i = shape->size(); i-- > 0;) {
    (*strides)[i] = stride;
    stride *= (*shape)[i];
  }
}

// A view of t's data (the tensor's memory kept alive, its contents from then on unknown to the
// core) or, with `copy`, a numpy array of its own.
py::array HostArray(const LoDTensor& t, bool copy) {
  TIDE_ENFORCE(t.initialized(), "the tensor holds no data");
  if (!HostAccessible(t.place())) {  // the host copy is new memory already: view it
    LoDTensor host;
    TensorCopySync(t, HostPlace(), &host);
    return HostArray(host, false);
  }
  if (t.place() != HostPlace()) WaitForDevice(t.place());
  std::vector<py::ssize_t> shape, strides;
  ShapeAndStrides(t, &shape, &strides);
  if (copy) return py::array(NumpyDtype(t.dtype()), shape, strides, t.data());  // no base: copied
  t.holder()->MarkShared();  // a writable view: numpy may change the bytes unseen
  auto* keep = new AllocationPtr(t.holder());
  py::capsule owner(keep, [](void* p) { delete static_cast<AllocationPtr*>(p); });
  return py::array(NumpyDtype(t.dtype()), shape, strides, t.data(), owner);
}
}  // namespace

py::array ToNumpy(const LoDTensor& t) { return HostArray(t, false); }
py::array NumpyCopy(const LoDTensor& t) { return HostArray(t, true); }
bool NumpyViews(const LoDTensor& t) { return t.initialized() && HostAccessible(t.place()); }

}  // namespace tide::python
