// data_transform.cc: layout transform -> device copy -> dtype cast, each only when needed.
#include "core/executor/data_transform.h"

#include <iostream>

#include "core/device/device_context.h"
#include "core/executor/executor.h"
#include "core/framework/tensor_util.h"
#include "core/platform/flags.h"
#include "core/platform/status.h"
#include "core/plugin/c_handles.h"
#include "core/registry/registry.h"

namespace tide::core {
namespace {

// The data type the kernel reads input `b` in: the kernel's, except float32 for an input declared
// TIDE_ARG_FLOAT32_PARAM under a float16/bfloat16 kernel (batch_norm's statistics, say).
DataType WantedType(const OpKernelType& key, const ArgBinding& b) {
  return b.float32_param && IsLowPrecision(key.dtype) ? TIDE_FP32 : key.dtype;
}

// The host's place, looked up once (the run loop compares with it).
const Place& HostPlaceOnce() {
  static const Place host = HostPlace();
  return host;
}

// What the kernel reads input `b` as. An input it reads in host memory (ArgBinding::host_input)
// goes to the CPU place in its own data type, in any plain layout.
struct InputTarget {
  Place place;
  DataType dtype;
  TideLayout layout;
};
InputTarget TargetOf(const OpInstance& op, const ArgBinding& b, const LoDTensor& t) {
  if (b.host_input) return {HostPlaceOnce(), t.dtype(), TIDE_LAYOUT_ANY};
  return {op.kernel_place(), WantedType(op.kernel_key(), b), op.kernel_key().layout};
}

// The cast `from` -> `to` a plugin registers for `at`'s kind; else fails naming what `what()`
// says (made only then: a cast runs on every run of a widened op).
template <typename What>
const TransformEntry& FindCastOrFail(const Place& at, DataType from, DataType to, What&& what) {
  const TransformEntry* e = Registry::Global().FindCast(at.kind, from, to);
  if (!e)
    TIDE_FAIL(TIDE_UNIMPLEMENTED, what(), ": its data is ", DataTypeName(from),
              " and no plugin registers a ", at.kind_name(), " cast ", DataTypeName(from), " -> ",
              DataTypeName(to));
  return *e;
}

std::string Where(const OpInstance& op, const ArgBinding& b, size_t i) {
  return StrCat(op.label(), " input '", b.param, "' ('", b.names[i], "') for kernel ",
                op.kernel_key().ToString());
}

LoDTensor* Scratch(std::unique_ptr<LoDTensor>* slot) {
  if (!*slot) *slot = std::make_unique<LoDTensor>();
  return slot->get();
}

void Apply(const TransformEntry& t, const LoDTensor& in, LoDTensor* out, DeviceContext* dctx,
           const std::string& what) {
  out->Resize(in.dims());
  out->set_lod(in.lod());
  CallPlugin([&] { return t.fn(Wrap(&in), Wrap(out), Wrap(dctx), t.user_data); }, what,
             t.plugin_file);
}

// The layout transform of `kind` from `from` to `to`; for `to` ANY (any plain layout), the one
// to NCHW when none says ANY. Null when no plugin registers either.
const TransformEntry* FindLayoutTransformTo(int32_t kind, TideLayout from, TideLayout to) {
  const Registry& reg = Registry::Global();
  const TransformEntry* e = reg.FindLayoutTransform(kind, from, to);
  if (!e && to == TIDE_LAYOUT_ANY) e = reg.FindLayoutTransform(kind, from, TIDE_LAYOUT_NCHW);
  return e;
}

// Converts input `b`.vars[i] of `op` as its kernel needs (kernel key and place, or the host for
// a host input), updating the slot's scratch tensors and `counts`. Returns what the kernel should
// read (null: the variable).
const LoDTensor* TransformInput(const OpInstance& op, const ArgBinding& b, size_t i,
                                InputTransform* t, TransformCounts* counts) {
  const LoDTensor* cur = &b.vars[i]->Get<LoDTensor>();
  if (!cur->initialized()) return nullptr;
  const LoDTensor* const source = cur;
  const InputTarget want = TargetOf(op, b, *source);
  const uint64_t content = source->holder()->content_version();
  ConversionStamp stamp;
  stamp.source = source;
  stamp.content = content;
  stamp.shape = source->version();
  stamp.offset = source->offset();
  stamp.dtype = source->dtype();
  stamp.key_dtype = want.dtype;
  stamp.layout = source->layout();
  stamp.key_layout = want.layout;
  stamp.place = want.place;
  if (content != 0 && t->cached && t->cached_stamp == stamp && t->cached->holder() &&
      t->cached->holder()->content_version() == t->cached_content) {
    ++counts->reused;
    return t->cached;
  }
  t->cached = nullptr;
  std::string plan;

  // A cast converts element by element, so a library's blocked data (reordered, its channels
  // padded) is made plain first; a kernel of that library reads plain data too.
  const bool casts =
      cur->dtype() != want.dtype && IsFloatType(cur->dtype()) && IsFloatType(want.dtype);
  const TideLayout target =
      casts && cur->layout() == TIDE_LAYOUT_OPAQUE ? TIDE_LAYOUT_ANY : want.layout;
  if (target != want.layout || NeedsLayoutTransform(cur->layout(), want.layout)) {
    Place at = cur->place();
    TideLayout to = target == TIDE_LAYOUT_ANY ? TIDE_LAYOUT_NCHW : target;
    const TransformEntry* e = FindLayoutTransformTo(at.kind, cur->layout(), target);
    if (!e)
      TIDE_FAIL(TIDE_UNIMPLEMENTED, Where(op, b, i), ": its data is in layout ",
                LayoutName(cur->layout()), " on ", at.ToString(), " and no plugin registers a ",
                at.kind_name(), " layout transform ", LayoutName(cur->layout()), " -> ",
                LayoutName(to));
    LoDTensor* out = Scratch(&t->layout_tmp);
    Apply(*e, *cur, out, DeviceContextPool::Global().Get(at),
          StrCat("layout transform ", LayoutTransformName(*e)));
    cur = out;
    ++counts->layouts;
    plan += "layout " + LayoutTransformName(*e) + "; ";
  }
  // Where a cast runs: on the kernel's place; where that place's plugin lacks it (a device
  // without casts), where one has it, the data's place or else the host (staged there), before
  // the copy to the kernel's place.
  Place cast_at = want.place;
  const Registry& reg = Registry::Global();
  if (casts && !reg.FindCast(want.place.kind, cur->dtype(), want.dtype)) {
    if (reg.FindCast(cur->place().kind, cur->dtype(), want.dtype))
      cast_at = cur->place();
    else if (reg.FindCast(HostPlaceOnce().kind, cur->dtype(), want.dtype))
      cast_at = HostPlaceOnce();
  }
  auto cast = [&] {
    const TransformEntry& e =
        FindCastOrFail(cast_at, cur->dtype(), want.dtype, [&] { return Where(op, b, i); });
    LoDTensor* out = Scratch(&t->cast_tmp);
    const bool on_kernel_place = cast_at == want.place;
    Apply(e, *cur, out,
          on_kernel_place ? op.kernel_dctx() : DeviceContextPool::Global().Get(cast_at),
          StrCat("cast ", CastName(e)));
    cur = out;
    ++counts->casts;
    plan += "cast " + CastName(e) + (on_kernel_place ? "" : " on " + cast_at.ToString()) + "; ";
  };
  if (casts && cast_at != want.place) {
    if (cur->place() != cast_at) {
      LoDTensor* staged = Scratch(&t->stage_tmp);
      TensorCopySync(*cur, cast_at, staged, op.kernel_dctx());
      plan += "copy " + cur->place().ToString() + " -> " + cast_at.ToString() + " (to cast); ";
      cur = staged;
      ++counts->copies;
    }
    cast();
  }
  if (cur->place() != want.place) {
    // To the host for a host input: TensorCopySync queues the copy on the source device's
    // context, after the work that wrote it, and waits for it.
    LoDTensor* out = Scratch(&t->copy_tmp);
    Place from = cur->place();
    TensorCopySync(*cur, want.place, out, op.kernel_dctx());
    cur = out;
    ++counts->copies;
    plan += "copy " + from.ToString() + " -> " + want.place.ToString() +
            (b.host_input ? " (host input); " : "; ");
  }
  if (casts && cast_at == want.place) cast();
  if (FLAGS_log_kernels && plan != t->last_plan && !plan.empty())
    std::cerr << "tide: " << op.label() << " input '" << b.param << "' ('" << b.names[i]
              << "'): " << plan << "\n";
  if (plan != t->last_plan) t->last_plan = plan;
  if (cur == source) return nullptr;
  if (content != 0 && cur->holder()->content_version() != 0) {  // reuse it while nothing changes
    t->cached = cur;
    t->cached_stamp = stamp;
    t->cached_content = cur->holder()->content_version();
  }
  return cur;
}

}  // namespace

bool NeedsLayoutTransform(TideLayout actual, TideLayout expected) {
  if (actual == expected) return false;
  if (actual == TIDE_LAYOUT_OPAQUE) return true;
  if (expected == TIDE_LAYOUT_OPAQUE) return false;
  return actual != TIDE_LAYOUT_ANY && expected != TIDE_LAYOUT_ANY;
}

void TransformInputs(OpInstance& op, TransformCounts* counts) {
  const OpKernelType& key = op.kernel_key();
  if (op.host_inputs_of_ != op.kernel()) {  // a kernel chosen since: which inputs it reads on host
    for (auto& b : op.inputs_) b.host_input = op.kernel() && op.kernel()->ReadsOnHost(b.param);
    op.host_inputs_of_ = op.kernel();
  }
  for (auto& b : op.inputs_)
    for (size_t i = 0; i < b.vars.size(); ++i) {
      Variable* v = b.vars[i];
      if (!v || !v->IsType<LoDTensor>()) continue;
      const LoDTensor& t = v->Get<LoDTensor>();
      InputTransform& tr = b.transforms[i];
      // The common case, inline: already in the kernel's place, layout and data type (a host
      // input: on the host, in a plain layout).
      bool ready = b.host_input
                       ? t.place() == HostPlaceOnce() && t.layout() != TIDE_LAYOUT_OPAQUE
                       : (t.layout() == key.layout ||
                          (key.layout == TIDE_LAYOUT_ANY && t.layout() != TIDE_LAYOUT_OPAQUE)) &&
                             t.dtype() == WantedType(key, b) && t.place() == op.kernel_place();
      if (ready && tr.last_plan.empty()) {
        tr.result = nullptr;
        continue;
      }
      tr.result = nullptr;
      tr.result = TransformInput(op, b, i, &tr, counts);
    }
}

const LoDTensor* CurrentCopyOf(const PreparedBlock& block, const LoDTensor& src,
                               const Place& place) {
  if (!src.initialized() || !src.holder()) return nullptr;
  const uint64_t content = src.holder()->content_version();
  if (content == 0) return nullptr;  // writes to it go unseen: nothing derived from it holds
  for (size_t i = 0; i < block.num_ops(); ++i)
    for (const ArgBinding& b : block.op(i).inputs())
      for (const InputTransform& t : b.transforms) {
        const ConversionStamp& s = t.cached_stamp;
        if (!t.cached || s.source != &src || s.content != content || s.shape != src.version() ||
            s.offset != src.offset() || s.layout != src.layout() || s.dtype != src.dtype())
          continue;
        const LoDTensor* copy = t.cached;
        if (copy->place() == place && copy->dtype() == src.dtype() &&
            copy->layout() == src.layout() && copy->holder() &&
            copy->holder()->content_version() == t.cached_content)
          return copy;
      }
  return nullptr;
}

namespace {

// `t` in a plain layout; `what` names it in the error when no plugin converts it.
void MakePlain(LoDTensor* t, const std::string& what) {
  if (!t->initialized() || !NeedsLayoutTransform(t->layout(), TIDE_LAYOUT_ANY)) return;
  Place at = t->place();
  const TransformEntry* e = FindLayoutTransformTo(at.kind, t->layout(), TIDE_LAYOUT_ANY);
  if (!e)
    TIDE_FAIL(TIDE_UNIMPLEMENTED, what, " is in layout ", LayoutName(t->layout()),
              " and no plugin registers a ", at.kind_name(), " transform to a plain layout");
  LoDTensor plain;
  Apply(*e, *t, &plain, DeviceContextPool::Global().Get(at),
        StrCat(what, ": ", LayoutTransformName(*e)));
  *t = std::move(plain);
}

}  // namespace

void CastInPlace(LoDTensor* t, DataType to, const std::string& what) {
  MakePlain(t, what);  // a cast reads dense data (see TransformInput)
  const Place at = t->place();
  const TransformEntry& e = FindCastOrFail(at, t->dtype(), to, [&] { return what; });
  LoDTensor cast;
  Apply(e, *t, &cast, DeviceContextPool::Global().Get(at), StrCat(what, ": cast ", CastName(e)));
  *t = std::move(cast);
}

void ToPlainLayout(LoDTensor* t) { MakePlain(t, "a fetched tensor"); }

}  // namespace tide::core
