// pir_program.cc: PaddlePaddle 3.x's PIR program (JSON, paddle/fluid/pir/serialize_deserialize)
// into a Fluid ProgramDesc. protobuf parses the JSON (google.protobuf.Value); the keys are
// Paddle's compressed ones: "base_code" {magic, version, trainable}, "program" {"regions" [{
// "blocks" [{"ops" [...]}]}]}; an op has "#" (its name, "<dialect id>.<op>": 0 builtin, 1 pd_op;
// "p" a builtin.parameter), "I" (operands {"%": value id}, 0 for none), "O" (results {"%", "TT":
// type}), "A" (attributes {"N": name, "AT": {"#": kind, "D": data}}).
#include "core/io/pir_program.h"

#include <google/protobuf/util/json_util.h>

#include "core/io/pir_control_flow.h"
#include "core/io/pir_translator.h"
#include "core/platform/enforce.h"

namespace tide::core::pir {

proto::ProgramDesc Translator::Run(const Json& root) {
  if (!root.IsObject() || !root.Has("base_code") || !root["base_code"].Has("magic"))
    root.Fail("no base_code.magic: not a PIR program");
  const std::string& magic = root["base_code"]["magic"].Str();
  if (magic != "pir")
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, file_, ": base_code.magic is '", magic,
              "', not 'pir': not a PaddlePaddle PIR program");
  version_ = root["base_code"]["version"].Int();
  if (version_ < 0 || version_ > kMaxPirVersion)
    TIDE_FAIL(TIDE_UNIMPLEMENTED, file_, ": PIR format version ", version_,
              " is newer than this Tide reads (up to ", kMaxPirVersion,
              ", which PaddlePaddle 3.3 writes): written by a later PaddlePaddle");

  const Json regions = root["program"]["regions"];
  if (regions.size() != 1) regions.Fail("one region was expected");
  const Json blocks = regions[0]["blocks"];
  if (blocks.size() != 1) blocks.Fail("one block was expected");
  block_ = program_.add_blocks();
  block_->set_idx(0);
  block_->set_parent_idx(-1);
  AddVar("feed", proto::VarType::FEED_MINIBATCH, -1, {}, true);
  AddVar("fetch", proto::VarType::FETCH_LIST, -1, {}, true);
  const Json ops = blocks[0]["ops"];
  FindMutated(ops);
  for (size_t i = 0; i < ops.size(); ++i) Op(ops[i]);

  if (!unknown_.empty()) {
    std::string list;
    for (const auto& kv : unknown_)
      list += (list.empty() ? "" : ", ") + kv.first + " (" + std::to_string(kv.second) +
              (kv.second == 1 ? " op)" : " ops)");
    TIDE_FAIL(TIDE_UNIMPLEMENTED, file_, ": ", unknown_.size(),
              " PIR operation type(s) have no translation to Tide ops: ", list,
              ". The file is PIR format version ", version_,
              " (PaddlePaddle 3.x; 3.3 writes version 4); core/io/pir_op_table.cc lists the "
              "operations Tide reads");
  }
  if (!bad_attrs_.empty()) {
    std::string list;
    for (const auto& s : bad_attrs_) list += (list.empty() ? "" : "; ") + s;
    TIDE_FAIL(TIDE_UNIMPLEMENTED, file_, ": attributes Tide's ops do not take: ", list);
  }
  FinishPirBlocks(&program_);
  return std::move(program_);
}

void Translator::AddVar(const std::string& name, int type, int dtype,
                        const std::vector<int64_t>& dims, bool persistable, int lod_level,
                        bool zero_dim) {
  auto* v = block_->add_vars();
  v->set_name(name);
  v->mutable_type()->set_type(static_cast<proto::VarType::Type>(type));
  proto::VarType::TensorDesc* desc = nullptr;
  if (type == proto::VarType::LOD_TENSOR) {
    v->mutable_type()->mutable_lod_tensor()->set_lod_level(lod_level);
    desc = v->mutable_type()->mutable_lod_tensor()->mutable_tensor();
  } else if (type == proto::VarType::LOD_TENSOR_ARRAY) {
    v->mutable_type()->mutable_tensor_array()->set_lod_level(lod_level);
    desc = v->mutable_type()->mutable_tensor_array()->mutable_tensor();
  }
  if (desc) {
    desc->set_data_type(static_cast<proto::VarType::Type>(dtype));
    for (int64_t d : dims) desc->add_dims(d);
    desc->set_zero_dim(zero_dim && dims.empty());
  }
  v->set_persistable(persistable);
  names_.insert(name);
  var_block_[name] = block_->idx();
}

int Translator::DeclareResult(const Json& result, const std::string& name, bool persistable) {
  return DeclareType(result["TT"], name, persistable);
}

