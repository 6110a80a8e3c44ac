// frozen_plan.h: a program frozen ahead of time (issue 34): every op's kernel by its key, every
// variable's shape and type, the input transforms the executor would make, one memory arena with
// an offset for each temporary, and the parameters. freeze.h makes one, frozen_model.h runs one;
// this file is the plan in memory and its file (Tide's own binary format, read without protobuf).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/framework/tensor.h"
#include "core/ir/attribute.h"
#include "core/ir/op_desc.h"
#include "core/memory/allocation.h"

namespace tide::core {

// The file: "TIDEAOT\0", u32 format version, u32 plugin ABI major, minor and layout, the plan
// (each parameter's bytes at a multiple of kFrozenParamAlignment), then a u64 FNV-1a hash of
// every byte before it. A reader refuses another format version,
// another ABI major or layout, and a hash that does not match (a corrupted or truncated file).
constexpr char kFrozenMagic[8] = {'T', 'I', 'D', 'E', 'A', 'O', 'T', '\0'};
constexpr uint32_t kFrozenFormatVersion = 1;
constexpr size_t kFrozenParamAlignment = 64;

struct FrozenVar {
  std::string name;
  TideVarType type = TIDE_VAR_LOD_TENSOR;
  DataType dtype = TIDE_UNDEFINED;
  TideLayout layout = TIDE_LAYOUT_ANY;
  bool persistable = false;
  bool zero_dim = false;
  int32_t lod_level = 0;
  // Dims at the variable dimension's upper end, and per dim how much it grows per unit of that
  // dimension (0: fixed): dims(b) = dims + per_unit * (b - upper). Empty: not a tensor the plan
  // sizes (a feed, a parameter, one only a kernel sizes).
  std::vector<int64_t> dims, per_unit;
  // Its slot in the arena: offset (-1: none, the kernel or the caller gives its memory) and bytes.
  int64_t offset = -1;
  uint64_t bytes = 0;
};

// A kernel by its key, with names for what the core holds as ids (place kinds, libraries).
struct FrozenKernel {
  std::string place_kind, library;
  DataType dtype = TIDE_UNDEFINED;
  TideLayout layout = TIDE_LAYOUT_ANY;
  DataType data_type = TIDE_UNDEFINED;  // the data's type (float16 data on a float32 kernel)
  std::string plugin, plugin_file;      // who provided it at freeze time, for errors
  std::string ToString() const;         // "{cpu, float32, ANY, plain}"
};

struct FrozenOp {
  uint32_t index = 0;  // in the block as the executor prepared it (feed ops included)
  std::string type;
  VariableNameMap inputs, outputs;
  AttributeMap attrs;
  FrozenKernel kernel;
  // Shape inference at run time: for ops whose outputs do not follow the variable dimension
  // linearly (LoD, data-dependent sizes) or that write a variable another op writes too, where
  // the writers leave it with different dims (at some probe).
  bool infer_at_run = false;
  // The input transforms the executor made for it, one line each ("layout ...; copy ...; cast
  // ..."): the frozen run makes them through the executor's data transform.
  std::vector<std::string> transforms;
  // A compiled model's kernel called directly (an SDK header-only kernel its model.cc holds,
  // tide/kernels/registry.hpp): run instead of resolving `kernel` through the plugins. Never in a
  // plan file.
  TideKernelFn direct = nullptr;
};

struct FrozenParam {
  std::string name;
  DataType dtype = TIDE_UNDEFINED;
  std::vector<int64_t> dims;
  LoD lod;
  // Host bytes in the dims' row-major order: held (a plan being written), or, as read, a view
  // into FrozenPlan::file (no copy of a large model's parameters), 64-byte aligned there.
  std::string bytes;
  std::string_view view;
  std::string_view data() const { return bytes.empty() ? view : std::string_view(bytes); }
};

struct FrozenFeed {
  std::string name;
  std::vector<int64_t> dims;  // -1 marks the variable dimension
  DataType dtype = TIDE_UNDEFINED;
  int32_t lod_level = 0;
};

struct FrozenPlan {
  std::string place_kind;
  // The variable dimension's range; equal ends when every dim is fixed.
  int64_t lower = 0, upper = 0;
  std::vector<FrozenFeed> feeds;
  std::vector<std::string> fetches;
  std::vector<FrozenVar> vars;
  std::vector<FrozenOp> ops;
  uint64_t arena_bytes = 0, alignment = 64;
  std::vector<FrozenParam> params;
  // As read: the file's bytes in aligned host memory, which the parameters' views point into
  // (a host FrozenModel's parameters are views of it).
  AllocationPtr file;
};

// Writes `plan` to `path`; throws naming the file when it cannot.
void WriteFrozenPlan(const FrozenPlan& plan, const std::string& path);
// Reads a plan; throws naming the file and what is wrong: not a frozen plan, another format
// version or plugin ABI, corrupted or truncated.
FrozenPlan ReadFrozenPlan(const std::string& path);
// FNV-1a over 8-byte little-endian words, then the tail bytes: the plan file's checksum (and a
// compiled model's params.bin id).
uint64_t Fnv1a(const char* data, size_t n);
// A whole file in host memory aligned to kFrozenParamAlignment (parameters are used where they
// lie in it); throws naming `what` and the file when it cannot be read.
AllocationPtr ReadFileAligned(const std::string& path, const std::string& what);

}  // namespace tide::core
