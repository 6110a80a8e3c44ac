// kernel_outputs.h: what the run loop does to an op's outputs around its kernel, so that the
// tensors say what the kernel made of them: their layout, that their contents are new, that a
// failed kernel left no data, and (after another place's kernel) where parameters live.
#pragma once

#include "core/executor/op_instance.h"

namespace tide::core {

// Before a kernel that writes plain data: outputs that held another layout (a library's opaque
// data from an earlier op) must not keep that label. (Inputs were converted already.)
void LabelOutputLayouts(const OpInstance& op);
// After the kernel: it may have written its outputs through pointers it got before (or not
// through mutable_data at all), so their contents are new, whatever a converted copy of them says.
void TouchOutputs(const OpInstance& op);
// After the kernel: an output the program declares 0-D (Paddle 2.5+'s `paddle.mean(x)`, `x[0]`
// of a vector) that the kernel made [1] (Fluid's shape for those ops) becomes rank 0, the same
// element; the program's declaration decides, so a Fluid program declaring [1] keeps [1].
void GiveDeclaredRankZero(const OpInstance& op);
// After a float32 kernel ran float16/bfloat16 data (OpInstance::runs_widened): the outputs the
// program declares float16/bfloat16 that it wrote as float32 are rounded back to their type
// (nearest even), so what follows reads the declared type: never a silent float32 program.
void RoundWidenedOutputs(const OpInstance& op);
// After a kernel failed: one that failed after shape inference resized its outputs may have left
// an output with dims larger than its memory; that memory is dropped, so nothing (the next op,
// numpy, DLPack) reads past it, and the output then holds no data and says so.
void DropUnbackedOutputs(const OpInstance& op);
// After a fallback kernel (another place's) wrote its outputs there: parameters and other
// persistable variables go back to the run's `place` at once. The startup program's initialisers
// and an optimizer without a device kernel would otherwise leave every parameter on the host, to
// be copied to the device again by every op that reads it.
void ReturnPersistableOutputs(const OpInstance& op, const Place& place, DeviceContext* dctx);

// The tensors plugins gave data to through the host API on this thread (Tensor_MutableData,
// Tensor_AdoptData, the destination of Tensor_ShareDataWith and Tensor_CopyTo): how many, and the
// last kRecent of them, so that a kernel that declines after writing an output is caught at the
// cost of one thread-local store per such call and one read per kernel call. Only pointers are kept
// (a temp tensor may be gone); they are compared with the op's outputs, never followed.
struct TensorWrites {
  static constexpr uint64_t kRecent = 16;
  uint64_t count = 0;
  const LoDTensor* recent[kRecent] = {};
};
extern thread_local TensorWrites t_tensor_writes;
inline void NoteTensorWrite(const LoDTensor* t) {
  TensorWrites& w = t_tensor_writes;
  w.recent[w.count++ % TensorWrites::kRecent] = t;
}
inline uint64_t TensorWritesSoFar() { return t_tensor_writes.count; }
// After kernel `k` of `op` declined (`why`, UNIMPLEMENTED): a kernel may decline only before it
// writes an output, since the next kernel would run on what it left. Throws (INTERNAL, naming the
// op, the kernel key, its plugin file and the output) when, on this thread since
// `writes_before` (TensorWritesSoFar() before the call), it gave one of the op's outputs data.
void CheckDeclinedBeforeWriting(const OpInstance& op, const KernelEntry& k, const Error& why,
                                uint64_t writes_before);

}  // namespace tide::core
