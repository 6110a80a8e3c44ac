// pir_translate_ops.cc: the operations of the table (pir_op_table.h) as Fluid ops, and the
// builtin ones: parameters, combine / split lists, feeds and fetches, constant arrays and values
// (pir_translator.h).
#include <algorithm>
#include <cmath>
#include <variant>

#include "core/io/pir_translator.h"
#include "core/platform/enforce.h"
#include "core/registry/registry.h"

namespace tide::core::pir {

void Translator::MarkUntranslated(const Json& op, const std::string& name) {
  for (const Json& r : Results(op)) {
    PirValue& v = values_[r["%"].Int()];
    v.made_by = name;
    v.untranslated = true;
  }
}

bool Translator::ReadsUntranslated(const Json& op) {
  if (!op.Has("I")) return false;
  const Json in = op["I"];
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i]["%"].Int() == 0) continue;
    const PirValue& v = ValueOf(in[i]);
    if (v.untranslated) return true;
    for (int64_t item : v.items)
      if (values_.at(item).untranslated) return true;
  }
  return false;
}

void Translator::Parameter(const Json& op, const std::string& name) {
  std::string var;
  bool persistable = true;
  bool stop_gradient = false;
  if (op["#"].Str() == "p") {  // compressed: [is_distributed, is_parameter, need_clip, name]
    const Json a = op["A"];
    var = a[a.size() - 1].Str();
    // Its result's [persistable, stop_gradient, trainable]: a state that is not persistable
    // (nn.LSTM's dropout state) is not in the parameters file; one that stops gradients or is
    // not trainable (a layer's buffer, `register_buffer`, saved as a parameter) gets none when
    // the loaded program is trained further, as in Paddle.
    if (op.Has("OA") && op["OA"].size() > 0) persistable = op["OA"][0].Int() != 0;
    if (op.Has("OA") && op["OA"].size() > 2)
      stop_gradient = op["OA"][1].Int() != 0 || op["OA"][2].Int() == 0;
  } else {
    const AttributeMap attrs = AttrsOf(op);
    const char* key = name == "builtin.parameter" ? "parameter_name" : "value";
    auto it = attrs.find(key);
    if (it == attrs.end() || !std::holds_alternative<std::string>(it->second))
      op.Fail(name + " without its string attribute '" + key + "'");
    var = std::get<std::string>(it->second);
  }
  const Json result = FirstResult(op);
  if (names_.count(var)) Fail(result, "parameter '" + var + "' is declared twice");
  PirValue v;
  v.var = var;
  v.made_by = name;
  v.dtype = DeclareResult(result, var, persistable);
  if (stop_gradient) block_->mutable_vars(block_->vars_size() - 1)->set_stop_gradient(true);
  v.rank = last_rank_;
  values_[result["%"].Int()] = v;
}

void Translator::Combine(const Json& op) {
  PirValue v;
  v.is_list = true;
  v.made_by = "builtin.combine";
  const Json in = op["I"];
  bool constant = true;
  std::vector<int64_t> ints;
  for (size_t i = 0; i < in.size(); ++i) {
    const PirValue& item = ValueOf(in[i]);
    v.items.push_back(in[i]["%"].Int());
    const Attribute* c = item.constant ? &*item.constant : nullptr;
    if (c && std::holds_alternative<int64_t>(*c)) {
      ints.push_back(std::get<int64_t>(*c));
    } else {
      constant = false;
    }
  }
  if (constant) v.constant = ints;  // an IntArray of constants (a shape of fulls)
  values_[FirstResult(op)["%"].Int()] = v;
}

void Translator::Unpack(const Json& op, const std::string& name) {
  const PirValue list = ValueOf(op["I"][0]);
  if (!list.is_list) Fail(op["I"][0], name + " of a value that is not a list");
  const auto results = Results(op);
  if (name == "builtin.slice") {
    const AttributeMap attrs = AttrsOf(op);
    auto it = attrs.find("index");
    if (it == attrs.end() || !std::holds_alternative<int32_t>(it->second))
      op.Fail("builtin.slice without its int attribute 'index'");
    const auto index = static_cast<size_t>(std::get<int32_t>(it->second));
    if (index >= list.items.size()) op.Fail("builtin.slice index past its list");
    values_[FirstResult(op)["%"].Int()] = values_.at(list.items[index]);
    return;
  }
  if (results.size() != list.items.size())
    op.Fail("builtin.split of " + std::to_string(list.items.size()) + " values into " +
            std::to_string(results.size()));
  for (size_t i = 0; i < results.size(); ++i)
    values_[results[i]["%"].Int()] = values_.at(list.items[i]);
}

