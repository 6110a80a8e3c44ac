// route.cc: which way a collective's tensors go (see route.h), and the host staging copies.
#include "route.h"

namespace tide_collective {

Route RouteOf(tide::OpRunContext& ctx, Communicator& comm, const tide::Place& place) {
  if (IsHost(place)) return Route::kHost;
  DeviceComm* dev = comm.device();
  if (dev && dev->place() == place && ctx.place() == place) return Route::kDevice;
  comm.NoteStaging(
      place, dev ? "the ring's " + std::string(dev->library()) + " communicator is on " +
                       dev->place().ToString() + ", the op runs on " + ctx.place().ToString()
                 : "the ring has no communicator in a collective library of " + place.ToString() +
                       ": c_comm_init ran on another place, or the device publishes none");
  return Route::kStaged;
}

tide::OwnedTensor ToHost(const tide::Tensor& t) {
  tide::OwnedTensor h;
  h.CopyFrom(t, tide::Place("cpu", 0));
  return h;
}

void FromHost(tide::OpRunContext& ctx, const tide::Tensor& h, tide::Tensor out,
              const tide::Place& place) {
  out.CopyFrom(h, place, ctx.place() == place ? ctx.device_context() : nullptr);
}

}  // namespace tide_collective
