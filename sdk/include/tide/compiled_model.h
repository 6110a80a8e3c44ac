/* tide/compiled_model.h: the C API of models compiled ahead of time (tide.aot.compile, issue 34;
 * docs/aot.md). tide.aot.compile writes a frozen plan as C++ source: model.cc holds the plan as
 * the constant tables below (TideAotPlan: every op with its arguments, typed attributes and
 * kernel key, every variable with its arena offset, the parameters' places in params.bin, the
 * plugins it needs) and defines the model's own functions (model.h: tide_model_create, ...) over
 * the tide_aot_model_* functions here, which libtide_core exports. Creating a model loads only
 * the plugins its table names, resolves each kernel by its key, reads params.bin and allocates
 * the arena once; a run calls the kernels in order (core/aot/frozen_model.h's machinery).
 *
 * Not the plugin ABI (tide/plugin_api.h): programs that embed the core include this. Every
 * function may be called from any thread, one run at a time per model; no function aborts or
 * throws: failures return NULL or a TideCode and leave a message for tide_aot_last_error. */
#ifndef TIDE_COMPILED_MODEL_H_
#define TIDE_COMPILED_MODEL_H_

#include <stddef.h>
#include <stdint.h>
#include <tide/plugin_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The tables' revision: model.cc records the one it was generated for, and a core of another
 * revision refuses to create the model (compile the plan again). */
#define TIDE_AOT_TABLES_VERSION 2

#define TIDE_AOT_API __attribute__((visibility("default")))

/* ------------------------------------------------------------------------------------------ */
/* The plan as constant tables (written by tide.aot.compile; read once by tide_aot_model_create) */
/* ------------------------------------------------------------------------------------------ */

/* An op's argument: a parameter name and the variables bound to it. */
typedef struct TideAotArg {
  const char* param;
  int32_t num_names;
  const char* const* names;
} TideAotArg;

/* A typed attribute. `values` points at `count` elements of the type's C form: int32_t (INT,
 * INTS), float (FLOAT, FLOATS), const char* (STRING, STRINGS), uint8_t (BOOLEAN, BOOLEANS),
 * int64_t (LONG, LONGS), double (FLOAT64, FLOAT64S). A scalar type has count 1. */
typedef struct TideAotAttr {
  const char* name;
  int32_t type; /* TideAttrType */
  int32_t count;
  const void* values;
} TideAotAttr;

typedef struct TideAotOp {
  uint32_t index; /* in the block as the executor prepared it */
  const char* type;
  int32_t num_inputs, num_outputs, num_attrs;
  const TideAotArg* inputs;
  const TideAotArg* outputs;
  const TideAotAttr* attrs;
  /* The kernel's key, and who provided it when the plan was frozen (for errors). */
  const char* place_kind;
  const char* library;
  int32_t dtype, layout, data_type; /* TideDataType, TideLayout, TideDataType */
  const char* plugin;
  const char* plugin_file;
  int32_t infer_at_run; /* infers its shapes at run time (docs/aot.md) */
  int32_t num_transforms;
  const char* const* transforms; /* the input transforms the executor made, one line each */
  /* Tables version 2: the kernel as a function model.cc holds (an SDK header-only kernel,
   * tide/kernels/registry.hpp), called with the core's kernel context instead of the kernel the
   * key resolves to; NULL: resolved by the key through the plugins. */
  TideKernelFn direct_kernel;
} TideAotOp;

typedef struct TideAotVar {
  const char* name;
  int32_t type, dtype, layout; /* TideVarType, TideDataType, TideLayout */
  int32_t persistable, zero_dim, lod_level;
  /* Dims at the variable dimension's upper end and their growth per unit of it (rank 0: a
   * tensor the plan does not size); its arena slot (offset -1: none). */
  int32_t rank;
  const int64_t* dims;
  const int64_t* per_unit;
  int64_t offset;
  uint64_t bytes;
} TideAotVar;

typedef struct TideAotFeed {
  const char* name;
  int32_t rank;
  const int64_t* dims; /* -1 marks the variable dimension */
  int32_t dtype;       /* TideDataType */
  int32_t lod_level;
} TideAotFeed;

/* A parameter: its bytes at `offset` in params.bin (a multiple of 64), `bytes` long. */
typedef struct TideAotParam {
  const char* name;
  int32_t dtype; /* TideDataType */
  int32_t rank;
  const int64_t* dims;
  uint64_t offset, bytes;
} TideAotParam;

/* A plugin the model loads: its name and its file's name (found on the plugin directories). In
 * the order they are loaded (a plugin after those it requires). */
typedef struct TideAotPlugin {
  const char* name;
  const char* file;
} TideAotPlugin;