void Translator::Feed(const Json& op) {
  const AttributeMap attrs = AttrsOf(op);
  auto it = attrs.find("name");
  if (it == attrs.end() || !std::holds_alternative<std::string>(it->second))
    op.Fail("a feed without its string attribute 'name'");
  const std::string& var = std::get<std::string>(it->second);
  const Json result = FirstResult(op);
  if (names_.count(var)) Fail(result, "feed '" + var + "' is declared twice");
  PirValue v;
  v.var = var;
  v.made_by = "pd_op.data";
  v.dtype = DeclareResult(result, var, false);
  v.rank = last_rank_;
  values_[result["%"].Int()] = v;
  auto* f = block_->add_ops();
  f->set_type("feed");
  AddArgs(f->add_inputs(), "X", {"feed"});
  AddArgs(f->add_outputs(), "Out", {var});
  AttrToProto("col", int32_t{feeds_++}, f->add_attrs());
}

void Translator::Fetch(const Json& op) {
  const PirValue& in = ValueOf(op["I"][0]);
  if (in.is_list || in.var.empty()) Fail(op["I"][0], "a fetch of a value no op computes");
  const AttributeMap attrs = AttrsOf(op);
  auto it = attrs.find("col");
  if (it == attrs.end() || !std::holds_alternative<int32_t>(it->second))
    op.Fail("a fetch without its int attribute 'col'");
  auto* f = block_->add_ops();
  f->set_type("fetch");
  AddArgs(f->add_inputs(), "X", {in.var});
  AddArgs(f->add_outputs(), "Out", {"fetch"});
  AttrToProto("col", std::get<int32_t>(it->second), f->add_attrs());
  values_[FirstResult(op)["%"].Int()] = in;
}

void Translator::FullIntArray(const Json& op) {
  AttributeMap attrs = AttrsOf(op);
  std::vector<int64_t> values;
  auto it = attrs.find("value");
  if (it != attrs.end()) {
    Attribute longs;
    if (!ConvertAttr(it->second, TIDE_ATTR_LONGS, &longs))
      op.Fail("pd_op.full_int_array with a 'value' that is not a list of integers");
    values = std::get<std::vector<int64_t>>(longs);
  }
  auto dt = attrs.find("dtype");
  const int dtype = dt != attrs.end() && std::holds_alternative<int32_t>(dt->second)
                        ? std::get<int32_t>(dt->second)
                        : static_cast<int>(proto::VarType::INT64);
  const Json result = FirstResult(op);
  const int64_t id = result["%"].Int();
  PirValue v;
  v.var = FreshName("full_int_array", id);
  v.made_by = "pd_op.full_int_array";
  if (!mutated_.count(id)) v.constant = values;
  v.dtype = DeclareResult(result, v.var, false);
  values_[id] = v;
  auto* a = block_->add_ops();
  a->set_type("assign_value");
  AddArgs(a->add_outputs(), "Out", {v.var});
  AttrToProto("shape", std::vector<int32_t>{static_cast<int32_t>(values.size())}, a->add_attrs());
  AttrToProto("dtype", int32_t{dtype}, a->add_attrs());
  if (dtype == proto::VarType::INT32) {
    AttrToProto("int32_values", std::vector<int32_t>(values.begin(), values.end()), a->add_attrs());
  } else {
    AttrToProto("int64_values", values, a->add_attrs());
  }
}

