// source_writer.cc: see source_writer.h. The tables are named by what they hold and the op or
// variable's position (kOp12Attrs, kVar3Dims), so a reader of model.cc can follow one op.
#include "core/compiled/source_writer.h"

#include <tide/compiled_model.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <tide/kernels/registry.hpp>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/platform/enforce.h"

namespace tide::core {
namespace {

// A C string literal holding `s` exactly (escaped bytes as octal, which never runs on).
std::string Quoted(const std::string& s, const std::string& what) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == 0)
      TIDE_FAIL(TIDE_UNIMPLEMENTED, what, " holds a NUL byte, which a compiled model's tables ",
                "(C strings) cannot hold");
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f || c == '?') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Int(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return std::to_string(v) + (v > INT32_MAX || v < INT32_MIN ? "LL" : "");
}

// Floating-point literals that read back to the same bits (hexadecimal; inf and NaN by name).
template <typename T>
std::string Real(T v) {
  const char* suffix = std::is_same_v<T, float> ? "f" : "";
  const char* type = std::is_same_v<T, float> ? "float" : "double";
  if (std::isnan(v))
    return StrCat(std::signbit(v) ? "-" : "", "std::numeric_limits<", type, ">::quiet_NaN()");
  if (std::isinf(v)) return StrCat(v < 0 ? "-" : "", "std::numeric_limits<", type, ">::infinity()");
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", static_cast<double>(v));
  return buf + std::string(suffix);
}

// The plugin ABI's enumerators by name in the tables, so that model.cc reads as the header does
// (a value the list lacks as its number).
#define TIDE_NAMED(e) \
  { e, #e }
std::string Named(int v, std::initializer_list<std::pair<int, const char*>> names) {
  for (const auto& [value, name] : names)
    if (value == v) return name;
  return std::to_string(v);
}
std::string DTypeName(int v) {
  return Named(v, {TIDE_NAMED(TIDE_UNDEFINED), TIDE_NAMED(TIDE_BOOL), TIDE_NAMED(TIDE_INT16),
                   TIDE_NAMED(TIDE_INT32), TIDE_NAMED(TIDE_INT64), TIDE_NAMED(TIDE_FP16),
                   TIDE_NAMED(TIDE_FP32), TIDE_NAMED(TIDE_FP64), TIDE_NAMED(TIDE_UINT8),
                   TIDE_NAMED(TIDE_INT8), TIDE_NAMED(TIDE_BF16), TIDE_NAMED(TIDE_COMPLEX64),
                   TIDE_NAMED(TIDE_COMPLEX128)});
}
std::string LayoutEnum(int v) {
  return Named(v, {TIDE_NAMED(TIDE_LAYOUT_ANY), TIDE_NAMED(TIDE_LAYOUT_NCHW),
                   TIDE_NAMED(TIDE_LAYOUT_NHWC), TIDE_NAMED(TIDE_LAYOUT_OPAQUE)});
}
std::string VarTypeEnum(int v) {
  return Named(v, {TIDE_NAMED(TIDE_VAR_LOD_TENSOR), TIDE_NAMED(TIDE_VAR_SELECTED_ROWS),
                   TIDE_NAMED(TIDE_VAR_LOD_TENSOR_ARRAY), TIDE_NAMED(TIDE_VAR_RAW)});
}
std::string AttrTypeEnum(int v) {
  return Named(
      v,
      {TIDE_NAMED(TIDE_ATTR_INT), TIDE_NAMED(TIDE_ATTR_FLOAT), TIDE_NAMED(TIDE_ATTR_STRING),
       TIDE_NAMED(TIDE_ATTR_INTS), TIDE_NAMED(TIDE_ATTR_FLOATS), TIDE_NAMED(TIDE_ATTR_STRINGS),
       TIDE_NAMED(TIDE_ATTR_BOOLEAN), TIDE_NAMED(TIDE_ATTR_BOOLEANS), TIDE_NAMED(TIDE_ATTR_LONG),
       TIDE_NAMED(TIDE_ATTR_LONGS), TIDE_NAMED(TIDE_ATTR_FLOAT64S), TIDE_NAMED(TIDE_ATTR_FLOAT64)});
}
#undef TIDE_NAMED

template <typename T, typename F>
std::string Joined(const std::vector<T>& v, F f) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + f(v[i]);
  return out;
}

