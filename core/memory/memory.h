// memory.h: Fluid's memory API: Alloc/Free/Used per place. Each place gets a BuddyAllocator
// over its device plugin's system allocator (or, with --use_system_allocator, plain system
// allocations for sanitizer runs), budgeted by fraction_of_<kind>_memory_to_use.
#pragma once

#include <cstddef>

#include "core/memory/allocation.h"
#include "core/memory/allocator.h"
#include "core/platform/place.h"

namespace tide::core::memory {

void* Alloc(const Place& place, size_t size);
void Free(const Place& place, void* ptr);
size_t Used(const Place& place);
AllocatorStats Stats(const Place& place);
// Gives the memory the place's allocator holds for reuse, but not in use, back to the device.
void EmptyCache(const Place& place);

// An allocation returned to its place's allocator when the last reference goes.
AllocationPtr AllocShared(const Place& place, size_t size);

}  // namespace tide::core::memory