void Translator::AssignValue(const Json& op) {
  const AttributeMap attrs = AttrsOf(op);
  auto values = attrs.find("values"), dims = attrs.find("shape");
  if (values == attrs.end() || dims == attrs.end())
    op.Fail("pd_op.assign_value without its attributes 'values' and 'shape'");
  Attribute shape_attr;
  if (!ConvertAttr(dims->second, TIDE_ATTR_INTS, &shape_attr))
    op.Fail("pd_op.assign_value's 'shape' is not a list of integers");
  std::vector<double> v;
  const bool numbers = std::visit(
      [&v](const auto& list) {
        using L = std::decay_t<decltype(list)>;
        if constexpr (std::is_same_v<L, std::vector<double>> ||
                      std::is_same_v<L, std::vector<float>> ||
                      std::is_same_v<L, std::vector<int32_t>> ||
                      std::is_same_v<L, std::vector<int64_t>> ||
                      std::is_same_v<L, std::vector<bool>>) {
          for (auto x : list) v.push_back(static_cast<double>(x));
          return true;
        }
        return false;
      },
      values->second);
  if (!numbers) op.Fail("pd_op.assign_value's 'values' is not a list of numbers");
  const Json result = FirstResult(op);
  const int64_t id = result["%"].Int();
  PirValue pv;
  pv.var = FreshName("assign_value", id);
  pv.made_by = "pd_op.assign_value";
  pv.dtype = DeclareResult(result, pv.var, false);
  pv.rank = last_rank_;
  auto* a = block_->add_ops();
  a->set_type("assign_value");
  AddArgs(a->add_outputs(), "Out", {pv.var});
  AttrToProto("shape", shape_attr, a->add_attrs());
  AttrToProto("dtype", int32_t{pv.dtype}, a->add_attrs());
  if (pv.dtype == proto::VarType::BOOL || pv.dtype == proto::VarType::INT32) {
    AttrToProto(pv.dtype == proto::VarType::BOOL ? "bool_values" : "int32_values",
                std::vector<int32_t>(v.begin(), v.end()), a->add_attrs());
  } else if (pv.dtype == proto::VarType::INT64) {
    std::vector<int64_t> ints(v.begin(), v.end());
    AttrToProto("int64_values", ints, a->add_attrs());
    if (!mutated_.count(id)) pv.constant = ints;
  } else if (pv.dtype == proto::VarType::FP32 || pv.dtype == proto::VarType::FP64) {
    AttrToProto("fp32_values", std::vector<float>(v.begin(), v.end()), a->add_attrs());
  } else {
    op.Fail("pd_op.assign_value of type " +
            std::string(DataTypeName(static_cast<DataType>(pv.dtype))) +
            ", which Tide's assign_value does not hold");
  }
  values_[id] = pv;
}

void Translator::AddArgs(proto::OpDesc::Var* var, const std::string& param,
                         const std::vector<std::string>& args) {
  var->set_parameter(param);
  for (const auto& a : args) var->add_arguments(a);
}

bool Translator::Convert(const Attribute& a, TideAttrType want, Attribute* out) {
  if (want == TIDE_ATTR_INT && std::holds_alternative<int64_t>(a)) {
    const int64_t v = std::get<int64_t>(a);
    *out = static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
    return true;
  }
  if (want == TIDE_ATTR_INTS && std::holds_alternative<std::vector<int64_t>>(a)) {
    std::vector<int32_t> v;
    for (int64_t x : std::get<std::vector<int64_t>>(a))
      v.push_back(static_cast<int32_t>(std::clamp<int64_t>(x, INT32_MIN, INT32_MAX)));
    *out = v;
    return true;
  }
  // A Scalar operand folded from a float full (pd_op.eye's num_rows: Paddle casts it): a whole
  // value only, never truncated.
  if ((want == TIDE_ATTR_LONG || want == TIDE_ATTR_INT) && std::holds_alternative<double>(a)) {
    const double v = std::get<double>(a);
    const double lim = want == TIDE_ATTR_INT ? double(INT32_MAX) : 9.007199254740992e15;
    if (!(v == std::trunc(v) && std::fabs(v) <= lim)) return false;
    if (want == TIDE_ATTR_INT)
      *out = static_cast<int32_t>(v);
    else
      *out = static_cast<int64_t>(v);
    return true;
  }
  return ConvertAttr(a, want, out);
}