class Writer {
 public:
  // A named constant array of `type` holding `items` ("nullptr" when empty: C++ has no empty
  // arrays), as an expression to use in a table.
  std::string Array(const std::string& type, const std::string& name, const std::string& items,
                    size_t count) {
    if (count == 0) return "nullptr";
    out_ << "const " << type << " " << name << "[] = {" << items << "};\n";
    return name;
  }
  std::string Dims(const std::string& name, const std::vector<int64_t>& d) {
    return Array("int64_t", name, Joined(d, Int), d.size());
  }
  std::string Names(const std::string& name, const std::vector<std::string>& v,
                    const std::string& what) {
    return Array("char* const", name,
                 Joined(v, [&](const std::string& s) { return Quoted(s, what); }), v.size());
  }
  std::string Args(const std::string& name, const VariableNameMap& m, const std::string& what) {
    std::vector<std::string> items;
    size_t i = 0;
    for (const auto& [param, names] : m) {
      const std::string list = Names(StrCat(name, i++), names, what);
      items.push_back(StrCat("{", Quoted(param, what), ", ", names.size(), ", ", list, "}"));
    }
    return Array("TideAotArg", name, Joined(items, [](const std::string& s) { return s; }),
                 items.size());
  }

  std::string Attr(const std::string& name, const std::string& attr, const Attribute& a,
                   const std::string& what) {
    const std::string w = StrCat(what, " attribute '", attr, "'");
    auto ints = [](auto v) { return Int(v); };
    auto reals = [](auto v) { return Real(v); };
    auto quoted = [&](const std::string& s) { return Quoted(s, w); };
    std::string values;
    size_t count = 1;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int32_t>) {
            values = Array("int32_t", name, Int(v), 1);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            values = Array("int64_t", name, Int(v), 1);
          } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            values = Array(std::is_same_v<T, float> ? "float" : "double", name, Real(v), 1);
          } else if constexpr (std::is_same_v<T, bool>) {
            values = Array("uint8_t", name, v ? "1" : "0", 1);
          } else if constexpr (std::is_same_v<T, std::string>) {
            values = Array("char* const", name, quoted(v), 1);
          } else if constexpr (std::is_same_v<T, std::vector<int32_t>>) {
            count = v.size();
            values = Array("int32_t", name, Joined(v, ints), count);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            count = v.size();
            values = Array("int64_t", name, Joined(v, ints), count);
          } else if constexpr (std::is_same_v<T, std::vector<float>>) {
            count = v.size();
            values = Array("float", name, Joined(v, reals), count);
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            count = v.size();
            values = Array("double", name, Joined(v, reals), count);
          } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
            count = v.size();
            std::string items;
            for (size_t i = 0; i < v.size(); ++i)
              items += (i ? ", " : "") + std::string(v[i] ? "1" : "0");
            values = Array("uint8_t", name, items, count);
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            count = v.size();
            values = Array("char* const", name, Joined(v, quoted), count);
          } else {
            TIDE_FAIL(TIDE_UNIMPLEMENTED, w,
                      " names a sub-block, which a compiled model cannot run");
          }
        },
        a);
    return StrCat("{", Quoted(attr, w), ", ", AttrTypeEnum(AttrTypeOf(a)), ", ", count, ", ",
                  values, "}");
  }

  std::ostringstream& out() { return out_; }

 private:
  std::ostringstream out_;
};

std::string Str(const std::string& s, const std::string& what) { return Quoted(s, what); }

