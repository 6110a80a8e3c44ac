// bind_ir.cc: ProgramDesc / BlockDesc / VarDesc / OpDesc, op protos, compile-time checks and
// shape inference, and append_backward.
#include <google/protobuf/text_format.h>
#include <pybind11/stl.h>

#include <algorithm>

#include "attr_convert.h"
#include "bindings.h"
#include "core/ir/program_desc.h"
#include "core/passes/backward.h"
#include "core/passes/compile_infer_shape.h"
#include "core/passes/grad_op_maker.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"

namespace tide::python {

using namespace tide::core;  // NOLINT

namespace {

py::dict ProtoToDict(const OpInfo& info) {
  auto vars = [&info](const auto& list) {
    py::list out;
    for (const auto& v : list) {
      const auto& f32 = info.float32_params;  // read in float32 by a 16-bit kernel
      const bool float32_param = std::find(f32.begin(), f32.end(), v.name()) != f32.end();
      out.append(py::dict(
          py::arg("name") = v.name(), py::arg("comment") = v.comment(),
          py::arg("duplicable") = v.duplicable(), py::arg("dispensable") = v.dispensable(),
          py::arg("intermediate") = v.intermediate(), py::arg("float32_param") = float32_param));
    }
    return out;
  };
  py::list attrs;
  for (const auto& spec : info.attrs) {
    py::dict d(py::arg("name") = spec.name, py::arg("type") = AttrTypeName(spec.type),
               py::arg("required") = !spec.has_default);
    if (spec.has_default) d["default"] = AttrToPy(spec.default_value);
    for (const auto& a : info.proto.attrs())
      if (a.name() == spec.name) d["comment"] = a.comment();
    attrs.append(d);
  }
  return py::dict(py::arg("type") = info.type, py::arg("comment") = info.proto.comment(),
                  py::arg("inputs") = vars(info.proto.inputs()),
                  py::arg("outputs") = vars(info.proto.outputs()), py::arg("attrs") = attrs,
                  py::arg("has_kernels_or_run") = true, py::arg("has_grad") = info.HasGrad(),
                  py::arg("plugin") = info.plugin, py::arg("plugin_file") = info.plugin_file);
}

py::bytes Serialize(const ProgramDesc& p) { return py::bytes(p.Serialize()); }

// A name from the core as a Python str. A parsed program's names are whatever bytes it holds
// (protobuf does not check UTF-8); one that is not UTF-8 is an error naming its bytes (shown
// escaped, errors.cc), not a bare UnicodeDecodeError.
py::str PyName(const std::string& name, const char* what) {
  if (PyObject* s =
          PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()), "strict"))
    return py::reinterpret_steal<py::str>(s);
  PyErr_Clear();
  TIDE_FAIL(TIDE_INVALID_ARGUMENT, what, " '", name,
            "' is not valid UTF-8, so Python cannot name it ", "(a corrupt program?)");
}

py::list PyNames(const std::vector<std::string>& names, const char* what) {
  py::list out;
  for (const auto& n : names) out.append(PyName(n, what));
  return out;
}

py::dict PyNameMap(const VariableNameMap& map) {
  py::dict out;
  for (const auto& [param, args] : map)
    out[PyName(param, "op parameter name")] = PyNames(args, "variable name");
  return out;
}

// The protobuf text format of a desc's message (Fluid's to_string / _debug_string_); with
// throw_on_error, a message missing a required field is an error naming the fields.
std::string ProtoText(const google::protobuf::Message& m, bool throw_on_error) {
  if (throw_on_error && !m.IsInitialized())
    throw py::value_error(m.GetTypeName() + " is not initialized: missing " +
                          m.InitializationErrorString());
  std::string text;
  google::protobuf::TextFormat::PrintToString(m, &text);
  return text;
}

template <typename Proto, typename Desc>
std::string DescProtoText(const Desc& d, bool throw_on_error) {
  Proto p;
  d.ToProto(&p);
  return ProtoText(p, throw_on_error);
}

}  // namespace