int Translator::DeclareType(const Json& tt, const std::string& name, bool persistable) {
  const std::string& id = tt["#"].Str();
  last_rank_ = -1;
  if (id == "NULL") {  // a result nothing can read
    AddVar(name, proto::VarType::LOD_TENSOR, proto::VarType::FP32, {}, persistable);
    return -1;
  }
  const bool array = id == "1.t_dtensor_array" || id == "1.t_dense_tensor_array";
  if (id != "0.t_dtensor" && !array)
    Fail(tt["#"], "value type '" + id + "' is not one Tide reads (dense tensors only)");
  const Json d = tt["D"];
  const auto dtype = DataTypeFromTypeId(d[0]["#"].Str());
  if (!dtype) Fail(d[0]["#"], "data type '" + d[0]["#"].Str() + "' is not one Tide holds");
  std::vector<int64_t> dims;
  const Json jd = d[1];
  for (size_t i = 0; i < jd.size(); ++i) dims.push_back(jd[i].Int());
  const int lod_level = id == "0.t_dtensor" ? static_cast<int>(d[3].size()) : 0;
  last_rank_ = static_cast<int>(dims.size());
  AddVar(name, array ? proto::VarType::LOD_TENSOR_ARRAY : proto::VarType::LOD_TENSOR, *dtype, dims,
         persistable, lod_level, /*zero_dim=*/true);  // PIR's [] is 0-D
  return *dtype;
}

void Translator::DeclareVector(const Json& result, const std::string& hint, PirValue* list) {
  const int64_t id = result["%"].Int();
  const Json types = result["TT"]["D"];
  list->is_list = true;
  for (size_t k = 0; k < types.size(); ++k) {
    PirValue item;
    item.made_by = list->made_by;
    item.var = FreshName(hint, id) + "." + std::to_string(k);
    item.dtype = DeclareType(types[k], item.var, false);
    item.rank = last_rank_;
    const int64_t item_id = next_item_id_++;
    values_[item_id] = item;
    list->items.push_back(item_id);
  }
}

std::string Translator::FreshName(const std::string& hint, int64_t id) {
  std::string name = hint + "_" + std::to_string(id) + ".tmp";
  while (names_.count(name)) name += "_";
  return name;
}

const PirValue& Translator::ValueOf(const Json& operand) {
  const int64_t id = operand["%"].Int();
  auto it = values_.find(id);
  if (it == values_.end())
    Fail(operand, "value %" + std::to_string(id) + " is read before an operation defines it");
  return it->second;
}

std::optional<Attribute> Translator::AttrOf(const Json& at) {
  const std::string& kind = at["#"].Str();
  if (kind == "1.a_place") return std::nullopt;
  // A non-finite float comes as {"#": "0.a_f64", "VD": "-INF"} (a causal mask's fill value).
  const Json d = at.Has("VD") && !at.Has("D") ? at["VD"] : at["D"];
  if (kind == "0.a_bool") return d.Bool();
  if (kind == "0.a_i32") return static_cast<int32_t>(d.Int());
  if (kind == "0.a_i64" || kind == "0.a_index") return d.Int();
  if (kind == "0.a_f32") return static_cast<float>(d.Float());
  if (kind == "0.a_f64") return d.Float();
  if (kind == "0.a_str" || kind == "1.a_layout") return d.Str();
  if (kind == "1.a_intarray") {
    std::vector<int64_t> v;
    for (size_t i = 0; i < d.size(); ++i) v.push_back(d[i].Int());
    return v;
  }
  if (kind == "1.a_dtype") {
    const auto t = DataTypeFromName(d.Str());
    if (!t) Fail(d, "data type '" + d.Str() + "' is not one Tide holds");
    return static_cast<int32_t>(*t);
  }
  if (kind == "1.a_scalar") {  // [dtype name, value]
    const auto t = DataTypeFromName(d[0].Str());
    if (!t) Fail(d[0], "scalar type '" + d[0].Str() + "' is not one Tide holds");
    if (*t == proto::VarType::BOOL) return d[1].Bool();
    if (IsIntegerType(*t)) return d[1].Int();
    return d[1].Float();
  }
  if (kind == "0.a_array") return ArrayOf(d);
  Fail(at["#"], "attribute kind '" + kind + "' is not one Tide reads");
}

Attribute Translator::ArrayOf(const Json& d) {
  if (d.size() == 0) return std::vector<int32_t>{};
  const std::string kind = d[0]["#"].Str();
  std::vector<Attribute> items;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i]["#"].Str() != kind) Fail(d[i], "an array of mixed kinds");
    auto a = AttrOf(d[i]);
    if (!a) Fail(d[i], "an array of places");
    items.push_back(*a);
  }
  auto collect = [&items](auto proto_elem) {
    using T = decltype(proto_elem);
    std::vector<T> v;
    for (const auto& a : items) v.push_back(std::get<T>(a));
    return v;
  };
  if (kind == "0.a_bool") return collect(bool{});
  if (kind == "0.a_i32") return collect(int32_t{});
  if (kind == "0.a_i64" || kind == "0.a_index") return collect(int64_t{});
  if (kind == "0.a_f32") return collect(float{});
  if (kind == "0.a_f64") return collect(double{});
  if (kind == "0.a_str") return collect(std::string{});
  Fail(d[0]["#"], "an array of '" + kind + "' is not one Tide reads");
}

