// mkldnn_context.cc: per-place engines and primitive caches, per-thread streams, tensor <-> oneDNN
// memory mapping and the execution helper shared by the kernels and the layout transforms.
#include "mkldnn_context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tide_mkldnn {

namespace {

// The cache bound: --mkldnn_cache_capacity when the core has that flag, else the environment
// variable TIDE_MKLDNN_CACHE_CAPACITY, else 1024 entries per place.
size_t CacheCapacity() {
  std::string v = tide::Flag("mkldnn_cache_capacity", "");
  if (v.empty()) {
    const char* env = std::getenv("TIDE_MKLDNN_CACHE_CAPACITY");
    if (env) v = env;
  }
  long n = v.empty() ? 0 : std::atol(v.c_str());
  return n > 0 ? static_cast<size_t>(n) : 1024;
}

}  // namespace

MkldnnDeviceContext& ContextFor(TideDeviceContext* dctx) {
  // Lives forever: plugins are never unloaded, and kernels may run during static teardown.
  static std::mutex mu;
  static auto* contexts =
      new std::unordered_map<TideDeviceContext*, std::unique_ptr<MkldnnDeviceContext>>;
  thread_local TideDeviceContext* last_key = nullptr;
  thread_local MkldnnDeviceContext* last = nullptr;
  if (last_key == dctx && last) return *last;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*contexts)[dctx];
  if (!slot) {
    TIDE_CHECK(dctx != nullptr, "device_mkldnn: no device context");
    tide::Place place(tide::Host().DeviceContext_Place(dctx));
    TIDE_CHECK(place.kind_name() == "cpu", "device_mkldnn: oneDNN kernels run on cpu places, not ",
               place.ToString());
    slot = std::make_unique<MkldnnDeviceContext>(CacheCapacity());
  }
  last_key = dctx;
  last = slot.get();
  return *slot;
}

dnnl::stream& StreamFor(MkldnnDeviceContext& c) {
  thread_local std::unordered_map<MkldnnDeviceContext*, std::unique_ptr<dnnl::stream>> streams;
  auto& s = streams[&c];
  if (!s) s = std::make_unique<dnnl::stream>(c.engine);
  return *s;
}

// ---------------------------------------------------------------------------------------------

memory::dims ToDnnlDims(const Dims& d) { return memory::dims(d.begin(), d.end()); }

Tag PlainTag(size_t rank) {
  switch (rank) {
    case 1:
      return Tag::a;
    case 2:
      return Tag::ab;
    case 3:
      return Tag::abc;
    case 4:
      return Tag::abcd;
    case 5:
      return Tag::abcde;
    case 6:
      return Tag::abcdef;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "device_mkldnn: tensors of rank ", rank,
                 " are not supported by the oneDNN kernels (ranks 1 to 6)");
  }
}

memory::data_type ToDnnlType(TideDataType t) {
  switch (t) {
    case TIDE_FP32:
      return memory::data_type::f32;
    case TIDE_BF16:
      return memory::data_type::bf16;
    case TIDE_FP16:
      return memory::data_type::f16;
    case TIDE_INT32:
      return memory::data_type::s32;
    case TIDE_INT8:
      return memory::data_type::s8;
    case TIDE_UINT8:
      return memory::data_type::u8;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "device_mkldnn: oneDNN has no data type for ",
                 tide::DataTypeName(t));
  }
}

TideDataType FromDnnlType(memory::data_type t) {
  switch (t) {
    case memory::data_type::f32:
      return TIDE_FP32;
    case memory::data_type::bf16:
      return TIDE_BF16;
    case memory::data_type::f16:
      return TIDE_FP16;
    case memory::data_type::s32:
      return TIDE_INT32;
    case memory::data_type::s8:
      return TIDE_INT8;
    case memory::data_type::u8:
      return TIDE_UINT8;
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "device_mkldnn: oneDNN data type ", static_cast<int>(t),
                 " has no Tide data type");
  }
}

bool IsBlocked(const Tensor& t) { return t.layout() == TIDE_LAYOUT_ONEDNN; }

memory::desc DescOf(const Tensor& t, const char* op, const char* what) {
  TIDE_CHECK(t.dtype() == TIDE_FP32 || t.dtype() == TIDE_BF16, "op '", op,
             "' (oneDNN kernel): ", what, " holds ", tide::DataTypeName(t.dtype()),
             "; the oneDNN kernels take float32 or bfloat16");
  return DescOfAnyType(t, op, what);
}

