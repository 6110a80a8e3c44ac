// tide/plugin/registrar.hpp: tide::Registrar, what registers ops, kernels, kernel libraries,
// devices, layout transforms and data-type casts with the core during tide_plugin_register.
#ifndef TIDE_PLUGIN_REGISTRAR_HPP_
#define TIDE_PLUGIN_REGISTRAR_HPP_

#include <cstdint>
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
  void Kernel(const std::string& op_type, const std::string& place_kind, TideDataType dtype,
              KernelFn fn, TideLayout layout = TIDE_LAYOUT_ANY,
              const std::string& library = "plain", int32_t priority = 0) {
    TideKernelDef d{};
    d.struct_size = TIDE_STRUCT_SIZE(TideKernelDef, priority);
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

  // Registers a device; the object lives for the life of the process.
  void AddDevice(std::unique_ptr<Device> device) {
    Device* d = device.release();
    TideDeviceDef def = d->def();
    ThrowIfError(Host().Registrar_AddDevice(r_, &def));
  }

 private:
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
