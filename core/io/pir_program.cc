// pir_program.cc: PaddlePaddle 3.x's PIR program (JSON, paddle/fluid/pir/serialize_deserialize)
// into a Fluid ProgramDesc. protobuf parses the JSON (google.protobuf.Value); the keys are
// Paddle's compressed ones: "base_code" {magic, version, trainable}, "program" {"regions" [{
// "blocks" [{"ops" [...]}]}]}; an op has "#" (its name, "<dialect id>.<op>": 0 builtin, 1 pd_op;
// "p" a builtin.parameter), "I" (operands {"%": value id}, 0 for none), "O" (results {"%", "TT":
// type}), "A" (attributes {"N": name, "AT": {"#": kind, "D": data}}).
#include "core/io/pir_program.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <variant>

#include "core/io/pir_control_flow.h"
#include "core/io/pir_op_table.h"
#include "core/platform/enforce.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {
namespace pb = google::protobuf;

// A JSON value with its path in the file, for errors.
class Json {
 public:
  Json(const pb::Value& v, std::string path, const std::string& file)
      : v_(v), path_(std::move(path)), file_(file) {}

  [[noreturn]] void Fail(const std::string& what) const {
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, file_, ": not a PIR program Tide reads: at ", path_, ": ",
              what);
  }
  const std::string& path() const { return path_; }
  bool IsObject() const { return v_.kind_case() == pb::Value::kStructValue; }
  bool IsList() const { return v_.kind_case() == pb::Value::kListValue; }
  bool Has(const std::string& key) const {
    return IsObject() && v_.struct_value().fields().count(key) > 0;
  }
  Json operator[](const std::string& key) const {
    if (!IsObject()) Fail("an object was expected");
    auto it = v_.struct_value().fields().find(key);
    if (it == v_.struct_value().fields().end()) Fail("no key '" + key + "'");
    return Json(it->second, path_ + "." + key, file_);
  }
  size_t size() const {
    if (!IsList()) Fail("a list was expected");
    return static_cast<size_t>(v_.list_value().values_size());
  }
  Json operator[](size_t i) const {
    if (i >= size()) Fail("a list of more than " + std::to_string(i) + " items was expected");
    return Json(v_.list_value().values(static_cast<int>(i)), path_ + "[" + std::to_string(i) + "]",
                file_);
  }
  const std::string& Str() const {
    if (v_.kind_case() != pb::Value::kStringValue) Fail("a string was expected");
    return v_.string_value();
  }
  double Num() const {
    if (v_.kind_case() != pb::Value::kNumberValue) Fail("a number was expected");
    return v_.number_value();
  }
  // JSON numbers arrive as doubles: integers past 2^53 are rounded, and Paddle's INT64_MAX (an
  // open slice end) becomes 2^63, kept at INT64_MAX.
  int64_t Int() const {
    const double d = Num();
    if (d != std::floor(d)) Fail("an integer was expected");
    if (d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
    if (d <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(d);
  }
  // A float: a number, or the string Paddle writes for a non-finite one ("INF", "-INF", "NAN").
  double Float() const {
    if (v_.kind_case() != pb::Value::kStringValue) return Num();
    std::string t = v_.string_value();
    for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (t == "INF" || t == "+INF") return std::numeric_limits<double>::infinity();
    if (t == "-INF") return -std::numeric_limits<double>::infinity();
    if (t == "NAN" || t == "-NAN") return std::numeric_limits<double>::quiet_NaN();
    Fail("a number, or INF / -INF / NAN, was expected");
  }
  bool Bool() const {
    if (v_.kind_case() != pb::Value::kBoolValue) Fail("true or false was expected");
    return v_.bool_value();
  }

 private:
  const pb::Value& v_;
  std::string path_;
  const std::string& file_;
};

// Paddle's DataType names (a_dtype attributes, Scalar's) and type ids (t_f32 ...) as Fluid's
// VarType values; -1 for "undefined" (full_like: the input's).
std::optional<int> DataTypeFromName(const std::string& n) {
  static const std::map<std::string, int> names = {{"bool", proto::VarType::BOOL},
                                                   {"int16", proto::VarType::INT16},
                                                   {"int32", proto::VarType::INT32},
                                                   {"int64", proto::VarType::INT64},
                                                   {"float16", proto::VarType::FP16},
                                                   {"float32", proto::VarType::FP32},
                                                   {"float64", proto::VarType::FP64},
                                                   {"uint8", proto::VarType::UINT8},
                                                   {"int8", proto::VarType::INT8},
                                                   {"bfloat16", proto::VarType::BF16},
                                                   {"complex64", proto::VarType::COMPLEX64},
                                                   {"complex128", proto::VarType::COMPLEX128},
                                                   {"undefined", -1},
                                                   {"Undefined(ALL_DTYPE)", -1}};
  auto it = names.find(n);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

std::optional<int> DataTypeFromTypeId(const std::string& id) {
  static const std::map<std::string, int> ids = {
      {"0.t_bool", proto::VarType::BOOL},     {"0.t_i16", proto::VarType::INT16},
      {"0.t_i32", proto::VarType::INT32},     {"0.t_i64", proto::VarType::INT64},
      {"0.t_f16", proto::VarType::FP16},      {"0.t_f32", proto::VarType::FP32},
      {"0.t_f64", proto::VarType::FP64},      {"0.t_ui8", proto::VarType::UINT8},
      {"0.t_i8", proto::VarType::INT8},       {"0.t_bf16", proto::VarType::BF16},
      {"0.t_c64", proto::VarType::COMPLEX64}, {"0.t_c128", proto::VarType::COMPLEX128}};
  auto it = ids.find(id);
  if (it == ids.end()) return std::nullopt;
  return it->second;
}

bool IsIntegerType(int t) {
  return t == proto::VarType::INT16 || t == proto::VarType::INT32 || t == proto::VarType::INT64 ||
         t == proto::VarType::UINT8 || t == proto::VarType::INT8;
}

// PIR attributes that say nothing about what an op computes: Paddle's layer names, where it
// would place a tensor, its autograd and role markers.
bool IsIgnoredAttr(const std::string& name) {
  static const std::set<std::string> names = {"struct_name", "place",   "stop_gradient",
                                              "persistable", "op_role", "op_dist_attr"};
  return names.count(name) > 0;
}

// One PIR value: the Fluid variable holding it, or a builtin.combine's list of values; and the
// value itself when a constant op made it (for folding into attributes).
struct PirValue {
  std::string var;
  bool is_list = false;
  std::vector<int64_t> items;
  std::optional<Attribute> constant;
  int dtype = -1;
  std::string made_by;        // the PIR op, for errors
  bool untranslated = false;  // computed by an operation Tide lacks (listed in one error)
  int rank = -1;
  // A pd_op.stack of 0-D values (a shape built at run time): those values, which Fluid's list
  // inputs (ShapeTensorList, ...) take one by one. Tide holds 0-D values as [1], so the stack
  // itself would be [n, 1], not the [n] Paddle's reader expects.
  std::vector<int64_t> scalars;
};

class Translator {
 public:
  explicit Translator(const std::string& file) : file_(file) {}

  proto::ProgramDesc Run(const Json& root) {
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

 private:
  [[noreturn]] void Fail(const Json& at, const std::string& what) const { at.Fail(what); }

  void AddVar(const std::string& name, int type, int dtype, const std::vector<int64_t>& dims,
              bool persistable, int lod_level = 0, bool zero_dim = false) {
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

  // Declares the variable of a result from its PIR type ("TT"); returns its data type.
  int DeclareResult(const Json& result, const std::string& name, bool persistable) {
    return DeclareType(result["TT"], name, persistable);
  }

  // Declares a variable of PIR type `tt`; returns its data type.
  int DeclareType(const Json& tt, const std::string& name, bool persistable) {
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
    AddVar(name, array ? proto::VarType::LOD_TENSOR_ARRAY : proto::VarType::LOD_TENSOR, *dtype,
           dims, persistable, lod_level, /*zero_dim=*/true);  // PIR's [] is 0-D
    return *dtype;
  }

  // The items of a vector result (PIR type 0.t_vec), each a fresh variable under an id of its
  // own, listed in `list`. Their ids count up from INT64_MIN: PIR numbers op results 1, 2, ...
  // and block arguments -1, -2, ..., so neither range meets theirs (items counted down from -1
  // were a while body's arguments: a split in a loop overwrote the loop's carried values).
  void DeclareVector(const Json& result, const std::string& hint, PirValue* list) {
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

  std::string FreshName(const std::string& hint, int64_t id) {
    std::string name = hint + "_" + std::to_string(id) + ".tmp";
    while (names_.count(name)) name += "_";
    return name;
  }

  const PirValue& ValueOf(const Json& operand) {
    const int64_t id = operand["%"].Int();
    auto it = values_.find(id);
    if (it == values_.end())
      Fail(operand, "value %" + std::to_string(id) + " is read before an operation defines it");
    return it->second;
  }

  // An attribute's JSON ({"#": kind, "D": data}) as a Tide attribute; nullopt for the kinds that
  // carry nothing for Tide (a place).
  std::optional<Attribute> AttrOf(const Json& at) {
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

  Attribute ArrayOf(const Json& d) {
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

  // {name: value} of an op's "A" list (a builtin.parameter's is positional, handled apart).
  AttributeMap AttrsOf(const Json& op) {
    AttributeMap attrs;
    if (!op.Has("A")) return attrs;
    const Json a = op["A"];
    for (size_t i = 0; i < a.size(); ++i) {
      auto v = AttrOf(a[i]["AT"]);
      if (v) attrs[a[i]["N"].Str()] = std::move(*v);
    }
    return attrs;
  }

  std::vector<Json> Results(const Json& op) {
    std::vector<Json> out;
    const Json o = op["O"];
    if (o.IsObject()) {
      out.push_back(o);
    } else {
      for (size_t i = 0; i < o.size(); ++i) out.push_back(o[i]);
    }
    return out;
  }
  Json FirstResult(const Json& op) {
    auto results = Results(op);
    if (results.empty()) op["O"].Fail("a result was expected");
    return results[0];
  }

  // An op's name with its dialect spelled out ("1.relu" is "pd_op.relu").
  static std::string OpName(const Json& op) {
    std::string name = op["#"].Str();
    if (name == "p") name = "0.parameter";
    const auto dot = name.find('.');
    const std::string dialect = dot == std::string::npos ? "" : name.substr(0, dot);
    static const std::map<std::string, std::string> dialects = {
        {"0", "builtin"}, {"1", "pd_op"}, {"2", "cf"}, {"3", "custom_op"}, {"4", "dist_op"}};
    if (dialects.count(dialect)) name = dialects.at(dialect) + name.substr(dot);
    return name;
  }

  void Op(const Json& op) {
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

  // --- Control flow: pd_op.if and pd_op.while as Fluid's conditional_block and while ----------

  // Records the values that in-place operations change (their operand; PIR's in-place result is
  // the same tensor): a constant op made them, but they must not be folded into attributes.
  void FindMutated(const Json& ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const Json op = ops[i];
      const std::string name = OpName(op);
      const int k = InPlaceOperand(name);
      if (k >= 0 && op.Has("I") && op["I"].size() > static_cast<size_t>(k))
        mutated_.insert(op["I"][static_cast<size_t>(k)]["%"].Int());
      if (!op.Has("regions")) continue;
      const Json regions = op["regions"];
      for (size_t r = 0; r < regions.size(); ++r) {
        const Json blocks = regions[r]["blocks"];
        for (size_t b = 0; b < blocks.size(); ++b) FindMutated(blocks[b]["ops"]);
      }
    }
  }

  // The operand whose tensor an in-place operation ("pd_op.relu_") changes into its first result,
  // or -1. Paddle's in-place ops change their first operand (ops.yaml's `inplace : (x -> out)`),
  // but for a few; those whose table line says which results share operands (batch_norm_'s mean
  // and variance) are handled by the line.
  static int InPlaceOperand(const std::string& name) {
    if (name.size() < 2 || name.back() != '_' || name.rfind("pd_op.", 0) != 0) return -1;
    static const std::map<std::string, int> others = {{"pd_op.where_", 1},
                                                      {"pd_op.assign_out_", 1}};
    auto it = others.find(name);
    if (it != others.end()) return it->second;
    const PirOpRule* rule = FindPirOpRule(name);
    if (rule)
      for (const auto& r : rule->results)
        if (r.same_as >= 0) return -1;
    return 0;
  }

  // After an in-place operation: its result holds the operand's tensor, changed. The Fluid op
  // wrote a variable of its own; where the operand is a variable of this block, readers of the
  // operand from now on read that one; where it is a variable of an enclosing block (a loop's
  // counter incremented in the loop body), the result is copied into it, so that the next
  // iteration and the ops after the loop see the change, as in Paddle.
  void InPlace(int64_t operand_id, int64_t result_id) {
    auto o = values_.find(operand_id), r = values_.find(result_id);
    if (o == values_.end() || r == values_.end()) return;
    PirValue& operand = o->second;
    const PirValue result = r->second;
    if (operand.is_list || operand.var.empty() || result.var.empty() || operand.var == result.var)
      return;
    operand.constant.reset();
    operand.scalars.clear();
    if (VarBlock(operand.var) == block_->idx()) {
      operand.var = result.var;
      return;
    }
    AddAssign(result.var, operand.var);
    values_[result_id] = operand;
  }

  int VarBlock(const std::string& var) const {
    auto it = var_block_.find(var);
    return it == var_block_.end() ? 0 : it->second;
  }

  void AddAssign(const std::string& from, const std::string& to) {
    auto* a = block_->add_ops();
    a->set_type("assign");
    AddArgs(a->add_inputs(), "X", {from});
    AddArgs(a->add_outputs(), "Out", {to});
  }

  // A sub-block of the current block, made the current one.
  void EnterNewBlock() {
    const int parent = block_->idx();
    block_ = program_.add_blocks();
    block_->set_idx(program_.blocks_size() - 1);
    block_->set_parent_idx(parent);
  }

  // Translates the ops of a region's one block into the current block, up to its closing
  // cf.yield, whose operands it returns.
  std::vector<Json> RegionBody(const Json& region, const std::string& owner) {
    const Json blocks = region["blocks"];
    if (blocks.size() != 1) blocks.Fail(owner + ": a region of one block was expected");
    const Json ops = blocks[0]["ops"];
    for (size_t i = 0; i < ops.size(); ++i) {
      if (OpName(ops[i]) != "cf.yield") {
        Op(ops[i]);
        continue;
      }
      if (i + 1 != ops.size()) ops[i].Fail("a cf.yield before the end of a " + owner + " block");
      std::vector<Json> yielded;
      if (ops[i].Has("I"))
        for (size_t k = 0; k < ops[i]["I"].size(); ++k) yielded.push_back(ops[i]["I"][k]);
      return yielded;
    }
    ops.Fail(owner + ": the block does not end with a cf.yield");
  }

  // The ops of an operation Tide does not translate, only for listing the unknown ones (the
  // region's block arguments are unknown values, as are its results).
  void SkipRegions(const Json& op) {
    proto::BlockDesc* outer = block_;
    const Json regions = op["regions"];
    for (size_t r = 0; r < regions.size(); ++r) {
      const Json blocks = regions[r]["blocks"];
      for (size_t b = 0; b < blocks.size(); ++b) {
        EnterNewBlock();
        if (blocks[b].Has("args")) {
          const Json args = blocks[b]["args"];
          for (size_t a = 0; a < args.size(); ++a) {
            PirValue& v = values_[args[a]["#"].Int()];
            v.made_by = OpName(op);
            v.untranslated = true;
          }
        }
        const Json ops = blocks[b]["ops"];
        for (size_t i = 0; i < ops.size(); ++i)
          if (OpName(ops[i]) != "cf.yield") Op(ops[i]);
        block_ = outer;
      }
    }
  }

  // A yielded value (the if's or the loop's result), or why it cannot be one.
  const PirValue* Yielded(const Json& operand, const std::string& owner) {
    const PirValue& v = ValueOf(operand);
    if (v.untranslated) return nullptr;  // an operation Tide lacks made it (listed in one error)
    if (v.is_list || v.var.empty())
      Fail(operand, owner + " yields a value of " + v.made_by + " that Tide does not compute");
    return &v;
  }

  // pd_op.if (cond) {true region} {false region}, each region ending in cf.yield(results...):
  // Paddle 2.x's form of `cond`: two conditional_blocks, on cond and on its negation, whose
  // sub-blocks assign their yields to variables of their own, and per result a select_input of
  // the one the branch that ran wrote (Mask: cond as int32). Values of enclosing blocks that
  // the regions read are read by name; FinishPirBlocks lists them as the ops' inputs.
  void If(const Json& op) {
    const Json in = op["I"];
    if (in.size() != 1)
      op.Fail("pd_op.if with " + std::to_string(in.size()) +
              " operands; one, its condition, was expected");
    const PirValue cond = ValueOf(in[0]);
    if (!cond.untranslated && (cond.is_list || cond.var.empty()))
      Fail(in[0],
           "pd_op.if's condition comes from " + cond.made_by + ", which Tide does not compute");
    const Json regions = op["regions"];
    if (regions.size() != 2) regions.Fail("pd_op.if: two regions (true, false) were expected");
    const auto results = Results(op);
    std::vector<PirValue> outs(results.size());
    std::vector<std::string> branch_vars[2];
    for (size_t k = 0; k < results.size(); ++k) {
      const int64_t id = results[k]["%"].Int();
      outs[k].var = FreshName("if", id);
      outs[k].made_by = "pd_op.if";
      outs[k].dtype = DeclareResult(results[k], outs[k].var, false);
      outs[k].rank = last_rank_;
      for (int b = 0; b < 2; ++b) {
        branch_vars[b].push_back(FreshName(b == 0 ? "if_true" : "if_false", id));
        DeclareResult(results[k], branch_vars[b].back(), false);
      }
    }
    proto::BlockDesc* outer = block_;
    bool complete = !cond.untranslated;
    int sub[2];
    for (int b = 0; b < 2; ++b) {
      EnterNewBlock();
      sub[b] = block_->idx();
      const std::vector<Json> yielded = RegionBody(regions[static_cast<size_t>(b)], "pd_op.if");
      if (yielded.size() != results.size())
        op.Fail("pd_op.if's " + std::string(b == 0 ? "true" : "false") + " region yields " +
                std::to_string(yielded.size()) + " values for its " +
                std::to_string(results.size()) + " results");
      for (size_t k = 0; k < yielded.size(); ++k) {
        const PirValue* y = Yielded(yielded[k], "pd_op.if");
        if (y) AddAssign(y->var, branch_vars[b][k]);
        complete = complete && y;
      }
      block_ = outer;
    }
    if (!complete) return MarkUntranslated(op, "pd_op.if");

    // The negation and the mask first: a branch changing cond in place must not run the other.
    const std::string negation = FreshName("if_not", results.empty() ? 0 : results[0]["%"].Int());
    AddVar(negation, proto::VarType::LOD_TENSOR, proto::VarType::BOOL, {}, false);
    auto* n = block_->add_ops();
    n->set_type("logical_not");
    AddArgs(n->add_inputs(), "X", {cond.var});
    AddArgs(n->add_outputs(), "Out", {negation});
    std::string mask;
    if (!results.empty()) {
      mask = FreshName("if_mask", results[0]["%"].Int());
      AddVar(mask, proto::VarType::LOD_TENSOR, proto::VarType::INT32, {}, false);
      auto* c = block_->add_ops();
      c->set_type("cast");
      AddArgs(c->add_inputs(), "X", {cond.var});
      AddArgs(c->add_outputs(), "Out", {mask});
      AttrToProto("in_dtype", int32_t{proto::VarType::BOOL}, c->add_attrs());
      AttrToProto("out_dtype", int32_t{proto::VarType::INT32}, c->add_attrs());
    }
    for (int b = 0; b < 2; ++b) {
      const std::string scope = FreshName("if_scope", sub[b]);
      AddVar(scope, proto::VarType::STEP_SCOPES, -1, {}, false);
      auto* cb = block_->add_ops();
      cb->set_type("conditional_block");
      AddArgs(cb->add_inputs(), "Cond", {b == 0 ? cond.var : negation});
      AddArgs(cb->add_outputs(), "Scope", {scope});
      AttrToProto("sub_block", BlockIndex{sub[b]}, cb->add_attrs());
      AttrToProto("is_scalar_condition", true, cb->add_attrs());
    }
    for (size_t k = 0; k < results.size(); ++k) {
      auto* s = block_->add_ops();
      s->set_type("select_input");
      AddArgs(s->add_inputs(), "X", {branch_vars[1][k], branch_vars[0][k]});
      AddArgs(s->add_inputs(), "Mask", {mask});
      AddArgs(s->add_outputs(), "Out", {outs[k].var});
      values_[results[k]["%"].Int()] = outs[k];
    }
  }

  // pd_op.while (cond, init...) {body(args...) ... cf.yield(next cond, next values...)}, its
  // results the values of the last iteration: Fluid's while. Each loop-carried value gets a
  // variable of the enclosing block, assigned its initial value before the loop, which the body
  // reads as its block argument and the loop's result is; the body's yield assigns the next
  // values to them and the next condition to the loop's condition variable, as Fluid's While
  // writes its variables back. is_test: one scope serves every iteration (inference).
  void While(const Json& op) {
    const Json in = op["I"];
    if (in.size() < 1) op.Fail("pd_op.while without its condition operand");
    const size_t n = in.size() - 1;
    const auto results = Results(op);
    if (results.size() != n)
      op.Fail("pd_op.while with " + std::to_string(n) + " loop-carried operands and " +
              std::to_string(results.size()) + " results");
    const Json regions = op["regions"];
    if (regions.size() != 1) regions.Fail("pd_op.while: one region, its body, was expected");
    const Json body = regions[0]["blocks"];
    if (body.size() != 1) body.Fail("pd_op.while: a body of one block was expected");
    const Json args = body[0]["args"];
    if (args.size() != n)
      args.Fail("pd_op.while's body has " + std::to_string(args.size()) + " arguments for its " +
                std::to_string(n) + " loop-carried values");

    bool complete = true;
    std::vector<const PirValue*> init(n + 1);
    for (size_t k = 0; k <= n; ++k) {
      init[k] = Yielded(in[k], "pd_op.while's operand " + std::to_string(k) + ":");
      complete = complete && init[k];
    }
    const int64_t tag = n > 0 ? results[0]["%"].Int() : in[0]["%"].Int();
    std::vector<PirValue> carried(n);
    for (size_t k = 0; k < n; ++k) {
      carried[k].var = FreshName("while_carried", results[k]["%"].Int());
      carried[k].made_by = "pd_op.while";
      carried[k].dtype = DeclareResult(results[k], carried[k].var, false);
      carried[k].rank = last_rank_;
    }
    const std::string cond_var = FreshName("while_cond", tag);
    AddVar(cond_var, proto::VarType::LOD_TENSOR, proto::VarType::BOOL, {}, false);
    const std::string steps = FreshName("while_scopes", tag);
    AddVar(steps, proto::VarType::STEP_SCOPES, -1, {}, false);

    proto::BlockDesc* outer = block_;
    EnterNewBlock();
    const int sub = block_->idx();
    for (size_t k = 0; k < n; ++k) values_[args[k]["#"].Int()] = carried[k];
    const std::vector<Json> yielded = RegionBody(regions[0], "pd_op.while");
    if (yielded.size() != n + 1)
      op.Fail("pd_op.while's body yields " + std::to_string(yielded.size()) +
              " values; its condition and " + std::to_string(n) + " loop-carried values expected");
    std::vector<const PirValue*> next(n + 1);
    for (size_t k = 0; k <= n; ++k) {
      next[k] = Yielded(yielded[k], "pd_op.while's body");
      complete = complete && next[k];
    }
    if (complete) {
      // The yields are assigned at once: a value that is another carried variable (a swap) is
      // copied first, before that variable is assigned its own next value.
      std::set<std::string> carried_vars;
      for (const auto& c : carried) carried_vars.insert(c.var);
      std::vector<std::string> from(n + 1);
      for (size_t k = 0; k <= n; ++k) {
        from[k] = next[k]->var;
        if (k > 0 && from[k] == carried[k - 1].var) continue;
        if (carried_vars.count(from[k])) {
          const std::string copy = FreshName("while_next", yielded[k]["%"].Int());
          AddVar(copy, proto::VarType::LOD_TENSOR, next[k]->dtype, {}, false);
          AddAssign(from[k], copy);
          from[k] = copy;
        }
      }
      AddAssign(from[0], cond_var);
      for (size_t k = 0; k < n; ++k)
        if (from[k + 1] != carried[k].var) AddAssign(from[k + 1], carried[k].var);
    }
    block_ = outer;
    if (!complete) return MarkUntranslated(op, "pd_op.while");

    for (size_t k = 0; k < n; ++k) AddAssign(init[k + 1]->var, carried[k].var);
    AddAssign(init[0]->var, cond_var);
    auto* w = block_->add_ops();
    w->set_type("while");
    AddArgs(w->add_inputs(), "Condition", {cond_var});
    AddArgs(w->add_outputs(), "StepScopes", {steps});
    AttrToProto("sub_block", BlockIndex{sub}, w->add_attrs());
    AttrToProto("is_test", true, w->add_attrs());
    for (size_t k = 0; k < n; ++k) values_[results[k]["%"].Int()] = carried[k];
  }

  // pd_op.create_array: an empty tensor array, written by array_write_ in place. Tide's executor
  // keeps a block's variables from one run (or iteration) to the next, so the array is emptied
  // where Paddle creates it: tensor_array_sum of an array nothing writes, which has no elements.
  void CreateArray(const Json& op) {
    const Json result = FirstResult(op);
    const int64_t id = result["%"].Int();
    PirValue v;
    v.var = FreshName("array", id);
    v.made_by = "pd_op.create_array";
    v.dtype = DeclareResult(result, v.var, false);
    const std::string none = v.var + ".empty";
    AddVar(none, proto::VarType::LOD_TENSOR_ARRAY, v.dtype < 0 ? proto::VarType::FP32 : v.dtype, {},
           false);
    auto* e = block_->add_ops();
    e->set_type("tensor_array_sum");
    AddArgs(e->add_inputs(), "X", {none});
    AddArgs(e->add_outputs(), "Out", {v.var});
    values_[id] = v;
  }

  // An op Tide lacks, or one reading its results: skipped, so that the error lists every
  // operation the table lacks rather than stopping at the first reader.
  void MarkUntranslated(const Json& op, const std::string& name) {
    for (const Json& r : Results(op)) {
      PirValue& v = values_[r["%"].Int()];
      v.made_by = name;
      v.untranslated = true;
    }
  }
  bool ReadsUntranslated(const Json& op) {
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

  void Parameter(const Json& op, const std::string& name) {
    std::string var;
    bool persistable = true;
    if (op["#"].Str() == "p") {  // compressed: [is_distributed, is_parameter, need_clip, name]
      const Json a = op["A"];
      var = a[a.size() - 1].Str();
      // Its result's [persistable, stop_gradient, trainable]: a state that is not persistable
      // (nn.LSTM's dropout state) is not in the parameters file.
      if (op.Has("OA") && op["OA"].size() > 0) persistable = op["OA"][0].Int() != 0;
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
    v.rank = last_rank_;
    values_[result["%"].Int()] = v;
  }

  void Combine(const Json& op) {
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

  void Unpack(const Json& op, const std::string& name) {
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

  void Feed(const Json& op) {
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

  void Fetch(const Json& op) {
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

  // pd_op.full_int_array: a constant IntArray (a shape, axes, kernel size); becomes an attribute
  // of its readers where they take one, and an assign_value op for those that read a tensor.
  void FullIntArray(const Json& op) {
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
      AttrToProto("int32_values", std::vector<int32_t>(values.begin(), values.end()),
                  a->add_attrs());
    } else {
      AttrToProto("int64_values", values, a->add_attrs());
    }
  }

  // pd_op.assign_value(_) (paddle.to_tensor of a list): its values, as Fluid's assign_value of
  // the result's type (its in-place operand, a placeholder, is not read). Integer values are a
  // constant too, for readers taking an IntArray attribute.
  void AssignValue(const Json& op) {
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

  static void AddArgs(proto::OpDesc::Var* var, const std::string& param,
                      const std::vector<std::string>& args) {
    var->set_parameter(param);
    for (const auto& a : args) var->add_arguments(a);
  }

  // `a` for the attribute `spec` declares. Integers from an IntArray or a Scalar (int64 in PIR)
  // saturate into int32: an open slice end (INT64_MAX) is Fluid's INT32_MAX.
  bool Convert(const Attribute& a, TideAttrType want, Attribute* out) {
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

  void Translate(const Json& op, const std::string& name, const PirOpRule& rule) {
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
        values_[id] = v;  // dropped: reading it is an error
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

  // Records a stack (axis 0) of a builtin.combine of 0-D values as those values, and as a
  // constant IntArray when they all are constants.
  void StackOfScalars(const std::vector<const PirValue*>& operands, const AttributeMap& attrs,
                      PirValue* out) {
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

  // A pd_op.full of one element, as the constant its readers can fold: int64, bool or double by
  // its dtype.
  static std::optional<Attribute> FullScalar(const AttributeMap& attrs) {
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

  const std::string& file_;
  int64_t version_ = 0;
  proto::ProgramDesc program_;
  proto::BlockDesc* block_ = nullptr;
  std::map<int64_t, PirValue> values_;
  int64_t next_item_id_ = std::numeric_limits<int64_t>::min();  // DeclareVector's items' ids
  std::set<std::string> names_;
  std::map<std::string, int> unknown_;
  std::set<int64_t> mutated_;             // values in-place operations change (FindMutated)
  std::map<std::string, int> var_block_;  // the block declaring each variable
  std::set<std::string> bad_attrs_;
  int32_t feeds_ = 0;
  int last_rank_ = -1;  // of the last DeclareResult
};

}  // namespace

proto::ProgramDesc TranslatePirProgram(const std::string& json, const std::string& file) {
  pb::Value root;
  const auto status = pb::util::JsonStringToMessage(json, &root);
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
  return Translator(file).Run(Json(root, "$", file));
}

}  // namespace tide::core
