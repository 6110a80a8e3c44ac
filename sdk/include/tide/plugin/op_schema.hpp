// tide/plugin/op_schema.hpp: tide::OpSchema, the builder an op pack declares an operator with:
// inputs, outputs, attributes and their checks, shape inference, gradient, and a run function
// for an operator without kernels.
#ifndef TIDE_PLUGIN_OP_SCHEMA_HPP_
#define TIDE_PLUGIN_OP_SCHEMA_HPP_

#include <cstdint>
#include <functional>
#include <string>
#include <tide/plugin/attributes.hpp>
#include <tide/plugin/grad_maker.hpp>
#include <tide/plugin/host.hpp>
#include <tide/plugin/infer_shape.hpp>
#include <tide/plugin/op_run.hpp>
#include <utility>
#include <vector>

namespace tide {

using GradMakerFn = std::function<void(GradMaker&)>;
using OpRunFn = std::function<void(OpRunContext&)>;
using AttrCheckFn = std::function<void(const TideAttrValue&)>;

class OpSchema {
 public:
  explicit OpSchema(std::string type) : type_(std::move(type)) {}

  OpSchema& Comment(std::string c) {
    comment_ = std::move(c);
    return *this;
  }
  OpSchema& Input(std::string name, std::string comment = "") {
    args_in_.push_back({std::move(name), std::move(comment), 0});
    last_ = kLastInput;
    return *this;
  }
  OpSchema& Output(std::string name, std::string comment = "") {
    args_out_.push_back({std::move(name), std::move(comment), 0});
    last_ = kLastOutput;
    return *this;
  }
  // Modifiers of the last Input/Output declared.
  OpSchema& AsDuplicable() { return Flag(TIDE_ARG_DUPLICABLE); }
  OpSchema& AsDispensable() { return Flag(TIDE_ARG_DISPENSABLE); }
  OpSchema& AsIntermediate() { return Flag(TIDE_ARG_INTERMEDIATE); }
  // An input a float16/bfloat16 kernel reads in float32 (TIDE_ARG_FLOAT32_PARAM).
  OpSchema& AsFloat32Param() { return Flag(TIDE_ARG_FLOAT32_PARAM); }

  // An attribute with a default value; its type is the default's.
  OpSchema& Attr(std::string name, AttrValue default_value, std::string comment = "") {
    TideAttrType t = default_value.type();
    attrs_.push_back({std::move(name), t, std::move(comment), true, std::move(default_value), {}});
    return *this;
  }
  // An attribute every op must set.
  OpSchema& RequiredAttr(std::string name, TideAttrType type, std::string comment = "") {
    attrs_.push_back({std::move(name), type, std::move(comment), false, AttrValue(), {}});
    return *this;
  }
  // A check of the last attribute declared; throw tide::Error to reject a value.
  OpSchema& Check(AttrCheckFn fn) {
    TIDE_CHECK(!attrs_.empty(), "Check() before any Attr() in op '", type_, "'");
    attrs_.back().check = std::move(fn);
    return *this;
  }
  OpSchema& GreaterThan(double bound) {
    std::string name = attrs_.empty() ? "" : attrs_.back().name;
    return Check([name, bound](const TideAttrValue& v) {
      double x = v.type == TIDE_ATTR_FLOAT ? v.f : v.type == TIDE_ATTR_LONG ? v.l : v.i;
      TIDE_CHECK(x > bound, "attribute '", name, "' must be > ", bound, ", got ", x);
    });
  }
  OpSchema& InSet(std::vector<std::string> allowed) {
    std::string name = attrs_.empty() ? "" : attrs_.back().name;
    return Check([name, allowed](const TideAttrValue& v) {
      for (const auto& a : allowed)
        if (v.s && a == v.s) return;
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      TIDE_THROW(TIDE_INVALID_ARGUMENT, "attribute '", name, "' must be one of {", list, "}, got '",
                 v.s ? v.s : "", "'");
    });
  }

  OpSchema& InferShape(InferShapeFn fn) {
    infer_ = std::move(fn);
    return *this;
  }
  OpSchema& Grad(GradMakerFn fn) {
    grad_ = std::move(fn);
    return *this;
  }
  // Fluid's default grad rule, to an op named `grad_type` (default: type + "_grad").
  OpSchema& DefaultGrad(std::string grad_type = "") {
    default_grad_ = grad_type.empty() ? type_ + "_grad" : std::move(grad_type);
    return *this;
  }
  // Which input (or "attr:<name>") picks the kernel's data type.
  OpSchema& KernelDataTypeFrom(std::string source) {
    dtype_source_ = std::move(source);
    return *this;
  }
  // Declares that the op has no gradient by design (its outputs do not depend differentiably
  // on its inputs). Without this, Grad or DefaultGrad, append_backward stops at the op with an
  // error when a parameter's gradient would have to pass through it.
  OpSchema& NoGradient() {
    no_gradient_ = true;
    return *this;
  }
  // Declares that every kernel of the op, on every device, computes right with output `output`
  // bound to input `input`'s variable and of its dims (Fluid's in-place pairs: an activation's
  // X / Out, an optimizer's Param / ParamOut). For an input an output shares a variable with and
  // no pair declares, the core hands the kernel a copy of the input.
  OpSchema& InPlace(std::string input, std::string output) {
    in_place_.push_back({std::move(input), std::move(output)});
    return *this;
  }
  // Declares that output `output` is a view of input `input`: every kernel of the op, on every
  // device, writes exactly `input`'s bytes into `output` with other dims (reshape, squeeze,
  // flatten) and copies nothing when `output`'s data already is `input`'s. Where the input dies
  // at the op, the executor moves its memory into the output before the kernel runs.
  OpSchema& View(std::string input, std::string output) {
    views_.push_back({std::move(input), std::move(output)});
    return *this;
  }
  // Makes this an operator without kernels, run by `fn`.
  OpSchema& Run(OpRunFn fn) {
    run_ = std::move(fn);
    return *this;
  }

