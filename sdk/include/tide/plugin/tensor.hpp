// tide/plugin/tensor.hpp: views of the core's tensors: tide::Tensor (a LoDTensor, read-only
// when made from a const handle), tide::OwnedTensor (one the plugin owns), tide::SelectedRows and
// tide::TensorArray.
#ifndef TIDE_PLUGIN_TENSOR_HPP_
#define TIDE_PLUGIN_TENSOR_HPP_

#include <cstdint>
#include <functional>
#include <memory>
#include <tide/plugin/host.hpp>
#include <tide/plugin/types.hpp>
#include <utility>
#include <vector>

namespace tide {

// A view made from a const TideTensor* (a kernel's input, a transform's source) is read-only:
// its mutators throw (FAILED_PRECONDITION), so a kernel cannot change its inputs by mistake;
// the copy of a read-only view is read-only too. Write outputs instead.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TideTensor* t) : t_(t) {}
  explicit Tensor(const TideTensor* t) : t_(const_cast<TideTensor*>(t)), read_only_(true) {}
  bool read_only() const { return read_only_; }
  TideTensor* c() const { return t_; }
  explicit operator bool() const { return t_ != nullptr; }

  TideDataType dtype() const { return Host().Tensor_DataType(t_); }
  int32_t rank() const { return Host().Tensor_Rank(t_); }
  // A copy, made at each call: keep it in a variable before taking iterators
  // (Dims(x.dims().begin(), x.dims().begin() + k) mixes two temporaries' iterators; a vendor's
  // first kernel crashed so).
  Dims dims() const {
    const int64_t* d = Host().Tensor_Dims(t_);
    return Dims(d, d + rank());
  }
  int64_t dim(int i) const { return Host().Tensor_Dims(t_)[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return Host().Tensor_Numel(t_); }
  TideLayout layout() const { return Host().Tensor_Layout(t_); }
  void set_layout(TideLayout l) { Host().Tensor_SetLayout(Writable("set_layout"), l); }
  // The layout's own format code (see Tensor_Format); 0 when none was set.
  int64_t format() const { return Host().Tensor_Format(t_); }
  void set_format(int64_t f) { Host().Tensor_SetFormat(Writable("set_format"), f); }
  // Names the bytes as they are now (see Tensor_ContentVersion): 0 when they must not be cached.
  uint64_t content_version() const { return TIDE_HOST_FN(Tensor_ContentVersion)(t_); }
  Place place() const { return Place(Host().Tensor_Place(t_)); }
  bool initialized() const { return Host().Tensor_Data(t_) != nullptr; }

  void Resize(const Dims& d) {
    ThrowIfError(
        Host().Tensor_Resize(Writable("Resize"), d.data(), static_cast<int32_t>(d.size())));
  }
  // Takes other's dims (no allocation: for hot kernels).
  void ResizeLike(const Tensor& other) {
    ThrowIfError(Host().Tensor_Resize(Writable("ResizeLike"), Host().Tensor_Dims(other.t_),
                                      Host().Tensor_Rank(other.t_)));
  }
  // Same rank and dims as other (no allocation).
  bool SameDims(const Tensor& other) const {
    int32_t r = rank();
    if (r != other.rank()) return false;
    const int64_t* a = Host().Tensor_Dims(t_);
    const int64_t* b = Host().Tensor_Dims(other.t_);
    for (int32_t i = 0; i < r; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  const void* raw_data() const { return Host().Tensor_Data(t_); }
  template <typename T>
  const T* data() const {
    TIDE_CHECK(DataTypeOf<T>() == dtype(), "tensor holds ", DataTypeName(dtype()), ", read as ",
               DataTypeName(DataTypeOf<T>()));
    return static_cast<const T*>(Host().Tensor_Data(t_));
  }
  void* mutable_data(TideDataType dtype, const Place& place) {
    void* p = nullptr;
    ThrowIfError(Host().Tensor_MutableData(Writable("mutable_data"), dtype, place.c(), &p));
    return p;
  }
  template <typename T>
  T* mutable_data(const Place& place) {
    return static_cast<T*>(mutable_data(DataTypeOf<T>(), place));
  }
  // Resize, then allocate.
  template <typename T>
  T* mutable_data(const Dims& d, const Place& place) {
    Resize(d);
    return mutable_data<T>(place);
  }
  void ShareDataWith(const Tensor& src) {
    ThrowIfError(Host().Tensor_ShareDataWith(Writable("ShareDataWith"), src.t_));
  }
  // Makes `data` (bytes long, on place) this tensor's memory for its current dims, without a
  // copy; `release` runs once no tensor uses it (not when this throws).
  void AdoptData(void* data, size_t bytes, TideDataType dtype, const Place& place,
                 std::function<void()> release) {
    TideTensor* self = Writable("AdoptData");
    auto* keep = new std::function<void()>(std::move(release));
    TideStatus* st = Host().Tensor_AdoptData(
        self, data, bytes, dtype, place.c(),
        [](void* arg) {
          std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
          (*fn)();
        },
        keep);
    if (st) delete keep;
    ThrowIfError(st);
  }
  void CopyFrom(const Tensor& src, const Place& place, TideDeviceContext* ctx = nullptr) {
    ThrowIfError(Host().Tensor_CopyTo(src.t_, place.c(), ctx, Writable("CopyFrom")));
  }

  LoD lod() const {
    LoD out(Host().Tensor_LoDLevels(t_));
    for (size_t l = 0; l < out.size(); ++l) {
      size_t n = 0;
      const uint64_t* o = Host().Tensor_LoD(t_, l, &n);
      out[l].assign(o, o + n);
    }
    return out;
  }
  void set_lod(const LoD& lod) {
    std::vector<const uint64_t*> ptrs;
    std::vector<size_t> lens;
    for (const auto& level : lod) {
      ptrs.push_back(level.data());
      lens.push_back(level.size());
    }
    ThrowIfError(Host().Tensor_SetLoD(Writable("set_lod"), ptrs.data(), lens.data(), lod.size()));
  }

 protected:
  TideTensor* Writable(const char* what) const {
    if (read_only_)
      TIDE_THROW(TIDE_FAILED_PRECONDITION, what,
                 " on a read-only tensor (a kernel's input): ", "write an output instead");
    return t_;
  }
  TideTensor* t_ = nullptr;
  bool read_only_ = false;
};

// A tensor owned by the plugin (scratch space that outlives one call, staging copies).
class OwnedTensor : public Tensor {
 public:
  OwnedTensor() : Tensor(Host().Tensor_Create()) {}
  ~OwnedTensor() { Host().Tensor_Destroy(t_); }
  OwnedTensor(OwnedTensor&& o) noexcept : Tensor(o.t_) { o.t_ = nullptr; }
  OwnedTensor& operator=(OwnedTensor&& o) noexcept {
    std::swap(t_, o.t_);
    return *this;
  }
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
};

class SelectedRows {
 public:
  explicit SelectedRows(TideSelectedRows* s) : s_(s) {}
  TideSelectedRows* c() const { return s_; }
  int64_t height() const { return Host().SelectedRows_Height(s_); }
  void set_height(int64_t h) { Host().SelectedRows_SetHeight(s_, h); }
  std::vector<int64_t> rows() const {
    size_t n = 0;
    const int64_t* r = Host().SelectedRows_Rows(s_, &n);
    return std::vector<int64_t>(r, r + n);
  }
  void set_rows(const std::vector<int64_t>& rows) {
    Host().SelectedRows_SetRows(s_, rows.data(), rows.size());
  }
  Tensor value() const { return Tensor(Host().SelectedRows_Value(s_)); }

 private:
  TideSelectedRows* s_;
};

class TensorArray {
 public:
  explicit TensorArray(TideTensorArray* a) : a_(a) {}
  size_t size() const { return Host().TensorArray_Size(a_); }
  void resize(size_t n) { Host().TensorArray_Resize(a_, n); }
  Tensor at(size_t i) const {
    TideTensor* t = Host().TensorArray_At(a_, i);
    if (!t) TIDE_THROW(TIDE_OUT_OF_RANGE, "tensor array index ", i, " >= size ", size());
    return Tensor(t);
  }

 private:
  TideTensorArray* a_;
};

}  // namespace tide

#endif  // TIDE_PLUGIN_TENSOR_HPP_
