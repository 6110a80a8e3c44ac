// paddle_model.cc: PaddlePaddle's saved inference models: files, program checks, parameters.
#include "core/io/paddle_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/framework/tensor_util.h"
#include "core/io/paddle_op_repairs.h"
#include "core/io/paddle_op_versions.h"
#include "core/io/paddle_program_repairs.h"
#include "core/io/pir_program.h"
#include "core/platform/enforce.h"
#include "core/registry/op_checks.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace fs = std::filesystem;

namespace {

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

}  // namespace

bool IsPirProgramFile(const std::string& model) {
  return model.size() > 5 && model.compare(model.size() - 5, 5, ".json") == 0;
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
  RepairLegacyPaddleProgram(&program);
  return program;
}

ProgramDesc ParsePirProgram(const std::string& json, const std::string& file) {
  ProgramDesc program = CheckPaddleProgram(TranslatePirProgram(json, file), file);
  RepairPirProgram(&program);
  return program;
}

ProgramDesc CheckPaddleProgram(proto::ProgramDesc p, const std::string& file) {
  CheckStrings(p, file);
  RepairPaddleOps(&p);
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
