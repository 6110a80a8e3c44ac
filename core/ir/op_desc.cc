// op_desc.cc: OpDesc accessors and protobuf conversion.
#include "core/ir/op_desc.h"

#include "core/platform/enforce.h"

namespace tide::core {

namespace {
const std::vector<std::string>& Lookup(const VariableNameMap& m, const std::string& param) {
  static const std::vector<std::string> empty;
  auto it = m.find(param);
  return it == m.end() ? empty : it->second;
}
std::vector<std::string> Flatten(const VariableNameMap& m) {
  std::vector<std::string> out;
  for (const auto& kv : m) out.insert(out.end(), kv.second.begin(), kv.second.end());
  return out;
}
void Rename(VariableNameMap* m, const std::string& from, const std::string& to) {
  for (auto& kv : *m)
    for (auto& a : kv.second)
      if (a == from) a = to;
}
std::string MapString(const VariableNameMap& m) {
  std::string s;
  for (const auto& kv : m) {
    s += (s.empty() ? "" : ", ") + kv.first + "=[";
    for (size_t i = 0; i < kv.second.size(); ++i) s += (i ? ", " : "") + kv.second[i];
    s += "]";
  }
  return s;
}
}  // namespace

const std::vector<std::string>& OpDesc::Input(const std::string& p) const {
  return Lookup(inputs_, p);
}
const std::vector<std::string>& OpDesc::Output(const std::string& p) const {
  return Lookup(outputs_, p);
}
std::vector<std::string> OpDesc::InputArgumentNames() const { return Flatten(inputs_); }
std::vector<std::string> OpDesc::OutputArgumentNames() const { return Flatten(outputs_); }
void OpDesc::RenameInput(const std::string& f, const std::string& t) { Rename(&inputs_, f, t); }
void OpDesc::RenameOutput(const std::string& f, const std::string& t) { Rename(&outputs_, f, t); }

const Attribute& OpDesc::GetAttr(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end())
    TIDE_FAIL(TIDE_NOT_FOUND, "op '", type_, "' has no attribute '", name, "'");
  return it->second;
}

std::vector<std::pair<std::string, int32_t>> OpDesc::SubBlocks() const {
  std::vector<std::pair<std::string, int32_t>> refs;
  for (const auto& kv : attrs_) {
    if (const auto* b = std::get_if<BlockIndex>(&kv.second)) refs.emplace_back(kv.first, b->idx);
    if (const auto* bs = std::get_if<std::vector<BlockIndex>>(&kv.second))
      for (const BlockIndex& b : *bs) refs.emplace_back(kv.first, b.idx);
  }
  return refs;
}

void OpDesc::ToProto(proto::OpDesc* out) const {
  out->Clear();
  out->set_type(type_);
  for (const auto& kv : inputs_) {
    auto* v = out->add_inputs();
    v->set_parameter(kv.first);
    for (const auto& a : kv.second) v->add_arguments(a);
  }
  for (const auto& kv : outputs_) {
    auto* v = out->add_outputs();
    v->set_parameter(kv.first);
    for (const auto& a : kv.second) v->add_arguments(a);
  }
  for (const auto& kv : attrs_) AttrToProto(kv.first, kv.second, out->add_attrs());
  if (is_target_) out->set_is_target(true);
}

OpDesc OpDesc::FromProto(const proto::OpDesc& p) {
  TIDE_ENFORCE(!p.type().empty(), "an OpDesc has an empty type");
  OpDesc op;
  op.type_ = p.type();
  for (const auto& v : p.inputs())
    op.inputs_[v.parameter()].assign(v.arguments().begin(), v.arguments().end());
  for (const auto& v : p.outputs())
    op.outputs_[v.parameter()].assign(v.arguments().begin(), v.arguments().end());
  for (const auto& a : p.attrs()) {
    try {
      op.attrs_[a.name()] = AttrFromProto(a);
    } catch (const Error& e) {
      TIDE_FAIL(e.code(), "op '", p.type(), "': ", e.what());
    }
  }
  op.is_target_ = p.is_target();
  return op;
}

std::string OpDesc::ToString() const {
  std::string s = type_ + "(" + MapString(inputs_) + ") -> (" + MapString(outputs_) + ")";
  if (!attrs_.empty()) {
    s += " {";
    bool first = true;
    for (const auto& kv : attrs_) {
      s += (first ? "" : ", ") + kv.first + "=" + AttrToString(kv.second);
      first = false;
    }
    s += "}";
  }
  return s;
}

}  // namespace tide::core