memory::desc DescOfAnyType(const Tensor& t, const char* op, const char* what) {
  Dims d = t.dims();
  TIDE_CHECK(!d.empty(), "op '", op, "' (oneDNN kernel): ", what, " has rank 0");
  const memory::data_type dt = ToDnnlType(t.dtype());
  switch (t.layout()) {
    case TIDE_LAYOUT_ANY:
    case TIDE_LAYOUT_NCHW:
      return memory::desc(ToDnnlDims(d), dt, PlainTag(d.size()));
    case TIDE_LAYOUT_ONEDNN: {
      const int64_t f = t.format();
      TIDE_CHECK(f > 0 && f < static_cast<int64_t>(dnnl_format_tag_last), "op '", op,
                 "' (oneDNN kernel): ", what, " is in layout ONEDNN with no valid format tag (", f,
                 ")");
      return memory::desc(ToDnnlDims(d), dt, static_cast<Tag>(f));
    }
    default:
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): ", what,
                 " is in layout NHWC; the oneDNN kernels read NCHW (plain) or ONEDNN data");
  }
}

namespace {
std::vector<Tag> Candidates(size_t rank) {
  switch (rank) {
    case 3:
      return {Tag::abc, Tag::aBc16b, Tag::aBc8b, Tag::acb};
    case 4:
      return {Tag::abcd, Tag::aBcd16b, Tag::aBcd8b, Tag::aBcd4b, Tag::acdb};
    case 5:
      return {Tag::abcde, Tag::aBcde16b, Tag::aBcde8b, Tag::acdeb};
    default:
      return {PlainTag(rank)};
  }
}
}  // namespace

Tag StorableTag(const memory::desc& md, const memory::dims& dims) {
  if (dims.empty() || dims.size() > 6) return Tag::undef;
  int64_t n = 1;
  for (auto d : dims) n *= d;
  if (md.get_size() != static_cast<size_t>(n) * memory::data_type_size(md.data_type()))
    return Tag::undef;
  for (Tag t : Candidates(dims.size()))
    if (memory::desc(dims, md.data_type(), t) == md) return t;
  return Tag::undef;
}

bool IsPadded(const memory::desc& md) {
  int64_t n = 1;
  for (auto d : md.dims()) n *= d;
  return md.get_size() > static_cast<size_t>(n) * memory::data_type_size(md.data_type());
}

bool HasAvx512() {
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

std::string Bf16Isa() {
  static const std::string isa = [] {
    const auto has = [](dnnl_cpu_isa_t want) {
      const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
      return (isa & want) == static_cast<unsigned>(want);
    };
    if (has(dnnl_cpu_isa_avx512_core_amx)) return std::string("AMX");
    if (has(dnnl_cpu_isa_avx512_core_bf16)) return std::string("AVX-512 BF16");
    if (has(dnnl_cpu_isa_avx512_core)) return std::string("AVX-512 (bf16 emulated)");
    return std::string();
  }();
  return isa;
}

void DeclineWithoutBf16Isa(const char* op) {
  if (Bf16Isa().empty())
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
               "' (oneDNN bfloat16 kernel): oneDNN has no bfloat16 jit kernels on this CPU "
               "(or under ONEDNN_MAX_CPU_ISA), only its reference loops; the float32 kernel "
               "runs the widened data faster");
}

Tag DefaultBlockedTag(const memory::dims& dims) {
  if (dims.size() < 3 || dims.size() > 5) return PlainTag(dims.size());
  const bool avx512 = HasAvx512();
  const int64_t c = dims[1];
  auto pick = [&](int block) {
    switch (dims.size()) {
      case 3:
        return block == 16 ? Tag::aBc16b : Tag::aBc8b;
      case 4:
        return block == 16 ? Tag::aBcd16b : Tag::aBcd8b;
      default:
        return block == 16 ? Tag::aBcde16b : Tag::aBcde8b;
    }
  };
  if (avx512 && c % 16 == 0) return pick(16);
  if (c % 8 == 0) return pick(8);
  return PlainTag(dims.size());
}

void SetLayoutFor(Tensor& t, Tag tag, size_t rank) {
  if (tag == PlainTag(rank)) {
    t.set_layout(TIDE_LAYOUT_ANY);
    t.set_format(0);
  } else {
    t.set_layout(TIDE_LAYOUT_ONEDNN);
    t.set_format(static_cast<int64_t>(tag));
  }
}

dnnl::primitive_attr DefaultAttr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

// ---------------------------------------------------------------------------------------------

