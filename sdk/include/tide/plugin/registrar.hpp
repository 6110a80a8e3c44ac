// tide/plugin/registrar.hpp: tide::Registrar, what registers ops, kernels, kernel libraries,
// devices, layout transforms and data-type casts with the core during tide_plugin_register.
#ifndef TIDE_PLUGIN_REGISTRAR_HPP_
#define TIDE_PLUGIN_REGISTRAR_HPP_

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <tide/plugin/device.hpp>
#include <tide/plugin/host.hpp>
#include <tide/plugin/kernel_context.hpp>
#include <tide/plugin/op_schema.hpp>
#include <tide/plugin/tensor.hpp>
#include <utility>
#include <vector>

namespace tide {

// The inputs (parameter names) a kernel reads in host memory: TideKernelDef.host_inputs.
using HostInputs = std::vector<std::string>;

class Registrar {
 public:
  explicit Registrar(TideRegistrar* r) : r_(r) {}
  TideRegistrar* c() const { return r_; }

  // Registers an op; the schema is kept for the life of the process (its callbacks live there).
  void Op(OpSchema schema) {
    // Never freed (plugins are never unloaded), and listed even when the core refuses the op, so
    // the memory stays reachable.
    static auto* kept = new std::vector<std::unique_ptr<OpSchema>>();
    static std::mutex mu;
    OpSchema* s;
    {
      std::lock_guard<std::mutex> lock(mu);
      kept->push_back(std::make_unique<OpSchema>(std::move(schema)));
      s = kept->back().get();
    }
    s->Register(r_);
  }
  // `host_inputs`: the op's inputs the kernel reads in host memory (TideKernelDef.host_inputs):
  // the core hands them over on the CPU place, as they are.
  void Kernel(const std::string& op_type, const std::string& place_kind, TideDataType dtype,
              KernelFn fn, TideLayout layout = TIDE_LAYOUT_ANY,
              const std::string& library = "plain", int32_t priority = 0,
              const HostInputs& host_inputs = {}) {
    std::vector<const char*> names;
    for (const std::string& n : host_inputs) names.push_back(n.c_str());
    TideKernelDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideKernelDef, num_host_inputs);
    d.host_inputs = names.empty() ? nullptr : names.data();
    d.num_host_inputs = names.size();
    d.op_type = op_type.c_str();
    d.place_kind = place_kind.c_str();
    d.dtype = dtype;
    d.layout = layout;
    d.library = library.c_str();
    d.compute = &KernelTrampoline;
    d.user_data = reinterpret_cast<void*>(fn);
    d.priority = priority;
    ThrowIfError(Host().Registrar_AddKernel(r_, &d));
  }
  // A transform fn(in, out, ctx): for layouts, out gets in's data in layout `to`; for casts,
  // out gets in's values as dtype `to`. out's dims are set; allocate it with mutable_data.
  using TransformFn = void (*)(const Tensor& in, Tensor& out, TideDeviceContext* ctx);
  void LayoutTransform(const std::string& place_kind, TideLayout from, TideLayout to,
                       TransformFn fn) {
    TideLayoutTransformDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideLayoutTransformDef, user_data);
    d.place_kind = place_kind.c_str();
    d.from = from;
    d.to = to;
    d.fn = &TransformTrampoline;
    d.user_data = reinterpret_cast<void*>(fn);
    ThrowIfError(Host().Registrar_AddLayoutTransform(r_, &d));
  }
  void DataTypeCast(const std::string& place_kind, TideDataType from, TideDataType to,
                    TransformFn fn) {
    TideDataTypeCastDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideDataTypeCastDef, user_data);
    d.place_kind = place_kind.c_str();
    d.from = from;
    d.to = to;
    d.fn = &TransformTrampoline;
    d.user_data = reinterpret_cast<void*>(fn);
    ThrowIfError(Host().Registrar_AddDataTypeCast(r_, &d));
  }

  // Registers a kernel library: ops ask for it by the bool attribute `op_attr`, all ops by the
  // bool flag `flag` (defined by the core); empty: no such way (see TideLibraryDef).
  void AddLibrary(const std::string& name, const std::string& op_attr, const std::string& flag,
                  const std::string& description = "") {
    TideLibraryDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideLibraryDef, description);
    d.name = name.c_str();
    d.op_attr = op_attr.empty() ? nullptr : op_attr.c_str();
    d.flag = flag.empty() ? nullptr : flag.c_str();
    d.description = description.c_str();
    ThrowIfError(TIDE_HOST_FN(Registrar_AddLibrary)(r_, &d));
  }

  // Registers a program pass (TideProgramPassDef): `fn` gets the serialized program and the
  // names to keep, and returns the new serialized program, or "" for "unchanged". `place_kind`:
  // the kind it runs for at prepare ("" : every place). `fn` lives as long as the process.
  using ProgramPassFn = std::string (*)(const std::string& program,
                                        const std::vector<std::string>& keep);
  void AddProgramPass(const std::string& name, const std::string& place_kind, ProgramPassFn fn) {
    TideProgramPassDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideProgramPassDef, user_data);
    d.name = name.c_str();
    d.place_kind = place_kind.empty() ? nullptr : place_kind.c_str();
    d.run = &ProgramPassTrampoline;
    d.user_data = reinterpret_cast<void*>(fn);
    ThrowIfError(TIDE_HOST_FN(Registrar_AddProgramPass)(r_, &d));
  }

  // Registers a device; the object lives for the life of the process.
  void AddDevice(std::unique_ptr<Device> device) {
    Device* d = device.release();
    TideDeviceDef def = d->def();
    ThrowIfError(Host().Registrar_AddDevice(r_, &def));
  }

 private:
  static TideStatus* ProgramPassTrampoline(const char* program, size_t len, const char* const* keep,
                                           size_t num_keep, char** out, size_t* out_len,
                                           void* data) {
    *out = nullptr;
    *out_len = 0;
    return detail::Guard([&] {
      const std::string result = reinterpret_cast<ProgramPassFn>(data)(
          std::string(program, len), std::vector<std::string>(keep, keep + num_keep));
      if (result.empty()) return;
      char* buffer = TIDE_HOST_FN(Buffer_Alloc)(result.size());
      if (!buffer) TIDE_THROW(TIDE_RESOURCE_EXHAUSTED, "no memory for a program pass's result");
      std::memcpy(buffer, result.data(), result.size());
      *out = buffer;
      *out_len = result.size();
    });
  }
  static TideStatus* TransformTrampoline(const TideTensor* in, TideTensor* out,
                                         TideDeviceContext* ctx, void* data) {
    return detail::Guard([&] {
      Tensor out_view(out);
      reinterpret_cast<TransformFn>(data)(Tensor(in), out_view, ctx);
    });
  }
  static TideStatus* KernelTrampoline(TideKernelContext* c, void* data) {
    return detail::Guard([&] {
      KernelContext ctx(c);
      reinterpret_cast<KernelFn>(data)(ctx);
    });
  }
  TideRegistrar* r_;
};

}  // namespace tide

#endif  // TIDE_PLUGIN_REGISTRAR_HPP_
