// tide/plugin/kernel_context.hpp: what a kernel sees: tide::KernelContext (its inputs, outputs,
// attributes, place, device context and extensions, scratch memory and kernel state).
#ifndef TIDE_PLUGIN_KERNEL_CONTEXT_HPP_
#define TIDE_PLUGIN_KERNEL_CONTEXT_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <tide/plugin/attributes.hpp>
#include <tide/plugin/host.hpp>
#include <tide/plugin/scope.hpp>
#include <tide/plugin/tensor.hpp>
#include <tide/plugin/types.hpp>
#include <vector>

namespace tide {

class KernelContext {
 public:
  explicit KernelContext(TideKernelContext* c) : c_(c) {}
  TideKernelContext* c() const { return c_; }
  const char* op_type() const { return Host().KernelContext_OpType(c_); }
  Place place() const { return Place(Host().KernelContext_Place(c_)); }
  TideDeviceContext* device_context() const { return Host().KernelContext_DeviceContext(c_); }
  // A device-extension struct (e.g. TideCpuContext for "tide.cpu"); throws when absent.
  template <typename T>
  const T& DeviceExtension(const char* name) const {
    const void* p = Host().DeviceContext_Extension(device_context(), name);
    if (!p)
      TIDE_THROW(TIDE_UNAVAILABLE, "op '", op_type(), "': device ", place().ToString(),
                 " has no extension '", name, "'");
    return *static_cast<const T*>(p);
  }
  // Sets `size` bytes at dst (memory of this place) to `value`, queued on the device context, on
  // any device (its memset, or a copy from the host).
  void Memset(void* dst, int32_t value, size_t size) const {
    ThrowIfError(TIDE_HOST_FN(DeviceContext_Memset)(device_context(), dst, value, size));
  }

  size_t InputCount(const char* param) const { return Host().KernelContext_InputCount(c_, param); }
  size_t OutputCount(const char* param) const {
    return Host().KernelContext_OutputCount(c_, param);
  }
  bool HasInput(const char* param, size_t i = 0) const {
    return Host().KernelContext_InputVar(c_, param, i) != nullptr;
  }
  bool HasOutput(const char* param, size_t i = 0) const {
    return Host().KernelContext_OutputVar(c_, param, i) != nullptr;
  }
  // The LoDTensor bound to input param[i]; throws with a clear message when absent.
  Tensor Input(const char* param, size_t i = 0) const {
    const TideTensor* t = Host().KernelContext_Input(c_, param, i);
    if (!t) MissingInput(param, i);
    return Tensor(t);
  }
  // An input that may be absent (a dispensable one): an empty view then.
  Tensor OptionalInput(const char* param, size_t i = 0) const {
    return Tensor(Host().KernelContext_Input(c_, param, i));
  }
  std::vector<Tensor> Inputs(const char* param) const {
    std::vector<Tensor> out;
    for (size_t i = 0, n = InputCount(param); i < n; ++i) out.push_back(Input(param, i));
    return out;
  }
  Tensor Output(const char* param, size_t i = 0) const {
    TideTensor* t = Host().KernelContext_Output(c_, param, i);
    if (!t) MissingOutput(param, i);
    return Tensor(t);
  }
  Tensor OptionalOutput(const char* param, size_t i = 0) const {
    return Tensor(Host().KernelContext_Output(c_, param, i));
  }
  std::vector<Tensor> Outputs(const char* param) const {
    std::vector<Tensor> out;
    for (size_t i = 0, n = OutputCount(param); i < n; ++i) out.push_back(Output(param, i));
    return out;
  }
  Variable InputVar(const char* param, size_t i = 0) const {
    return Variable(Host().KernelContext_InputVar(c_, param, i));
  }
  Variable OutputVar(const char* param, size_t i = 0) const {
    return Variable(Host().KernelContext_OutputVar(c_, param, i));
  }
  std::string InputName(const char* param, size_t i = 0) const {
    const char* n = Host().KernelContext_InputName(c_, param, i);
    return n ? n : "";
  }
  std::string OutputName(const char* param, size_t i = 0) const {
    const char* n = Host().KernelContext_OutputName(c_, param, i);
    return n ? n : "";
  }
  template <typename T>
  T Attr(const char* name) const {
    return detail::AttrReader<T>::Read(op_type(), name, Host().KernelContext_Attr(c_, name));
  }
  bool HasAttr(const char* name) const { return Host().KernelContext_Attr(c_, name) != nullptr; }
  // The op's state for this kernel (KernelContext_State in plugin_api.h): what the kernel
  // derived on an earlier run of this op, or null. The kernel keeps state of one type T.
  template <typename T>
  T* State() const {
    return static_cast<T*>(TIDE_HOST_FN(KernelContext_State)(c_));
  }
  // Hands `state` to the op (replacing and deleting the old one); the core deletes it when the
  // op goes or another kernel sets its own. Returns it, still usable for this run.
  template <typename T>
  T* SetState(std::unique_ptr<T> state) const {
    T* p = state.get();
    ThrowIfError(
        TIDE_HOST_FN(KernelContext_SetState)(c_, p, [](void* s) { delete static_cast<T*>(s); }));
    state.release();
    return p;
  }
  // Scratch memory freed when the kernel returns.
  template <typename T>
  T* TempBuffer(size_t count) const {
    void* p = nullptr;
    ThrowIfError(Host().KernelContext_TempAlloc(c_, count * sizeof(T), &p));
    return static_cast<T*>(p);
  }

 private:
  [[noreturn]] void MissingInput(const char* param, size_t i) const {
    Variable v = InputVar(param, i);
    if (!v) TIDE_THROW(TIDE_NOT_FOUND, "op '", op_type(), "' has no input ", param, "[", i, "]");
    TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op_type(), "' input ", param, " ('",
               InputName(param, i), "') does not hold a LoDTensor");
  }
  [[noreturn]] void MissingOutput(const char* param, size_t i) const {
    Variable v = OutputVar(param, i);
    if (!v) TIDE_THROW(TIDE_NOT_FOUND, "op '", op_type(), "' has no output ", param, "[", i, "]");
    TIDE_THROW(TIDE_INVALID_ARGUMENT, "op '", op_type(), "' output ", param, " ('",
               OutputName(param, i), "') does not hold a LoDTensor");
  }
  TideKernelContext* c_;
};

// A kernel: registered with TIDE_REGISTER_KERNEL or Registrar::Kernel.
using KernelFn = void (*)(KernelContext&);

}  // namespace tide

#endif  // TIDE_PLUGIN_KERNEL_CONTEXT_HPP_
