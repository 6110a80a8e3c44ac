// paddle_model.cc: PaddlePaddle's saved inference models: files, program checks, parameters.
#include "core/io/paddle_model.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/framework/tensor_util.h"
#include "core/io/pir_program.h"
#include "core/passes/compile_infer_shape.h"
#include "core/platform/enforce.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace fs = std::filesystem;

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

bool IsUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += n;
  }
  return true;
}

// Paddle writes UTF-8 names and strings; protobuf's proto2 strings do not check it, and a damaged
// byte would otherwise surface later as a decode error far from the file.
void CheckStrings(const proto::ProgramDesc& p, const std::string& file) {
  auto check = [&file](const std::string& s, int block, const char* what) {
    if (!IsUtf8(s))
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, file, ": block ", block, ": ", what,
                " is not valid UTF-8 (corrupt file)");
  };
  for (const auto& b : p.blocks()) {
    for (const auto& v : b.vars()) check(v.name(), b.idx(), "a variable name");
    for (const auto& op : b.ops()) {
      check(op.type(), b.idx(), "an op type");
      for (const auto* side : {&op.inputs(), &op.outputs()})
        for (const auto& var : *side) {
          check(var.parameter(), b.idx(), "an op parameter name");
          for (const auto& a : var.arguments()) check(a, b.idx(), "an op argument");
        }
      for (const auto& a : op.attrs()) {
        check(a.name(), b.idx(), "an attribute name");
        check(a.s(), b.idx(), "a string attribute");
        for (const auto& x : a.strings()) check(x, b.idx(), "a string attribute");
      }
    }
  }
  for (const auto& pair : p.op_version_map().pair())
    check(pair.op_name(), 0, "an op_version_map name");
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) TIDE_FAIL(TIDE_NOT_FOUND, path, ": cannot open the model file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Reads fixed-size fields, refusing a length larger than what the stream has left before
// allocating it (a corrupt size must not become a huge allocation).
class Reader {
 public:
  Reader(std::istream& in, const std::string& what) : in_(in), what_(what) {
    const auto pos = in.tellg();
    in.seekg(0, std::ios::end);
    end_ = in.tellg();
    in.seekg(pos);
  }
  uint64_t Left() { return static_cast<uint64_t>(end_ - in_.tellg()); }
  void Read(void* dst, uint64_t n, const char* field) {
    const uint64_t left = Left();
    if (n > left)
      TIDE_FAIL(TIDE_OUT_OF_RANGE, what_, ": truncated: ", field, " needs ", n,
                " bytes, the file has ", left, " left");
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    TIDE_ENFORCE(in_.good(), what_, ": read error in ", field);
  }
  template <typename T>
  T Get(const char* field) {
    T v;
    Read(&v, sizeof(T), field);
    return v;
  }

 private:
  std::istream& in_;
  std::string what_;
  std::streampos end_;
};

std::string Join(const std::vector<std::string>& items, size_t max_items = 20) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < max_items; ++i) s += (i ? ", " : "") + items[i];
  if (items.size() > max_items) s += ", ... (" + std::to_string(items.size()) + " in all)";
  return s;
}

