// op_instance.h: an op prepared for running. What it is: its OpInfo, checked attributes (and
// their C views), its parameters bound to Variable pointers. And what the run loop keeps for it
// across runs, each part written by one module only: the chosen kernel (kernel_choice.h), the
// inputs' conversions (data_transform.h), the inputs an output shares (aliased_inputs.h), the
// shape cache (shape_cache.h), the outputs check (run_checks.h) and the running kernel's own
// state (the host API's KernelContext_SetState).
#pragma once

#include <tide/plugin_api.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/executor/shape_cache.h"
#include "core/framework/scope.h"
#include "core/ir/attribute.h"
#include "core/ir/block_desc.h"
#include "core/ir/op_desc.h"
#include "core/plugin/c_handles.h"
#include "core/registry/op_info.h"

namespace tide::core {

class Executor;
class PreparedBlock;
struct TransformCounts;

// What a conversion of an input was made from and for: while a later run's stamp is the same
// (the same tensor, contents (Allocation::content_version), dims and LoD, and the same kernel
// wants it), the converted copy is still right.
struct ConversionStamp {
  const LoDTensor* source = nullptr;
  uint64_t content = 0, shape = 0;
  size_t offset = 0;
  DataType dtype = TIDE_UNDEFINED, key_dtype = TIDE_UNDEFINED;
  TideLayout layout = TIDE_LAYOUT_ANY, key_layout = TIDE_LAYOUT_ANY;
  Place place;
  bool operator==(const ConversionStamp& o) const {
    return source == o.source && content == o.content && shape == o.shape && offset == o.offset &&
           dtype == o.dtype && key_dtype == o.key_dtype && layout == o.layout &&
           key_layout == o.key_layout && place == o.place;
  }
};

// How one input reaches its kernel: as it is, or converted (layout, place, dtype) into scratch
// tensors that are kept and reused across runs.
struct InputTransform {
  const LoDTensor* result = nullptr;  // what the kernel reads; nullptr: the variable itself
  std::unique_ptr<LoDTensor> layout_tmp, copy_tmp, cast_tmp;
  std::unique_ptr<LoDTensor> stage_tmp;  // on the host, for a cast the kernel's place lacks
  std::string last_plan;                 // for --log_kernels: logged when it changes
  // The last conversion, reused while its stamp holds and its own contents are unchanged
  // (`cached_content`: an op sharing and writing the copy spoils it).
  const LoDTensor* cached = nullptr;
  ConversionStamp cached_stamp;
  uint64_t cached_content = 0;
};

// An output the program declares float16 or bfloat16 (outputs()[binding].vars[index]): when the
// op runs a float32 kernel on such data, what it wrote is rounded back to `dtype`.
struct LowPrecisionOutput {
  size_t binding, index;
  DataType dtype;
};

struct ArgBinding {
  std::string param;
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;      // names as C strings, for plugins
  std::vector<Variable*> vars;             // resolved by Bind
  std::vector<InputTransform> transforms;  // inputs only, parallel to vars
  bool float32_param = false;  // declared TIDE_ARG_FLOAT32_PARAM: float32 for a 16-bit kernel
  // Its kernel reads it in host memory (KernelEntry::host_inputs); data transform sets it.
  bool host_input = false;
};

// A kernel's state for one op (KernelContext_SetState), kept across runs; freed with the op or
// when another kernel sets its own.
// An input bound to the variable an output of the same op writes (aliased_inputs.h): the kernel
// reads it through `view`, a variable of the op's own.
struct AliasedInput {
  size_t binding = 0, index = 0;          // inputs()[binding].vars[index]
  size_t out_binding = 0, out_index = 0;  // the output writing the same variable
  Variable* shared = nullptr;             // that variable
  std::unique_ptr<Variable> view;         // holds a LoDTensor
  std::unique_ptr<LoDTensor> copy;        // the view's own memory, kept across runs
  bool in_place = false;                  // the op declares the pair in place
  bool separate = false;                  // this run reads `copy`
};

class KernelState {
 public:
  KernelState() = default;
  KernelState(const KernelState&) = delete;
  KernelState& operator=(const KernelState&) = delete;
  ~KernelState() { Reset(); }
  // What `kernel` set, or null when another kernel set the slot (or none did).
  void* Get(const KernelEntry* kernel) const { return owner_ == kernel ? data_ : nullptr; }
  void Set(const KernelEntry* kernel, void* data, void (*free_state)(void*)) {
    Reset();
    owner_ = kernel;
    data_ = data;
    free_ = free_state;
  }
  void Reset() {
    if (data_ && free_) free_(data_);
    owner_ = nullptr;
    data_ = nullptr;
    free_ = nullptr;
  }

