// sim_compiler.cc: see sim_compiler.h. The program arrives serialized (proto/framework.proto);
// the plugin reads it with its own copy of the messages (tide_plugin_program_proto: package
// tide_sim.proto, beside the core's tide.proto in one process).
#include "sim_compiler.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <tide/ops/broadcast.hpp>

#include "tide_device_sim_framework.pb.h"

namespace pb = tide_sim::proto;

namespace {

constexpr int kFp32 = TIDE_FP32;  // the proto's VarType.Type values are TideDataType's

pb::ProgramDesc ParseProgram(const std::string& bytes) {
  pb::ProgramDesc p;
  TIDE_CHECK(p.ParseFromString(bytes), "sim: the program it was handed does not parse");
  return p;
}

// The variable `name` as block `b` sees it (its own, or a parent's); null when none declares it.
const pb::VarDesc* FindVar(const pb::ProgramDesc& p, int b, const std::string& name) {
  while (b >= 0 && b < p.blocks_size()) {
    for (const pb::VarDesc& v : p.blocks(b).vars())
      if (v.name() == name) return &v;
    b = p.blocks(b).parent_idx();
  }
  return nullptr;
}

const std::vector<std::string>& Args(const google::protobuf::RepeatedPtrField<pb::OpDesc::Var>& vs,
                                     const char* param, std::vector<std::string>* out) {
  out->clear();
  for (const pb::OpDesc::Var& v : vs)
    if (v.parameter() == param) out->assign(v.arguments().begin(), v.arguments().end());
  return *out;
}

const pb::OpDesc::Attr* FindAttr(const pb::OpDesc& op, const char* name) {
  for (const pb::OpDesc::Attr& a : op.attrs())
    if (a.name() == name) return &a;
  return nullptr;
}
double FloatAttr(const pb::OpDesc& op, const char* name, double fallback) {
  const pb::OpDesc::Attr* a = FindAttr(op, name);
  if (!a) return fallback;
  return a->type() == pb::FLOAT64 ? a->float64() : a->f();
}
int IntAttr(const pb::OpDesc& op, const char* name, int fallback) {
  const pb::OpDesc::Attr* a = FindAttr(op, name);
  return a ? a->i() : fallback;
}
bool BoolAttr(const pb::OpDesc& op, const char* name, bool fallback) {
  const pb::OpDesc::Attr* a = FindAttr(op, name);
  return a ? a->b() : fallback;
}

bool Fusable(const std::string& type) {
  return type == "elementwise_add" || type == "relu" || type == "scale";
}

// The op's one output (Out), when it is a float32 elementwise op the fused kernel covers and
// all its variables are float32 tensors; "" otherwise.
std::string FusableOut(const pb::ProgramDesc& p, int b, const pb::OpDesc& op) {
  if (!Fusable(op.type())) return "";
  if (const pb::OpDesc::Attr* a = FindAttr(op, "use_mkldnn"); a && a->b()) return "";
  std::vector<std::string> args;
  if (!Args(op.inputs(), "ScaleTensor", &args).empty()) return "";  // a factor read at run time
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const pb::OpDesc::Var& v : *list)
      for (const std::string& n : v.arguments()) {
        const pb::VarDesc* var = FindVar(p, b, n);
        if (!var || var->type().type() != pb::VarType::LOD_TENSOR ||
            var->type().lod_tensor().tensor().data_type() != kFp32)
          return "";
      }
  if (Args(op.outputs(), "Out", &args).size() != 1) return "";
  return args[0];
}

// What makes two chains the same computation: the ops and their attributes.
std::string KeyOf(const pb::OpDesc& op) {
  if (op.type() == "scale")
    return "scale(" + std::to_string(FloatAttr(op, "scale", 1.0)) + "," +
           std::to_string(FloatAttr(op, "bias", 0.0)) + "," +
           std::to_string(BoolAttr(op, "bias_after_scale", true)) + ")";
  if (op.type() == "elementwise_add")
    return "elementwise_add(" + std::to_string(IntAttr(op, "axis", -1)) + ")";
  return op.type();
}

}  // namespace