std::string DimsString(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// Every op type of every block that no loaded plugin registers, with how many ops use it.
void CheckOpsRegistered(const proto::ProgramDesc& p, const std::string& file) {
  std::map<std::string, int> missing;
  for (const auto& b : p.blocks())
    for (const auto& op : b.ops())
      if (!Registry::Global().FindOp(op.type())) ++missing[op.type()];
  if (missing.empty()) return;
  std::vector<std::string> items;
  for (const auto& kv : missing)
    items.push_back(kv.first + " (" + std::to_string(kv.second) +
                    (kv.second == 1 ? " op)" : " ops)"));
  TIDE_FAIL(TIDE_NOT_FOUND, file, ": ", missing.size(),
            " op type(s) of this program are not registered by any loaded plugin: ",
            Join(items, 1000), ". tide.plugins() lists the loaded plugins and their ops");
}

// Paddle records, per op type, the version of its definition the program was written with; an
// op written with a newer definition than Tide implements may mean something else.
void CheckOpVersions(const proto::ProgramDesc& p, const std::string& file) {
  std::set<std::string> used;
  for (const auto& b : p.blocks())
    for (const auto& op : b.ops()) used.insert(op.type());
  std::vector<std::string> newer;
  for (const auto& pair : p.op_version_map().pair()) {
    if (!used.count(pair.op_name())) continue;  // Paddle lists every op it has a version for
    const auto& known = KnownPaddleOpVersions();
    auto it = known.find(pair.op_name());
    const int have = it == known.end() ? 0 : it->second;
    if (pair.op_version().version() > have)
      newer.push_back(pair.op_name() + " (version " + std::to_string(pair.op_version().version()) +
                      ", Tide implements up to " + std::to_string(have) + ")");
  }
  if (!newer.empty())
    TIDE_FAIL(TIDE_UNIMPLEMENTED, file,
              ": the program uses op versions newer than Tide implements: ", Join(newer, 1000),
              ". Their semantics changed in Paddle; Tide refuses rather than "
              "compute something else");
}

struct FeedFetch {
  std::vector<std::string> feeds, fetches;
};

// The feed ops' outputs and the fetch ops' inputs of block 0, in `col` order.
FeedFetch FindFeedFetch(const ProgramDesc& program, const std::string& file) {
  std::map<int, std::string> feeds, fetches;
  for (const OpDesc* op : program.Block(0).AllOps()) {
    const bool feed = op->type() == "feed", fetch = op->type() == "fetch";
    if (!feed && !fetch) continue;
    const auto& args = feed ? op->Output("Out") : op->Input("X");
    TIDE_ENFORCE(args.size() == 1, file, ": a ", op->type(), " op has ", args.size(),
                 " variables, not 1");
    TIDE_ENFORCE(op->HasAttr("col") && std::holds_alternative<int32_t>(op->GetAttr("col")), file,
                 ": the ", op->type(), " op of '", args[0], "' has no int attribute 'col'");
    const int col = std::get<int32_t>(op->GetAttr("col"));
    // Else the run fails later, naming neither the file nor the op.
    TIDE_ENFORCE(program.Block(0).FindVar(args[0]) != nullptr, file, ": the ", op->type(),
                 " op (col ", col, ") ", feed ? "writes" : "reads", " variable '", args[0],
                 "', which the program does not declare (in block 0)");
    auto& m = feed ? feeds : fetches;
    TIDE_ENFORCE(col >= 0 && m.emplace(col, args[0]).second, file, ": ", op->type(), " op of '",
                 args[0], "' has a duplicate or negative col ", col);
  }
  TIDE_ENFORCE(!fetches.empty(), file,
               ": the program has no fetch op: not an inference model "
               "(save it with paddle.static.save_inference_model or paddle.jit.save)");
  FeedFetch out;
  for (auto* m : {&feeds, &fetches}) {
    auto& names = m == &feeds ? out.feeds : out.fetches;
    for (const auto& kv : *m) {
      TIDE_ENFORCE(kv.first == static_cast<int>(names.size()), file, ": ",
                   m == &feeds ? "feed" : "fetch", " op cols skip ", names.size());
      names.push_back(kv.second);
    }
  }
  return out;
}

bool IsParameterVar(const VarDesc& v) {
  return v.persistable() && v.type() != TIDE_VAR_FEED_MINIBATCH &&
         v.type() != TIDE_VAR_FETCH_LIST && v.type() != TIDE_VAR_RAW;
}

// The weights whose quantized levels a dequantize op reads (its X): Paddle's quantization
// (`convert`, onnx_format) stores them as int8 and leaves their variables float32.
std::set<std::string> QuantizedWeights(const ProgramDesc& program) {
  std::set<std::string> names;
  for (const OpDesc* op : program.Block(0).AllOps())
    if (op->type() == "dequantize_linear" || op->type() == "fake_dequantize_max_abs" ||
        op->type() == "fake_channel_wise_dequantize_max_abs")
      for (const std::string& x : op->Input("X")) names.insert(x);
  return names;
}

// Such a weight stored as int8: its levels as the float32 the program declares (exact), as
// Paddle, which loads a tensor in its stored type, computes with them.
void WidenQuantizedWeight(LoDTensor* t, const VarDesc& v, const std::set<std::string>& quantized) {
  if (t->dtype() != TIDE_INT8 || v.dtype() != TIDE_FP32 || !quantized.count(v.name())) return;
  LoDTensor wide;
  wide.Resize(t->dims());
  float* out = static_cast<float*>(wide.mutable_data(HostPlace(), TIDE_FP32));
  const auto* in = t->data<int8_t>();
  for (int64_t i = 0, n = t->numel(); i < n; ++i) out[i] = in[i];
  wide.set_lod(t->lod());
  *t = std::move(wide);
}

// A parameter read from its file must be what its variable declares.
void CheckAgainstVar(const LoDTensor& t, const VarDesc& v, const std::string& what) {
  TIDE_ENFORCE(v.dtype() == TIDE_UNDEFINED || t.dtype() == v.dtype(), what, ": holds ",
               DataTypeName(t.dtype()), ", the program declares ", DataTypeName(v.dtype()));
  const auto dims = t.dims().ToVector();
  const auto& want = v.shape();
  bool ok = v.shape_unknown() || dims.size() == want.size();
  for (size_t i = 0; ok && !want.empty() && i < want.size(); ++i)
    ok = want[i] < 0 || want[i] == dims[i];
  TIDE_ENFORCE(ok, what, ": has dims ", DimsString(dims), ", the program declares ",
               DimsString(want));
}

void Store(LoDTensor* host, Scope* scope, const std::string& name, const Place& place) {
  LoDTensor* dst = scope->Var(name)->GetMutable<LoDTensor>();
  if (place == HostPlace()) {
    *dst = *host;
  } else {
    TensorCopySync(*host, place, dst);
  }
}

// The names `block` (its ops, and the blocks of theirs) reads before it writes them; `written`:
// the names written before it starts.
void CollectOuterReads(const ProgramDesc& program, const BlockDesc& block,
                       std::set<std::string> written, std::set<std::string>* read) {
  for (size_t i = 0; i < block.OpSize(); ++i) {
    const OpDesc* op = block.Op(i);
    for (const auto& n : op->InputArgumentNames())
      if (!written.count(n)) read->insert(n);
    for (const auto& [attr, sub] : op->SubBlocks())
      CollectOuterReads(program, program.Block(sub), written, read);
    for (const auto& n : op->OutputArgumentNames()) written.insert(n);
  }
}

// Paddle 2.x's While (paddle.static.nn.while_loop, the loops of dynamic-to-static) lists every
// variable its body writes among its X too, read or not; Tide's while reads X as what the body
// reads (its layers' While writes that): a tensor in X and Out is loop-carried, its gradient
// carried from each iteration to the one before. A tensor the body only overwrites (a generation
// loop's last logits) would carry the loss's gradient into every iteration and into the value
// before the loop. Its X keeps the tensors the body reads before it writes them (and every tensor
// array, which a body's writes change element by element); inner loops first.
void ListWhileReads(ProgramDesc* program) {
  for (size_t b = program->Size(); b-- > 0;) {
    const BlockDesc& block = program->Block(b);
    for (size_t i = 0; i < block.OpSize(); ++i) {
      OpDesc* op = block.Op(i);
      if (op->type() != "while" || !op->HasAttr("sub_block")) continue;
      const auto* body = std::get_if<BlockIndex>(&op->GetAttr("sub_block"));
      if (!body || body->idx < 0 || static_cast<size_t>(body->idx) >= program->Size()) continue;
      std::set<std::string> read;
      CollectOuterReads(*program, program->Block(body->idx), {}, &read);
      std::vector<std::string> xs;
      for (const auto& x : op->Input("X")) {
        const VarDesc* v = block.FindVarRecursive(x);
        if (read.count(x) || !v || v->type() != TIDE_VAR_LOD_TENSOR) xs.push_back(x);
      }
      op->SetInput("X", std::move(xs));
    }
  }
}

// A legacy Paddle program writes some variables twice in a block with no read in between:
// dynamic-to-static gives two loop variables one name (`h, state = cell(x, state)` of a GRU cell
// whose results are one tensor: two assigns to the name each step). The first write is never read,
// so it takes no gradient; the backward pass would sum both writes' gradients. Such a write goes to
// a fresh variable of its own ("<name>.overwritten_<n>", declared like the name), which nothing
// reads. Only plain tensors that are not persistable, and only writes of ops without blocks (a
// loop's or a branch's results may leave the value before it).
void RenameOverwrittenValues(ProgramDesc* program) {
  int renamed = 0;
  for (size_t b = 0; b < program->Size(); ++b) {
    BlockDesc* block = program->MutableBlock(b);
    std::map<std::string, size_t> unread;  // variable -> the op whose write no op read yet
    std::vector<std::pair<size_t, std::string>> dead;
    for (size_t i = 0; i < block->OpSize(); ++i) {
      const OpDesc* op = block->Op(i);
      const auto subs = op->SubBlocks();
      const bool nested = !subs.empty();
      std::set<std::string> read;
      for (const auto& n : op->InputArgumentNames()) read.insert(n);
      if (nested) {
        for (const auto& n : op->OutputArgumentNames()) read.insert(n);
        for (const auto& [attr, sub] : subs)
          CollectOuterReads(*program, program->Block(sub), {}, &read);
      }
      for (const auto& n : read) unread.erase(n);
      if (nested) continue;
      for (const auto& o : op->OutputArgumentNames()) {
        auto it = unread.find(o);
        if (it != unread.end()) dead.emplace_back(it->second, o);
        const VarDesc* v = block->FindVarRecursive(o);
        if (v && v->type() == TIDE_VAR_LOD_TENSOR && !v->persistable())
          unread[o] = i;
        else
          unread.erase(o);
      }
    }
    for (const auto& [i, name] : dead) {
      const VarDesc* from = block->FindVarRecursive(name);
      std::string fresh;
      do {
        fresh = StrCat(name, ".overwritten_", renamed++);
      } while (block->FindVarRecursive(fresh));
      VarDesc* v = block->Var(fresh);
      v->set_type(from->type());
      v->set_dtype(from->dtype());
      v->CopyShapeFrom(*from);
      v->set_lod_level(from->lod_level());
      v->set_stop_gradient(from->stop_gradient());
      block->Op(i)->RenameOutput(name, fresh);
    }
  }
}

// Paddle 2.5+ declares a 0-D tensor with no dims, which is also how it leaves an output whose
// dims its compile-time inference never set (generate_proposals_v2's RpnRoisNum, and the `scale`
// paddle.jit.save puts before its fetch): read as 0-D, such an output of one image would lose its
// rank ([1] made []). Where Tide's inference of the op gives an output declared 0-D a rank (other
// than [1], which Fluid's ops make for Paddle's 0-D results), it is declared so; in block order,
// so the ops reading it follow.
void RedeclareUninferredRanks(ProgramDesc* program) {
  for (size_t b = 0; b < program->Size(); ++b) {
    BlockDesc* block = program->MutableBlock(b);
    for (size_t i = 0; i < block->OpSize(); ++i) {
      const OpDesc* op = block->Op(i);
      std::vector<std::pair<VarDesc*, VarDesc>> zero_d;  // an output and its declaration
      for (const auto& n : op->OutputArgumentNames()) {
        VarDesc* v = block->FindVarRecursive(n);
        if (v && v->type() == TIDE_VAR_LOD_TENSOR && v->zero_dim() &&
            std::none_of(zero_d.begin(), zero_d.end(), [&](const auto& z) { return z.first == v; }))
          zero_d.emplace_back(v, *v);
      }
      const OpInfo* info = Registry::Global().FindOp(op->type());
      if (zero_d.empty() || !info || !op->SubBlocks().empty()) continue;
      std::vector<std::pair<VarDesc*, VarDesc>> outs;  // every output's declaration, restored
      for (const auto& n : op->OutputArgumentNames())
        if (VarDesc* v = block->FindVarRecursive(n)) outs.emplace_back(v, *v);
      try {
        InferShapeAtCompileTime(*info, *op, block);
      } catch (const Error&) {
      }
      std::vector<std::pair<VarDesc*, std::vector<int64_t>>> ranked;
      for (const auto& [v, before] : zero_d) {
        const auto& shape = v->shape();
        if (!v->zero_dim() && !shape.empty() && !(shape.size() == 1 && shape[0] == 1))
          ranked.emplace_back(v, shape);
      }
      for (auto& [v, before] : outs) *v = before;
      for (auto& [v, shape] : ranked) v->set_shape(shape);
    }
  }
}

}  // namespace