 private:
  const KernelEntry* owner_ = nullptr;
  void* data_ = nullptr;
  void (*free_)(void*) = nullptr;
};

class OpInstance {
 public:
  // `desc` is op `index` of `block`, the program's block `block_idx`. `info`: the op's info when
  // not the registry's (a compiled model's directly called kernel, whose op pack may not be
  // loaded); it must outlive the instance.
  OpInstance(const OpDesc& desc, const BlockDesc& block, int block_idx, size_t index,
             const OpInfo* info = nullptr);
  OpInstance(const OpInstance&) = delete;  // views_ point into attrs_
  OpInstance& operator=(const OpInstance&) = delete;

  const OpInfo& info() const { return *info_; }
  const std::string& type() const { return type_; }
  const AttributeMap& attrs() const { return attrs_; }
  const AttrViews& attr_views() const { return *views_; }
  const std::vector<ArgBinding>& inputs() const { return inputs_; }
  const std::vector<ArgBinding>& outputs() const { return outputs_; }
  // Linear scans with strcmp: ops have a few parameters, and this avoids hashing on the hot path.
  const ArgBinding* FindInput(const char* param) const { return Find(inputs_, param); }
  const ArgBinding* FindOutput(const char* param) const { return Find(outputs_, param); }
  // "op 'mul' (block 0, #3)"
  const std::string& label() const { return label_; }
  // Where the data type of its kernel comes from: an int attribute (the registered
  // kernel_dtype_source "attr:<name>"), else the first variable of inputs()[dtype_input()].
  DataType dtype_from_attr() const { return dtype_from_attr_; }
  int dtype_input() const { return dtype_input_; }  // -1: none
  // Outputs bound to persistable variables, as (index into outputs(), index into its vars):
  // after a fallback kernel they go back to the run's place, so parameters live there.
  const std::vector<std::pair<size_t, size_t>>& persistable_outputs() const {
    return persistable_outputs_;
  }
  // (binding, index) of the outputs the program declares 0-D (VarDesc::zero_dim).
  const std::vector<std::pair<size_t, size_t>>& zero_dim_outputs() const {
    return zero_dim_outputs_;
  }
  // The outputs the program declares float16 or bfloat16 tensors.
  const std::vector<LowPrecisionOutput>& low_precision_outputs() const {
    return low_precision_outputs_;
  }

  // Resolves every bound variable name in `scope` (and its parents); what was kept for the last
  // binding (the inputs' conversions, the shape cache, the outputs check) starts again.
  void Bind(const Scope& scope);

  // The kernel chosen (KernelChoice, kernel_choice.h), null until one is; the place it runs on
  // (the run's, or another's when falling back) and that place's context; the library the op
  // asks for (its attribute or flag; 0: plain).
  const KernelEntry* kernel() const { return kernel_; }
  const OpKernelType& kernel_key() const { return kernel_key_; }
  // The data type the kernel was chosen for: kernel_key().dtype, except for float16 or bfloat16
  // data that runs a float32 kernel (no kernel of its own type): then that low type.
  DataType kernel_data_type() const { return kernel_data_type_; }
  bool runs_widened() const { return kernel_data_type_ != kernel_key_.dtype; }
  const Place& kernel_place() const { return kernel_place_; }
  DeviceContext* kernel_dctx() const { return kernel_dctx_; }
  int32_t library() const { return library_; }

