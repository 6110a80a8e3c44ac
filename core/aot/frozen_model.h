// frozen_model.h: tide::FrozenModel, a frozen plan (frozen_plan.h) loaded and run. Load resolves
// every kernel by its recorded key in the loaded plugins, builds the op instances once and
// allocates the arena once; Run calls the kernels in order: no kernel choice, no shape inference
// (the variable dimension's dims are recomputed from the plan's linear rule when it changes; ops
// the plan marks infer theirs), no allocation but the results'.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/aot/frozen_plan.h"
#include "core/device/device_context.h"
#include "core/executor/op_instance.h"
#include "core/framework/scope.h"
#include "core/ir/program_desc.h"

namespace tide::core {

class FrozenModel {
 public:
  // Throws naming the file and what is wrong: see ReadFrozenPlan; a plan for another place kind;
  // an op whose kernel key no loaded plugin registers (naming the op, the key and the plugin file
  // that had it at freeze time).
  static std::unique_ptr<FrozenModel> Load(const std::string& path, const Place& place);
  // The same from a plan already in memory (a compiled model's tables, core/compiled), named
  // `source` in errors; its parameters' views must stay valid (plan.file holds them).
  static std::unique_ptr<FrozenModel> FromPlan(FrozenPlan plan, const std::string& source,
                                               const Place& place);
  ~FrozenModel();
  FrozenModel(const FrozenModel&) = delete;
  FrozenModel& operator=(const FrozenModel&) = delete;

  // `inputs` in feed_names() order; returns the fetched tensors on the host in fetch_names()
  // order. A feed of another data type or rank, another fixed dim, or a variable dim outside the
  // plan's range is refused, naming the feed, the dimension and the range.
  std::vector<LoDTensor> Run(const std::vector<LoDTensor>& inputs);

  // Capture and replay (the place device's TideDeviceGraphs), off by default: with
  // it on, the second run at a batch size is captured and every later run at that size replays
  // it, with no kernel called on the host. Feeds are then copied into the model's own slots
  // (never read in place), so the captured addresses stay valid. A plan the device cannot replay
  // (no graphs on the place, ops that run elsewhere or convert data, shapes inferred at run time,
  // a kernel the device cannot record) runs op by op; capture_note() says why.
  void EnableCapture(bool on);
  bool capture_enabled() const { return capture_; }
  // "" with capture off; else "warming up", "captured" (replayed from the next run), or why the
  // plan runs op by op.
  std::string capture_note() const;
  uint64_t replays() const { return replays_; }  // runs that replayed a captured graph

  const std::vector<std::string>& feed_names() const { return feed_names_; }
  const std::vector<std::string>& fetch_names() const { return plan_.fetches; }
  const Place& place() const { return place_; }
  uint64_t arena_bytes() const { return plan_.arena_bytes; }
  int64_t lower() const { return plan_.lower; }
  int64_t upper() const { return plan_.upper; }
  size_t num_ops() const { return steps_.size(); }
  // The ops the plan has infer their shapes at run time (frozen_plan.h, FrozenOp::infer_at_run).
  size_t num_ops_inferring_shapes() const;

 private:
  FrozenModel() = default;
  // One kernel call: the op bound to its variables and its kernel, resolved at Load.
  struct Step {
    OpInstance* op = nullptr;
    const KernelEntry* kernel = nullptr;
    DeviceContext* dctx = nullptr;
    bool infer_at_run = false;
    bool special = false;  // transforms, a library's layout, another place, widened data, 0-D
  };
  struct Sized {
    LoDTensor* tensor;
    const FrozenVar* var;
  };
  void Build(const std::string& path);
  void SetFeeds(const std::vector<LoDTensor>& inputs);
  void ResizeFor(int64_t unit);
  void RunSpecial(Step& s);  // what the executor does around a kernel, for ops that need it
  void FinishSpecial(Step& s);
  // The kernel calls, in order; the kernels' scratch blocks are moved into `kept` when given.
  void RunSteps(std::vector<AllocationPtr>* kept = nullptr);
  std::vector<LoDTensor> Fetch();
  // Why this plan cannot be captured on its place, or "".
  std::string CaptureBlocker() const;
  // Runs the steps under a capture and keeps the graph; false (capture_blocked_ set) when the
  // device could not record them (nothing ran then).
  bool Capture();
  bool GraphStillValid() const;
  void DropGraph();

  struct Graph;  // a captured run: the device's graph and every block it reads or writes
  FrozenPlan plan_;
  std::string path_;
  Place place_;
  DeviceContext* dctx_ = nullptr;
  std::vector<std::string> feed_names_;
  std::vector<Variable*> feed_vars_, fetch_vars_;
  ProgramDesc program_;
  std::unique_ptr<Scope> scope_;
  AllocationPtr arena_;
  // A compiled model's directly called kernels (FrozenOp::direct) and, for those whose op no
  // loaded plugin registers, the op's info from the plan: before ops_, which point at them.
  std::vector<std::unique_ptr<KernelEntry>> direct_kernels_;
  std::vector<std::unique_ptr<OpInfo>> direct_infos_;
  std::vector<std::unique_ptr<OpInstance>> ops_;
  std::vector<Step> steps_;
  std::vector<Sized> sized_;  // temporaries whose dims follow the variable dimension
  int64_t unit_ = -1;         // the variable dimension's value the dims are set for
  bool touch_outputs_ = false;
  std::vector<bool> feed_shared_;  // feed i's variable reads the caller's tensor in place
  bool capture_ = false;
  std::string capture_blocked_;  // why the plan runs op by op under capture, or ""
  int64_t warm_unit_ = -1;       // the variable dimension of the last run op by op under capture
  std::unique_ptr<Graph> graph_;
  uint64_t replays_ = 0;
};

}  // namespace tide::core