void Translator::Translate(const Json& op, const std::string& name, const PirOpRule& rule) {
  proto::OpDesc desc;
  desc.set_type(rule.fluid_type);
  std::map<std::string, std::vector<std::string>> inputs, outputs;
  std::vector<std::string> input_order, output_order;
  AttributeMap attrs;
  std::vector<const PirValue*> operands;

  const Json in = op.Has("I") ? op["I"] : Json(pb::Value(), op.path() + ".I", file_);
  const size_t n_in = op.Has("I") ? in.size() : 0;
  if (n_in > rule.operands.size())
    op.Fail(name + " has " + std::to_string(n_in) + " operands; Tide's table knows " +
            std::to_string(rule.operands.size()));
  for (size_t i = 0; i < n_in; ++i) {
    const PirOperand& spec = rule.operands[i];
    if (in[i]["%"].Int() == 0) {  // an optional operand not given
      operands.push_back(nullptr);
      continue;
    }
    const PirValue& v = ValueOf(in[i]);
    operands.push_back(&v);
    std::string slot = spec.slot;
    std::vector<std::string> args;
    if (!spec.attr.empty() && v.constant) {
      attrs[spec.attr] = *v.constant;
      continue;
    }
    const bool scalars = !v.scalars.empty() && !spec.list_slot.empty();
    if (v.is_list || scalars) {
      if (!spec.list_slot.empty()) slot = spec.list_slot;
      for (int64_t item : scalars ? v.scalars : v.items) {
        const PirValue& iv = values_.at(item);
        if (iv.var.empty())
          Fail(in[i], "an item of this list comes from " + iv.made_by + ", which Tide lacks");
        args.push_back(iv.var);
      }
    } else {
      if (v.var.empty())
        Fail(in[i], name + " reads a result of " + v.made_by + " that Tide does not compute");
      args.push_back(v.var);
    }
    if (slot.empty()) {
      if (spec.attr.empty()) continue;  // dropped
      Fail(in[i], name + "'s operand " + std::to_string(i) + " is computed at run time, and " +
                      "Tide's " + rule.fluid_type + " takes it only as its attribute '" +
                      spec.attr + "'");
    }
    if (!inputs.count(slot)) input_order.push_back(slot);
    auto& dst = inputs[slot];
    dst.insert(dst.end(), args.begin(), args.end());
  }

  for (auto& kv : AttrsOf(op)) {
    auto r = rule.renames.find(kv.first);
    const std::string to = r == rule.renames.end() ? kv.first : r->second;
    if (to.empty()) continue;
    attrs[to] = std::move(kv.second);
  }
  for (const auto& kv : rule.fixed) attrs[kv.first] = kv.second;
  if (!rule.dtype_of_input.empty()) {
    if (operands.empty() || !operands[0] || operands[0]->dtype < 0)
      op.Fail(name + ": the data type of its first operand is unknown");
    attrs[rule.dtype_of_input] = static_cast<int32_t>(operands[0]->dtype);
  }

  const auto results = Results(op);
  if (results.size() > rule.results.size())
    op.Fail(name + " has " + std::to_string(results.size()) + " results; Tide's table knows " +
            std::to_string(rule.results.size()));
  struct Cast {
    std::string from, to;
    int from_dtype, dtype;
  };
  std::vector<Cast> casts;  // cast_result_from: the Fluid op's output into the PIR result's type
  int fluid_dtype = rule.cast_result_from;
  if (fluid_dtype == PirOpRule::kFirstOperandType) {
    if (operands.empty() || !operands[0] || operands[0]->dtype < 0)
      op.Fail(name + ": the data type of its first operand is unknown");
    fluid_dtype = operands[0]->dtype;
  }
  for (size_t j = 0; j < results.size(); ++j) {
    const PirResult& spec = rule.results[j];
    const int64_t id = results[j]["%"].Int();
    PirValue v;
    v.made_by = name;
    if (spec.slot.empty()) {
      // Dropped: reading it is an error. A dropped vector (einsum's InnerCache and XShape) is a
      // list of such values, which builtin.split may unpack (Paddle does in a while body).
      if (results[j]["TT"]["#"].Str() == "0.t_vec") {
        v.is_list = true;
        for (size_t k = 0; k < results[j]["TT"]["D"].size(); ++k) {
          PirValue item;
          item.made_by = name;
          const int64_t item_id = next_item_id_++;
          values_[item_id] = item;
          v.items.push_back(item_id);
        }
      }
      values_[id] = v;
      continue;
    }
    if (results[j]["TT"]["#"].Str() == "0.t_vec") {
      // A vector of tensors (rnn's State): one variable per item, the items of the Fluid
      // op's duplicable output, a list that builtin.split / builtin.slice unpack.
      DeclareVector(results[j], rule.fluid_type, &v);
      if (!outputs.count(spec.slot)) output_order.push_back(spec.slot);
      for (int64_t item : v.items) outputs[spec.slot].push_back(values_.at(item).var);
      values_[id] = v;
      continue;
    }
    if (spec.same_as >= 0) {
      const size_t k = static_cast<size_t>(spec.same_as);
      if (k >= operands.size() || !operands[k]) op.Fail(name + ": in-place operand missing");
      v = *operands[k];
      v.constant.reset();
    } else {
      v.var = FreshName(rule.fluid_type, id);
      v.dtype = DeclareResult(results[j], v.var, false);
      v.rank = last_rank_;
      // Tensor.detach() (pd_op.share_data_, translated as assign): Paddle's backward stops at
      // its result, so append_backward must too (a stop_gradient variable gets no gradient).
      if (name == "pd_op.share_data_")
        block_->mutable_vars(block_->vars_size() - 1)->set_stop_gradient(true);
    }
    std::string out = v.var;
    if (fluid_dtype != PirOpRule::kSameType && fluid_dtype != v.dtype) {
      out = v.var + "." + DataTypeName(static_cast<DataType>(fluid_dtype));
      AddVar(out, proto::VarType::LOD_TENSOR, fluid_dtype, {}, false);
      casts.push_back({out, v.var, fluid_dtype, v.dtype});
    }
    if (name == "pd_op.full" && !mutated_.count(id)) v.constant = FullScalar(attrs);
    if (name == "pd_op.stack") StackOfScalars(operands, attrs, &v);
    values_[id] = v;
    if (!outputs.count(spec.slot)) output_order.push_back(spec.slot);
    outputs[spec.slot].push_back(out);
  }

  for (const auto& s : input_order) AddArgs(desc.add_inputs(), s, inputs[s]);
  for (const auto& s : output_order) AddArgs(desc.add_outputs(), s, outputs[s]);
  const OpInfo* info = Registry::Global().FindOp(rule.fluid_type);
  for (const auto& kv : attrs) {
    Attribute value = kv.second;
    if (info) {
      const AttrSpec* spec = info->FindAttr(kv.first);
      if (!spec) {
        if (!IsIgnoredAttr(kv.first))
          bad_attrs_.insert(name + "'s '" + kv.first + "' (" + AttrToString(kv.second) +
                            "; Tide's " + rule.fluid_type + " has none of that name)");
        continue;
      }
      if (!Convert(kv.second, spec->type, &value)) {
        bad_attrs_.insert(name + "'s '" + kv.first + "' = " + AttrToString(kv.second) +
                          " (Tide's " + rule.fluid_type + " takes " + AttrTypeName(spec->type) +
                          ")");
        continue;
      }
    } else if (IsIgnoredAttr(kv.first)) {
      continue;
    }
    AttrToProto(kv.first, value, desc.add_attrs());
  }
  block_->add_ops()->Swap(&desc);
  for (const auto& c : casts) {
    auto* cast = block_->add_ops();
    cast->set_type("cast");
    AddArgs(cast->add_inputs(), "X", {c.from});
    AddArgs(cast->add_outputs(), "Out", {c.to});
    AttrToProto("in_dtype", int32_t{c.from_dtype}, cast->add_attrs());
    AttrToProto("out_dtype", int32_t{c.dtype}, cast->add_attrs());
  }
  const int inplace = InPlaceOperand(name);
  if (inplace >= 0 && static_cast<size_t>(inplace) < n_in && !results.empty() &&
      in[static_cast<size_t>(inplace)]["%"].Int() != 0)
    InPlace(in[static_cast<size_t>(inplace)]["%"].Int(), results[0]["%"].Int());
}