bool IsPirProgramFile(const std::string& model) {
  return model.size() > 5 && model.compare(model.size() - 5, 5, ".json") == 0;
}

const std::map<std::string, int>& KnownPaddleOpVersions() {
  // Each of these versions added an attribute or an input (or fixed leaky_relu's alpha outside
  // [0, 1], and mish's softplus above `threshold`, which Tide computes as Paddle now does): a
  // program that uses what Tide's op lacks is refused by the op's own attribute and input checks.
  static const std::map<std::string, int> known = {{"conv2d", 1},
                                                   {"depthwise_conv2d", 1},
                                                   {"conv3d", 1},
                                                   {"conv2d_transpose", 2},
                                                   {"depthwise_conv2d_transpose", 1},
                                                   // 1: output_padding
                                                   {"conv3d_transpose", 1},
                                                   {"elementwise_add", 1},
                                                   {"elementwise_sub", 1},
                                                   {"elementwise_mul", 1},
                                                   {"elementwise_div", 1},
                                                   {"elementwise_pow", 1},
                                                   {"fill_constant", 2},
                                                   {"clip", 1},
                                                   {"gather", 1},
                                                   {"matmul", 1},
                                                   {"leaky_relu", 1},
                                                   {"softplus", 1},
                                                   {"equal", 1},
                                                   {"not_equal", 1},
                                                   {"less_than", 1},
                                                   {"less_equal", 1},
                                                   {"greater_than", 1},
                                                   {"greater_equal", 1},
                                                   {"cumsum", 1},
                                                   {"momentum", 1},
                                                   {"lookup_table", 1},
                                                   {"lookup_table_v2", 1},
                                                   {"linspace", 1},
                                                   {"argsort", 1},
                                                   {"p_norm", 1},
                                                   {"flip", 1},
                                                   {"roll", 2},
                                                   {"instance_norm", 1},
                                                   {"mish", 1},
                                                   // 1: data_format; 1: axis1 / axis2
                                                   // (were dim1 / dim2)
                                                   {"pixel_shuffle", 1},
                                                   {"trace", 1},
                                                   // 1: mode; 1: align_corners
                                                   {"grid_sampler", 1},
                                                   {"affine_grid", 1},
                                                   // 1: Weight, density (indexops)
                                                   {"histogram", 1},
                                                   // 1-3: steps and the bound lists,
                                                   // decrease_axes, none_axes; 4: the constant
                                                   // in `values` (Scalars)
                                                   {"set_value", 4},
                                                   // 1: RoisNum, MultiLevelRoIsNum; 2: pixel_offset
                                                   {"distribute_fpn_proposals", 2},
                                                   // 1: pixel_offset
                                                   {"generate_proposals_v2", 1},
                                                   // 1: RpnRoisLod removed; 2: RoisNum; 3: aligned
                                                   {"roi_align", 3}};
  return known;
}

