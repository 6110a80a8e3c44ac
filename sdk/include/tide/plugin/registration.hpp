// tide/plugin/registration.hpp: a plugin's entry points and static registration:
// TIDE_REGISTER_OP, TIDE_REGISTER_KERNEL(_EX, _HOST_INPUTS), TIDE_ON_REGISTER, TIDE_ON_FINALIZE and
// TIDE_PLUGIN(_REQUIRES), which defines tide_plugin_info, tide_plugin_register and
// tide_plugin_abi_layout.
#ifndef TIDE_PLUGIN_REGISTRATION_HPP_
#define TIDE_PLUGIN_REGISTRATION_HPP_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <tide/plugin/host.hpp>
#include <tide/plugin/registrar.hpp>
#include <utility>
#include <vector>

namespace tide {

namespace detail {
// Registration functions collected from TIDE_REGISTER_* in any file of the plugin; run in
// order at tide_plugin_register. One list per plugin (plugins build with hidden visibility).
inline std::vector<std::function<void(Registrar&)>>& StaticRegistrations() {
  static std::vector<std::function<void(Registrar&)>> list;
  return list;
}
inline bool AddStaticRegistration(std::function<void(Registrar&)> fn) {
  StaticRegistrations().push_back(std::move(fn));
  return true;
}
template <typename T>
struct TypeTag {
  using type = T;
};
template <typename... Ts, typename F>
void ForEachType(F&& f) {
  (f(TypeTag<Ts>{}), ...);
}
// The oldest host minor ABI a plugin runs on: by default the one it is built against (a host
// without the newer functions refuses it at load, naming both versions). Define it lower before
// including plugin.hpp only when every newer host function is reached through TIDE_HOST_FN.
#ifndef TIDE_PLUGIN_MIN_ABI_MINOR
#define TIDE_PLUGIN_MIN_ABI_MINOR TIDE_ABI_MINOR
#endif

struct Requires {
  Requires(std::initializer_list<const char*> names) : list(names) { list.push_back(nullptr); }
  std::vector<const char*> list;
};

inline const TidePluginInfo* MakeInfo(const char* name, const char* version, const char* desc,
                                      const Requires& req, const TideAbiRange* host) {
  static TidePluginInfo info{};
  info.struct_size = TIDE_STRUCT_SIZE(TidePluginInfo, min_abi_minor);
  info.min_abi_minor = TIDE_PLUGIN_MIN_ABI_MINOR;
  info.name = name;
  info.version = version;
  info.abi_major = TIDE_ABI_MAJOR;
  // Speak the newest minor both sides know; plugin.hpp checks struct_size before newer calls.
  // (std::min, not a comparison: against minor 0 one is always false, a -Wtype-limits warning.)
  info.abi_minor = TIDE_ABI_MINOR;
  if (host && host->major == TIDE_ABI_MAJOR)
    info.abi_minor = std::min<uint32_t>(host->max_minor, TIDE_ABI_MINOR);
  info.requires = req.list.size() > 1 ? req.list.data() : nullptr;
  info.description = desc;
  return &info;
}

inline TideStatus* RunRegistrations(const TideHostApi* host, TideRegistrar* r) {
  HostSlot() = host;
  return Guard([&] {
    Registrar reg(r);
    for (auto& fn : StaticRegistrations()) fn(reg);
  });
}
}  // namespace detail

}  // namespace tide

#define TIDE_CONCAT_INNER(a, b) a##b
#define TIDE_CONCAT(a, b) TIDE_CONCAT_INNER(a, b)
#define TIDE_UNIQUE(prefix) TIDE_CONCAT(prefix, __COUNTER__)

// Registers an op schema: TIDE_REGISTER_OP(tide::OpSchema("relu").Input("X")...);
#define TIDE_REGISTER_OP(schema_expr)           \
  static const bool TIDE_UNIQUE(tide_op_reg_) = \
      ::tide::detail::AddStaticRegistration([](::tide::Registrar& r) { r.Op(schema_expr); })

// Registers kernel template `fn<T>` for each listed type T, on `place_kind` (plain library):
//   TIDE_REGISTER_KERNEL("relu", "cpu", ReluKernel, float, double);
#define TIDE_REGISTER_KERNEL(op_type, place_kind, fn, ...)                \
  static const bool TIDE_UNIQUE(tide_kernel_reg_) =                       \
      ::tide::detail::AddStaticRegistration([](::tide::Registrar& r) {    \
        ::tide::detail::ForEachType<__VA_ARGS__>([&](auto tag) {          \
          using T = typename decltype(tag)::type;                         \
          r.Kernel(op_type, place_kind, ::tide::DataTypeOf<T>(), &fn<T>); \
        });                                                               \
      })

