// tide/kernels/direct.hpp: what a compiled model's generated source (tide.aot.compile) needs to
// call the SDK's header-only kernels directly: each kernel as the core's TideKernelFn, and the
// host table those kernels reach the core through.
#ifndef TIDE_KERNELS_DIRECT_HPP_
#define TIDE_KERNELS_DIRECT_HPP_

#include <mutex>
#include <tide/plugin.hpp>

namespace tide {
namespace kernels {

// Kernel `fn` as the function the core calls (TideAotOp.direct_kernel): the call a plugin's
// registered kernel gets through tide::Registrar, its exceptions turned into the returned status.
template <KernelFn fn>
TideStatus* Direct(TideKernelContext* c, void* /*user_data*/) {
  return detail::Guard([&] {
    KernelContext ctx(c);
    fn(ctx);
  });
}

// Gives the SDK in this library the core's host table (a plugin gets it at registration); a
// compiled model's create function calls it with tide_aot_host_api() before any kernel runs.
// Stored once per library (the core has one table, the same at every call): models created by
// two threads at once do not race on the slot, and a create never writes it while another
// model's kernels read it; each caller returns after the store, which it then sees.
inline void UseHost(const TideHostApi* host) {
  static std::once_flag once;
  std::call_once(once, [host] { detail::HostSlot() = host; });
}

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_DIRECT_HPP_