PaddleModelFiles FindPaddleModelFiles(const std::string& path, const std::string& model_filename,
                                      const std::string& params_filename) {
  PaddleModelFiles f;
  const fs::path p(path);
  // Paddle 3.x's PIR program (prefix.json) where there is no legacy one (prefix.pdmodel).
  auto from_prefix = [&f](const std::string& prefix) {
    f.model =
        prefix + (IsFile(prefix + ".pdmodel") || !IsFile(prefix + ".json") ? ".pdmodel" : ".json");
    f.params = IsFile(prefix + ".pdiparams") ? prefix + ".pdiparams" : "";
    f.params_dir = fs::path(prefix).parent_path().string();
    if (f.params_dir.empty()) f.params_dir = ".";
    return f;
  };
  if (!model_filename.empty()) {
    f.model = (p / model_filename).string();
    TIDE_ENFORCE(IsFile(f.model), "no Paddle model file ", f.model);
    f.params = params_filename.empty() ? "" : (p / params_filename).string();
    f.params_dir = path;
    TIDE_ENFORCE(f.params.empty() || IsFile(f.params), "no Paddle parameter file ", f.params);
    return f;
  }
  const std::string s = p.string();
  if (s.size() > 8 && s.compare(s.size() - 8, 8, ".pdmodel") == 0 && IsFile(p))
    return from_prefix(s.substr(0, s.size() - 8));
  if (s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0 && IsFile(p) &&
      IsFile(s.substr(0, s.size() - 5) + ".pdiparams"))
    return from_prefix(s.substr(0, s.size() - 5));
  if (IsFile(s + ".pdmodel") || (IsFile(s + ".json") && IsFile(s + ".pdiparams")))
    return from_prefix(s);
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    if (IsFile(p / "__model__")) {
      f.model = (p / "__model__").string();
      const fs::path combined = p / (params_filename.empty() ? "__params__" : params_filename);
      f.params = IsFile(combined) ? combined.string() : "";
      f.params_dir = path;
      return f;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.path().extension() == ".pdmodel") found.push_back(e.path().string());
    std::sort(found.begin(), found.end());
    if (found.size() == 1) return from_prefix(found[0].substr(0, found[0].size() - 8));
    TIDE_ENFORCE(found.empty(), "directory ", path, " holds ", found.size(),
                 " Paddle models: pass the prefix of one (", Join(found), ")");
  }
  TIDE_FAIL(TIDE_NOT_FOUND, "no Paddle inference model at '", path, "': looked for ", s,
            ".pdmodel, ", s, ".json + ", s, ".pdiparams, ", (p / "__model__").string(), " and ",
            (p / "*.pdmodel").string());
}

