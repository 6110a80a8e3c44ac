// mkldnn_context.h: the oneDNN side of the device_mkldnn plugin: one engine and a primitive cache
// per CPU place (the "MKLDNNDeviceContext"), a stream per place and thread, the mapping between
// Tide tensors (plain, or layout ONEDNN with a dnnl format tag as their format code) and oneDNN
// memory, and an execution helper whose scratch memory comes from the core's allocator.
//
// Threading: Debian's libdnnl 2.6 is built with DNNL_CPU_RUNTIME=OMP (libgomp), so a primitive
// runs on OpenMP threads (OMP_NUM_THREADS), not on Tide's Eigen pool; see README.md here.
#pragma once

#include <cstdint>
#include <dnnl.hpp>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <tide/low_precision.hpp>
#include <tide/ops/dims.hpp>
#include <tide/plugin.hpp>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "converted_cache.h"

namespace tide_mkldnn {

using dnnl::memory;
using tide::Dims;
using tide::KernelContext;
using tide::Tensor;
using tide::ops::DimsProduct;
using Tag = memory::format_tag;

constexpr const char* kPluginName = "device_mkldnn";

// ---------------------------------------------------------------------------------------------
// A bounded, thread-safe LRU map from a key string to a shared object (primitive descriptors,
// primitives). Values are shared_ptrs so an entry evicted while another thread runs it stays
// alive until that thread is done.
class PrimitiveCache {
 public:
  explicit PrimitiveCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // The value under `key`, made by `make()` (outside the lock) when absent.
  template <typename T, typename Make>
  std::shared_ptr<T> GetOrCreate(const std::string& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        ++hits_;
        return std::static_pointer_cast<T>(it->second->second);
      }
    }
    std::shared_ptr<T> made = std::make_shared<T>(make());
    std::lock_guard<std::mutex> lock(mu_);
    ++misses_;
    auto it = map_.find(key);
    if (it != map_.end()) {  // another thread made it meanwhile: keep theirs
      lru_.splice(lru_.begin(), lru_, it->second);
      return std::static_pointer_cast<T>(it->second->second);
    }
    lru_.emplace_front(key, made);
    map_[key] = lru_.begin();
    while (map_.size() > capacity_) {
      map_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return made;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
  }
  size_t capacity() const { return capacity_; }
  uint64_t hits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return hits_;
  }
  uint64_t misses() const {
    std::lock_guard<std::mutex> lock(mu_);
    return misses_;
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<void>>;
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;
  std::unordered_map<std::string, std::list<Entry>::iterator> map_;
  uint64_t hits_ = 0, misses_ = 0;
};

