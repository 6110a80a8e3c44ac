// sim_compiler.h: the sim device's subgraph compiler (TideDeviceCompiler, issue 33) and its
// program pass, both only with TIDE_SIM_COMPILE=1 (the other sim tests check what single ops do:
// which op launched last, each op's trace event). It takes chains of two or more float32
// elementwise ops it has kernels for (elementwise_add, relu, scale), each reading the one before it
// as X (also past ops between that touch none of the chain's values), and compiles each chain into
// one fused kernel: one loop over the elements that applies the ops in turn, with the same
// arithmetic as the ops' kernels, so a fused run equals the op-by-op run exactly. A new input shape
// compiles again; a group of more elements than TIDE_SIM_FUSE_MAX_ELEMENTS (unset: no limit) is
// declined, and runs op by op. Counted: compiles, declines and fused launches (sim_context.h). The
// pass ("sim.drop_identity_scale", for sim places) removes `scale` ops with scale 1 and bias 0,
// their readers reading the scale's input instead.
//
// Planted faults (TIDE_SIM_PLANT_BUG): fused_wrong, the fused kernel's relu lets negative values
// through (the conformance kit must name the group); claim_out_of_range, claim_overlap,
// claim_cycle: get_capability answers an op index past the block, the same group twice, or the
// first and third op of a chain of three (whose middle op then reads the group and feeds it);
// pass_garbage: the pass returns bytes that are no program.
#pragma once

#include <atomic>
#include <string>
#include <tide/plugin.hpp>
#include <vector>

#include "sim_stream.h"

// Defined in sim_device.cc: whether TIDE_SIM_PLANT_BUG names `bug`; the launch counters.
bool SimPlantedBug(const char* bug);
struct SimCompileCounters {
  std::atomic<uint64_t> compiles{0}, declines{0}, fused_launches{0}, releases{0};
};
SimCompileCounters& SimCompileStats();

std::vector<tide::Device::SubgraphGroup> SimCapability(const std::string& program,
                                                       int32_t block_idx);
void* SimCompile(const TideCompileRequest& request);
void SimRunCompiled(void* compiled, SimStream& stream, const std::vector<tide::Tensor>& inputs,
                    std::vector<tide::Tensor>& outputs);
void SimReleaseCompiled(void* compiled);
std::string SimDropIdentityScale(const std::string& program, const std::vector<std::string>& keep);