void ReadPaddleTensor(std::istream& in, LoDTensor* out, const std::string& what) {
  Reader r(in, what);
  const uint32_t lod_version = r.Get<uint32_t>("the LoD version");
  TIDE_ENFORCE(lod_version == 0, what, ": LoDTensor format version ", lod_version,
               " (Tide reads Paddle's version 0): not a Paddle tensor, or corrupt");
  const uint64_t levels = r.Get<uint64_t>("the LoD level count");
  TIDE_ENFORCE(levels <= 16, what, ": ", levels, " LoD levels: corrupt");
  LoD lod(levels);
  for (uint64_t l = 0; l < levels; ++l) {
    const uint64_t bytes = r.Get<uint64_t>("a LoD level's size");
    TIDE_ENFORCE(bytes % sizeof(uint64_t) == 0, what, ": LoD level ", l, " has ", bytes,
                 " bytes, not a whole number of offsets");
    TIDE_ENFORCE(bytes <= r.Left(), what, ": truncated: LoD level ", l, " needs ", bytes,
                 " bytes, the file has ", r.Left(), " left");
    lod[l].resize(bytes / sizeof(uint64_t));
    r.Read(lod[l].data(), bytes, "the LoD offsets");
  }
  const uint32_t tensor_version = r.Get<uint32_t>("the tensor version");
  TIDE_ENFORCE(tensor_version == 0, what, ": tensor format version ", tensor_version,
               " (Tide reads Paddle's version 0): corrupt");
  const int32_t desc_size = r.Get<int32_t>("the TensorDesc size");
  TIDE_ENFORCE(desc_size >= 0 && static_cast<uint64_t>(desc_size) <= r.Left(), what,
               ": TensorDesc size ", desc_size, " is negative or past the end of the file (",
               r.Left(), " bytes left)");
  std::string desc_bytes(static_cast<size_t>(desc_size), '\0');
  r.Read(desc_bytes.data(), desc_bytes.size(), "the TensorDesc");
  proto::VarType::TensorDesc desc;
  TIDE_ENFORCE(desc.ParseFromString(desc_bytes), what, ": its TensorDesc (", desc_size,
               " bytes) does not parse: corrupt");
  const int dt = static_cast<int>(desc.data_type());
  TIDE_ENFORCE(IsValidDataType(dt) && SizeOf(static_cast<DataType>(dt)) > 0, what, ": data type ",
               dt, " is not one Tide holds");
  const auto dtype = static_cast<DataType>(dt);
  std::vector<int64_t> dims(desc.dims().begin(), desc.dims().end());
  TIDE_ENFORCE(dims.size() <= static_cast<size_t>(DDim::kMaxRank), what, ": rank ", dims.size(),
               " is past Tide's ", DDim::kMaxRank);
  uint64_t bytes = SizeOf(dtype);
  for (int64_t d : dims) {
    TIDE_ENFORCE(d >= 0, what, ": negative dim in ", DimsString(dims));
    TIDE_ENFORCE(!__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes), what, ": dims ",
                 DimsString(dims), " overflow");
  }
  TIDE_ENFORCE(bytes <= r.Left(), what, ": truncated: its data (", DataTypeName(dtype), " ",
               DimsString(dims), ") needs ", bytes, " bytes, the file has ", r.Left(), " left");
  out->Resize(DDim(dims));
  void* data = out->mutable_data(HostPlace(), dtype);
  r.Read(data, bytes, "the data");
  if (!lod.empty()) {
    const std::string bad = CheckLoD(lod, dims.empty() ? 0 : dims[0]);
    TIDE_ENFORCE(bad.empty(), what, ": invalid LoD ", LoDToString(lod), ": ", bad);
    out->set_lod(lod);
  }
}

