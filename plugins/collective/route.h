// route.h: how a collective moves a tensor: host tensors on Gloo; a device's tensors through its
// collective library (the ring's DeviceComm) on the op's stream; or, where the ring has none for
// that place, staged: copied to the host, moved by Gloo, copied back.
#pragma once

#include <string>
#include <tide/plugin.hpp>

#include "communicator.h"

namespace tide_collective {

enum class Route { kHost, kDevice, kStaged };

inline bool IsHost(const tide::Place& p) { return p.kind_name() == "cpu"; }

// The route of a collective on tensors of `place` run by the op of `ctx` (the device route needs
// the op's own context: its stream is the one the library queues on). The first staged
// collective of a ring logs that it is staged, and why.
Route RouteOf(tide::OpRunContext& ctx, Communicator& comm, const tide::Place& place);

// A host copy of `t` (written when this returns).
tide::OwnedTensor ToHost(const tide::Tensor& t);
// out = the host tensor h, on `place` (queued on the op's context when it is that place's).
void FromHost(tide::OpRunContext& ctx, const tide::Tensor& h, tide::Tensor out,
              const tide::Place& place);

}  // namespace tide_collective
