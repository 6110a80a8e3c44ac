// bind_plugins.cc: plugin loading and listing, flags.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/platform/flags.h"
#include "core/registry/registry.h"

namespace tide::python {

using namespace tide::core;  // NOLINT

namespace {
py::dict RecordToDict(const PluginRecord& r) {
  return py::dict(
      py::arg("name") = r.name, py::arg("version") = r.version, py::arg("file") = r.path,
      py::arg("abi") =
          r.abi_major ? std::to_string(r.abi_major) + "." + std::to_string(r.abi_minor) : "",
      py::arg("status") = r.loaded ? "loaded" : "failed", py::arg("error") = r.error,
      py::arg("description") = r.description, py::arg("requires") = r.requires,
      py::arg("load_ms") = r.load_ms, py::arg("ops") = r.ops, py::arg("kernels") = r.kernels,
      py::arg("devices") = r.devices, py::arg("transforms") = r.transforms,
      py::arg("warnings") = r.warnings);
}
}  // namespace

void BindPlugins(py::module_& m) {
  m.def(
      "initialize",
      [] {
        py::gil_scoped_release nogil;
        Initialize();
      },
      "Sets up flags and logging and loads the plugins on the plugin path (once).");
  m.def(
      "load_plugin",
      [](const std::string& path) {
        PluginRecord r;
        {
          py::gil_scoped_release nogil;
          r = PluginManager::Global().Load(path);
        }
        return RecordToDict(r);
      },
      py::arg("path"), "Loads one more plugin now; raises with the loader's reason when it fails.");
  m.def("plugins", [] {
    py::list out;
    for (const auto& r : PluginManager::Global().Records()) out.append(RecordToDict(r));
    return out;
  });
  m.def(
      "shutdown",
      [] {
        py::gil_scoped_release nogil;
        ShutdownPlugins();
      },
      "Ends the devices' and plugins' lives now (what happens at exit); see tide.shutdown.");
  m.def("orphan_kernel_warnings", &OrphanKernelWarnings, py::arg("plugin_file") = "",
        "Kernels (of one plugin file, or of all) for an op no loaded plugin defines: one warning "
        "each.");
  m.def("plugins_json", [] { return PluginManager::Global().RecordsJson(); });
  m.def("plugin_search_path", [] { return PluginManager::Global().SearchPath(); });
  m.def("set_flag", &SetFlag, py::arg("name"), py::arg("value"));
  m.def("prepare_flags_version", &PrepareFlagsVersion,
        "Changes so far of the flags a program's preparation reads (core/platform/flags.h).");
  m.def("get_flag", [](const std::string& name) -> py::object {
    std::string v;
    if (!GetFlag(name, &v)) return py::none();
    return py::str(v);
  });
}

}  // namespace tide::python