// `name` prefixes the C API's functions (tide_<name>_create, ...) and names the files: a C
// identifier.
void CheckModelName(const std::string& name) {
  bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (unsigned char c : name) ok = ok && (std::isalnum(c) || c == '_') && c < 0x80;
  if (!ok)
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, "compiled model name '", name,
              "' is not a C identifier (letters, digits and '_', not starting with a digit): it "
              "prefixes the model's C functions (tide_<name>_create, ...)");
}

// The C API of <name>.h over the core's tide_aot_model_*. With embedded parameters, create
// without a params path uses the bytes <name>_params.S puts into the library.
std::string Wrappers(const std::string& name, bool embed_params, bool direct_kernels) {
  const std::string p = "tide_" + name + "_";
  std::ostringstream o;
  o << "extern \"C\" {\n\n";
  if (embed_params)
    o << "// params.bin, in the library (" << name << "_params.S).\n"
      << "extern const char " << p << "params_begin[];\n"
      << "extern const char " << p << "params_end[];\n\n";
  o << "const TideAotPlan* " << p << "plan(void) { return &kPlan; }\n\n"
    << "TideModel* " << p << "create(const char* params_path, const char* plugin_dir) {\n";
  if (direct_kernels) o << "  tide::kernels::UseHost(tide_aot_host_api());\n";
  if (embed_params)
    o << "  if (!params_path)\n"
      << "    return reinterpret_cast<TideModel*>(tide_aot_model_create_from_memory(\n"
      << "        &kPlan, " << p << "params_begin,\n"
      << "        static_cast<size_t>(" << p << "params_end - " << p
      << "params_begin), plugin_dir));\n";
  o << "  return reinterpret_cast<TideModel*>(tide_aot_model_create(&kPlan, params_path, "
       "plugin_dir));\n}\n\n"
    << "int32_t " << p
    << "run(TideModel* model, const TideModelTensor* inputs, size_t num_inputs,\n"
    << "    TideModelTensor* outputs, size_t num_outputs) {\n"
    << "  return tide_aot_model_run(reinterpret_cast<TideAotModel*>(model), inputs, num_inputs,\n"
    << "                            outputs, num_outputs);\n}\n\n"
    << "void " << p << "destroy(TideModel* model) {\n"
    << "  tide_aot_model_destroy(reinterpret_cast<TideAotModel*>(model));\n}\n\n"
    << "const char* " << p << "last_error(void) { return tide_aot_last_error(); }\n\n"
    << "int32_t " << p << "set_capture(TideModel* model, int32_t on) {\n"
    << "  return tide_aot_model_set_capture(reinterpret_cast<TideAotModel*>(model), on);\n}\n\n"
    << "const char* " << p << "capture_note(TideModel* model, uint64_t* replays) {\n"
    << "  return tide_aot_model_capture_note(reinterpret_cast<TideAotModel*>(model), replays);\n"
    << "}\n\n"
    << "}  // extern \"C\"\n";
  return o.str();
}

// params.bin as read-only data of the model's library: the assembler includes the file
// (TIDE_PARAMS_FILE, its path, comes from CMakeLists.txt), 64-byte aligned as the plan wants.
std::string EmbeddedParams(const std::string& name) {
  const std::string p = "tide_" + name + "_";
  return StrCat("/* ", name,
                "_params.S: params.bin inside the model's library (tide.aot.compile(..., "
                "embed_params=True)). */\n",
                "  .section .rodata\n  .balign 64\n  .globl ", p, "params_begin\n  .hidden ", p,
                "params_begin\n", p, "params_begin:\n  .incbin TIDE_PARAMS_FILE\n  .globl ", p,
                "params_end\n  .hidden ", p, "params_end\n", p, "params_end:\n",
                "  .section .note.GNU-stack,\"\",@progbits\n");
}