std::vector<tide::Device::SubgraphGroup> SimCapability(const std::string& bytes,
                                                       int32_t block_idx) {
  const pb::ProgramDesc p = ParseProgram(bytes);
  TIDE_CHECK(block_idx >= 0 && block_idx < p.blocks_size(), "sim: no block ", block_idx);
  const pb::BlockDesc& block = p.blocks(block_idx);
  // Chains being built: each op that reads a chain's last value as X extends it, also past ops
  // between that do not touch the chain (the core then runs those before the group's node). An
  // op outside a chain that reads or writes one of its values ends it, so no op between a
  // chain's first and last op depends on the chain: the claim never makes a cycle.
  struct Open {
    tide::Device::SubgraphGroup group;
    std::string last;              // the value the next op must read as X
    std::set<std::string> values;  // every value the chain computed
  };
  std::vector<tide::Device::SubgraphGroup> groups;
  std::vector<Open> open;
  std::vector<std::string> args;
  auto close = [&](size_t c) {
    if (open[c].group.ops.size() >= 2) groups.push_back(open[c].group);
    open.erase(open.begin() + static_cast<long>(c));
  };
  for (int i = 0; i < block.ops_size(); ++i) {
    const pb::OpDesc& op = block.ops(i);
    const std::string out = FusableOut(p, block_idx, op);
    std::set<std::string> touched;
    for (const auto* list : {&op.inputs(), &op.outputs()})
      for (const pb::OpDesc::Var& v : *list)
        touched.insert(v.arguments().begin(), v.arguments().end());
    int extends = -1;
    if (!out.empty() && Args(op.inputs(), "X", &args).size() == 1)
      for (size_t c = 0; c < open.size(); ++c)
        if (open[c].last == args[0]) extends = static_cast<int>(c);
    for (size_t c = open.size(); c-- > 0;) {
      if (static_cast<int>(c) == extends) continue;
      bool touches = false;
      for (const std::string& n : touched) touches = touches || open[c].values.count(n) > 0;
      if (touches) {
        close(c);
        if (extends > static_cast<int>(c)) --extends;
      }
    }
    if (out.empty()) continue;
    if (extends < 0) {
      open.push_back({});
      extends = static_cast<int>(open.size()) - 1;
    }
    Open& chain = open[extends];
    chain.group.ops.push_back(i);
    chain.group.cache_key += (chain.group.cache_key.empty() ? "sim.fused:" : "|") + KeyOf(op);
    chain.last = out;
    chain.values.insert(out);
  }
  while (!open.empty()) close(0);
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.ops.front() < b.ops.front(); });
  // Planted wrong answers, for the core's checks of them.
  if (!groups.empty() && SimPlantedBug("claim_out_of_range"))
    groups[0].ops.push_back(block.ops_size());
  if (!groups.empty() && SimPlantedBug("claim_overlap")) groups.push_back(groups[0]);
  if (SimPlantedBug("claim_cycle"))
    for (auto& g : groups)
      if (g.ops.size() >= 3) {
        g.ops = {g.ops[0], g.ops[2]};
        break;
      }
  return groups;
}

// --- The fused kernel ---

namespace {

enum class Kind { kAdd, kRelu, kScale };

struct Step {
  Kind kind;
  int x = -1, y = -1, out = -1;  // value slots
  tide::ops::Broadcast bc;       // kAdd: how Y pairs with X
  float scale = 1, bias = 0;     // kScale: out = x * scale + bias (bias pre-multiplied if first)
};

struct Fused {
  int32_t device = 0;
  int num_inputs = 0, num_values = 0;
  std::vector<Step> steps;
  std::vector<int> outputs;  // the slot of each output
  tide::Dims dims;           // every output's (X's)
  int64_t numel = 0;
  std::vector<int64_t> input_numel;
  bool wrong = false;  // planted: relu lets negatives through
};

[[noreturn]] void Decline(const std::string& why) {
  ++SimCompileStats().declines;
  TIDE_THROW(TIDE_UNIMPLEMENTED, "sim: the fused kernel declines: ", why);
}

}  // namespace