Exec::Exec(const KernelContext& ctx)
    : kctx_(&ctx),
      place_(ctx.place()),
      c_(&ContextFor(ctx.device_context())),
      stream_(&StreamFor(*c_)) {}

Exec::Exec(TideDeviceContext* dctx)
    : place_(tide::Host().DeviceContext_Place(dctx)),
      c_(&ContextFor(dctx)),
      stream_(&StreamFor(*c_)) {}

void* Exec::Temp(size_t bytes) {
  bytes = std::max<size_t>(bytes, 64);
  if (kctx_) return kctx_->TempBuffer<uint8_t>(bytes);
  owned_.emplace_back();
  tide::OwnedTensor& t = owned_.back();
  t.Resize({static_cast<int64_t>(bytes)});
  return t.mutable_data(TIDE_UINT8, place_);
}

memory Exec::View(const Tensor& t, const char* op, const char* what) {
  return memory(DescOf(t, op, what), engine(), const_cast<void*>(t.raw_data()));
}

memory Exec::Convert(const memory& m, const memory::desc& want) {
  if (m.get_desc() == want) return m;
  memory out = TempMemory(want);
  Reorder(m, out);
  return out;
}

memory Exec::ConvertKept(const Tensor& t, const memory& m, const memory::desc& want,
                         std::shared_ptr<ConvertedCopy>* copy_out) {
  if (copy_out) copy_out->reset();
  if (m.get_desc() == want) return m;
  const uint64_t version = t.content_version();
  if (version == 0) return Convert(m, want);
  const memory::desc sd = m.get_desc();
  std::string key("converted:");
  const void* source = t.raw_data();
  key.append(reinterpret_cast<const char*>(&source), sizeof(source));
  key.append(reinterpret_cast<const char*>(&sd.data), sizeof(sd.data));
  key.append(reinterpret_cast<const char*>(&want.data), sizeof(want.data));
  std::shared_ptr<ConvertedCopy> copy = FindKept(c_->converted, key, version);
  if (!copy) {
    copy = NewKept(want, version);
    Reorder(m, memory(want, engine(), copy->data));
    Wait();  // complete before another thread may read it
    c_->converted.Put(key, copy);
  }
  if (copy_out) *copy_out = copy;
  return memory(want, engine(), copy->data);
}

std::shared_ptr<ConvertedCopy> Exec::NewKept(const memory::desc& md, uint64_t content_version) {
  auto copy = std::make_shared<ConvertedCopy>();
  copy->content_version = content_version;
  copy->storage.Resize({static_cast<int64_t>(md.get_size() + 64)});
  auto raw = reinterpret_cast<uintptr_t>(copy->storage.mutable_data(TIDE_UINT8, place_));
  copy->data = reinterpret_cast<void*>((raw + 63) & ~uintptr_t(63));
  kept_.push_back(copy);  // alive until the call returns, even if evicted meanwhile
  return copy;
}

std::shared_ptr<ConvertedCopy> Exec::FindKept(ConvertedCache& cache, const std::string& key,
                                              uint64_t content_version) {
  std::shared_ptr<ConvertedCopy> copy = cache.Find(key, content_version);
  if (copy) kept_.push_back(copy);
  return copy;
}