// Like TIDE_REGISTER_KERNEL with a layout, library and override priority.
#define TIDE_REGISTER_KERNEL_EX(op_type, place_kind, layout, library, priority, fn, ...)         \
  static const bool TIDE_UNIQUE(                                                                 \
      tide_kernel_reg_) = ::tide::detail::AddStaticRegistration([](::tide::Registrar& r) {       \
    ::tide::detail::ForEachType<__VA_ARGS__>([&](auto tag) {                                     \
      using T = typename decltype(tag)::type;                                                    \
      r.Kernel(op_type, place_kind, ::tide::DataTypeOf<T>(), &fn<T>, layout, library, priority); \
    });                                                                                          \
  })

// Like TIDE_REGISTER_KERNEL, for a kernel that reads the listed inputs in host memory (shape,
// start, axis or value tensors; TideKernelDef.host_inputs): the core hands them over on the CPU
// place, copied there from a device when an earlier op wrote them on one.
//   TIDE_REGISTER_KERNEL_HOST_INPUTS("slice", "gpu", TIDE_HOST_INPUTS("StartsTensor",
//   "EndsTensor"),
//                                    Slice, float, double);
#define TIDE_HOST_INPUTS(...) (::tide::HostInputs{__VA_ARGS__})
#define TIDE_REGISTER_KERNEL_HOST_INPUTS(op_type, place_kind, host_inputs, fn, ...)                \
  static const bool TIDE_UNIQUE(tide_kernel_reg_) =                                                \
      ::tide::detail::AddStaticRegistration([](::tide::Registrar& r) {                             \
        ::tide::detail::ForEachType<__VA_ARGS__>([&](auto tag) {                                   \
          using T = typename decltype(tag)::type;                                                  \
          r.Kernel(op_type, place_kind, ::tide::DataTypeOf<T>(), &fn<T>, TIDE_LAYOUT_ANY, "plain", \
                   0, host_inputs);                                                                \
        });                                                                                        \
      })

// Any other registration step: TIDE_ON_REGISTER([](tide::Registrar& r) { ... });
#define TIDE_ON_REGISTER(...) \
  static const bool TIDE_UNIQUE(tide_on_reg_) = ::tide::detail::AddStaticRegistration(__VA_ARGS__)

// Defines the plugin's optional finalize (TIDE_PLUGIN_FINALIZE_SYMBOL), at most once per plugin:
//   TIDE_ON_FINALIZE([] { pool.reset(); });
// An exception it throws is dropped: there is no one to report to at exit.
#define TIDE_ON_FINALIZE(...)                                     \
  extern "C" TIDE_PLUGIN_EXPORT void tide_plugin_finalize(void) { \
    try {                                                         \
      (__VA_ARGS__)();                                            \
    } catch (...) {                                               \
    }                                                             \
  }

// Defines the plugin's exported entry points (and its ABI layout revision). Once per plugin:
//   TIDE_PLUGIN("ops_math", "0.1.0", "one-line description");
//   TIDE_PLUGIN_REQUIRES("device_mkldnn", "0.1.0", "description", "device_cpu");
#define TIDE_PLUGIN(name, version, description) TIDE_PLUGIN_REQUIRES(name, version, description)
#define TIDE_PLUGIN_REQUIRES(name, version, description, ...)                                      \
  extern "C" TIDE_PLUGIN_EXPORT const TidePluginInfo* tide_plugin_info(const TideAbiRange* host) { \
    static const ::tide::detail::Requires req{__VA_ARGS__};                                        \
    return ::tide::detail::MakeInfo(name, version, description, req, host);                        \
  }                                                                                                \
  extern "C" TIDE_PLUGIN_EXPORT TideStatus* tide_plugin_register(const TideHostApi* host,          \
                                                                 TideRegistrar* r) {               \
    return ::tide::detail::RunRegistrations(host, r);                                              \
  }                                                                                                \
  TIDE_DEFINE_PLUGIN_ABI_LAYOUT

#endif  // TIDE_PLUGIN_REGISTRATION_HPP_