// The header-only kernel model.cc calls for `op` instead of resolving its key (nullptr: none):
// the plan's CPU place, the table's plain CPU kernel of that data type from the same op pack, and
// nothing the frozen run does around the kernel (transforms, widened data, shapes inferred at
// run time).
const tide::kernels::DirectKernel* DirectKernelOf(const FrozenPlan& plan, const FrozenOp& op) {
  const FrozenKernel& k = op.kernel;
  if (plan.place_kind != "cpu" || k.place_kind != "cpu" || k.library != "plain" ||
      k.layout != TIDE_LAYOUT_ANY || k.data_type != k.dtype || op.infer_at_run ||
      !op.transforms.empty())
    return nullptr;
  const tide::kernels::DirectKernel* d = tide::kernels::FindDirectKernel(op.type.c_str(), k.dtype);
  return d && k.plugin == d->plugin ? d : nullptr;
}

// The C++ expression of `d`'s function for `dtype`, as the core calls a kernel.
std::string DirectCall(const tide::kernels::DirectKernel& d, DataType dtype) {
  std::string fn = d.function;
  const std::string t = tide::kernels::CTypeOf(dtype);
  for (size_t at; (at = fn.find("{T}")) != std::string::npos;) fn.replace(at, 3, t);
  return StrCat("&tide::kernels::Direct<&", fn, ">");
}

}  // namespace

std::vector<bool> CalledDirectly(const FrozenPlan& plan) {
  std::vector<bool> direct;
  for (const FrozenOp& op : plan.ops) direct.push_back(DirectKernelOf(plan, op) != nullptr);
  return direct;
}

