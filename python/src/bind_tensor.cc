// bind_tensor.cc: Place, the data types, LoDTensor (numpy in and out), SelectedRows, Variable and
// Scope.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/device/contract_probe.h"
#include "core/device/device_context.h"
#include "core/framework/scope.h"
#include "core/memory/memory.h"
#include "core/registry/registry.h"
#include "numpy_convert.h"

namespace tide::python {

using namespace tide::core;  // NOLINT

namespace {

std::vector<std::vector<uint64_t>> LengthsToOffsets(
    const std::vector<std::vector<uint64_t>>& lens) {
  LoD lod;
  for (const auto& level : lens) {
    std::vector<uint64_t> offsets = {0};
    for (uint64_t n : level) offsets.push_back(offsets.back() + n);
    lod.push_back(offsets);
  }
  return lod;
}

// A LoD (offsets) or its lengths from Python: a list of levels, each a list of non-negative
// ints; anything else is a TypeError / ValueError saying which element (not pybind's dump).
LoD LevelsFromPython(py::handle levels, const char* what) {
  auto is_seq = [](py::handle h) {
    return py::isinstance<py::sequence>(h) && !py::isinstance<py::str>(h);
  };
  if (!is_seq(levels))
    throw py::type_error(StrCat(what, " must be a list of levels, each a list of ints; got ",
                                std::string(py::str(py::type::of(levels).attr("__name__")))));
  LoD out;
  size_t i = 0;
  for (py::handle level : levels) {
    if (!is_seq(level))
      throw py::type_error(StrCat(what, " must be a list of levels, each a list of ints: level ", i,
                                  " is ", std::string(py::repr(level)),
                                  " (one level is written [[2, 3]], not [2, 3])"));
    std::vector<uint64_t> values;
    size_t j = 0;
    for (py::handle v : level) {
      py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));  // numpy ints
      if (!index) {
        PyErr_Clear();
        throw py::type_error(StrCat(what, ": level ", i, " element ", j, " is ",
                                    std::string(py::repr(v)), ", not an int"));
      }
      const long long n = index.cast<long long>();
      if (n < 0)
        throw py::value_error(
            StrCat(what, ": level ", i, " element ", j, " is ", n, "; it must be >= 0"));
      values.push_back(static_cast<uint64_t>(n));
      ++j;
    }
    out.push_back(std::move(values));
    ++i;
  }
  return out;
}

void SetLoDChecked(LoDTensor& t, const LoD& lod) {
  std::string err = CheckLoD(lod, t.dims().size() ? t.dims()[0] : 0);
  TIDE_ENFORCE(err.empty(), "invalid LoD ", LoDToString(lod), " for a tensor of dims ",
               t.dims().ToString(), ": ", err);
  t.set_lod(lod);
}

std::string TensorRepr(const LoDTensor& t) {
  if (!t.initialized()) return "LoDTensor(uninitialized, dims=" + t.dims().ToString() + ")";
  return StrCat("LoDTensor(", DataTypeName(t.dtype()), ", dims=", t.dims().ToString(),
                ", place=", t.place().ToString(),
                t.lod().empty() ? "" : ", lod=" + LoDToString(t.lod()), ")");
}

}  // namespace