typedef struct TideAotPlan {
  uint32_t tables_version;        /* TIDE_AOT_TABLES_VERSION when generated */
  uint32_t abi_major, abi_layout; /* the plugin ABI the kernels were frozen for */
  const char* source;             /* the frozen plan it was compiled from (for errors) */
  const char* place_kind;
  int64_t lower, upper; /* the variable dimension's range */
  int32_t num_feeds, num_fetches, num_vars, num_ops, num_params, num_plugins;
  const TideAotFeed* feeds;
  const char* const* fetches;
  const TideAotVar* vars;
  const TideAotOp* ops;
  const TideAotParam* params;
  const TideAotPlugin* plugins;
  uint64_t arena_bytes, alignment;
  /* params.bin: its size and the id in its header, which ties it to this model.cc. */
  uint64_t params_bytes, params_id;
} TideAotPlan;

/* params.bin starts with a 64-byte header: these 8 bytes, then the u64 id and the u64 size. */
#define TIDE_AOT_PARAMS_MAGIC "TIDEPRM"
#define TIDE_AOT_PARAMS_HEADER_BYTES 64

/* ------------------------------------------------------------------------------------------ */
/* Running a model                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* A tensor crossing the API. Inputs: the caller's memory, read during tide_aot_model_run only
 * (dims `rank` long; lod: NULL, or `lod_size` offsets of one LoD level for a feed of LoD level
 * 1). Outputs: filled by the run, pointing into the model's memory, valid until the next run or
 * destroy (lod: the first level's offsets, or NULL). */
typedef struct TideModelTensor {
  void* data;
  int32_t dtype; /* TideDataType */
  int32_t rank;
  const int64_t* dims;
  const uint64_t* lod;
  size_t lod_size;
} TideModelTensor;

typedef struct TideAotModel TideAotModel;

/* Starts the core if it is not started (without discovering the plugin path: only the plan's
 * plugins are loaded, from `plugin_dir` when given, else $TIDE_PLUGIN_PATH's entries, then the
 * core's plugin directory), resolves every kernel by its key, reads the parameters from
 * `params_path` (params.bin, or the directory holding it) and allocates the arena. NULL on
 * failure: tide_aot_last_error says what failed (a plugin missing, a kernel no plugin has,
 * another params.bin, ...). */
TIDE_AOT_API TideAotModel* tide_aot_model_create(const TideAotPlan* plan, const char* params_path,
                                                 const char* plugin_dir);
/* The same with the parameters' bytes in memory (params.bin's contents, 64-byte aligned, e.g.
 * embedded in the model's library by tide.aot.compile(..., embed_params=True)), checked as the
 * file is; they must stay valid and unchanged while the model lives (the parameters are views of
 * them, not copies). */
TIDE_AOT_API TideAotModel* tide_aot_model_create_from_memory(const TideAotPlan* plan,
                                                             const void* params, size_t bytes,
                                                             const char* plugin_dir);
/* Runs the model: `inputs` in the plan's feed order, `outputs` (num_outputs == the plan's
 * num_fetches) filled in its fetch order. Returns TIDE_OK (0), or the failure's code: a feed of
 * another data type or rank, another fixed dim or a variable dim outside the plan's range is
 * TIDE_INVALID_ARGUMENT / TIDE_OUT_OF_RANGE, its message naming the feed, the dimension and the
 * range. */
TIDE_AOT_API int32_t tide_aot_model_run(TideAotModel* model, const TideModelTensor* inputs,
                                        size_t num_inputs, TideModelTensor* outputs,
                                        size_t num_outputs);
TIDE_AOT_API void tide_aot_model_destroy(TideAotModel* model);
/* Capture and replay on the plan's place (docs/aot.md; a device with TideDeviceGraphs, e.g. CUDA
 * graphs): `on` 1 or 0; off when the model is created. TIDE_OK or the failure's code. */
TIDE_AOT_API int32_t tide_aot_model_set_capture(TideAotModel* model, int32_t on);
/* What capture does: "" when off, "warming up", "captured", or why the model runs op by op;
 * `replays` (may be NULL) gets the runs that launched a captured graph. Valid until the model's
 * next call. */
TIDE_AOT_API const char* tide_aot_model_capture_note(TideAotModel* model, uint64_t* replays);
/* The message of this thread's last failure ("" when none); valid until its next call here. */
TIDE_AOT_API const char* tide_aot_last_error(void);
/* The core's host table (tide/plugin_api.h), which a plugin gets at registration: a model.cc
 * that calls kernels directly hands it to the SDK code in its library (tide/kernels/direct.hpp)
 * before creating the model. Lives as long as the process. */
TIDE_AOT_API const TideHostApi* tide_aot_host_api(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDE_COMPILED_MODEL_H_ */
