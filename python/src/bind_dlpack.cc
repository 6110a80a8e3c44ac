// bind_dlpack.cc: DLPack exchange (LoDTensor.__dlpack__/__dlpack_device__, tide._C.from_dlpack),
// zero-copy to and from numpy, PyTorch and any other DLPack producer or consumer.
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>

#include "bindings.h"
#include "core/device/device_context.h"
#include "core/framework/tensor.h"
#include "core/platform/enforce.h"
#include "core/registry/registry.h"
#include "dlpack_check.h"
#include "numpy_convert.h"

namespace tide::python {

using namespace tide::core;  // NOLINT

namespace {

// DLPack 1.0's versioned managed tensor. Debian's libdlpack-dev (0.6) predates it, so it is
// declared here as the DLPack 1.0 specification lays it out; DLTensor itself is unchanged.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLFlagReadOnly = 1;
constexpr const char* kCapsule = "dltensor";
constexpr const char* kCapsuleVersioned = "dltensor_versioned";

// What an exported tensor keeps alive.
struct ExportCtx {
  AllocationPtr holder;
  std::vector<int64_t> shape, strides;
};

DLDataType ToDL(DataType t) {
  switch (t) {
    case TIDE_FP32:
      return {kDLFloat, 32, 1};
    case TIDE_FP64:
      return {kDLFloat, 64, 1};
    case TIDE_FP16:
      return {kDLFloat, 16, 1};
    case TIDE_BF16:
      return {kDLBfloat, 16, 1};
    case TIDE_COMPLEX64:
      return {kDLComplex, 64, 1};
    case TIDE_COMPLEX128:
      return {kDLComplex, 128, 1};
    case TIDE_INT8:
      return {kDLInt, 8, 1};
    case TIDE_INT16:
      return {kDLInt, 16, 1};
    case TIDE_INT32:
      return {kDLInt, 32, 1};
    case TIDE_INT64:
      return {kDLInt, 64, 1};
    case TIDE_UINT8:
      return {kDLUInt, 8, 1};
    case TIDE_BOOL:
      return {kDLBoolCode, 8, 1};
    default:
      TIDE_FAIL(TIDE_UNIMPLEMENTED, "no DLPack type for ", DataTypeName(t));
  }
}

// The device plugins say which DLPack device type their memory is (TideDeviceDef).
DLDevice ToDLDevice(const Place& p) {
  const DeviceInfo& dev = CheckedDevice(p);
  TIDE_ENFORCE(dev.def.dlpack_device_type != 0, "tensors on ", p.ToString(),
               " cannot be shared by DLPack: the '", p.kind_name(), "' device plugin (",
               dev.plugin_file, ") declares no DLPack device type");
  return {static_cast<DLDeviceType>(dev.def.dlpack_device_type),
          dev.def.dlpack_device_type == kDLCPU ? 0 : p.device};
}

// A producer's device type as an int: a value DLPack does not define (a foreign capsule may hold
// any) must not be read as the enum (undefined behaviour).
int32_t DeviceTypeOf(const DLDevice& d) {
  static_assert(sizeof(d.device_type) == sizeof(int32_t), "DLDeviceType is a 32-bit enum");
  int32_t type;
  std::memcpy(&type, &d.device_type, sizeof(type));
  return type;
}

Place FromDLDevice(DLDevice d) {
  const int32_t type = DeviceTypeOf(d);
  if (type == kDLCUDAHost) return HostPlace();
  std::string kinds;
  for (const DeviceInfo* dev : Registry::Global().AllDevices()) {
    if (dev->def.dlpack_device_type == type) return Place(dev->kind_name, d.device_id);
    if (dev->def.dlpack_device_type)
      kinds +=
          StrCat(kinds.empty() ? "" : ", ", dev->kind_name, " (", dev->def.dlpack_device_type, ")");
  }
  TIDE_FAIL(TIDE_UNIMPLEMENTED, "DLPack device type ", type,
            " has no Tide place: no loaded device plugin "
            "declares it (declared: ",
            kinds.empty() ? "none" : kinds, ")");
}

// Fills a DLTensor viewing `t`; `ctx` owns the arrays it points to.
void Describe(const LoDTensor& t, ExportCtx* ctx, DLTensor* out) {
  t.holder()->MarkShared();  // the consumer may write the bytes unseen
  ctx->holder = t.holder();
  ctx->shape = t.dims().ToVector();
  ctx->strides.resize(ctx->shape.size());
  int64_t s = 1;
  for (size_t i = ctx->shape.size(); i-- > 0;) {
    ctx->strides[i] = s;
    s *= ctx->shape[i];
  }
  out->data = t.holder()->ptr();
  out->byte_offset = t.offset();
  out->device = ToDLDevice(t.place());
  out->ndim = static_cast<int>(ctx->shape.size());
  out->dtype = ToDL(t.dtype());
  out->shape = ctx->shape.data();
  out->strides = ctx->strides.data();
}

void DeleteCapsule(PyObject* capsule) {  // only when nobody consumed it
  if (PyCapsule_IsValid(capsule, kCapsuleVersioned)) {
    auto* m =
        static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kCapsuleVersioned));
    if (m && m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, kCapsule)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
    if (m && m->deleter) m->deleter(m);
  }
}