void Exec::Reorder(const memory& src, const memory& dst, const std::vector<float>& scales,
                   int mask) {
  const memory::desc sd = src.get_desc(), dd = dst.get_desc();
  std::string key("reorder:");
  key.append(reinterpret_cast<const char*>(&sd.data), sizeof(sd.data));
  key.append(reinterpret_cast<const char*>(&dd.data), sizeof(dd.data));
  if (!scales.empty()) {
    key.append(reinterpret_cast<const char*>(&mask), sizeof(mask));
    key.append(reinterpret_cast<const char*>(scales.data()), scales.size() * sizeof(float));
  }
  struct Entry {
    dnnl::reorder::primitive_desc pd;
    dnnl::reorder prim;
  };
  auto entry = cache().GetOrCreate<Entry>(key, [&] {
    dnnl::primitive_attr attr = DefaultAttr();
    if (!scales.empty()) attr.set_output_scales(mask, scales);
    dnnl::reorder::primitive_desc pd(engine(), sd, engine(), dd, attr);
    return Entry{pd, dnnl::reorder(pd)};
  });
  Run(entry->prim, entry->pd, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
}

void Exec::Run(const dnnl::primitive& p, const dnnl::primitive_desc_base& pd,
               std::unordered_map<int, memory> args) {
  const memory::desc sp = pd.scratchpad_desc();
  if (sp.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = TempMemory(sp);
  p.execute(*stream_, args);
}

// ---------------------------------------------------------------------------------------------

memory TryOutput(Exec& e, Tensor& out, const Dims& dims, const memory::desc& md,
                 const tide::Place& place) {
  Tag tag = StorableTag(md, ToDnnlDims(dims));
  if (tag == Tag::undef) return memory();
  out.Resize(dims);
  void* p = out.mutable_data(FromDnnlType(md.data_type()), place);
  SetLayoutFor(out, tag, dims.size());
  return memory(md, e.engine(), p);
}

void StorePlain(Exec& e, const memory& result, Tensor& out, const Dims& dims,
                const tide::Place& place, memory::data_type dt) {
  if (dt == memory::data_type::undef) dt = result.get_desc().data_type();
  out.Resize(dims);
  void* p = out.mutable_data(FromDnnlType(dt), place);
  out.set_layout(TIDE_LAYOUT_ANY);
  out.set_format(0);
  memory dst(memory::desc(ToDnnlDims(dims), dt, PlainTag(dims.size())), e.engine(), p);
  e.Reorder(result, dst);
}

memory PlainOutputOrTemp(Exec& e, Tensor& out, const Dims& dims, const memory::desc& md,
                         const tide::Place& place, bool* direct) {
  memory::desc plain(ToDnnlDims(dims), md.data_type(), PlainTag(dims.size()));
  if (md == plain) {
    *direct = true;
    out.Resize(dims);
    void* p = out.mutable_data(FromDnnlType(md.data_type()), place);
    out.set_layout(TIDE_LAYOUT_ANY);
    out.set_format(0);
    return memory(plain, e.engine(), p);
  }
  *direct = false;
  return e.TempMemory(md);
}

bool IsReferenceImpl(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.rfind("ref", 0) == 0 || impl.rfind("simple", 0) == 0;
}

void DeclineEmpty(const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t->numel() == 0)
      TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op, "' (oneDNN kernel): an empty tensor ",
                 tide::ToString(t->dims()), ": the plain kernel takes it");
}

void DeclineReferenceImpl(const char* op, const dnnl::primitive_desc_base& pd) {
  if (IsReferenceImpl(pd))
    TIDE_THROW(TIDE_UNIMPLEMENTED, "op '", op,
               "' (oneDNN kernel): oneDNN would run its reference "
               "implementation '",
               pd.impl_info_str(), "', slower than the plain kernel");
}

memory StorableOutputOrTemp(Exec& e, Tensor& out, const Dims& dims, const memory::desc& md,
                            const tide::Place& place, bool* direct) {
  memory m = TryOutput(e, out, dims, md, place);
  *direct = bool(m);
  return m ? m : e.TempMemory(md);
}

memory PlainView(Exec& e, const Tensor& t, const char* op, const char* what) {
  DescOf(t, op, what);  // its checks
  return PlainViewAnyType(e, t, op, what);
}

memory PlainViewAnyType(Exec& e, const Tensor& t, const char* op, const char* what) {
  memory m = e.View(DescOfAnyType(t, op, what), t.raw_data());
  if (!IsBlocked(t)) return m;
  Dims d = t.dims();
  return e.Convert(m, memory::desc(ToDnnlDims(d), m.get_desc().data_type(), PlainTag(d.size())));
}

bool DataFormatNhwc(const KernelContext& ctx) {
  return ctx.HasAttr("data_format") && ctx.Attr<std::string>("data_format") == "NHWC";
}

memory NhwcView(Exec& e, const Tensor& t, const char* op, const char* what) {
  const Dims d = t.dims();
  TIDE_CHECK(d.size() == 4, "op '", op, "': ", what,
             " must be 4-D [N, H, W, C] with data_format "
             "NHWC, got ",
             tide::ToString(d));
  memory plain = PlainView(e, t, op, what);
  return e.View(memory::desc({d[0], d[3], d[1], d[2]}, plain.get_desc().data_type(), Tag::nhwc),
                plain.get_data_handle());
}

void StoreNhwc(Exec& e, const memory& result, Tensor& out, const Dims& nhwc_dims,
               const tide::Place& place) {
  const Dims& d = nhwc_dims;
  const memory::data_type dt = result.get_desc().data_type();
  out.Resize(d);
  void* p = out.mutable_data(FromDnnlType(dt), place);
  out.set_layout(TIDE_LAYOUT_ANY);
  out.set_format(0);
  e.Reorder(result, memory(memory::desc({d[0], d[3], d[1], d[2]}, dt, Tag::nhwc), e.engine(), p));
}

}  // namespace tide_mkldnn
