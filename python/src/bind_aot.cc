// bind_aot.cc: programs frozen ahead of time (core/aot), for tide.aot.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/aot/freeze.h"
#include "core/aot/frozen_model.h"
#include "core/compiled/source_writer.h"

namespace tide::python {

using namespace tide::core;  // NOLINT

void BindAot(py::module_& m) {
  m.def(
      "aot_freeze",
      [](const ProgramDesc& program, const std::vector<std::string>& feeds,
         const std::vector<std::string>& fetches, const Place& place,
         const std::map<std::string, std::vector<std::pair<int64_t, int64_t>>>& shapes,
         const std::string& path, Scope* scope) {
        std::map<std::string, std::vector<DimRange>> ranges;
        for (const auto& [name, dims] : shapes)
          for (const auto& [lower, upper] : dims) ranges[name].push_back({lower, upper});
        py::gil_scoped_release nogil;
        FrozenPlan plan = FreezeProgram(program, feeds, fetches, place, ranges, scope);
        WriteFrozenPlan(plan, path);
        return std::make_pair(plan.arena_bytes, plan.ops.size());  // made into a tuple with the GIL
      },
      py::arg("program"), py::arg("feed_names"), py::arg("fetch_names"), py::arg("place"),
      py::arg("shapes"), py::arg("path"), py::arg("scope"),
      "Freezes block 0 of `program` (shapes: {feed: [(lower, upper) per dim]}) into the file "
      "`path`; returns (arena bytes, kernel ops).");

  m.def(
      "aot_compile",
      [](const std::string& plan_path, const std::string& out_dir, const std::string& name,
         bool embed_params) {
        py::gil_scoped_release nogil;
        CompileFrozenPlan(plan_path, out_dir, name, embed_params);
      },
      py::arg("plan_path"), py::arg("out_dir"), py::arg("name") = "model",
      py::arg("embed_params") = false,
      "Writes the frozen plan `plan_path` as <name>.cc (its constant tables and C functions "
      "tide_<name>_*), params.bin and, with embed_params, <name>_params.S into `out_dir`.");

  py::class_<FrozenModel>(m, "FrozenModel")
      .def(py::init([](const std::string& path, const Place& place) {
             py::gil_scoped_release nogil;
             return FrozenModel::Load(path, place);
           }),
           py::arg("path"), py::arg("place"))
      .def(
          "run",
          [](FrozenModel& fm, const std::vector<const LoDTensor*>& feeds) {
            std::vector<LoDTensor> in;
            in.reserve(feeds.size());
            for (const LoDTensor* t : feeds) in.push_back(*t);  // shares the data
            py::gil_scoped_release nogil;
            return fm.Run(in);
          },
          py::arg("feeds"), "Runs the plan on feeds in feed_names order; the fetched tensors.")
      .def_property(
          "capture", &FrozenModel::capture_enabled,
          [](FrozenModel& fm, bool on) {
            py::gil_scoped_release nogil;
            fm.EnableCapture(on);
          },
          "Capture and replay on the place's device (TideDeviceGraphs): off by default.")
      .def_property_readonly("capture_note", &FrozenModel::capture_note)
      .def_property_readonly("replays", &FrozenModel::replays)
      .def_property_readonly("feed_names", &FrozenModel::feed_names)
      .def_property_readonly("fetch_names", &FrozenModel::fetch_names)
      .def_property_readonly("arena_bytes", &FrozenModel::arena_bytes)
      .def_property_readonly("num_ops", &FrozenModel::num_ops)
      .def_property_readonly("num_ops_inferring_shapes", &FrozenModel::num_ops_inferring_shapes)
      .def_property_readonly(
          "range", [](const FrozenModel& fm) { return std::make_pair(fm.lower(), fm.upper()); });
}

}  // namespace tide::python