ProgramDesc ParsePaddleProgram(const std::string& bytes, const std::string& file) {
  proto::ProgramDesc p;
  if (!p.ParsePartialFromString(bytes))
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, file, ": not a Paddle ProgramDesc: protobuf cannot parse its ",
              bytes.size(), " bytes (truncated or corrupt)");
  if (!p.IsInitialized())
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, file,
              ": not a complete Paddle ProgramDesc (truncated or "
              "corrupt): missing required fields ",
              p.InitializationErrorString());
  ProgramDesc program = CheckPaddleProgram(std::move(p), file);
  ListWhileReads(&program);
  RenameOverwrittenValues(&program);
  RedeclareUninferredRanks(&program);
  return program;
}

namespace {

// Paddle 3.x's conv2d_transpose InferMeta adds output_padding to its -1 (an unknown size), so a
// Conv2DTranspose(output_padding=1) of an input of dynamic height and width (CycleGAN's
// generator) declares its result [N, C, 0, 0], and the ops after it declare sizes computed from
// that 0 (a reflect pad's 6 x 6, a 7x7 conv's 0 x 0), which Tide's compile-time shape inference of
// a fused op refuses ("the output would be empty"). Such a size is redeclared unknown, and the ops
// reading a redeclared variable have their results' shapes inferred again (in block order, so the
// correction flows through the chain). A conv2d_transpose with an output_size declares it right.
void RedeclareConvTransposeSizes(ProgramDesc* program) {
  std::set<std::string> redone;
  for (size_t b = 0; b < program->Size(); ++b) {
    BlockDesc* block = program->MutableBlock(b);
    for (size_t i = 0; i < block->OpSize(); ++i) {
      OpDesc* op = block->Op(i);
      const bool deconv =
          op->type() == "conv2d_transpose" || op->type() == "depthwise_conv2d_transpose";
      if (deconv && op->Input("Input").size() == 1 && op->Output("Output").size() == 1) {
        auto attr_size = [&](const char* name) -> size_t {
          if (!op->HasAttr(name)) return 0;
          const auto* v = std::get_if<std::vector<int32_t>>(&op->GetAttr(name));
          return v ? v->size() : 0;
        };
        const bool sized = attr_size("output_size") > 0 || !op->Input("OutputSize").empty() ||
                           !op->Input("OutputSizeTensor").empty();
        VarDesc* x = block->FindVarRecursive(op->Input("Input")[0]);
        VarDesc* out = block->FindVarRecursive(op->Output("Output")[0]);
        if (sized || attr_size("output_padding") == 0 || !x || !out || x->shape().size() != 4 ||
            out->shape().size() != 4)
          continue;
        const auto* fmt = op->HasAttr("data_format")
                              ? std::get_if<std::string>(&op->GetAttr("data_format"))
                              : nullptr;
        const int first = fmt && *fmt == "NHWC" ? 1 : 2;
        std::vector<int64_t> dims = out->shape();
        bool changed = false;
        for (int a = first; a < first + 2; ++a)
          if (x->shape()[a] < 0 && dims[a] >= 0) {
            dims[a] = -1;
            changed = true;
          }
        if (changed) {
          out->set_shape(dims);
          redone.insert(out->name());
        }
        continue;
      }
      if (redone.empty()) continue;
      const auto ins = op->InputArgumentNames();
      if (std::none_of(ins.begin(), ins.end(),
                       [&](const std::string& n) { return redone.count(n); }))
        continue;
      const OpInfo* info = Registry::Global().FindOp(op->type());
      if (!info || !info->infer_shape) continue;
      const auto outs = op->OutputArgumentNames();
      try {
        InferShapeAtCompileTime(*info, *op, block);
      } catch (const Error&) {
        // An op whose compile-time inference wants known sizes: its results' sizes unknown
        // (the rank kept), as the run infers them.
        for (const auto& n : outs)
          if (VarDesc* v = block->FindVarRecursive(n); v && !v->shape().empty())
            v->set_shape(std::vector<int64_t>(v->shape().size(), -1));
      }
      redone.insert(outs.begin(), outs.end());
    }
  }
}

}  // namespace