void Translator::StackOfScalars(const std::vector<const PirValue*>& operands,
                                const AttributeMap& attrs, PirValue* out) {
  auto axis = attrs.find("axis");
  if (operands.empty() || !operands[0] || !operands[0]->is_list || axis == attrs.end() ||
      !std::holds_alternative<int32_t>(axis->second) || std::get<int32_t>(axis->second) != 0)
    return;
  std::vector<int64_t> consts;
  for (int64_t item : operands[0]->items) {
    const PirValue& v = values_.at(item);
    if (v.rank != 0 || v.var.empty()) return;
    if (v.constant && std::holds_alternative<int64_t>(*v.constant))
      consts.push_back(std::get<int64_t>(*v.constant));
  }
  out->scalars = operands[0]->items;
  if (consts.size() == out->scalars.size()) out->constant = consts;
}

std::optional<Attribute> Translator::FullScalar(const AttributeMap& attrs) {
  auto shape = attrs.find("shape"), value = attrs.find("value"), dtype = attrs.find("dtype");
  if (shape == attrs.end() || value == attrs.end() || dtype == attrs.end()) return std::nullopt;
  Attribute dims;
  if (!ConvertAttr(shape->second, TIDE_ATTR_LONGS, &dims)) return std::nullopt;
  int64_t numel = 1;
  for (int64_t d : std::get<std::vector<int64_t>>(dims)) numel *= d;
  Attribute v;
  if (numel != 1 || !ConvertAttr(value->second, TIDE_ATTR_FLOAT64, &v)) return std::nullopt;
  const double d = std::get<double>(v);
  const int t =
      std::holds_alternative<int32_t>(dtype->second) ? std::get<int32_t>(dtype->second) : -1;
  if (t == proto::VarType::BOOL) return Attribute(d != 0);
  if (IsIntegerType(t)) return Attribute(static_cast<int64_t>(d));
  return Attribute(d);
}

}  // namespace tide::core::pir