py::object Export(const LoDTensor& t, py::object max_version) {
  TIDE_ENFORCE(t.initialized(), "cannot export a tensor that holds no data");
  // The consumer reads the memory on its own stream: the device's queued work on it must be done
  // (the stream handshake of __dlpack__(stream=...) is not used).
  if (t.place() != HostPlace()) DeviceContextPool::Global().Get(t.place())->Synchronize();
  bool versioned = false;
  if (!max_version.is_none()) versioned = max_version.cast<py::tuple>()[0].cast<int>() >= 1;
  auto* ctx = new ExportCtx;
  if (versioned) {
    auto* m = new DLManagedTensorVersioned{};
    m->version = {1, 0};
    m->manager_ctx = ctx;
    m->deleter = [](DLManagedTensorVersioned* self) {
      delete static_cast<ExportCtx*>(self->manager_ctx);
      delete self;
    };
    Describe(t, ctx, &m->dl_tensor);
    return py::reinterpret_steal<py::object>(PyCapsule_New(m, kCapsuleVersioned, DeleteCapsule));
  }
  auto* m = new DLManagedTensor{};
  m->manager_ctx = ctx;
  m->deleter = [](DLManagedTensor* self) {
    delete static_cast<ExportCtx*>(self->manager_ctx);
    delete self;
  };
  Describe(t, ctx, &m->dl_tensor);
  return py::reinterpret_steal<py::object>(PyCapsule_New(m, kCapsule, DeleteCapsule));
}

// Calls a producer's deleter holding the GIL (producers such as numpy drop Python references).
template <typename M>
void CallDeleter(M* m) {
  if (!m->deleter || !Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  m->deleter(m);
}

template <typename M>
std::unique_ptr<LoDTensor> Adopt(M* m, bool read_only) {
  TIDE_ENFORCE(m, "from_dlpack: the capsule holds a null tensor");
  const DLTensor& d = m->dl_tensor;
  DataType dt = FromDL(d.dtype);
  CheckDLTensor(d, dt);
  std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
  if (d.strides) {  // only compact row-major data can be shared
    int64_t expect = 1;
    for (int i = d.ndim; i-- > 0;) {
      TIDE_ENFORCE(
          shape[i] == 1 || d.strides[i] == expect,
          "from_dlpack: only C-contiguous tensors can be shared (make it contiguous first)");
      expect *= shape[i];
    }
  }
  Place place = FromDLDevice(d.device);
  const int64_t n = DDim(shape).product();
  size_t bytes = static_cast<size_t>(n) * SizeOf(dt);
  auto t = std::make_unique<LoDTensor>();
  void* data = static_cast<char*>(d.data) + d.byte_offset;
  auto holder = std::make_shared<Allocation>(data, bytes, place, [m](void*) { CallDeleter(m); });
  holder->MarkShared();  // the producer may write the bytes unseen
  if (read_only) {       // a read-only producer: copy, and let the producer go now
    LoDTensor view;
    view.ResetHolder(holder, dt, DDim(shape));
    py::array copy = py::array(ToNumpy(view)).attr("copy")();
    SetFromNumpy(t.get(), copy, HostPlace(), true);
    return t;
  }
  t->ResetHolder(std::move(holder), dt, DDim(shape));
  return t;
}

std::unique_ptr<LoDTensor> Import(py::object obj) {
  py::object capsule = obj;
  if (py::hasattr(obj, "__dlpack__")) {
    try {
      capsule = obj.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(1, 0));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      capsule = obj.attr("__dlpack__")();
    }
  }
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kCapsuleVersioned)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kCapsuleVersioned));
    TIDE_ENFORCE(m, "from_dlpack: the capsule holds a null tensor");
    TIDE_ENFORCE(m->version.major == 1, "from_dlpack: DLPack major version ", m->version.major,
                 " is not supported");
    auto t = Adopt(m, m->flags & kDLFlagReadOnly);
    PyCapsule_SetName(c, "used_dltensor_versioned");
    PyCapsule_SetDestructor(c, nullptr);
    return t;
  }
  if (PyCapsule_IsValid(c, kCapsule)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kCapsule));
    auto t = Adopt(m, false);
    PyCapsule_SetName(c, "used_dltensor");
    PyCapsule_SetDestructor(c, nullptr);
    return t;
  }
  TIDE_FAIL(TIDE_INVALID_ARGUMENT,
            "from_dlpack needs an object with __dlpack__ or an unused DLPack capsule");
}

}  // namespace

void BindDLPack(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<LoDTensor>>(m.attr("LoDTensor"));
  cls.def(
      "__dlpack__",
      [](const LoDTensor& t, py::object stream, py::object max_version, py::object, py::object) {
        (void)stream;  // host and synchronised device tensors need no stream handshake
        return Export(t, max_version);
      },
      py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
      py::arg("dl_device") = py::none(), py::arg("copy") = py::none());
  cls.def("__dlpack_device__", [](const LoDTensor& t) {
    DLDevice d = ToDLDevice(t.place());
    return py::make_tuple(DeviceTypeOf(d), d.device_id);
  });
  m.def("from_dlpack", &Import, py::arg("obj"),
        "A LoDTensor sharing the memory of a DLPack producer (numpy, PyTorch, ...).");
}

}  // namespace tide::python
