// bind_executor.cc: the Executor and prepared programs. Runs release the GIL.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/executor/executor.h"
#include "core/executor/profiler.h"

namespace tide::python {

using namespace tide::core;  // NOLINT

void BindExecutor(py::module_& m) {
  py::class_<PreparedBlock>(m, "PreparedBlock")
      .def("feed_names", &PreparedBlock::feed_names)
      .def("fetch_names", &PreparedBlock::fetch_names)
      .def("num_ops", &PreparedBlock::num_ops)
      .def("program", &PreparedBlock::program, py::return_value_policy::reference_internal)
      .def(
          "transform_counts",
          [](const PreparedBlock& p) {
            const TransformCounts& c = p.transform_counts();
            return py::dict(py::arg("layouts") = c.layouts, py::arg("copies") = c.copies,
                            py::arg("casts") = c.casts, py::arg("reused") = c.reused);
          },
          "Transforms applied to inputs in the last run: layout transforms, device copies, casts, "
          "and "
          "conversions reused because their source had not changed.")
      .def("kernel_choices", [](const PreparedBlock& p) {
        std::vector<std::pair<std::string, std::string>> out;
        for (size_t i = 0; i < p.num_ops(); ++i) {
          const OpInstance& op = p.op(i);
          std::string choice = op.info().run ? "(runs without a kernel)" : "(not chosen yet)";
          if (const KernelEntry* k = op.kernel())
            choice =
                k->key.ToString() + " from " + k->plugin + " on " + op.kernel_place().ToString();
          out.emplace_back(op.type(), choice);
        }
        return out;
      });

  m.def("op_profile_report", &OpProfileReport, "Per-op times recorded with --profile_ops.");
  m.def("reset_op_profiles", &ResetOpProfiles);
  m.def(
      "op_events",
      [] {
        py::list out;
        for (const auto& e : OpEvents())
          out.append(py::make_tuple(e.name, e.kernel, e.start_us, e.dur_us, e.thread));
        return py::make_tuple(out, DroppedOpEvents());
      },
      "The profiled op runs: (type, kernel, start us, duration us, thread), and how many were "
      "dropped past the limit.");
  m.def("op_profiles", [] {
    py::list out;
    for (const auto& p : OpProfiles())
      out.append(py::dict(py::arg("name") = p.name, py::arg("calls") = p.calls,
                          py::arg("total_ms") = p.total_ms));
    return out;
  });

  py::class_<Executor>(m, "Executor")
      .def(py::init<const Place&>(), py::arg("place"))
      .def_property_readonly("place", &Executor::place)
      .def("prepare", &Executor::Prepare, py::arg("program"), py::arg("block_id") = 0,
           py::arg("feed_names") = std::vector<std::string>{},
           py::arg("fetch_names") = std::vector<std::string>{},
           "Builds the op instances of a block once (with feed/fetch ops for the names given).")
      .def(
          "run",
          [](Executor& e, PreparedBlock& p, Scope& scope,
             const std::vector<const LoDTensor*>& feeds) {
            std::vector<LoDTensor> in;
            in.reserve(feeds.size());
            for (const LoDTensor* t : feeds) in.push_back(*t);  // shares the data
            py::gil_scoped_release nogil;
            return e.Run(p, &scope, in);
          },
          py::arg("prepared"), py::arg("scope"), py::arg("feeds") = std::vector<const LoDTensor*>{},
          "Runs a prepared block; returns the fetched tensors (on the host).");
}

}  // namespace tide::python
