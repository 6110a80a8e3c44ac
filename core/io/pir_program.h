// pir_program.h: reads a PaddlePaddle 3.x PIR program (`model.json`, what paddle.jit.save and
// save_inference_model write by default) into a Fluid ProgramDesc, translating each operation by
// the table of pir_op_table.h.
#pragma once

#include <cstdint>
#include <string>

#include "framework.pb.h"

namespace tide::core {

// The newest PIR format version Tide reads (base_code.version; PaddlePaddle 3.3.1 writes 4).
constexpr int64_t kMaxPirVersion = 4;

// Parses the JSON text of a PIR program and translates block 0 into a ProgramDesc: parameters
// (builtin.parameter) become persistable variables of their names, pd_op.data feed ops, pd_op.fetch
// fetch ops, every other operation the op(s) its table entry names. Refuses, naming `file`: text
// that is not JSON (with the offset protobuf's parser reports), another magic, a version above
// kMaxPirVersion, a missing or mistyped key (by its path), and every operation the table lacks
// (all in one error, with the file's PIR version).
proto::ProgramDesc TranslatePirProgram(const std::string& json, const std::string& file);

}  // namespace tide::core
