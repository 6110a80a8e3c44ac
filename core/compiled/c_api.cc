// c_api.cc: tide/compiled_model.h, the C API a compiled model's generated code calls: the core
// started with the plan's plugins only, the plan made from the tables (plan_tables.h) and run by
// FrozenModel. No exception crosses: each entry catches and leaves the message for
// tide_aot_last_error.
#include <tide/compiled_model.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/aot/frozen_model.h"
#include "core/compiled/plan_tables.h"
#include "core/host/host_api.h"
#include "core/host/initialize.h"
#include "core/host/loader.h"
#include "core/platform/enforce.h"

struct TideAotModel {
  std::unique_ptr<tide::core::FrozenModel> model;
  std::vector<tide::core::LoDTensor> outputs;  // the last run's, which the caller's views show
  std::vector<std::vector<int64_t>> output_dims;
  std::vector<std::vector<uint64_t>> output_lod;
  std::string capture_note;  // tide_aot_model_capture_note's answer
};

namespace tide::core {
namespace {

thread_local std::string g_last_error;

// Runs `f`; on an exception keeps its message and returns its code (TIDE_INTERNAL for one that
// is not Tide's).
template <typename F>
int32_t Guarded(F&& f) {
  g_last_error.clear();
  try {
    f();
    return TIDE_OK;
  } catch (const Error& e) {
    g_last_error = e.what();
    return e.code();
  } catch (const std::exception& e) {
    g_last_error = e.what();
    return TIDE_INTERNAL;
  } catch (...) {
    g_last_error = "an unknown C++ exception";
    return TIDE_INTERNAL;
  }
}

// The names of the plugins loaded in this process.
std::set<std::string> LoadedPluginNames() {
  std::set<std::string> names;
  for (const PluginRecord& r : PluginManager::Global().Records())
    if (r.loaded) names.insert(r.name);
  return names;
}

// The file of each plan plugin not loaded yet: the first of its name on `dirs` (a directory, or
// the file itself).
std::vector<std::pair<const TideAotPlugin*, std::string>> FindPlugins(
    const TideAotPlan& t, const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  const std::set<std::string> loaded = LoadedPluginNames();
  std::vector<std::pair<const TideAotPlugin*, std::string>> files;
  for (int32_t i = 0; i < t.num_plugins; ++i) {
    const TideAotPlugin& p = t.plugins[i];
    if (loaded.count(p.name)) continue;  // the process loaded it already (Python's import tide)
    std::string found;
    for (const std::string& d : dirs) {
      std::error_code ec;
      const fs::path entry(d);
      const fs::path candidate = fs::is_directory(entry, ec) ? entry / p.file : entry;
      if (candidate.filename() == p.file && fs::exists(candidate, ec)) {
        found = candidate.string();
        break;
      }
    }
    if (found.empty()) {
      std::string list;
      for (const std::string& d : dirs) list += (list.empty() ? "" : ":") + d;
      TIDE_FAIL(TIDE_NOT_FOUND, "compiled model of '", t.source, "' needs plugin '", p.name, "' (",
                p.file, "), which is not in the plugin directories (", list,
                "): pass its directory to tide_model_create, or set TIDE_PLUGIN_PATH");
    }
    files.emplace_back(&p, found);
  }
  return files;
}

// Starts the core with the plan's plugins; throws naming one that did not load and why.
void StartWithPlugins(const TideAotPlan& t, const char* plugin_dir) {
  const std::vector<std::string> dirs = plugin_dir && *plugin_dir
                                            ? SplitPluginPath(plugin_dir)
                                            : PluginManager::Global().SearchPath();
  const auto wanted = FindPlugins(t, dirs);
  std::vector<std::string> files;
  for (const auto& w : wanted) files.push_back(w.second);
  InitializeWithPlugins(files);
  const std::set<std::string> loaded = LoadedPluginNames();
  const std::vector<PluginRecord> records = PluginManager::Global().Records();
  for (const auto& [plugin, file] : wanted) {
    if (loaded.count(plugin->name)) continue;
    std::string why;
    for (const PluginRecord& r : records)
      if (r.path == file && !r.error.empty()) why = r.error;
    TIDE_FAIL(TIDE_UNAVAILABLE, "compiled model of '", t.source, "': plugin '", plugin->name, "' (",
              file, ") did not load: ", why);
  }
}

// The caller's tensor as a feed, its memory read in place.
LoDTensor FeedTensor(const FrozenModel& fm, size_t i, const TideModelTensor& in) {
  const std::string name = i < fm.feed_names().size() ? fm.feed_names()[i] : StrCat("#", i);
  TIDE_ENFORCE(in.rank >= 0 && in.rank <= 64 && (in.rank == 0 || in.dims), "feed '", name,
               "': rank ", in.rank, " with ", in.dims ? "" : "no ", "dims");
  std::vector<int64_t> dims(in.dims, in.dims + in.rank);
  for (int32_t d = 0; d < in.rank; ++d)
    TIDE_ENFORCE(dims[d] >= 0, "feed '", name, "' dimension ", d, " is ", dims[d]);
  const auto dtype = static_cast<DataType>(in.dtype);
  TIDE_ENFORCE(IsValidDataType(in.dtype) && dtype != TIDE_UNDEFINED, "feed '", name,
               "' has data type code ", in.dtype, ", which is none of Tide's");
  const DDim ddim(dims);
  const size_t bytes = static_cast<size_t>(ddim.product()) * SizeOf(dtype);
  TIDE_ENFORCE(in.data || bytes == 0, "feed '", name, "' has no data");
  auto holder = std::make_shared<Allocation>(in.data, bytes, HostPlace(), nullptr);
  holder->MarkShared();  // the caller's memory: its contents may change unseen between runs
  LoDTensor out;
  out.ResetHolder(std::move(holder), dtype, ddim);
  if (in.lod) out.set_lod({std::vector<size_t>(in.lod, in.lod + in.lod_size)});
  return out;
}

// The model of `plan`: the core started with its plugins, its parameters read by `params`.
template <typename ReadParams>
TideAotModel* CreateModel(const TideAotPlan* plan, const char* plugin_dir, ReadParams&& params) {
  std::unique_ptr<TideAotModel> m;
  const int32_t code = Guarded([&] {
    TIDE_ENFORCE(plan, "tide_aot_model_create: no plan tables");
    FrozenPlan frozen = PlanFromTables(*plan);
    StartWithPlugins(*plan, plugin_dir);
    params(&frozen);
    m = std::make_unique<TideAotModel>();
    m->model = FrozenModel::FromPlan(std::move(frozen), plan->source,
                                     Place(std::string(plan->place_kind), 0));
  });
  return code == TIDE_OK ? m.release() : nullptr;
}

}  // namespace
}  // namespace tide::core