ProgramDesc ParsePirProgram(const std::string& json, const std::string& file) {
  ProgramDesc program = CheckPaddleProgram(TranslatePirProgram(json, file), file);
  RedeclareConvTransposeSizes(&program);
  return program;
}

ProgramDesc CheckPaddleProgram(proto::ProgramDesc p, const std::string& file) {
  CheckStrings(p, file);
  for (auto& b : *p.mutable_blocks())
    for (auto& op : *b.mutable_ops()) {
      const OpInfo* info = Registry::Global().FindOp(op.type());
      BindVarAttrsAsInputs(&op);
      auto* attrs = op.mutable_attrs();
      for (int i = attrs->size() - 1; i >= 0; --i) {
        const auto& a = attrs->Get(i);
        const AttrSpec* spec = info ? info->FindAttr(a.name()) : nullptr;
        const bool declared = spec != nullptr;
        // Paddle 2.x writes some int lists as int64 (reduce_all's dim from Tensor.all(-1)):
        // the op's ints where every value fits.
        if (spec && spec->type == TIDE_ATTR_INTS && a.type() == proto::LONGS &&
            std::all_of(a.longs().begin(), a.longs().end(), [](int64_t v) {
              return v >= std::numeric_limits<int32_t>::min() &&
                     v <= std::numeric_limits<int32_t>::max();
            })) {
          auto* m = attrs->Mutable(i);
          std::vector<int64_t> values(m->longs().begin(), m->longs().end());
          m->clear_longs();
          m->set_type(proto::INTS);
          for (int64_t v : values) m->add_ints(static_cast<int32_t>(v));
        }
        if (PaddleOnlyFrameworkAttrs().count(a.name()) ||
            ((IsNeutralPrecisionHint(a) || IsQuantAnnotation(a.name())) && !declared))
          attrs->DeleteSubrange(i, 1);
      }
      // A slot binding no variable that the op does not declare: Paddle 3.x writes its newer
      // dispensable inputs so (scale's empty BiasTensor in a legacy program); it binds nothing.
      auto* inputs = op.mutable_inputs();
      for (int i = inputs->size() - 1; i >= 0; --i) {
        const auto& in = inputs->Get(i);
        if (info && in.arguments_size() == 0 && !info->FindInput(in.parameter()))
          inputs->DeleteSubrange(i, 1);
      }
    }
  std::optional<ProgramDesc> program;
  try {
    program.emplace(p);
  } catch (const Error& e) {
    TIDE_FAIL(e.code(), file, ": invalid program: ", e.what());
  }
  CheckOpsRegistered(p, file);
  CheckOpVersions(p, file);
  // Attribute defaults filled, as in a program the layers build: a pass, a rewrite or a
  // compile-time shape inference reads them (a PIR program writes only some: reduce_all).
  for (size_t b = 0; b < program->Size(); ++b)
    for (size_t i = 0; i < program->Block(b).OpSize(); ++i) {
      OpDesc* op = program->MutableBlock(b)->Op(i);
      try {
        CheckAndFillAttrs(Registry::Global().GetOp(op->type()), op->mutable_attrs());
      } catch (const Error& e) {
        TIDE_FAIL(e.code(), file, ": invalid program: op '", op->type(), "' (block ", b, ", #", i,
                  "): ", e.what());
      }
    }
  return std::move(*program);
}

