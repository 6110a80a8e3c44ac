// bind_executor.cc: the Executor and prepared programs. Runs release the GIL.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/executor/executor.h"
#include "core/executor/profiler.h"
#include "core/platform/place.h"
#include "core/plugin/program_passes.h"

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
      .def(
          "compiled_groups",
          [](PreparedBlock& p) {
            py::list out;
            for (size_t i = 0; i < p.num_compiled_groups(); ++i) {
              const CompiledGroup& g = p.compiled_group(i);
              out.append(py::dict(py::arg("label") = g.label(),
                                  py::arg("compiled_runs") = g.compiled_runs(),
                                  py::arg("fallback_runs") = g.fallback_runs()));
            }
            return out;
          },
          "The groups of ops the place's device compiled at Prepare (issue 33): each one's label "
          "(device, plugin file, block, ops) and its runs through the compiled function and op "
          "by op.")
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
          out.append(py::make_tuple(e.name, e.kernel, e.start_us, e.dur_us, e.thread, e.place,
                                    e.device_start_us, e.device_dur_us));
        return py::make_tuple(out, DroppedOpEvents());
      },
      "The profiled op runs: (type, kernel, start us, duration us, thread, place, device start "
      "us, device duration us; the last three \"\", -1, -1 where the device did not time the op), "
      "and how many were dropped past the limit.");
  m.def(
      "op_timings",
      [] {
        py::list out;
        for (const OpTiming& t : OpTimings())
          out.append(py::dict(py::arg("place") = t.place, py::arg("method") = t.method,
                              py::arg("alignment_us") = t.alignment_us));
        return out;
      },
      "How the last profile timed each place's ops: method \"events\" (the device's times, "
      "aligned to within +- alignment_us) or \"synchronised\" (the host's, after a sync).");
  m.def(
      "start_profile",
      [] {
        py::gil_scoped_release nogil;
        StartProfile();
      },
      "Resets the op profile and starts the device tracers.");
  m.def(
      "stop_profile",
      [] {
        py::gil_scoped_release nogil;
        StopProfile();
      },
      "Stops the device tracers and keeps their records (device_traces).");
  m.def(
      "device_traces",
      [] {
        py::list out;
        for (const DeviceTrace& t : DeviceTraces()) {
          const DeviceTraceRecord& r = t.record;
          static const char* kinds[] = {"kernel", "copy", "other"};
          out.append(
              py::dict(py::arg("name") = r.name, py::arg("place") = r.place.ToString(),
                       py::arg("stream") = r.stream, py::arg("start_us") = t.start_us,
                       py::arg("dur_us") = t.dur_us, py::arg("bytes") = r.bytes,
                       py::arg("kind") = r.kind >= 0 && r.kind < 3 ? kinds[r.kind] : "other"));
        }
        return out;
      },
      "The device tracers' records of the last profile, on the profile's clock.");
  m.def(
      "device_trace_clocks",
      [] {
        py::list out;
        for (const DeviceTraceClock& c : DeviceTraceClocks())
          out.append(py::dict(py::arg("kind") = c.kind, py::arg("offset_ns") = c.offset_ns,
                              py::arg("uncertainty_us") = double(c.uncertainty_ns) / 1e3));
        return out;
      },
      "How each device kind's tracer clock was mapped onto the core's.");
  m.def("op_profiles", [] {
    py::list out;
    for (const auto& p : OpProfiles())
      out.append(py::dict(py::arg("name") = p.name, py::arg("calls") = p.calls,
                          py::arg("total_ms") = p.total_ms));
    return out;
  });

  m.def(
      "device_has_compiler",
      [](const Place& place) { return CheckedDevice(place).def.compiler != nullptr; },
      py::arg("place"),
      "Whether the place's device compiles groups of ops (TideDeviceDef.compiler, issue 33).");
  m.def(
      "run_program_passes",
      [](const py::bytes& program, const std::string& place_kind,
         const std::vector<std::string>& keep) {
        std::string bytes = program;
        std::vector<std::string> changed;
        {
          py::gil_scoped_release nogil;
          changed =
              RunProgramPasses(&bytes, place_kind.empty() ? -1 : PlaceKindId(place_kind), keep);
        }
        return py::make_tuple(py::bytes(bytes), changed);
      },
      py::arg("program"), py::arg("place_kind") = "", py::arg("keep") = std::vector<std::string>{},
      "Runs the program passes plugins registered for place_kind (every pass for ''; those for "
      "every place always) over a serialized ProgramDesc; returns (the result, the names of the "
      "passes that changed it).");

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
