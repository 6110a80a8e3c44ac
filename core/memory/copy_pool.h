// copy_pool.h: device memory for tensors a place's copy stream writes (TIDE_STREAM_COPY_IN).
// The place's allocator hands memory out in the compute stream's order: a block freed while
// queued kernels still read it may be handed out again at once, which is right for the compute
// stream and wrong for a copy stream, whose writes would race those kernels. So uploads take
// blocks from this pool: each block freed comes back with an event recorded on the compute
// stream, and the copy stream waits for that event before it writes the block again (what
// PyTorch's record_stream keeps in its caching allocator), so uploads overlap compute.
#pragma once

#include <cstddef>

#include "core/device/device_context.h"
#include "core/memory/allocation.h"

namespace tide::core::memory {

// `size` bytes on `compute`'s place that `copy` (its ForRole(TIDE_STREAM_COPY_IN) context, not
// itself) may write now: work queued on `copy` from here on is ordered after every use of the
// block queued before it was last freed. Work on compute that reads what `copy` writes must
// wait for it (DeviceContext::WaitFor).
AllocationPtr AllocForCopy(DeviceContext& compute, DeviceContext& copy, size_t size);

// Gives the blocks the pool of `place` keeps for reuse back to the place's allocator (also when
// the allocator runs out of memory, before it gives up); returns how many.
size_t EmptyCopyPool(const Place& place);
// The bytes and blocks the pool of `place` keeps for reuse: the allocator's, but in no tensor.
void CopyPoolCached(const Place& place, size_t* bytes, size_t* blocks);
// At shutdown (the memory pools' hook): every pool gives back what no tensor holds, and from then
// on each block as it is freed.
void CloseCopyPools();

}  // namespace tide::core::memory
