// op_instance.h: an op prepared for running: its OpInfo, checked attributes (and their C
// views), parameter bindings resolved to Variable pointers, its chosen kernel, and the tensor
// versions it last inferred shapes for.
#pragma once

#include <tide/plugin_api.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/framework/scope.h"
#include "core/ir/attribute.h"
#include "core/ir/op_desc.h"
#include "core/plugin/c_handles.h"
#include "core/registry/op_info.h"

namespace tide::core {

class Executor;
class PreparedBlock;

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
  std::string last_plan;  // for --log_kernels: logged when it changes
  // The last conversion, reused while its stamp holds and its own contents are unchanged
  // (`cached_content`: an op sharing and writing the copy spoils it).
  const LoDTensor* cached = nullptr;
  ConversionStamp cached_stamp;
  uint64_t cached_content = 0;
};

struct ArgBinding {
  std::string param;
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;  // names as C strings, for plugins
  std::vector<Variable*> vars;         // resolved by Bind
  std::vector<InputTransform> transforms;  // inputs only, parallel to vars
};

// A kernel's state for one op (KernelContext_SetState), kept across runs; freed with the op or
// when another kernel sets its own.
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
  OpInstance(const OpDesc& desc, int block_idx, size_t index);
  OpInstance(const OpInstance&) = delete;  // views_ point into attrs_
  OpInstance& operator=(const OpInstance&) = delete;

  const OpInfo& info() const { return *info_; }
  const std::string& type() const { return type_; }
  const AttributeMap& attrs() const { return attrs_; }
  const AttrViews& attr_views() const { return *views_; }
  const std::vector<ArgBinding>& inputs() const { return inputs_; }
  std::vector<ArgBinding>& mutable_inputs() { return inputs_; }
  const std::vector<ArgBinding>& outputs() const { return outputs_; }
  // Linear scans with strcmp: ops have a few parameters, and this avoids hashing on the hot path.
  const ArgBinding* FindInput(const char* param) const { return Find(inputs_, param); }
  const ArgBinding* FindOutput(const char* param) const { return Find(outputs_, param); }
  // "op 'mul' (block 0, #3)"
  const std::string& label() const { return label_; }

  // Resolves every bound variable name in `scope` (and its parents).
  void Bind(const Scope& scope);

  // Kernel choice and shape-inference cache, owned by the executor's run loop.
  const KernelEntry* kernel = nullptr;
  OpKernelType kernel_key;
  Place kernel_place;                    // the run's place, or another when falling back
  DeviceContext* kernel_dctx = nullptr;  // kernel_place's context
  int32_t library = 0;                   // the library asked for (a library's attribute or flag)
  std::vector<const KernelEntry*> declined;  // kernels that refused to run this op (UNIMPLEMENTED)
  int dtype_input = -1;            // index into inputs() that picks the dtype, or -1
  DataType dtype_from_attr = TIDE_UNDEFINED;
  bool watch_shapes = true;        // false when an input/output is not a LoDTensor
  bool outputs_checked = false;    // the kernel's first run after Bind wrote its outputs
  // Outputs bound to persistable variables, as (index into outputs(), index into its vars):
  // after a fallback kernel they go back to the run's place, so parameters live there.
  std::vector<std::pair<size_t, size_t>> persistable_outputs;
  std::vector<const LoDTensor*> watched;
  std::vector<uint64_t> versions;
  KernelState kernel_state;  // the running kernel's own, across runs

 private:
  static const ArgBinding* Find(const std::vector<ArgBinding>& list, const char* param) {
    for (const auto& b : list)
      if (SameName(b.param, param)) return &b;
    return nullptr;
  }
  const OpInfo* info_;
  std::string type_, label_;
  AttributeMap attrs_;
  std::unique_ptr<AttrViews> views_;  // points into attrs_
  std::vector<ArgBinding> inputs_, outputs_;
};

}  // namespace tide::core

// What a kernel sees through the host API.
struct TideKernelContext {
  tide::core::OpInstance* op;
  tide::core::DeviceContext* dctx;
  const tide::core::KernelEntry* kernel;          // the kernel running (owns op->kernel_state)
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