void BindTensor(py::module_& m) {
  py::class_<Place>(
      m, "Place",
      "A device of a kind a device plugin provides: Place(\"cpu\"), Place(\"gpu\", 1), "
      "a vendor's Place(\"acme\", 0). Made for any kind name; using it (an "
      "Executor's run, a tensor on it) needs a loaded plugin of that kind.")
      .def(py::init([](const std::string& kind, int32_t device) { return Place(kind, device); }),
           py::arg("kind"), py::arg("device") = 0)
      .def_property_readonly("kind", [](const Place& p) { return p.kind_name(); })
      .def_property_readonly("device", [](const Place& p) { return p.device; })
      .def("__eq__", [](const Place& a, const Place& b) { return a == b; })
      .def("__hash__", [](const Place& p) { return PlaceHash()(p); })
      .def("__repr__", [](const Place& p) { return "Place(" + p.ToString() + ")"; })
      .def("__str__", &Place::ToString);
  m.def("parse_place", &ParsePlace);
  m.def("device_count", &DeviceCount, py::arg("kind"),
        "Devices of a place kind (0 when no plugin provides it).");
  m.def("device_unavailable_reason", &DeviceUnavailableReason, py::arg("kind"),
        "Why a place kind has no device (its plugin's reason, or that none provides it); \"\" "
        "when it has devices or its plugin gives no reason.");
  m.def(
      "check_place", [](const Place& p) { CheckedDevice(p); }, "Raises unless the place exists.");
  m.def(
      "device_properties",
      [](const Place& p) {
        DeviceProperties d = GetDeviceProperties(p);
        py::dict out;
        out["name"] = d.name;
        out["vendor"] = d.vendor;
        out["driver_version"] = d.driver_version;
        out["compute_capability"] = d.compute_capability;
        out["total_memory"] = d.total_memory;
        out["multiprocessor_count"] = d.multiprocessor_count;
        return out;
      },
      py::arg("place"), "What the device plugin reports of a place (TideDeviceProperties).");
  // The conformance kit's device checks (core/device/contract_probe.h), run without the GIL.
  using Checks = std::vector<ContractCheck> (*)(const Place&);
  auto def_checks = [&m](const char* name, Checks run, const char* doc) {
    m.def(
        name,
        [run](const Place& p) {
          std::vector<ContractCheck> checks;
          {
            py::gil_scoped_release nogil;
            checks = run(p);
          }
          py::list out;
          for (const ContractCheck& c : checks)
            out.append(py::dict(py::arg("contract") = c.name, py::arg("rule") = c.rule,
                                py::arg("passed") = c.passed, py::arg("message") = c.message,
                                py::arg("skipped") = c.skipped));
          return out;
        },
        py::arg("place"), doc);
  };
  def_checks("check_device_contracts", &CheckDeviceContracts,
             "Checks that the place's device keeps its device contract (copy, free).");
  def_checks("check_device_entries", &CheckOptionalDeviceEntries,
             "Checks the rules of the place's optional device entries (event timing, memory "
             "statistics, the tracer); those it lacks are skipped.");
  m.def(
      "device_contract", [](const Place& p) { return CheckedDevice(p).contract; }, py::arg("place"),
      "The device contract the core follows for the place's device (1 where it declares none).");
  m.def("memory_used", &memory::Used);
  m.def("memory_empty_cache", &memory::EmptyCache, py::arg("place"));
  m.def(
      "device_kinds",
      [] {
        std::vector<std::string> kinds;
        for (const DeviceInfo* d : Registry::Global().AllDevices()) kinds.push_back(d->kind_name);
        return kinds;
      },
      "The place kinds of the loaded device plugins, in load order.");
  m.def("memory_stats", [](const Place& p) {
    memory::AllocatorStats s = memory::Stats(p);
    py::dict out(py::arg("used") = s.used, py::arg("peak_used") = s.peak_used,
                 py::arg("reserved") = s.reserved, py::arg("budget") = s.budget,
                 py::arg("live_blocks") = s.live_blocks, py::arg("total_allocs") = s.total_allocs,
                 py::arg("arenas") = s.arenas);
    TideMemoryStats d{};
    if (GetDeviceMemoryStats(p, &d))  // the device plugin's own allocator, where it reports one
      out["device"] = py::dict(py::arg("bytes_in_use") = d.bytes_in_use,
                               py::arg("bytes_reserved") = d.bytes_reserved,
                               py::arg("peak_bytes_in_use") = d.peak_bytes_in_use,
                               py::arg("bytes_limit") = d.bytes_limit);
    return out;
  });
  // tide.core's dtype names and codes come from here, so Python, the core and plugins share one
  // table (the SDK's, tide/plugin/data_type.hpp).
  m.def(
      "data_types",
      [] {
        py::list out;
        for (const ::tide::DataTypeInfo& d : ::tide::kDataTypes)
          out.append(py::make_tuple(d.name, static_cast<int>(d.type), d.size));
        return out;
      },
      "Every data type as (name, TideDataType code, bytes per element), in code order.");

  py::class_<LoDTensor>(m, "LoDTensor")
      .def(py::init<>())
      .def(py::init([](const py::array& a, const Place& place, bool share) {
             auto t = std::make_unique<LoDTensor>();
             SetFromNumpy(t.get(), a, place, share);
             return t;
           }),
           py::arg("array"), py::arg_v("place", HostPlace(), "Place('cpu', 0)"),
           py::arg("share") = true)
      .def(
          "set",
          [](LoDTensor& t, const py::array& a, const Place& place, bool share) {
            SetFromNumpy(&t, a, place, share);
          },
          py::arg("array"), py::arg_v("place", HostPlace(), "Place('cpu', 0)"),
          py::arg("share") = true,
          "Holds `array` on `place`; on the host a contiguous array is shared, not copied.")
      .def("numpy", &ToNumpy, "A numpy view of the data (a host copy for device tensors).")
      // np.array(t) (copy=True) copies without exporting a view, so the tensor's content
      // version stays and whatever a kernel keeps converted from it (a reordered filter, a
      // convolution's kept state) stays valid; np.asarray(t) is a view, as numpy() is.
      .def(
          "__array__",
          [](const LoDTensor& t, py::object dtype, py::object copy) {
            const bool copied = !copy.is_none() && copy.cast<bool>();
            // NumPy 2's copy=False: never a copy, a ValueError where one is needed.
            if (!copy.is_none() && !copied && t.initialized() && !NumpyViews(t))
              throw py::value_error("the tensor is on " + t.place().ToString() +
                                    ", whose memory the host cannot read: an array of it is a "
                                    "copy (np.array(t) or t.numpy() make one)");
            py::array a = copied ? NumpyCopy(t) : ToNumpy(t);
            if (!dtype.is_none()) a = a.attr("astype")(dtype, py::arg("copy") = false);
            return a;
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def(
          "_content_version",
          [](const LoDTensor& t) { return t.holder() ? t.holder()->content_version() : 0; },
          "The core's content version of the data (0: shared where writes go unseen); for tests.")
      .def("shape", [](const LoDTensor& t) { return t.dims().ToVector(); })
      .def("dtype", [](const LoDTensor& t) { return std::string(DataTypeName(t.dtype())); })
      .def("place", &LoDTensor::place)
      .def("_is_initialized", &LoDTensor::initialized)
      .def("lod", &LoDTensor::lod)
      .def(
          "set_lod",
          [](LoDTensor& t, py::handle lod) { SetLoDChecked(t, LevelsFromPython(lod, "lod")); },
          py::arg("lod"))
      .def("recursive_sequence_lengths",
           [](const LoDTensor& t) {
             LoD lens;
             for (const auto& level : t.lod()) {
               std::vector<uint64_t> l;
               for (size_t i = 1; i < level.size(); ++i) l.push_back(level[i] - level[i - 1]);
               lens.push_back(l);
             }
             return lens;
           })
      .def("set_recursive_sequence_lengths",
           [](LoDTensor& t, py::handle lens) {
             SetLoDChecked(t, LengthsToOffsets(LevelsFromPython(lens, "sequence lengths")));
           })
      .def("__repr__", &TensorRepr);

  py::class_<SelectedRows>(m, "SelectedRows")
      .def(py::init<>())
      .def("rows", &SelectedRows::rows)
      .def("set_rows",
           [](SelectedRows& s, const std::vector<int64_t>& r) { *s.mutable_rows() = r; })
      .def("height", &SelectedRows::height)
      .def("set_height", &SelectedRows::set_height)
      .def("get_tensor", &SelectedRows::mutable_value, py::return_value_policy::reference_internal);

  py::class_<Variable>(m, "Variable")
      .def_property_readonly("type", [](const Variable& v) { return int(v.type()); })
      .def("is_initialized", &Variable::IsInitialized)
      .def("get_tensor", &Variable::GetMutable<LoDTensor>,
           py::return_value_policy::reference_internal)
      .def("get_selected_rows", &Variable::GetMutable<SelectedRows>,
           py::return_value_policy::reference_internal)
      .def("get_tensor_list", [](Variable& v) {
        std::vector<LoDTensor>* list = v.GetTensorList();
        TIDE_ENFORCE(list != nullptr, "variable holds ", VarTypeName(v.type()),
                     ", not a tensor list");
        return *list;
      });

  py::class_<Scope>(m, "Scope")
      .def(py::init<>())
      .def("var", &Scope::Var, py::return_value_policy::reference_internal,
           "Finds or creates a local variable.")
      .def("find_var", &Scope::FindVar, py::return_value_policy::reference_internal,
           "Looks here and in the parents; None when absent.")
      .def("find_local_var", &Scope::FindLocalVar, py::return_value_policy::reference_internal)
      .def("new_scope", &Scope::NewScope, py::return_value_policy::reference_internal)
      .def("drop_kids", &Scope::DropKids)
      .def("erase_vars", &Scope::EraseVars)
      .def("local_var_names", &Scope::LocalVarNames);
}

}  // namespace tide::python
