// plan_tables.cc: see plan_tables.h.
#include "core/compiled/plan_tables.h"

#include <cstring>
#include <filesystem>
#include <memory>

#include "core/platform/enforce.h"

namespace tide::core {
namespace {

// A table's `n` entries as a range (its pointer is null when n is 0).
template <typename T>
struct Items {
  Items(const T* items, int32_t count) : b(items), n(items ? count : 0) {}
  const T* begin() const { return b; }
  const T* end() const { return b + n; }
  const T* b;
  int32_t n;
};

template <typename T>
std::vector<T> List(const void* values, int32_t count) {
  const T* v = static_cast<const T*>(values);
  return std::vector<T>(v, v + count);
}

Attribute AttrFromTable(const TideAotAttr& a, const TideAotPlan& t, const TideAotOp& op) {
  const void* v = a.values;
  switch (a.type) {
    case TIDE_ATTR_INT:
      return *static_cast<const int32_t*>(v);
    case TIDE_ATTR_FLOAT:
      return *static_cast<const float*>(v);
    case TIDE_ATTR_STRING:
      return std::string(*static_cast<const char* const*>(v));
    case TIDE_ATTR_INTS:
      return List<int32_t>(v, a.count);
    case TIDE_ATTR_FLOATS:
      return List<float>(v, a.count);
    case TIDE_ATTR_STRINGS: {
      std::vector<std::string> s;
      for (int32_t i = 0; i < a.count; ++i) s.emplace_back(static_cast<const char* const*>(v)[i]);
      return s;
    }
    case TIDE_ATTR_BOOLEAN:
      return *static_cast<const uint8_t*>(v) != 0;
    case TIDE_ATTR_BOOLEANS: {
      std::vector<bool> b;
      for (int32_t i = 0; i < a.count; ++i) b.push_back(static_cast<const uint8_t*>(v)[i] != 0);
      return b;
    }
    case TIDE_ATTR_LONG:
      return *static_cast<const int64_t*>(v);
    case TIDE_ATTR_LONGS:
      return List<int64_t>(v, a.count);
    case TIDE_ATTR_FLOAT64S:
      return List<double>(v, a.count);
    case TIDE_ATTR_FLOAT64:
      return *static_cast<const double*>(v);
    default:
      TIDE_FAIL(TIDE_INVALID_ARGUMENT, "compiled model of '", t.source, "': op '", op.type, "' (#",
                op.index, ") attribute '", a.name, "' has type ", a.type,
                ", which a compiled model cannot hold");
  }
}

VariableNameMap Args(const TideAotArg* args, int32_t n) {
  VariableNameMap m;
  for (int32_t i = 0; i < n; ++i)
    m[args[i].param] = std::vector<std::string>(args[i].names, args[i].names + args[i].num_names);
  return m;
}

std::vector<int64_t> Dims(const int64_t* dims, int32_t rank) {
  return rank > 0 ? std::vector<int64_t>(dims, dims + rank) : std::vector<int64_t>();
}

}  // namespace

FrozenPlan PlanFromTables(const TideAotPlan& t) {
  const std::string source = t.source ? t.source : "?";
  if (t.tables_version != TIDE_AOT_TABLES_VERSION)
    TIDE_FAIL(TIDE_FAILED_PRECONDITION, "compiled model of '", source,
              "' was generated with tables version ", t.tables_version, "; this Tide reads ",
              TIDE_AOT_TABLES_VERSION, ": compile the plan again (tide.aot.compile)");
  if (t.abi_major != TIDE_ABI_MAJOR || t.abi_layout != TIDE_ABI_LAYOUT)
    TIDE_FAIL(TIDE_FAILED_PRECONDITION, "compiled model of '", source,
              "' was frozen for plugin ABI ", t.abi_major, " (layout ", t.abi_layout,
              "); this Tide speaks ", TIDE_ABI_MAJOR, " (layout ", TIDE_ABI_LAYOUT,
              "): freeze and compile the program again");
  FrozenPlan p;
  p.place_kind = t.place_kind;
  p.lower = t.lower;
  p.upper = t.upper;
  for (const TideAotFeed& f : Items(t.feeds, t.num_feeds))
    p.feeds.push_back({f.name, Dims(f.dims, f.rank), static_cast<DataType>(f.dtype), f.lod_level});
  for (int32_t i = 0; i < t.num_fetches; ++i) p.fetches.emplace_back(t.fetches[i]);
  for (const TideAotVar& v : Items(t.vars, t.num_vars)) {
    FrozenVar& fv = p.vars.emplace_back();
    fv.name = v.name;
    fv.type = static_cast<TideVarType>(v.type);
    fv.dtype = static_cast<DataType>(v.dtype);
    fv.layout = static_cast<TideLayout>(v.layout);
    fv.persistable = v.persistable != 0;
    fv.zero_dim = v.zero_dim != 0;
    fv.lod_level = v.lod_level;
    fv.dims = Dims(v.dims, v.rank);
    fv.per_unit = Dims(v.per_unit, v.rank);
    fv.offset = v.offset;
    fv.bytes = v.bytes;
  }
  for (const TideAotOp& op : Items(t.ops, t.num_ops)) {
    FrozenOp& fo = p.ops.emplace_back();
    fo.index = op.index;
    fo.type = op.type;
    fo.inputs = Args(op.inputs, op.num_inputs);
    fo.outputs = Args(op.outputs, op.num_outputs);
    for (const TideAotAttr& a : Items(op.attrs, op.num_attrs))
      fo.attrs.emplace(a.name, AttrFromTable(a, t, op));
    fo.kernel.place_kind = op.place_kind;
    fo.kernel.library = op.library;
    fo.kernel.dtype = static_cast<DataType>(op.dtype);
    fo.kernel.layout = static_cast<TideLayout>(op.layout);
    fo.kernel.data_type = static_cast<DataType>(op.data_type);
    fo.kernel.plugin = op.plugin;
    fo.kernel.plugin_file = op.plugin_file;
    fo.infer_at_run = op.infer_at_run != 0;
    for (int32_t i = 0; i < op.num_transforms; ++i) fo.transforms.emplace_back(op.transforms[i]);
    fo.direct = op.direct_kernel;
  }
  p.arena_bytes = t.arena_bytes;
  p.alignment = t.alignment;
  for (const TideAotParam& tp : Items(t.params, t.num_params)) {
    FrozenParam& fp = p.params.emplace_back();
    fp.name = tp.name;
    fp.dtype = static_cast<DataType>(tp.dtype);
    fp.dims = Dims(tp.dims, tp.rank);
  }
  return p;
}

void ReadCompiledParams(const TideAotPlan& t, const std::string& path, FrozenPlan* plan) {
  std::error_code ec;
  const std::string file = std::filesystem::is_directory(path, ec)
                               ? (std::filesystem::path(path) / "params.bin").string()
                               : path;
  plan->file = ReadFileAligned(file, "parameters file");
  UseCompiledParams(t, plan->file->ptr(), plan->file->size(),
                    StrCat("parameters file '", file, "'"), plan);
}

void UseCompiledParams(const TideAotPlan& t, const void* data, size_t size, const std::string& what,
                       FrozenPlan* plan) {
  const char* bytes = static_cast<const char*>(data);
  uint64_t head[2] = {0, 0};
  if (size >= TIDE_AOT_PARAMS_HEADER_BYTES) std::memcpy(head, bytes + 8, sizeof(head));
  if (!bytes || size < TIDE_AOT_PARAMS_HEADER_BYTES ||
      std::memcmp(bytes, TIDE_AOT_PARAMS_MAGIC, sizeof(TIDE_AOT_PARAMS_MAGIC)) != 0)
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, what,
              " is not a compiled model's parameters (no TIDEPRM header; tide.aot.compile writes "
              "params.bin)");
  if (head[0] != t.params_id)
    TIDE_FAIL(TIDE_FAILED_PRECONDITION, what, " was written by another compile (id ", head[0],
              "; this model.cc, compiled from '", t.source, "', expects ", t.params_id,
              "): use the params.bin written with it");
  if (head[1] != size || size != t.params_bytes)
    TIDE_FAIL(TIDE_INVALID_ARGUMENT, what, " holds ", size, " bytes; its header says ", head[1],
              " and the model expects ", t.params_bytes, " (truncated or corrupted?)");
  TIDE_ENFORCE(reinterpret_cast<uintptr_t>(bytes) % 64 == 0, what, " are not 64-byte aligned (at ",
               static_cast<const void*>(bytes), "): the parameters are read in place");
  if (!plan->file)  // the caller's bytes, which the parameters view (not the core's to free)
    plan->file = std::make_shared<Allocation>(const_cast<char*>(bytes), size, HostPlace(), nullptr);
  for (size_t i = 0; i < plan->params.size(); ++i) {
    const TideAotParam& tp = t.params[i];
    TIDE_ENFORCE(tp.offset + tp.bytes <= size, what, ": parameter '", tp.name, "' ends at byte ",
                 tp.offset + tp.bytes, ", past its end");
    plan->params[i].view = std::string_view(bytes + tp.offset, tp.bytes);
  }
}

}  // namespace tide::core
