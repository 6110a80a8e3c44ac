// data_transform.cc: layout transform -> device copy -> dtype cast, each only when needed.
#include "core/executor/data_transform.h"

#include <iostream>

#include "core/device/device_context.h"
#include "core/framework/tensor_util.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/plugin/c_handles.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

bool IsFloat(DataType t) { return t == TIDE_FP32 || t == TIDE_FP64 || t == TIDE_FP16 || t == TIDE_BF16; }

std::string Where(const OpInstance& op, const ArgBinding& b, size_t i) {
  return StrCat(op.label(), " input '", b.param, "' ('", b.names[i], "') for kernel ",
                op.kernel_key.ToString());
}

LoDTensor* Scratch(std::unique_ptr<LoDTensor>* slot) {
  if (!*slot) *slot = std::make_unique<LoDTensor>();
  return slot->get();
}

void Apply(const TransformEntry& t, const LoDTensor& in, LoDTensor* out, DeviceContext* dctx,
           const std::string& what) {
  out->Resize(in.dims());
  out->set_lod(in.lod());
  CallPlugin([&] { return t.fn(Wrap(&in), Wrap(out), Wrap(dctx), t.user_data); }, what, t.plugin_file);
}

}  // namespace

bool NeedsLayoutTransform(TideLayout actual, TideLayout expected) {
  if (actual == expected) return false;
  if (actual == TIDE_LAYOUT_OPAQUE) return true;
  if (expected == TIDE_LAYOUT_OPAQUE) return false;
  return actual != TIDE_LAYOUT_ANY && expected != TIDE_LAYOUT_ANY;
}

const LoDTensor* TransformInput(const OpInstance& op, const ArgBinding& b, size_t i,
                                InputTransform* t, TransformCounts* counts) {
  const LoDTensor* cur = &b.vars[i]->Get<LoDTensor>();
  if (!cur->initialized()) return nullptr;
  const OpKernelType& key = op.kernel_key;
  const LoDTensor* const source = cur;
  const uint64_t content = source->holder()->content_version();
  ConversionStamp stamp;
  stamp.source = source;
  stamp.content = content;
  stamp.shape = source->version();
  stamp.offset = source->offset();
  stamp.dtype = source->dtype();
  stamp.key_dtype = key.dtype;
  stamp.layout = source->layout();
  stamp.key_layout = key.layout;
  stamp.place = op.kernel_place;
  if (content != 0 && t->cached && t->cached_stamp == stamp && t->cached->holder() &&
      t->cached->holder()->content_version() == t->cached_content) {
    ++counts->reused;
    return t->cached;
  }
  t->cached = nullptr;
  std::string plan;
  Registry& reg = Registry::Global();

  if (NeedsLayoutTransform(cur->layout(), key.layout)) {
    Place at = cur->place();
    TideLayout to = key.layout == TIDE_LAYOUT_ANY ? TIDE_LAYOUT_NCHW : key.layout;
    const TransformEntry* e = reg.FindLayoutTransform(at.kind, cur->layout(), key.layout);
    if (!e) e = reg.FindLayoutTransform(at.kind, cur->layout(), to);
    if (!e)
      TIDE_FAIL(TIDE_UNIMPLEMENTED, Where(op, b, i), ": its data is in layout ", LayoutName(cur->layout()),
                " on ", at.ToString(), " and no plugin registers a ", at.kind_name(), " layout transform ",
                LayoutName(cur->layout()), " -> ", LayoutName(to));
    LoDTensor* out = Scratch(&t->layout_tmp);
    Apply(*e, *cur, out, DeviceContextPool::Global().Get(at), StrCat("layout transform ", LayoutTransformName(*e)));
    cur = out;
    ++counts->layouts;
    plan += "layout " + LayoutTransformName(*e) + "; ";
  }
  if (cur->place() != op.kernel_place) {
    LoDTensor* out = Scratch(&t->copy_tmp);
    Place from = cur->place();
    TensorCopySync(*cur, op.kernel_place, out, op.kernel_dctx);
    cur = out;
    ++counts->copies;
    plan += "copy " + from.ToString() + " -> " + op.kernel_place.ToString() + "; ";
  }
  if (cur->dtype() != key.dtype && IsFloat(cur->dtype()) && IsFloat(key.dtype)) {
    const TransformEntry* e = reg.FindCast(op.kernel_place.kind, cur->dtype(), key.dtype);
    if (!e)
      TIDE_FAIL(TIDE_UNIMPLEMENTED, Where(op, b, i), ": its data is ", DataTypeName(cur->dtype()),
                " and no plugin registers a ", op.kernel_place.kind_name(), " cast ",
                DataTypeName(cur->dtype()), " -> ", DataTypeName(key.dtype));
    LoDTensor* out = Scratch(&t->cast_tmp);
    Apply(*e, *cur, out, op.kernel_dctx, StrCat("cast ", CastName(*e)));
    cur = out;
    ++counts->casts;
    plan += "cast " + CastName(*e) + "; ";
  }
  if (FLAGS_log_kernels && plan != t->last_plan && !plan.empty())
    std::cerr << "tide: " << op.label() << " input '" << b.param << "' ('" << b.names[i] << "'): " << plan
              << "\n";
  if (plan != t->last_plan) t->last_plan = plan;
  if (cur == source) return nullptr;
  if (content != 0 && cur->holder()->content_version() != 0) {  // reuse it while nothing changes
    t->cached = cur;
    t->cached_stamp = stamp;
    t->cached_content = cur->holder()->content_version();
  }
  return cur;
}

}  // namespace tide::core