void* SimCompile(const TideCompileRequest& r) {
  const pb::ProgramDesc p = ParseProgram(std::string(r.program, r.program_len));
  const pb::BlockDesc& block = p.blocks(r.block_idx);
  auto f = std::make_unique<Fused>();
  f->device = r.device;
  f->wrong = SimPlantedBug("fused_wrong");
  std::map<std::string, int> slot;
  std::vector<tide::Dims> dims;
  for (size_t i = 0; i < r.num_inputs; ++i) {
    const TideCompileValue& v = r.inputs[i];
    if (v.dtype != TIDE_FP32) Decline("an input is not float32");
    slot[v.name] = static_cast<int>(i);
    dims.emplace_back(v.dims, v.dims + v.rank);
    int64_t n = 1;
    for (int32_t d = 0; d < v.rank; ++d) n *= v.dims[d];
    f->input_numel.push_back(n);
  }
  f->num_inputs = static_cast<int>(r.num_inputs);
  std::vector<std::string> args;
  auto in = [&](const pb::OpDesc& op, const char* param) {
    Args(op.inputs(), param, &args);
    TIDE_CHECK(args.size() == 1 && slot.count(args[0]), "sim: op '", op.type(), "' input ", param,
               " is neither a group input nor computed in the group");
    return slot[args[0]];
  };
  for (size_t k = 0; k < r.group->num_ops; ++k) {
    const pb::OpDesc& op = block.ops(r.group->ops[k]);
    Step s;
    s.x = in(op, "X");
    if (op.type() == "elementwise_add") {
      s.kind = Kind::kAdd;
      s.y = in(op, "Y");
      s.bc = tide::ops::GetBroadcast("elementwise_add", dims[s.x], dims[s.y],
                                     IntAttr(op, "axis", -1), true);
    } else if (op.type() == "relu") {
      s.kind = Kind::kRelu;
    } else {
      s.kind = Kind::kScale;
      s.scale = static_cast<float>(FloatAttr(op, "scale", 1.0));
      s.bias = static_cast<float>(FloatAttr(op, "bias", 0.0));
      if (!BoolAttr(op, "bias_after_scale", true)) s.bias *= s.scale;  // as the scale kernel
    }
    if (k == 0) f->dims = dims[s.x];
    if (dims[s.x] != f->dims) Decline("the chain's ops have X of different shapes");
    s.out = static_cast<int>(dims.size());
    dims.push_back(f->dims);
    Args(op.outputs(), "Out", &args);
    slot[args.at(0)] = s.out;
    f->steps.push_back(s);
  }
  f->num_values = static_cast<int>(dims.size());
  f->numel = 1;
  for (int64_t d : f->dims) f->numel *= d;
  if (const char* max = std::getenv("TIDE_SIM_FUSE_MAX_ELEMENTS"))
    if (*max && f->numel > std::strtoll(max, nullptr, 10))
      Decline("the group has " + std::to_string(f->numel) + " elements, more than " +
              "TIDE_SIM_FUSE_MAX_ELEMENTS=" + max);
  for (size_t i = 0; i < r.num_outputs; ++i) {
    auto it = slot.find(r.outputs[i].name);
    TIDE_CHECK(it != slot.end() && it->second >= f->num_inputs, "sim: output '", r.outputs[i].name,
               "' is not computed in the group");
    f->outputs.push_back(it->second);
  }
  ++SimCompileStats().compiles;
  return f.release();
}