PaddleInferenceModel LoadPaddleInferenceModel(const std::string& path, Scope* scope,
                                              const Place& place, const std::string& model_filename,
                                              const std::string& params_filename) {
  TIDE_ENFORCE(scope != nullptr, "LoadPaddleInferenceModel: no scope");
  PaddleModelFiles files = FindPaddleModelFiles(path, model_filename, params_filename);
  ProgramDesc program = IsPirProgramFile(files.model)
                            ? ParsePirProgram(ReadWholeFile(files.model), files.model)
                            : ParsePaddleProgram(ReadWholeFile(files.model), files.model);
  FeedFetch ff = FindFeedFetch(program, files.model);

  // Paddle saves the persistable variables sorted by name (save_combine's order).
  std::map<std::string, const VarDesc*> params;
  for (const VarDesc* v : program.Block(0).AllVars())
    if (IsParameterVar(*v)) params.emplace(v->name(), v);
  std::vector<std::pair<std::string, LoDTensor>> loaded;
  loaded.reserve(params.size());
  const std::set<std::string> quantized = QuantizedWeights(program);
  if (!files.params.empty()) {
    std::ifstream in(files.params, std::ios::binary);
    TIDE_ENFORCE(in.good(), files.params, ": cannot open the parameter file");
    size_t i = 0;
    for (const auto& kv : params) {
      const std::string what = StrCat(files.params, ": parameter '", kv.first, "' (", ++i, " of ",
                                      params.size(), ", in name order)");
      LoDTensor t;
      ReadPaddleTensor(in, &t, what);
      WidenQuantizedWeight(&t, *kv.second, quantized);
      CheckAgainstVar(t, *kv.second, what);
      loaded.emplace_back(kv.first, std::move(t));
    }
    const auto pos = in.tellg();
    in.seekg(0, std::ios::end);
    const auto left = static_cast<int64_t>(in.tellg() - pos);
    TIDE_ENFORCE(left == 0, files.params, ": ", left, " bytes are left after the last of its ",
                 params.size(),
                 " parameters: the file does not belong to this program, or is corrupt");
  } else {
    std::vector<std::string> missing;
    for (const auto& kv : params)
      if (!IsFile(fs::path(files.params_dir) / kv.first)) missing.push_back(kv.first);
    TIDE_ENFORCE(missing.empty(), files.model,
                 ": no combined parameter file (.pdiparams, "
                 "__params__) and ",
                 missing.size(), " of ", params.size(), " parameters have no file of their own in ",
                 files.params_dir, ": ", Join(missing));
    for (const auto& kv : params) {
      const std::string file = (fs::path(files.params_dir) / kv.first).string();
      std::ifstream in(file, std::ios::binary);
      TIDE_ENFORCE(in.good(), file, ": cannot open the parameter file");
      const std::string what = StrCat(file, ": parameter '", kv.first, "'");
      LoDTensor t;
      ReadPaddleTensor(in, &t, what);
      WidenQuantizedWeight(&t, *kv.second, quantized);
      CheckAgainstVar(t, *kv.second, what);
      TIDE_ENFORCE(in.peek() == std::char_traits<char>::eof(), what,
                   ": bytes left after the tensor: not a file written by Paddle's save op");
      loaded.emplace_back(kv.first, std::move(t));
    }
  }
  for (auto& kv : loaded) Store(&kv.second, scope, kv.first, place);

  PaddleInferenceModel m{std::move(program), std::move(ff.feeds), std::move(ff.fetches), {}, files};
  for (const auto& kv : params) m.param_names.push_back(kv.first);
  return m;
}

}  // namespace tide::core
