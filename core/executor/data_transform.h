// data_transform.h: Fluid's data transform: when the tensor an input holds differs from what
// the chosen kernel expects (place, layout, data type), convert it, through the device plugins'
// copies and the registered layout transforms and casts, into a scratch tensor the kernel reads;
// and a run's fetched results, into a plain layout. An input the kernel reads in host memory
// (TideKernelDef.host_inputs) goes to the host instead, as it is (no cast, no layout for the key).
#pragma once

#include <cstdint>
#include <string>

#include "core/executor/op_instance.h"
#include "core/registry/kernel_key.h"

namespace tide::core {

class PreparedBlock;

struct TransformCounts {
  uint64_t layouts = 0, copies = 0, casts = 0;
  uint64_t reused = 0;  // conversions skipped: the source had not changed since the last one
  uint64_t total() const { return layouts + copies + casts; }
};

// Whether data in layout `actual` must be converted for a kernel registered with `expected`:
// a library's opaque data only feeds opaque-layout kernels; such a kernel takes plain data; ANY
// accepts any plain layout; NCHW and NHWC differ.
bool NeedsLayoutTransform(TideLayout actual, TideLayout expected);

// Converts the inputs of `op` its chosen kernel cannot read as they are, into scratch tensors
// kept with the op and reused while their source is unchanged, counting into `counts`; the
// kernel then reads ArgBinding::transforms[i].result where set. The common case (nothing to
// convert) costs one test per input. Errors name the op, the input, the kernel key and the
// missing transform.
void TransformInputs(OpInstance& op, TransformCounts* counts);

// A copy of `src` on `place` that an input conversion of an op in `block` made and that is still
// current (the same bytes, dims, LoD, data type and layout), or nullptr: what a fetch reads
// instead of copying a tensor down again that a fallback op already copied.
const LoDTensor* CurrentCopyOf(const PreparedBlock& block, const LoDTensor& src,
                               const Place& place);

// `t` (on a place whose device plugin registers the cast) converted in place to data type `to`,
// through that cast; `what` names it in errors ("op 'relu' (block 0, #2) output 'Out'"). Data in
// a library's layout is made plain first: a cast converts element by element.
void CastInPlace(LoDTensor* t, DataType to, const std::string& what);

// A tensor in a library's layout (a fetched result), converted in place to a plain one through
// the transform its device plugin registers; plain tensors are left alone.
void ToPlainLayout(LoDTensor* t);

}  // namespace tide::core
