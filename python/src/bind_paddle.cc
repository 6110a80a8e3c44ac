// bind_paddle.cc: models saved by PaddlePaddle (core/io/paddle_model.h), for tide.io.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/io/paddle_model.h"
#include "core/io/pir_op_table.h"

namespace tide::python {

using namespace tide::core;  // NOLINT

void BindPaddle(py::module_& m) {
  m.def(
      "load_paddle_inference_model",
      [](const std::string& path, Scope* scope, const Place& place,
         const std::string& model_filename, const std::string& params_filename) {
        PaddleInferenceModel model = [&] {
          py::gil_scoped_release nogil;
          return LoadPaddleInferenceModel(path, scope, place, model_filename, params_filename);
        }();
        py::dict files(py::arg("model") = model.files.model, py::arg("params") = model.files.params,
                       py::arg("params_dir") = model.files.params_dir);
        return py::make_tuple(ProgramDesc(model.program), model.feed_names, model.fetch_names,
                              model.param_names, files);
      },
      py::arg("path"), py::arg("scope"), py::arg("place"), py::arg("model_filename") = "",
      py::arg("params_filename") = "",
      "Reads a PaddlePaddle inference model (program + parameters) and loads its parameters into "
      "`scope` on `place`: (ProgramDesc, feed names, fetch names, parameter names, files).");
  m.def(
      "find_paddle_model_files",
      [](const std::string& path, const std::string& model_filename,
         const std::string& params_filename) {
        PaddleModelFiles f = FindPaddleModelFiles(path, model_filename, params_filename);
        return py::dict(py::arg("model") = f.model, py::arg("params") = f.params,
                        py::arg("params_dir") = f.params_dir);
      },
      py::arg("path"), py::arg("model_filename") = "", py::arg("params_filename") = "");
  m.def(
      "program_op_versions", [](const ProgramDesc& p) { return p.op_versions(); },
      "A program's op_version_map (Paddle's: the version of each op's definition it was written "
      "with).");
  m.def(
      "pir_op_table",
      [] {
        py::dict table;
        for (const auto& name : PirOpNames()) {
          const PirOpRule& r = *FindPirOpRule(name);
          py::list operands, results;
          for (const auto& o : r.operands)
            operands.append(py::dict(py::arg("slot") = o.slot, py::arg("attr") = o.attr,
                                     py::arg("list_slot") = o.list_slot));
          for (const auto& o : r.results)
            results.append(py::dict(py::arg("slot") = o.slot, py::arg("same_as") = o.same_as));
          py::list fixed;
          for (const auto& kv : r.fixed) fixed.append(kv.first);
          table[py::str(name)] =
              py::dict(py::arg("type") = r.fluid_type, py::arg("operands") = operands,
                       py::arg("results") = results, py::arg("renames") = r.renames,
                       py::arg("fixed") = fixed, py::arg("dtype_of_input") = r.dtype_of_input);
        }
        return table;
      },
      "The PIR operations Tide reads (core/io/pir_op_table.cc): {PIR op: its Fluid op, operands, "
      "results, attribute renames}.");
  m.def("paddle_op_versions", &KnownPaddleOpVersions,
        "The Paddle op versions whose semantics Tide implements (absent ops: version 0).");
}

}  // namespace tide::python