// An array of complex scalars (x[0] = 1 + 2j on a complex tensor: set_value's `values`, each
// {"#": "0.a_c128", "D": [re, im]}), which no Fluid attribute holds: its real parts go to `name`,
// its imaginary parts to `name` + "_imag". False for any other attribute.
namespace {
bool ComplexScalars(const Json& at, const std::string& name, AttributeMap* attrs) {
  if (at["#"].Str() != "0.a_array" || !at.Has("D") || at["D"].size() == 0) return false;
  const Json d = at["D"];
  const std::string kind = d[0]["#"].Str();
  if (kind != "0.a_c64" && kind != "0.a_c128") return false;
  std::vector<double> re, im;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i]["#"].Str() != kind) d[i].Fail("an array of mixed kinds");
    const Json v = d[i]["D"];
    if (v.size() != 2) v.Fail("a complex scalar [real, imaginary] was expected");
    re.push_back(v[0].Float());
    im.push_back(v[1].Float());
  }
  (*attrs)[name] = re;
  (*attrs)[name + "_imag"] = im;
  return true;
}
}  // namespace

AttributeMap Translator::AttrsOf(const Json& op) {
  AttributeMap attrs;
  if (!op.Has("A")) return attrs;
  const Json a = op["A"];
  for (size_t i = 0; i < a.size(); ++i) {
    if (ComplexScalars(a[i]["AT"], a[i]["N"].Str(), &attrs)) continue;
    auto v = AttrOf(a[i]["AT"]);
    if (v) attrs[a[i]["N"].Str()] = std::move(*v);
  }
  return attrs;
}

std::vector<Json> Translator::Results(const Json& op) {
  std::vector<Json> out;
  const Json o = op["O"];
  if (o.IsObject()) {
    out.push_back(o);
  } else {
    for (size_t i = 0; i < o.size(); ++i) out.push_back(o[i]);
  }
  return out;
}

Json Translator::FirstResult(const Json& op) {
  auto results = Results(op);
  if (results.empty()) op["O"].Fail("a result was expected");
  return results[0];
}

std::string Translator::OpName(const Json& op) {
  std::string name = op["#"].Str();
  if (name == "p") name = "0.parameter";
  const auto dot = name.find('.');
  const std::string dialect = dot == std::string::npos ? "" : name.substr(0, dot);
  static const std::map<std::string, std::string> dialects = {
      {"0", "builtin"}, {"1", "pd_op"}, {"2", "cf"}, {"3", "custom_op"}, {"4", "dist_op"}};
  if (dialects.count(dialect)) name = dialects.at(dialect) + name.substr(dot);
  return name;
}

void Translator::Op(const Json& op) {
  const std::string name = OpName(op);
  if (name == "builtin.parameter" || name == "builtin.constant") return Parameter(op, name);
  if (name == "builtin.combine") return Combine(op);
  if (name == "builtin.split" || name == "builtin.slice")  // of an untranslated op's list
    return ReadsUntranslated(op) ? MarkUntranslated(op, name) : Unpack(op, name);
  if (name == "pd_op.data" || name == "pd_op.feed") return Feed(op);
  if (name == "pd_op.fetch") return ReadsUntranslated(op) ? void() : Fetch(op);
  if (name == "pd_op.full_int_array") return FullIntArray(op);
  if (name == "pd_op.assign_value_" || name == "pd_op.assign_value") return AssignValue(op);
  if (name == "pd_op.if") return If(op);
  if (name == "pd_op.while") return While(op);
  if (name == "pd_op.create_array") return CreateArray(op);
  if (name == "cf.yield") op.Fail("a cf.yield that does not end a pd_op.if or pd_op.while block");
  const PirOpRule* rule = nullptr;
  if (!op.Has("regions")) {
    rule = FindPirOpRule(name);
  }
  if (!rule) {
    ++unknown_[name];
    MarkUntranslated(op, name);
    // Its regions' operations too, so that one error lists every operation Tide lacks.
    if (op.Has("regions")) SkipRegions(op);
    return;
  }
  if (ReadsUntranslated(op)) return MarkUntranslated(op, name);
  Translate(op, name, *rule);
}

}  // namespace tide::core::pir

namespace tide::core {

proto::ProgramDesc TranslatePirProgram(const std::string& json, const std::string& file) {
  google::protobuf::Value root;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &root);
  if (!status.ok()) {
    // protobuf's message, then a snippet of the text around the error: the message line, with
    // anything unprintable escaped.
    std::string why;
    for (char c : std::string(status.message()).substr(0, 200)) {
      if (c == '\n') break;
      why += c >= 0x20 && c < 0x7f ? std::string(1, c) : "?";
    }
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, file, ": not a PIR program: its ", json.size(),
              " bytes are not valid JSON (truncated or corrupt): ", why);
  }
  return pir::Translator(file).Run(pir::Json(root, "$", file));
}

}  // namespace tide::core
