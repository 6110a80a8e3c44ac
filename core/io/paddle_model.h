// paddle_model.h: reads inference models saved by PaddlePaddle (issue 15): the legacy ProgramDesc
// (`*.pdmodel`, Fluid 1.x's `__model__`) and the parameters in Paddle's tensor serialisation (one
// combined `*.pdiparams` / `__params__` file, or one file per variable).
#pragma once

#include <istream>
#include <map>
#include <string>
#include <vector>

#include "core/framework/scope.h"
#include "core/framework/tensor.h"
#include "core/io/paddle_op_versions.h"  // KnownPaddleOpVersions
#include "core/ir/program_desc.h"
#include "core/platform/place.h"

namespace tide::core {

// The files of one saved model. `params` is the combined parameter file, or empty when each
// variable has its own file in `params_dir`.
struct PaddleModelFiles {
  std::string model;
  std::string params;
  std::string params_dir;
};

// Finds the files: `path` is a prefix (`path.pdmodel` + `path.pdiparams`, or Paddle 3.x's PIR
// program `path.json` + `path.pdiparams` where there is no `path.pdmodel`), a `.pdmodel` or
// `.json` file, or
// a directory holding `__model__` (then `__params__`, or one file per variable) or exactly one
// `*.pdmodel`. model_filename / params_filename (Fluid's arguments) name the files inside a
// directory. Throws, listing what was looked for, when there is no model.
PaddleModelFiles FindPaddleModelFiles(const std::string& path,
                                      const std::string& model_filename = "",
                                      const std::string& params_filename = "");

struct PaddleInferenceModel {
  ProgramDesc program;
  std::vector<std::string> feed_names;   // in feed-op `col` order
  std::vector<std::string> fetch_names;  // in fetch-op `col` order
  std::vector<std::string> param_names;  // the persistable variables loaded into the scope
  PaddleModelFiles files;
};

// Reads a model saved by PaddlePaddle (either format) and loads its parameters into `scope` on
// `place`: the persistable variables in name order (Paddle's save_combine order, PIR's too).
// Refuses, with the file and what is wrong: an unparsable or truncated file, ops no loaded plugin
// registers (all of them in one error), op versions newer than Tide implements, a parameter whose
// bytes, dtype or dims do not match its variable, bytes left over after the last parameter.
PaddleInferenceModel LoadPaddleInferenceModel(const std::string& path, Scope* scope,
                                              const Place& place,
                                              const std::string& model_filename = "",
                                              const std::string& params_filename = "");

// Parses, checks and repairs (paddle_program_repairs.h) a Paddle ProgramDesc (the steps of
// LoadPaddleInferenceModel before the parameters); `file` names the source in errors.
ProgramDesc ParsePaddleProgram(const std::string& bytes, const std::string& file);
// The same for a PIR program's JSON text (pir_program.h translates it).
ProgramDesc ParsePirProgram(const std::string& json, const std::string& file);
// The checks both share: strings, the op repairs (paddle_op_repairs.h), ops registered, op
// versions, attributes (their defaults filled).
ProgramDesc CheckPaddleProgram(proto::ProgramDesc p, const std::string& file);
// A model file that is a PIR program (`.json`), not a ProgramDesc.
bool IsPirProgramFile(const std::string& model);

// One LoDTensor in Paddle's serialisation (SerializeToStream): u32 version 0, u64 LoD levels, per
// level u64 byte size + size_t offsets, then u32 version 0, i32 TensorDesc size, the TensorDesc,
// the raw data. Into a host tensor; `what` names the variable and file in errors.
void ReadPaddleTensor(std::istream& in, LoDTensor* out, const std::string& what);

}  // namespace tide::core