void BindIR(py::module_& m) {
  // VarDesc and OpDesc are held by shared_ptr (their blocks share them, block_desc.h): a Python
  // object keeps its desc alive after the block drops it (an op append_op refused, one removed by
  // _remove_op, a variable by _remove_var), so it never reads freed memory.
  py::class_<VarDesc, std::shared_ptr<VarDesc>>(m, "VarDesc")
      .def_property_readonly("name",
                             [](const VarDesc& v) { return PyName(v.name(), "variable name"); })
      .def_property(
          "type", [](const VarDesc& v) { return int(v.type()); },
          [](VarDesc& v, int t) { v.set_type(static_cast<TideVarType>(t)); })
      .def_property(
          "dtype", [](const VarDesc& v) { return int(v.dtype()); },
          [](VarDesc& v, int t) { v.set_dtype(static_cast<DataType>(t)); })
      .def_property("shape", &VarDesc::shape, &VarDesc::set_shape)
      // True: a 0-D tensor, shape [] (setting it clears the shape); an empty shape without it
      // is a shape not known yet.
      .def_property("zero_dim", &VarDesc::zero_dim,
                    [](VarDesc& v, bool z) {
                      if (z)
                        v.set_zero_dim();
                      else
                        v.set_shape(v.shape());
                    })
      .def_property("lod_level", &VarDesc::lod_level, &VarDesc::set_lod_level)
      .def_property("persistable", &VarDesc::persistable, &VarDesc::set_persistable)
      .def_property("stop_gradient", &VarDesc::stop_gradient, &VarDesc::set_stop_gradient)
      .def("to_string", &VarDesc::ToString)
      .def("to_proto_text", &DescProtoText<proto::VarDesc, VarDesc>,
           py::arg("throw_on_error") = true)
      .def("__repr__", &VarDesc::ToString);

  // Declared before OpDesc, whose infer_shape takes one: a signature names only classes
  // registered before it (else the C++ type's name, which type stubs cannot read).
  py::class_<BlockDesc> block_desc(m, "BlockDesc");

  py::class_<OpDesc, std::shared_ptr<OpDesc>>(m, "OpDesc")
      .def_property(
          "type", [](const OpDesc& op) { return PyName(op.type(), "op type"); }, &OpDesc::set_type)
      .def("inputs", [](const OpDesc& op) { return PyNameMap(op.inputs()); })
      .def("outputs", [](const OpDesc& op) { return PyNameMap(op.outputs()); })
      .def("input", [](const OpDesc& op,
                       const std::string& p) { return PyNames(op.Input(p), "variable name"); })
      .def("output", [](const OpDesc& op,
                        const std::string& p) { return PyNames(op.Output(p), "variable name"); })
      .def("set_input", &OpDesc::SetInput)
      .def("set_output", &OpDesc::SetOutput)
      .def("input_arg_names",
           [](const OpDesc& op) { return PyNames(op.InputArgumentNames(), "variable name"); })
      .def("output_arg_names",
           [](const OpDesc& op) { return PyNames(op.OutputArgumentNames(), "variable name"); })
      .def("rename_input", &OpDesc::RenameInput)
      .def("rename_output", &OpDesc::RenameOutput)
      .def("has_attr", &OpDesc::HasAttr)
      .def("attr", [](const OpDesc& op, const std::string& n) { return AttrToPy(op.GetAttr(n)); })
      .def("attr_type",
           [](const OpDesc& op, const std::string& n) {
             return AttrTypeName(AttrTypeOf(op.GetAttr(n)));
           })
      .def("set_attr",
           [](OpDesc& op, const std::string& n, py::handle v) { op.SetAttr(n, PyToAttr(v)); })
      .def("remove_attr", &OpDesc::RemoveAttr)
      .def("attr_names",
           [](const OpDesc& op) {
             std::vector<std::string> names;
             for (const auto& kv : op.attrs()) names.push_back(kv.first);
             return names;
           })
      // Checks inputs/outputs/attributes against the op's proto and fills attribute defaults.
      .def("check", [](OpDesc& op) { CheckOpDesc(Registry::Global().GetOp(op.type()), &op); })
      .def("infer_shape",
           [](const OpDesc& op, BlockDesc& block) {
             InferShapeAtCompileTime(Registry::Global().GetOp(op.type()), op, &block);
           })
      .def("to_string", &OpDesc::ToString)
      .def("to_proto_text", &DescProtoText<proto::OpDesc, OpDesc>, py::arg("throw_on_error") = true)
      .def("__repr__", &OpDesc::ToString);

  block_desc.def_property_readonly("idx", &BlockDesc::idx)
      .def_property_readonly("parent_idx", &BlockDesc::parent_idx)
      .def_property("forward_block_idx", &BlockDesc::forward_block_idx,
                    &BlockDesc::set_forward_block_idx)
      .def("var", &BlockDesc::Var, py::return_value_policy::reference_internal)
      .def("find_var", &BlockDesc::FindVar, py::return_value_policy::reference_internal)
      .def("find_var_recursive", &BlockDesc::FindVarRecursive,
           py::return_value_policy::reference_internal)
      .def("has_var", &BlockDesc::HasVar)
      .def("remove_var", &BlockDesc::RemoveVar)
      .def("rename_var", &BlockDesc::RenameVar)
      .def("all_vars", &BlockDesc::AllVars, py::return_value_policy::reference_internal)
      .def("append_op", &BlockDesc::AppendOp, py::return_value_policy::reference_internal)
      .def("prepend_op", &BlockDesc::PrependOp, py::return_value_policy::reference_internal)
      .def("insert_op", &BlockDesc::InsertOp, py::return_value_policy::reference_internal)
      .def("remove_ops", &BlockDesc::RemoveOps)
      .def("op", &BlockDesc::Op, py::return_value_policy::reference_internal)
      .def("op_size", &BlockDesc::OpSize)
      .def("all_ops", &BlockDesc::AllOps, py::return_value_policy::reference_internal)
      .def("to_proto_text", &DescProtoText<proto::BlockDesc, BlockDesc>,
           py::arg("throw_on_error") = true);

  py::class_<ProgramDesc>(m, "ProgramDesc")
      .def(py::init<>())
      .def(py::init<const ProgramDesc&>())
      .def_static("parse", [](const py::bytes& b) { return ProgramDesc::Parse(b); })
      .def("serialize", &Serialize)
      .def("num_blocks", &ProgramDesc::Size)
      .def("block", &ProgramDesc::MutableBlock, py::return_value_policy::reference_internal)
      .def("append_block", &ProgramDesc::AppendBlock, py::return_value_policy::reference_internal)
      .def("to_string", &ProgramDesc::ToString)
      .def(
          "to_proto_text",
          [](const ProgramDesc& p, bool throw_on_error) {
            return ProtoText(p.ToProto(), throw_on_error);
          },
          py::arg("throw_on_error") = true)
      .def_property_readonly("version", &ProgramDesc::version);

  m.def("registered_ops", [] { return Registry::Global().OpTypes(); });
  m.def("has_op", [](const std::string& t) { return Registry::Global().FindOp(t) != nullptr; });
  m.def(
      "op_proto", [](const std::string& t) { return ProtoToDict(Registry::Global().GetOp(t)); },
      "The op's inputs, outputs and attributes (with defaults), as a dict.");
  m.def("op_kernels", [](const std::string& t) {
    std::vector<std::string> keys;
    for (const KernelEntry* k : Registry::Global().Kernels(t)) keys.push_back(k->key.ToString());
    return keys;
  });
  m.def("grad_ops", [](const OpDesc& fwd, std::vector<std::string> no_grad) {
    std::sort(no_grad.begin(), no_grad.end());
    return MakeGradOps(fwd, no_grad);
  });
  m.def(
      "append_backward",
      [](ProgramDesc& program, const std::string& loss, const std::vector<std::string>& params,
         const std::vector<std::string>& no_grad) {
        return AppendBackward(&program, loss, params,
                              std::set<std::string>(no_grad.begin(), no_grad.end()));
      },
      py::arg("program"), py::arg("loss"), py::arg("parameters"), py::arg("no_grad_set"),
      "Appends the backward pass of `loss` to block 0; returns [(param, grad)].");
  m.def("grad_var_name", &GradVarName);
}

}  // namespace tide::python
