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

}  // namespace tide::core