  const std::string& type() const { return type_; }

  // Registers through the C ABI. The schema is kept alive by the caller (see Registrar).
  void Register(TideRegistrar* r) const;

 private:
  struct Arg {
    std::string name, comment;
    uint32_t flags;
  };
  struct AttrSpec {
    std::string name;
    TideAttrType type;
    std::string comment;
    bool has_default;
    AttrValue default_value;
    AttrCheckFn check;
  };
  OpSchema& Flag(uint32_t f) {
    TIDE_CHECK(last_ != kLastNone, "argument flag before any Input/Output in op '", type_, "'");
    (last_ == kLastInput ? args_in_ : args_out_).back().flags |= f;
    return *this;
  }
  static TideStatus* InferTrampoline(TideInferShapeContext* c, void* data) {
    return detail::Guard([&] {
      InferShapeContext ctx(c);
      (*static_cast<InferShapeFn*>(data))(ctx);
    });
  }
  static TideStatus* GradTrampoline(TideGradOpMaker* m, void* data) {
    return detail::Guard([&] {
      GradMaker g(m);
      (*static_cast<GradMakerFn*>(data))(g);
    });
  }
  static TideStatus* RunTrampoline(TideOpRunContext* c, void* data) {
    return detail::Guard([&] {
      OpRunContext ctx(c);
      (*static_cast<OpRunFn*>(data))(ctx);
    });
  }
  static TideStatus* CheckTrampoline(const TideAttrValue* v, void* data) {
    return detail::Guard([&] { (*static_cast<AttrCheckFn*>(data))(*v); });
  }

  std::string type_, comment_, default_grad_, dtype_source_;
  std::vector<Arg> args_in_, args_out_;
  enum { kLastNone, kLastInput, kLastOutput } last_ = kLastNone;  // what a flag modifies
  std::vector<AttrSpec> attrs_;
  InferShapeFn infer_;
  GradMakerFn grad_;
  OpRunFn run_;
  bool no_gradient_ = false;
  std::vector<std::pair<std::string, std::string>> in_place_, views_;
};

inline void OpSchema::Register(TideRegistrar* r) const {
  std::vector<TideArgDef> ins, outs;
  for (const auto& a : args_in_)
    ins.push_back(
        {TIDE_STRUCT_SIZE(TideArgDef, flags), a.name.c_str(), a.comment.c_str(), a.flags});
  for (const auto& a : args_out_)
    outs.push_back(
        {TIDE_STRUCT_SIZE(TideArgDef, flags), a.name.c_str(), a.comment.c_str(), a.flags});
  std::vector<TideAttrDef> attrs;
  for (const auto& a : attrs_) {
    TideAttrDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideAttrDef, check_data);
    d.name = a.name.c_str();
    d.type = a.type;
    d.comment = a.comment.c_str();
    d.default_value = a.has_default ? a.default_value.c() : nullptr;
    if (a.check) {
      d.check = &OpSchema::CheckTrampoline;
      d.check_data = const_cast<AttrCheckFn*>(&a.check);
    }
    attrs.push_back(d);
  }
  TideOpDef def{};
  def.struct_size = TIDE_STRUCT_SIZE(TideOpDef, num_views);
  def.type = type_.c_str();
  def.comment = comment_.c_str();
  def.inputs = ins.data();
  def.num_inputs = ins.size();
  def.outputs = outs.data();
  def.num_outputs = outs.size();
  def.attrs = attrs.data();
  def.num_attrs = attrs.size();
  if (infer_) {
    def.infer_shape = &OpSchema::InferTrampoline;
    def.infer_shape_data = const_cast<InferShapeFn*>(&infer_);
  }
  if (grad_) {
    def.grad_maker = &OpSchema::GradTrampoline;
    def.grad_maker_data = const_cast<GradMakerFn*>(&grad_);
  }
  def.default_grad_op = default_grad_.empty() ? nullptr : default_grad_.c_str();
  def.kernel_dtype_source = dtype_source_.empty() ? nullptr : dtype_source_.c_str();
  if (run_) {
    def.run = &OpSchema::RunTrampoline;
    def.run_data = const_cast<OpRunFn*>(&run_);
  }
  def.no_gradient = no_gradient_ ? 1 : 0;
  std::vector<TideInPlacePair> pairs;
  for (const auto& [in, out] : in_place_) pairs.push_back({in.c_str(), out.c_str()});
  def.in_place = pairs.data();
  def.num_in_place = pairs.size();
  std::vector<TideInPlacePair> views;
  for (const auto& [in, out] : views_) views.push_back({in.c_str(), out.c_str()});
  def.views = views.data();
  def.num_views = views.size();
  ThrowIfError(Host().Registrar_AddOp(r, &def));
}

}  // namespace tide

#endif  // TIDE_PLUGIN_OP_SCHEMA_HPP_