// A thread-safe set of keys.
class KeySet {
 public:
  void Insert(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    keys_.insert(key);
  }
  bool Contains(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    return keys_.count(key) > 0;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_set<std::string> keys_;
};

// What the plugin keeps per CPU place: the engine, the primitive cache, the converted inputs and
// max pooling's workspaces (pool_kernels.cc).
struct MkldnnDeviceContext {
  explicit MkldnnDeviceContext(size_t cache_capacity)
      : engine(dnnl::engine::kind::cpu, 0),
        cache(cache_capacity),
        converted(cache_capacity),
        workspaces(cache_capacity) {}
  dnnl::engine engine;
  PrimitiveCache cache;
  ConvertedCache converted;
  ConvertedCache workspaces;  // a forward's workspace, for its grad: one per pooling geometry
  KeySet workspaces_wanted;   // the pooling geometries whose grad has run
};

// The context of the place behind `dctx` (the core's device context for a CPU place), made on
// first use and kept for the life of the process.
MkldnnDeviceContext& ContextFor(TideDeviceContext* dctx);
// This thread's stream on `c`'s engine. oneDNN CPU streams are cheap and not meant to be shared
// between threads that submit concurrently, so each (place, thread) pair has one.
dnnl::stream& StreamFor(MkldnnDeviceContext& c);

// ---------------------------------------------------------------------------------------------
// Tensors <-> oneDNN memory.

memory::dims ToDnnlDims(const Dims& d);
// The dense row-major tag of a rank: a, ab, abc, abcd, ...
Tag PlainTag(size_t rank);
memory::data_type ToDnnlType(TideDataType t);
// The Tide data type of oneDNN's `t` (the inverse of ToDnnlType).
TideDataType FromDnnlType(memory::data_type t);
// The oneDNN data type of a kernel's element type: f32 for float, bf16 for tide::bfloat16.
template <typename T>
constexpr memory::data_type DnnlTypeOf() {
  static_assert(std::is_same<T, float>::value || std::is_same<T, tide::bfloat16>::value,
                "the oneDNN kernels compute in float32 or bfloat16");
  return std::is_same<T, float>::value ? memory::data_type::f32 : memory::data_type::bf16;
}
// True for the float32 instantiation of a kernel: the one issue 17's speed rules ("decline where
// the plain kernel is faster") apply to. A bfloat16 kernel's alternative is the plain float32
// kernel with every input widened and every output rounded (docs/data_types.md), so it declines
// only what it cannot compute.
template <typename T>
constexpr bool kFloat32Kernel = std::is_same<T, float>::value;

// True when `t` holds blocked oneDNN data (layout ONEDNN with a format tag).
bool IsBlocked(const Tensor& t);
// The memory descriptor of what `t` holds: its format tag when blocked, else dense row-major
// over its (logical) dims, in its data type. Checks the dtype is float32 or bfloat16 and the layout
// is one the plugin reads.
memory::desc DescOf(const Tensor& t, const char* op, const char* what);
// DescOf for data of any type oneDNN knows (the int8 kernels' u8 / s8 too).
memory::desc DescOfAnyType(const Tensor& t, const char* op, const char* what);

// A format tag `md` is exactly (dense, no padding beyond its dims' elements), among those an
// output may be stored in; Tag::undef when none. The plain tag comes first.
Tag StorableTag(const memory::desc& md, const memory::dims& dims);

// True when oneDNN runs its AVX-512 kernels here (the CPU has them and ONEDNN_MAX_CPU_ISA allows
// them).
bool HasAvx512();
// What oneDNN computes bfloat16 with here: "AMX" (avx512_core_amx), "AVX-512 BF16"
// (avx512_core_bf16: native dot products), "AVX-512 (bf16 emulated)" (avx512_core: oneDNN
// converts to float32 in registers), or "" where oneDNN has no bfloat16 jit kernels (AVX2 and
// below: only its reference loops, slower than the widened float32 kernels).
std::string Bf16Isa();
// Declines a bfloat16 kernel's run (UNIMPLEMENTED: the executor runs the float32 kernel on the
// widened data) where Bf16Isa() is "".
void DeclineWithoutBf16Isa(const char* op);

// The tag chosen for plain -> ONEDNN conversions: channel blocks of 16 (AVX-512) or 8 when the
// channel count divides, else the plain tag.
Tag DefaultBlockedTag(const memory::dims& dims);

// True when `md` holds more elements than its dims (blocked formats padding a dim to the block).
bool IsPadded(const memory::desc& md);

// Stores `t`'s layout for data in tag `tag`: plain (layout ANY, format 0) for the plain tag,
// else layout ONEDNN with `tag` as its format code.
void SetLayoutFor(Tensor& t, Tag tag, size_t rank);

// A stable text key for a cache, built from values.
class Key {
 public:
  explicit Key(const char* op) : s_(op) {}
  Key& operator()(int64_t v) {
    s_ += ':';
    s_ += std::to_string(v);
    return *this;
  }
  Key& operator()(const std::string& v) {
    s_ += ':';
    s_ += v;
    return *this;
  }
  Key& operator()(const char* v) { return (*this)(std::string(v)); }
  Key& operator()(const std::vector<int64_t>& v) {
    s_ += ":[";
    for (int64_t x : v) {
      s_ += std::to_string(x);
      s_ += ',';
    }
    s_ += ']';
    return *this;
  }
  Key& operator()(const std::vector<int32_t>& v) {
    return (*this)(std::vector<int64_t>(v.begin(), v.end()));
  }
  // A tensor: its dims, its format (0 when plain) and its data type.
  Key& operator()(const Tensor& t) {
    (*this)(t.dims());
    (*this)(IsBlocked(t) ? t.format() : int64_t(0));
    return (*this)(int64_t(t.dtype()));
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

// ---------------------------------------------------------------------------------------------
// Running primitives for one kernel (or one transform) call.
class Exec {
 public:
  // In a kernel: temporaries from KernelContext::TempBuffer.
  explicit Exec(const KernelContext& ctx);
  // In a transform: temporaries in tensors the plugin owns for the call.
  explicit Exec(TideDeviceContext* dctx);
  ~Exec() = default;
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;

  MkldnnDeviceContext& context() { return *c_; }
  const dnnl::engine& engine() const { return c_->engine; }
  PrimitiveCache& cache() { return c_->cache; }

  // Scratch memory on the place, alive until the call returns (64-byte aligned).
  void* Temp(size_t bytes);
  memory TempMemory(const memory::desc& md) { return memory(md, engine(), Temp(md.get_size())); }
  // A oneDNN view of `t`'s data (read only by convention).
  memory View(const Tensor& t, const char* op, const char* what);
  memory View(const memory::desc& md, const void* data) {
    return memory(md, engine(), const_cast<void*>(data));
  }
  // `m` in descriptor `want`: `m` itself when it already is, else a reordered temporary.
  memory Convert(const memory& m, const memory::desc& want);
  // Convert for `m` viewing tensor `t`'s data, an input that rarely changes (a filter): the
  // reordered copy is kept in the place's ConvertedCache until t's bytes change (never cached
  // when their writes go unseen: content version 0).
  // `copy`, when given, gets the kept copy the result views (null when `m` needed no reorder).
  memory ConvertKept(const Tensor& t, const memory& m, const memory::desc& want,
                     std::shared_ptr<ConvertedCopy>* copy = nullptr);
  // New storage of `md`'s size for a ConvertedCache, made from bytes of `content_version`; kept
  // alive until the call returns.
  std::shared_ptr<ConvertedCopy> NewKept(const memory::desc& md, uint64_t content_version);
  // The copy under `key` in `cache` if made from `content_version` (kept alive until the call
  // returns), else null.
  std::shared_ptr<ConvertedCopy> FindKept(ConvertedCache& cache, const std::string& key,
                                          uint64_t content_version);
  // dst <- src, converting the format (a cached reorder primitive); with `scales`, each value
  // multiplied by its scale (oneDNN's output scales: one, or one per index of the dims in `mask`)
  // and converted to dst's type as oneDNN does (rounded half to even, saturated).
  void Reorder(const memory& src, const memory& dst, const std::vector<float>& scales = {},
               int mask = 0);
  // Runs `p`, adding a scratchpad of `pd`'s size (primitives are made with a user scratchpad).
  void Run(const dnnl::primitive& p, const dnnl::primitive_desc_base& pd,
           std::unordered_map<int, memory> args);
  // Waits for everything queued on this thread's stream.
  void Wait() { stream_->wait(); }
  dnnl::stream& stream() { return *stream_; }

 private:
  const KernelContext* kctx_ = nullptr;
  tide::Place place_;
  MkldnnDeviceContext* c_;
  dnnl::stream* stream_;
  std::vector<tide::OwnedTensor> owned_;
  std::vector<std::shared_ptr<ConvertedCopy>> kept_;
};

// Primitive attributes every kernel uses: a user-provided scratchpad (so the core's allocator
// counts it).
dnnl::primitive_attr DefaultAttr();

// A primitive's arguments kept for reruns (a convolution's kernel state): the kernel points their
// memories at each run's tensors; the scratchpad's buffer is each run's own.
struct KeptArgs {
  std::unordered_map<int, memory> args;
  memory scratch;

  // Keeps `a` for a primitive of `pd`, with a scratchpad placeholder where it needs one.
  void Keep(std::unordered_map<int, memory> a, const dnnl::primitive_desc_base& pd,
            const dnnl::engine& engine) {
    args = std::move(a);
    if (pd.scratchpad_desc().get_size() > 0) {
      scratch = memory(pd.scratchpad_desc(), engine, DNNL_MEMORY_NONE);
      args[DNNL_ARG_SCRATCHPAD] = scratch;
    }
  }
  // Runs `p` on them with this run's scratchpad, and waits.
  void Run(Exec& e, const dnnl::primitive& p) {
    if (scratch) scratch.set_data_handle(e.Temp(scratch.get_desc().get_size()));
    p.execute(e.stream(), args);
    e.Wait();
  }
};

// ---------------------------------------------------------------------------------------------
// Output helpers.

// Allocates `out` with dims `dims` for data described by `md` when `md` is storable (a known
// tag, no padding): sets its layout and format and returns a memory over it. Otherwise returns an
// empty memory and leaves `out` alone.
memory TryOutput(Exec& e, Tensor& out, const Dims& dims, const memory::desc& md,
                 const tide::Place& place);
// `result` (any descriptor) written into `out` as plain dense data with `dims`, in type `dt`
// (undef: result's own; another converts, e.g. a float32 result rounded to bfloat16).
void StorePlain(Exec& e, const memory& result, Tensor& out, const Dims& dims,
                const tide::Place& place, memory::data_type dt = memory::data_type::undef);
// A memory the primitive can write its `md` result to, backed by `out` when `md` is plain dense
// data (then *direct = true), else a temporary to be stored with StorePlain.
memory PlainOutputOrTemp(Exec& e, Tensor& out, const Dims& dims, const memory::desc& md,
                         const tide::Place& place, bool* direct);

// A memory the primitive can write its `md` result to, backed by `out` whenever `md` is a format
// Tide stores (plain or blocked: the next oneDNN kernel then reads it without a reorder; a plain
// kernel gets it converted by the core), else a temporary to be stored with StorePlain
// (*direct = false).
memory StorableOutputOrTemp(Exec& e, Tensor& out, const Dims& dims, const memory::desc& md,
                            const tide::Place& place, bool* direct);

// The dense row-major copy of any tensor (a reorder into a temporary when it is blocked).
memory PlainView(Exec& e, const Tensor& t, const char* op, const char* what);
// PlainView of data of any type oneDNN knows (DescOfAnyType).
memory PlainViewAnyType(Exec& e, const Tensor& t, const char* op, const char* what);

// Paddle's data_format = "NHWC" (conv2d, pool2d): a Tide tensor of dims [N, H, W, C] is oneDNN's
// logical [N, C, H, W] in tag nhwc. NhwcView reads one (blocked data is made plain first);
// StoreNhwc writes `result` (any descriptor of logical dims NCHW) into `out` as plain [N, H, W, C].
bool DataFormatNhwc(const KernelContext& ctx);
memory NhwcView(Exec& e, const Tensor& t, const char* op, const char* what);
void StoreNhwc(Exec& e, const memory& result, Tensor& out, const Dims& nhwc_dims,
               const tide::Place& place);

// oneDNN's reference loops ("ref:...", "simple_...": what it runs when no jit kernel takes the
// shapes and formats, e.g. pooling of plain NCHW data on AVX2), which Tide's plain kernels beat.
bool IsReferenceImpl(const dnnl::primitive_desc_base& pd);
// Declines the run (an UNIMPLEMENTED error, before anything is written: the plain kernel runs)
// when `pd` is a reference implementation.
void DeclineReferenceImpl(const char* op, const dnnl::primitive_desc_base& pd);

// Declines the run (UNIMPLEMENTED, before anything is written) when one of `tensors` holds no
// element: oneDNN's primitives are not made for empty shapes (some divide by a zero dim while
// picking an implementation), and the plain kernels give empty tensors the SDK's semantics.
void DeclineEmpty(const char* op, std::initializer_list<const Tensor*> tensors);

// Runs `fn`, turning oneDNN errors into tide errors that name the op.
template <typename F>
auto Guarded(const char* op, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const dnnl::error& err) {
    TIDE_THROW(TIDE_INTERNAL, "op '", op, "' (oneDNN kernel): ", err.what(), " (status ",
               static_cast<int>(err.status), ")");
  }
}

}  // namespace tide_mkldnn

// Registers kernel template `fn` for float32 under {cpu, float32, ONEDNN, mkldnn}.
#define TIDE_MKLDNN_KERNEL(op_type, fn) \
  TIDE_REGISTER_KERNEL_EX(op_type, "cpu", TIDE_LAYOUT_ONEDNN, "mkldnn", 0, fn, float)

namespace tide_mkldnn {
// A bfloat16 kernel: `fn`, run where oneDNN has bfloat16 jit kernels, declined elsewhere.
template <void (*fn)(KernelContext&)>
void OnBf16Isa(KernelContext& ctx) {
  DeclineWithoutBf16Isa(ctx.op_type());
  fn(ctx);
}
}  // namespace tide_mkldnn

// Registers `fn` for float32 (as TIDE_MKLDNN_KERNEL) and for bfloat16 under
// {cpu, bfloat16, ONEDNN, mkldnn}. The executor picks a place's bfloat16 kernel for bfloat16 data
// with or without use_mkldnn (it is the place's only one), so AMP's rewrite, which asks which
// types a place has kernels for, puts these ops in bfloat16 on the CPU.
#define TIDE_MKLDNN_KERNEL_F32_BF16(op_type, fn)                                        \
  TIDE_MKLDNN_KERNEL(op_type, fn);                                                      \
  TIDE_ON_REGISTER([](tide::Registrar& r) {                                             \
    r.Kernel(op_type, "cpu", TIDE_BF16, &::tide_mkldnn::OnBf16Isa<&fn<tide::bfloat16>>, \
             TIDE_LAYOUT_ONEDNN, "mkldnn", 0);                                          \
  })