  // Inputs bound to a variable an output writes (aliased_inputs.h).
  const std::vector<AliasedInput>& aliased_inputs() const { return aliased_; }

  // Whether the kernel's first run since Bind was checked to write its outputs (run_checks.h).
  bool outputs_checked() const { return outputs_checked_; }
  // Whether its shapes need inferring again (shape_cache.h).
  ShapeCache& shape_cache() { return shape_cache_; }
  // The running kernel's own state, across runs (the host API's KernelContext_SetState).
  KernelState kernel_state;

 private:
  static const ArgBinding* Find(const std::vector<ArgBinding>& list, const char* param) {
    for (const auto& b : list)
      if (SameName(b.param, param)) return &b;
    return nullptr;
  }

  // What the op is: set by the constructor, read by all.
  const OpInfo* info_;
  std::string type_, label_;
  AttributeMap attrs_;
  std::unique_ptr<AttrViews> views_;  // points into attrs_
  // Their vars are set by Bind; their transforms are data transform's.
  std::vector<ArgBinding> inputs_, outputs_;
  int dtype_input_ = -1;
  DataType dtype_from_attr_ = TIDE_UNDEFINED;
  std::vector<std::pair<size_t, size_t>> persistable_outputs_;
  std::vector<std::pair<size_t, size_t>> zero_dim_outputs_;
  std::vector<LowPrecisionOutput> low_precision_outputs_;

  // The chosen kernel: kernel choice writes it.
  friend class KernelChoice;
  const KernelEntry* kernel_ = nullptr;
  // The kernel the inputs' host_input flags were set for: data transform's.
  const KernelEntry* host_inputs_of_ = nullptr;
  OpKernelType kernel_key_;
  DataType kernel_data_type_ = TIDE_UNDEFINED;
  Place kernel_place_;
  DeviceContext* kernel_dctx_ = nullptr;
  int32_t library_ = 0;
  std::vector<const KernelEntry*> declined_;  // kernels that refused to run this op (UNIMPLEMENTED)

  // The inputs' conversions (ArgBinding::transforms, ::host_input): data transform writes them,
  // and host_inputs_of_ (beside kernel_, above, which the run loop reads with it).
  friend void TransformInputs(OpInstance& op, TransformCounts* counts);

  // The aliased inputs and their bindings while the op runs: aliased_inputs.cc's.
  friend void FindAliasedInputs(OpInstance& op);
  friend void ViewAliasedInputs(OpInstance& op);
  friend void SeparateAliasedInputs(OpInstance& op);
  friend void ReleaseAliasedInputs(OpInstance& op);
  std::vector<AliasedInput> aliased_;

  // The outputs check: run checks write it.
  friend void CheckOutputsWritten(OpInstance& op);
  bool outputs_checked_ = false;

  ShapeCache shape_cache_;
};

// Asks the CPU for an op's argument bindings (to call before the op before it runs): on a chain
// of tiny ops, each op's first look at its bindings was a cache miss costing about a fifth of its
// time. The executor's run loop and a frozen plan's (core/aot) both do it.
inline void PrefetchBindings(const OpInstance& op) {
  for (const std::vector<ArgBinding>* list : {&op.inputs(), &op.outputs()}) {
    const char* begin = reinterpret_cast<const char*>(list->data());
    const char* end = reinterpret_cast<const char*>(list->data() + list->size());
    for (const char* line = begin; line < end; line += 64) __builtin_prefetch(line);
  }
}

}  // namespace tide::core

// What a kernel sees through the host API.
struct TideKernelContext {
  tide::core::OpInstance* op;
  tide::core::DeviceContext* dctx;
  const tide::core::KernelEntry* kernel;         // the kernel running (owns op->kernel_state)
  std::vector<tide::core::AllocationPtr> temps;  // KernelContext_TempAlloc, freed on return
};

// What an operator without kernels sees.
struct TideOpRunContext {
  tide::core::OpInstance* op;
  tide::core::Scope* scope;
  tide::core::DeviceContext* dctx;
  tide::core::Executor* executor;
  tide::core::PreparedBlock* block;  // the block the op runs in (for its sub-blocks)
};
