// tide/kernels/direct.hpp: what a compiled model's generated source (tide.aot.compile) needs to
// call the SDK's header-only kernels directly: each kernel as the core's TideKernelFn, and the
// host table those kernels reach the core through.
#ifndef TIDE_KERNELS_DIRECT_HPP_
#define TIDE_KERNELS_DIRECT_HPP_

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
inline void UseHost(const TideHostApi* host) { detail::HostSlot() = host; }

}  // namespace kernels
}  // namespace tide

#endif  // TIDE_KERNELS_DIRECT_HPP_