void SimRunCompiled(void* compiled, SimStream& stream, const std::vector<tide::Tensor>& inputs,
                    std::vector<tide::Tensor>& outputs) {
  const Fused& f = *static_cast<const Fused*>(compiled);
  const tide::Place place("sim", f.device);
  std::vector<const float*> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TIDE_CHECK(inputs[i].numel() == f.input_numel[i], "sim: fused input ", i, " has ",
               inputs[i].numel(), " elements, compiled for ", f.input_numel[i]);
    in.push_back(inputs[i].data<float>());
  }
  std::vector<float*> out;
  for (tide::Tensor& t : outputs) out.push_back(t.mutable_data<float>(f.dims, place));
  ++SimCompileStats().fused_launches;
  // One task: per element, the chain's ops in turn on registers (the same arithmetic, in the same
  // order, as the ops' kernels).
  stream.Enqueue(
      [&f, in, out] {
        std::vector<float> v(static_cast<size_t>(f.num_values));
        for (int64_t i = 0; i < f.numel; ++i) {
          for (int k = 0; k < f.num_inputs; ++k) v[k] = 0;
          for (const Step& s : f.steps) {
            const float x = s.x < f.num_inputs ? in[s.x][i] : v[s.x];
            float r;
            if (s.kind == Kind::kAdd) {
              int64_t j = i;
              if (s.bc.general)
                j = s.bc.index(i);
              else if (!s.bc.same)
                j = (i / s.bc.post) % s.bc.n;
              r = x + (s.y < f.num_inputs ? in[s.y][j] : v[s.y]);
            } else if (s.kind == Kind::kRelu) {
              r = x > 0 ? x : (f.wrong ? x : 0.0f);
            } else {
              r = x * s.scale + s.bias;
            }
            v[s.out] = r;
          }
          for (size_t o = 0; o < out.size(); ++o) out[o][i] = v[f.outputs[o]];
        }
      },
      "sim.fused");
}

void SimReleaseCompiled(void* compiled) {
  ++SimCompileStats().releases;
  delete static_cast<Fused*>(compiled);
}

// --- The program pass ---

std::string SimDropIdentityScale(const std::string& bytes, const std::vector<std::string>& keep) {
  if (SimPlantedBug("pass_garbage")) return "this is not a program";
  pb::ProgramDesc p = ParseProgram(bytes);
  const std::set<std::string> kept(keep.begin(), keep.end());
  bool changed = false;
  std::vector<std::string> args;
  for (int b = 0; b < p.blocks_size(); ++b) {
    pb::BlockDesc* block = p.mutable_blocks(b);
    for (int i = 0; i < block->ops_size(); ++i) {
      const pb::OpDesc& op = block->ops(i);
      if (op.type() != "scale" || FloatAttr(op, "scale", 1.0) != 1.0 ||
          FloatAttr(op, "bias", 0.0) != 0.0 || !Args(op.inputs(), "ScaleTensor", &args).empty() ||
          Args(op.inputs(), "X", &args).size() != 1)
        continue;
      const std::string x = args[0];
      if (Args(op.outputs(), "Out", &args).size() != 1) continue;
      const std::string out = args[0];
      const pb::VarDesc* var = FindVar(p, b, out);
      // Its output must be an ordinary temporary of this block that nothing writes again.
      if (kept.count(out) || !var || var->persistable() || out == x) continue;
      bool written_again = false;
      for (int k = 0; k < p.blocks_size() && !written_again; ++k)
        for (const pb::OpDesc& o : p.blocks(k).ops())
          for (const pb::OpDesc::Var& v : o.outputs())
            for (const std::string& n : v.arguments())
              if (n == out && &o != &op) written_again = true;
      if (written_again) continue;
      for (int k = 0; k < p.blocks_size(); ++k)
        for (pb::OpDesc& o : *p.mutable_blocks(k)->mutable_ops())
          for (pb::OpDesc::Var& v : *o.mutable_inputs())
            for (std::string& n : *v.mutable_arguments())
              if (n == out) n = x;
      block->mutable_ops()->DeleteSubrange(i, 1);
      --i;
      changed = true;
    }
  }
  if (!changed) return "";
  std::string result;
  TIDE_CHECK(p.SerializeToString(&result), "sim: the rewritten program does not serialize");
  return result;
}