using namespace tide::core;  // NOLINT: the C entries below, outside the namespace

extern "C" {

TideAotModel* tide_aot_model_create(const TideAotPlan* plan, const char* params_path,
                                    const char* plugin_dir) {
  return CreateModel(plan, plugin_dir, [&](FrozenPlan* frozen) {
    TIDE_ENFORCE(params_path && *params_path, "compiled model of '", plan->source,
                 "': no parameters file (params.bin, or its directory) given",
                 " (and none embedded: tide.aot.compile(..., embed_params=True) embeds them)");
    ReadCompiledParams(*plan, params_path, frozen);
  });
}

TideAotModel* tide_aot_model_create_from_memory(const TideAotPlan* plan, const void* params,
                                                size_t bytes, const char* plugin_dir) {
  return CreateModel(plan, plugin_dir, [&](FrozenPlan* frozen) {
    UseCompiledParams(*plan, params, bytes, "the parameters in memory", frozen);
  });
}

int32_t tide_aot_model_run(TideAotModel* model, const TideModelTensor* inputs, size_t num_inputs,
                           TideModelTensor* outputs, size_t num_outputs) {
  return Guarded([&] {
    TIDE_ENFORCE(model, "tide_aot_model_run: no model");
    FrozenModel& fm = *model->model;
    TIDE_ENFORCE(num_outputs == fm.fetch_names().size(), "the model fetches ",
                 fm.fetch_names().size(), " output(s); given room for ", num_outputs);
    TIDE_ENFORCE(outputs || num_outputs == 0, "tide_aot_model_run: no outputs array");
    TIDE_ENFORCE(inputs || num_inputs == 0, "tide_aot_model_run: no inputs array");
    std::vector<LoDTensor> feeds;
    for (size_t i = 0; i < num_inputs; ++i) feeds.push_back(FeedTensor(fm, i, inputs[i]));
    model->outputs = fm.Run(feeds);
    model->output_dims.resize(num_outputs);
    model->output_lod.resize(num_outputs);
    for (size_t i = 0; i < num_outputs; ++i) {
      LoDTensor& t = model->outputs[i];
      model->output_dims[i] = t.dims().ToVector();
      model->output_lod[i].clear();
      if (t.lod_levels() > 0) model->output_lod[i].assign(t.lod()[0].begin(), t.lod()[0].end());
      TideModelTensor& o = outputs[i];
      o.data = t.initialized() ? t.raw_mutable_data() : nullptr;
      o.dtype = t.dtype();
      o.rank = static_cast<int32_t>(model->output_dims[i].size());
      o.dims = model->output_dims[i].data();
      o.lod = model->output_lod[i].empty() ? nullptr : model->output_lod[i].data();
      o.lod_size = model->output_lod[i].size();
    }
  });
}

int32_t tide_aot_model_set_capture(TideAotModel* model, int32_t on) {
  return Guarded([&] {
    TIDE_ENFORCE(model, "tide_aot_model_set_capture: no model");
    model->model->EnableCapture(on != 0);
  });
}

const char* tide_aot_model_capture_note(TideAotModel* model, uint64_t* replays) {
  if (replays) *replays = model ? model->model->replays() : 0;
  if (!model) return "";
  model->capture_note = model->model->capture_note();
  return model->capture_note.c_str();
}

void tide_aot_model_destroy(TideAotModel* model) {
  Guarded([&] { delete model; });
}

const char* tide_aot_last_error(void) { return g_last_error.c_str(); }

const TideHostApi* tide_aot_host_api(void) { return GetHostApi(); }

}  // extern "C"
