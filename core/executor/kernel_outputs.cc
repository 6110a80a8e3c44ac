// kernel_outputs.cc: see kernel_outputs.h.
#include "core/executor/kernel_outputs.h"

#include <algorithm>

#include "core/executor/data_transform.h"
#include "core/framework/tensor_util.h"

namespace tide::core {

void LabelOutputLayouts(const OpInstance& op) {
  const TideLayout layout = op.kernel_key().layout;
  for (const auto& b : op.outputs())
    for (Variable* v : b.vars)
      if (v && v->IsType<LoDTensor>()) {
        auto* t = v->GetMutable<LoDTensor>();
        if (t->layout() != TIDE_LAYOUT_ANY && t->layout() != layout) {
          t->set_layout(layout);
          t->set_format(0);
        }
      }
}

void TouchOutputs(const OpInstance& op) {
  for (const auto& b : op.outputs())
    for (Variable* v : b.vars)
      if (v && v->IsType<LoDTensor>()) {
        const LoDTensor& t = v->Get<LoDTensor>();
        if (t.holder()) t.holder()->Touch();
      }
}

void GiveDeclaredRankZero(const OpInstance& op) {
  for (const auto& [b, i] : op.zero_dim_outputs()) {
    Variable* v = op.outputs()[b].vars[i];
    if (!v || !v->IsType<LoDTensor>()) continue;
    LoDTensor* t = v->GetMutable<LoDTensor>();
    if (t->dims().size() == 1 && t->dims()[0] == 1 && t->lod_levels() == 0) t->Resize(DDim());
  }
}

void RoundWidenedOutputs(const OpInstance& op) {
  for (const LowPrecisionOutput& o : op.low_precision_outputs()) {
    Variable* v = op.outputs()[o.binding].vars[o.index];
    if (!v || !v->IsType<LoDTensor>()) continue;
    LoDTensor* t = v->GetMutable<LoDTensor>();
    if (!t->initialized() || t->dtype() != op.kernel_key().dtype) continue;
    CastInPlace(t, o.dtype,
                StrCat(op.label(), " output '", op.outputs()[o.binding].param, "' ('",
                       op.outputs()[o.binding].names[o.index], "') of kernel ",
                       op.kernel_key().ToString()));
  }
}

void DropUnbackedOutputs(const OpInstance& op) {
  for (const auto& b : op.outputs())
    for (Variable* v : b.vars) {
      if (!v || !v->IsType<LoDTensor>()) continue;
      LoDTensor* t = v->GetMutable<LoDTensor>();
      if (!t->initialized() || t->dims().size() == 0) continue;
      const size_t need = static_cast<size_t>(t->numel()) * SizeOf(t->dtype());
      if (t->memory_size() < need) t->Clear();
    }
}

void ReturnPersistableOutputs(const OpInstance& op, const Place& place, DeviceContext* dctx) {
  for (const auto& [b, i] : op.persistable_outputs()) {
    Variable* v = op.outputs()[b].vars[i];
    if (!v || !v->IsType<LoDTensor>()) continue;
    LoDTensor* t = v->GetMutable<LoDTensor>();
    if (t->initialized() && t->place() != place) TensorCopySync(*t, place, t, dctx);
  }
}

thread_local TensorWrites t_tensor_writes;

namespace {
// The output of `op` that is tensor `t` (a LoDTensor, a SelectedRows' value or a tensor array's
// element), as "'Out' ('name')"; "" when it is none of them.
std::string OutputNamed(const OpInstance& op, const LoDTensor* t) {
  for (const auto& b : op.outputs())
    for (size_t i = 0; i < b.vars.size(); ++i) {
      const Variable* v = b.vars[i];
      if (!v) continue;
      bool is = false;
      if (v->IsType<LoDTensor>()) {
        is = &v->Get<LoDTensor>() == t;
      } else if (v->IsType<SelectedRows>()) {
        is = &v->Get<SelectedRows>().value() == t;
      } else if (v->IsType<LoDTensorArray>()) {
        for (const LoDTensor& e : v->Get<LoDTensorArray>()) is = is || &e == t;
      }
      if (is) return StrCat("'", b.param, "' ('", b.names[i], "')");
    }
  return "";
}
}  // namespace

void CheckDeclinedBeforeWriting(const OpInstance& op, const KernelEntry& k, const Error& why,
                                uint64_t writes_before) {
  const TensorWrites& w = t_tensor_writes;
  const uint64_t n = std::min<uint64_t>(w.count - writes_before, TensorWrites::kRecent);
  for (uint64_t j = w.count - n; j < w.count; ++j) {  // oldest first: the first output written
    const std::string out = OutputNamed(op, w.recent[j % TensorWrites::kRecent]);
    if (!out.empty())
      TIDE_FAIL(TIDE_INTERNAL, op.label(), " kernel ", k.key.ToString(), " (", k.plugin_file,
                ") declined this run after it gave output ", out,
                " data; a kernel may decline (TIDE_UNIMPLEMENTED) only before it writes an "
                "output, since the next kernel would run on what it left: move the check that "
                "declines before the first mutable_data. It declined with: ",
                why.what());
  }
}

}  // namespace tide::core