void WriteCompiledSource(const FrozenPlan& plan, const std::string& source,
                         const std::vector<PluginRef>& plugins, const std::string& dir,
                         const std::string& name, bool embed_params) {
  namespace fs = std::filesystem;
  CheckModelName(name);
  Writer w;
  std::ostringstream& o = w.out();
  o << "// " << name << ".cc: generated by tide.aot.compile from the frozen plan " << source
    << "; do not edit.\n"
    << "// The plan as constant tables (tide/compiled_model.h) and " << name
    << ".h's C API over them.\n"
    << "#include \"" << name << ".h\"\n\n"
    << "#include <cstdint>\n#include <limits>\n#include <tide/compiled_model.h>\n";
  // The kernels called directly: their headers (each once, in table order).
  std::vector<const tide::kernels::DirectKernel*> direct;
  uint32_t needs = 0;
  for (const FrozenOp& op : plan.ops) {
    direct.push_back(DirectKernelOf(plan, op));
    if (direct.back()) needs |= direct.back()->needs;
  }
  if (std::any_of(direct.begin(), direct.end(), [](const auto* d) { return d != nullptr; })) {
    o << "\n// Kernels called directly: the SDK's header-only plain CPU kernels "
         "(tide/kernels/registry.hpp).\n";
#ifdef TIDE_KERNELS_GEMM_DEFINE
    // tide/gemm.hpp built as the op packs build it: the definition they compile with
    // (plugins/CMakeLists.txt names it; the core knows no GEMM library).
    if (needs & tide::kernels::kNeedsGemm) o << "#define " << TIDE_KERNELS_GEMM_DEFINE << " 1\n";
#else
    (void)needs;  // the packs build tide/gemm.hpp as it is: nothing to define
#endif
    o << "#include <tide/kernels/direct.hpp>\n";
    std::set<std::string> headers;
    for (const tide::kernels::DirectKernel& k : tide::kernels::kDirectKernels)
      if (std::find(direct.begin(), direct.end(), &k) != direct.end() &&
          headers.insert(k.header).second)
        o << "#include <" << k.header << ">\n";
  }
  o << "\nnamespace {\n\n";

  // Parameters: their bytes' places in params.bin.
  std::string params_bin(TIDE_AOT_PARAMS_HEADER_BYTES, '\0');
  std::vector<std::string> params;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const FrozenParam& p = plan.params[i];
    const std::string what = StrCat("parameter '", p.name, "'");
    if (!p.lod.empty())
      TIDE_FAIL(TIDE_UNIMPLEMENTED, what, " has LoD, which a compiled model does not store");
    const std::string_view bytes = p.data();
    const uint64_t offset = params_bin.size();
    params_bin.append(bytes);
    params_bin.append(
        (kFrozenParamAlignment - params_bin.size() % kFrozenParamAlignment) % kFrozenParamAlignment,
        '\0');
    const std::string dims = w.Dims(StrCat("kParam", i, "Dims"), p.dims);
    params.push_back(StrCat("{", Str(p.name, what), ", ", DTypeName(p.dtype), ", ", p.dims.size(),
                            ", ", dims, ", ", offset, "u, ", bytes.size(), "u}"));
  }
  std::vector<std::string> feeds;
  for (size_t i = 0; i < plan.feeds.size(); ++i) {
    const FrozenFeed& f = plan.feeds[i];
    const std::string what = StrCat("feed '", f.name, "'");
    const std::string dims = w.Dims(StrCat("kFeed", i, "Dims"), f.dims);
    feeds.push_back(StrCat("{", Str(f.name, what), ", ", f.dims.size(), ", ", dims, ", ",
                           DTypeName(f.dtype), ", ", f.lod_level, "}"));
  }
  std::vector<std::string> vars;
  for (size_t i = 0; i < plan.vars.size(); ++i) {
    const FrozenVar& v = plan.vars[i];
    const std::string what = StrCat("variable '", v.name, "'");
    TIDE_ENFORCE(v.dims.size() == v.per_unit.size(), what,
                 ": dims and their growth differ in rank");
    const std::string dims = w.Dims(StrCat("kVar", i, "Dims"), v.dims);
    const std::string per_unit = w.Dims(StrCat("kVar", i, "PerUnit"), v.per_unit);
    vars.push_back(StrCat("{", Str(v.name, what), ", ", VarTypeEnum(v.type), ", ",
                          DTypeName(v.dtype), ", ", LayoutEnum(v.layout), ", ", int(v.persistable),
                          ", ", int(v.zero_dim), ", ", v.lod_level, ", ", v.dims.size(), ", ", dims,
                          ", ", per_unit, ", ", Int(v.offset), ", ", v.bytes, "u}"));
  }
  std::vector<std::string> ops;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const FrozenOp& op = plan.ops[i];
    const std::string what = StrCat("op '", op.type, "' (#", op.index, ")");
    o << "\n// #" << i << ": " << op.type << "\n";
    const std::string in = w.Args(StrCat("kOp", i, "In"), op.inputs, what);
    const std::string out = w.Args(StrCat("kOp", i, "Out"), op.outputs, what);
    std::vector<std::string> attrs;
    size_t a = 0;
    for (const auto& [name, value] : op.attrs)
      attrs.push_back(w.Attr(StrCat("kOp", i, "Attr", a++), name, value, what));
    const std::string attr_table =
        w.Array("TideAotAttr", StrCat("kOp", i, "Attrs"),
                Joined(attrs, [](const std::string& s) { return s; }), attrs.size());
    const std::string transforms = w.Names(StrCat("kOp", i, "Transforms"), op.transforms, what);
    const FrozenKernel& k = op.kernel;
    ops.push_back(StrCat(
        "{", op.index, "u, ", Str(op.type, what), ", ", op.inputs.size(), ", ", op.outputs.size(),
        ", ", op.attrs.size(), ", ", in, ", ", out, ", ", attr_table, ", ", Str(k.place_kind, what),
        ", ", Str(k.library, what), ", ", DTypeName(k.dtype), ", ", LayoutEnum(k.layout), ", ",
        DTypeName(k.data_type), ", ", Str(k.plugin, what), ", ", Str(k.plugin_file, what), ", ",
        int(op.infer_at_run), ", ", op.transforms.size(), ", ", transforms, ", ",
        direct[i] ? DirectCall(*direct[i], k.dtype) : "nullptr", "}"));
  }
  o << "\n";
  std::vector<std::string> plugin_items;
  for (const PluginRef& p : plugins)
    plugin_items.push_back(
        StrCat("{", Str(p.name, "plugin name"), ", ", Str(p.file, "plugin file"), "}"));
  auto rows = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& r : v) s += "\n    " + r + ",";
    return s + "\n";
  };
  const std::string feed_table = w.Array("TideAotFeed", "kFeeds", rows(feeds), feeds.size());
  const std::string fetch_table = w.Names("kFetches", plan.fetches, "fetch target");
  const std::string var_table = w.Array("TideAotVar", "kVars", rows(vars), vars.size());
  const std::string op_table = w.Array("TideAotOp", "kOps", rows(ops), ops.size());
  const std::string param_table = w.Array("TideAotParam", "kParams", rows(params), params.size());
  const std::string plugin_table =
      w.Array("TideAotPlugin", "kPlugins", rows(plugin_items), plugin_items.size());
  // The id ties params.bin to this model.cc: a hash of both (the same plan compiled twice gives
  // the same files).
  const std::string tables = o.str();
  const uint64_t params_id =
      Fnv1a(params_bin.data(), params_bin.size()) ^ (Fnv1a(tables.data(), tables.size()) * 31);
  const uint64_t params_size = params_bin.size();
  std::memcpy(params_bin.data(), TIDE_AOT_PARAMS_MAGIC, sizeof(TIDE_AOT_PARAMS_MAGIC));
  std::memcpy(params_bin.data() + 8, &params_id, 8);
  std::memcpy(params_bin.data() + 16, &params_size, 8);

  o << "\nconst TideAotPlan kPlan = {\n"
    << "    " << TIDE_AOT_TABLES_VERSION << ", " << TIDE_ABI_MAJOR << ", " << TIDE_ABI_LAYOUT
    << ",\n"
    << "    " << Str(source, "the plan's path") << ",\n"
    << "    " << Str(plan.place_kind, "place kind") << ", " << Int(plan.lower) << ", "
    << Int(plan.upper) << ",\n"
    << "    " << feeds.size() << ", " << plan.fetches.size() << ", " << vars.size() << ", "
    << ops.size() << ", " << params.size() << ", " << plugin_items.size() << ",\n"
    << "    " << feed_table << ", " << fetch_table << ", " << var_table << ", " << op_table << ", "
    << param_table << ", " << plugin_table << ",\n"
    << "    " << plan.arena_bytes << "u, " << plan.alignment << "u,\n"
    << "    " << params_size << "u, " << params_id << "u,\n};\n\n"
    << "}  // namespace\n\n"
    << Wrappers(name, embed_params, std::any_of(direct.begin(), direct.end(), [](const auto* d) {
                  return d != nullptr;
                }));

  auto write = [&](const std::string& name, const std::string& bytes) {
    const std::string path = (fs::path(dir) / name).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) TIDE_FAIL(TIDE_UNAVAILABLE, "cannot write '", path, "'");
  };
  write("params.bin", params_bin);
  write(name + ".cc", o.str());
  if (embed_params) write(name + "_params.S", EmbeddedParams(name));
}

void CompileFrozenPlan(const std::string& plan_path, const std::string& dir,
                       const std::string& name, bool embed_params) {
  FrozenPlan plan = ReadFrozenPlan(plan_path);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) TIDE_FAIL(TIDE_UNAVAILABLE, "cannot make the directory '", dir, "': ", ec.message());
  WriteCompiledSource(plan, plan_path, PluginsForPlan(plan, CalledDirectly(plan)), dir, name,
                      embed_params);
}

}  // namespace tide::core
