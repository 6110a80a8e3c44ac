// paddle_op_repairs.cc: each op of a Paddle program, as read, in the form Tide's op declares.
#include "core/io/paddle_op_repairs.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/registry/registry.h"

namespace tide::core {

namespace {

// Attributes Paddle's framework puts on every op that Tide has no use for; the core's op checks
// know the others (op_role, op_role_var, op_namescope, op_callstack, op_device, use_*).
const std::set<std::string>& PaddleOnlyFrameworkAttrs() {
  static const std::set<std::string> names = {"with_quant_attr"};
  return names;
}

// Paddle's backend precision hints (an "<library>_data_type" string on every op of a Paddle 3.x
// program) that ask for nothing when "" or "float32" (bfloat16 / int8 need Paddle's quantisation
// passes): dropped where the op does not declare them, so an op that does still checks them. The
// rule names no library: the core knows none.
bool IsNeutralPrecisionHint(const proto::OpDesc::Attr& a) {
  const std::string suffix = "_data_type";
  const std::string& n = a.name();
  return n.size() > suffix.size() &&
         n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0 &&
         a.type() == proto::STRING && (a.s().empty() || a.s() == "float32");
}

// What Paddle's quantization passes write on the ops around their quant ops (with_quant_attr):
// "<Param><i>_threshold", "<Param><i>_bit_length", "quantization_type", read only by Paddle
// Lite's and TensorRT's int8 converters; dropped where the op does not declare them (the quant
// ops themselves carry the scales Tide computes with). "out_threshold" stays: any op may carry
// it (an output's range, which Tide's int8 rewrite reads).
bool IsQuantAnnotation(const std::string& n) {
  if (n == "quantization_type") return true;
  for (const std::string suffix : {"_threshold", "_bit_length"}) {
    if (n.size() <= suffix.size() || n.compare(n.size() - suffix.size(), suffix.size(), suffix))
      continue;
    size_t end = n.size() - suffix.size(), digits = end;
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(n[digits - 1]))) --digits;
    if (digits < end && digits > 0) return true;  // a parameter's name, then its index
  }
  return false;
}

// Attributes Paddle 2.x's dynamic-to-static binds to variables (a VAR / VARS attribute: values
// known at run time) that Tide's op takes as inputs: (op, attribute) -> the input for one int
// tensor holding all the values (VAR), the input for one one-element tensor per value (VARS).
struct VarAttrInputs {
  const char* var;
  const char* vars;
};
const std::map<std::pair<std::string, std::string>, VarAttrInputs>& VarAttrsAsInputs() {
  // conv2d_transpose to a skip connection's size: deconv(x, output_size=skip.shape[2:]).
  static const std::map<std::pair<std::string, std::string>, VarAttrInputs> m = {
      {{"conv2d_transpose", "output_size"}, {"OutputSize", "OutputSizeTensor"}},
      {{"depthwise_conv2d_transpose", "output_size"}, {"OutputSize", "OutputSizeTensor"}},
  };
  return m;
}

// An attribute bound to variables that the op takes as an input instead: moved to that input;
// the others stay, refused by name when the program is built.
void BindVarAttrsAsInputs(proto::OpDesc* op) {
  auto* attrs = op->mutable_attrs();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    const auto& a = attrs->Get(i);
    if (a.type() != proto::VAR && a.type() != proto::VARS) continue;
    auto it = VarAttrsAsInputs().find({op->type(), a.name()});
    if (it == VarAttrsAsInputs().end()) continue;
    auto* in = op->add_inputs();
    if (a.type() == proto::VAR) {
      in->set_parameter(it->second.var);
      in->add_arguments(a.var_name());
    } else {
      in->set_parameter(it->second.vars);
      for (const auto& v : a.vars_name()) in->add_arguments(v);
    }
    attrs->DeleteSubrange(i, 1);
  }
}

// Paddle 2.x writes some int lists as int64 (reduce_all's dim from Tensor.all(-1)): the op's ints
// where every value fits.
void ReadLongsAsInts(proto::OpDesc* op, const OpInfo& info) {
  auto* attrs = op->mutable_attrs();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    const auto& a = attrs->Get(i);
    const AttrSpec* spec = info.FindAttr(a.name());
    if (!spec || spec->type != TIDE_ATTR_INTS || a.type() != proto::LONGS ||
        !std::all_of(a.longs().begin(), a.longs().end(), [](int64_t v) {
          return v >= std::numeric_limits<int32_t>::min() &&
                 v <= std::numeric_limits<int32_t>::max();
        }))
      continue;
    auto* m = attrs->Mutable(i);
    std::vector<int64_t> values(m->longs().begin(), m->longs().end());
    m->clear_longs();
    m->set_type(proto::INTS);
    for (int64_t v : values) m->add_ints(static_cast<int32_t>(v));
  }
}

// Paddle's framework attributes always; its precision hints and quantization annotations where
// the op (null: one no plugin registers) does not declare them.
void DropPaddleOnlyAttrs(proto::OpDesc* op, const OpInfo* info) {
  auto* attrs = op->mutable_attrs();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    const auto& a = attrs->Get(i);
    const bool declared = info && info->FindAttr(a.name()) != nullptr;
    if (PaddleOnlyFrameworkAttrs().count(a.name()) ||
        ((IsNeutralPrecisionHint(a) || IsQuantAnnotation(a.name())) && !declared))
      attrs->DeleteSubrange(i, 1);
  }
}

// A slot binding no variable that the op does not declare: Paddle 3.x writes its newer
// dispensable inputs so (scale's empty BiasTensor in a legacy program); it binds nothing.
void DropUnboundInputSlots(proto::OpDesc* op, const OpInfo& info) {
  auto* inputs = op->mutable_inputs();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    const auto& in = inputs->Get(i);
    if (in.arguments_size() == 0 && !info.FindInput(in.parameter())) inputs->DeleteSubrange(i, 1);
  }
}

}  // namespace

void RepairPaddleOps(proto::ProgramDesc* program) {
  for (auto& b : *program->mutable_blocks())
    for (auto& op : *b.mutable_ops()) {
      const OpInfo* info = Registry::Global().FindOp(op.type());
      BindVarAttrsAsInputs(&op);
      if (info) ReadLongsAsInts(&op, *info);
      DropPaddleOnlyAttrs(&op, info);
      if (info) DropUnboundInputSlots(&op, *info);
    }
}

}  // namespace tide::core
