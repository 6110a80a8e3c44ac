/* tide/plugin_api.h: the whole binary interface between the Tide core and its plugins.
 *
 * Rules (see CHANGELOG.md beside this SDK for what each minor version added):
 *  - C types only. No C++ type, exception, STL container or allocator ownership crosses it.
 *  - Every struct begins with `size_t struct_size`, set by whoever fills the struct to
 *    TIDE_STRUCT_SIZE(type, last_field) of the version it was built with. Fields are only ever
 *    appended; a reader checks `struct_size >=` the end of a field before touching it.
 *  - Functions that can fail return a TideStatus* (NULL = success). The caller owns a returned
 *    status and frees it with TideHostApi.Status_Free.
 *  - Every pointer's owner and lifetime, and the threads each function may be called from, are
 *    written beside it or in the rule that opens its section. "Borrowed" means the callee may
 *    read it only for the duration of the call.
 *
 * The file reads top down by object: status, logging, data types and places, attributes,
 * tensors and variables, contexts and the callbacks that receive them, registration records,
 * devices (TideDeviceDef, with the rule for which device callbacks run concurrently), plugin
 * info, the host table (TideHostApi, in the same sections) and the exported symbols.
 *
 * A plugin exports three symbols (see the end of this file): tide_plugin_abi_layout (called
 * first), tide_plugin_info and tide_plugin_register, and optionally tide_plugin_finalize. Most
 * authors never touch this header: tide/plugin.hpp wraps it (TIDE_PLUGIN defines the three). */
#ifndef TIDE_PLUGIN_API_H_
#define TIDE_PLUGIN_API_H_

#include <stddef.h>
#include <stdint.h>

#define TIDE_ABI_MAJOR 1
#define TIDE_ABI_MINOR 1

/* The layout revision of the tables below (the order of TideHostApi's entries and of the
 * plugin-filled structs' fields), while 1.0 is unreleased: a layout change before the release
 * keeps the version 1.0 and bumps this number instead. A plugin exports the revision it was
 * built with (tide_plugin_abi_layout, see the end of this file) and the host refuses one whose
 * revision is not exactly its own, naming both, instead of calling the wrong entries. 1: the
 * layout before the tables were grouped by object (such plugins export no revision); 2: grouped
 * by object (issue 29). At the 1.0 release the revision is frozen and the rule of minor versions
 * (fields only appended) takes over. */
#define TIDE_ABI_LAYOUT 2

/* The device contract: the rules a device plugin's `copy` and `free` follow (see TideDeviceDef:
 * contract, copy and free). A device declares the contract it implements in
 * TideDeviceDef.contract; the core keeps older contracts working and refuses newer ones.
 *  1: 1.0 before issue 12 (what a device that declares none follows). `copy` may read a host
 *     source until the context is synchronised, and `free` may release a block at once: the
 *     core synchronises the context after every host-to-device copy and before every free.
 *  2: `copy` from ordinary host memory has taken the source's bytes when it returns, and `free`
 *     releases a block in stream order (after work queued before it): the core waits for
 *     neither, so uploads overlap queued work. */
#define TIDE_DEVICE_CONTRACT 2

/* The size of a struct up to and including `last_field`: what struct_size is set to. */
#define TIDE_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/* True when a struct that reports `struct_size` has `field` (a reader's check). */
#define TIDE_HAS_FIELD(ptr, type, field) ((ptr)->struct_size >= TIDE_STRUCT_SIZE(type, field))

#if defined(_WIN32)
#define TIDE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define TIDE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Enumerations whose values match proto/framework.proto, so that they can be stored in
 * programs: TideDataType, TideVarType, TideAttrType. */

/* ========================================================================================== */
/* Status and errors                                                                          */
/* ========================================================================================== */

typedef enum TideCode {
  TIDE_OK = 0,
  TIDE_INVALID_ARGUMENT = 1,
  TIDE_NOT_FOUND = 2,
  TIDE_OUT_OF_RANGE = 3,
  TIDE_UNIMPLEMENTED = 4,
  TIDE_RESOURCE_EXHAUSTED = 5, /* out of memory */
  TIDE_FAILED_PRECONDITION = 6,
  TIDE_ALREADY_EXISTS = 7,
  TIDE_UNAVAILABLE = 8, /* a device, peer or resource is not there */
  TIDE_INTERNAL = 9,
} TideCode;

/* An error: a code and a message. NULL means success. Made with TideHostApi.Status_Create,
 * owned by whoever holds it: a plugin callback returns it to the core (which frees it); a host
 * function returns it to the plugin (which frees it with Status_Free or returns it on). */
typedef struct TideStatus TideStatus;

/* ========================================================================================== */
/* Logging                                                                                    */
/* ========================================================================================== */

typedef enum TideLogSeverity {
  TIDE_LOG_INFO = 0,
  TIDE_LOG_WARNING = 1,
  TIDE_LOG_ERROR = 2,
} TideLogSeverity;

/* ========================================================================================== */
/* Data types, layouts and places                                                             */
/* ========================================================================================== */

/* Element types. Their names and sizes are one table, tide/plugin/data_type.hpp, which the core
 * and the Python package read too. */
typedef enum TideDataType {
  TIDE_UNDEFINED = -1,
  TIDE_BOOL = 0,
  TIDE_INT16 = 1,
  TIDE_INT32 = 2,
  TIDE_INT64 = 3,
  TIDE_FP16 = 4,
  TIDE_FP32 = 5,
  TIDE_FP64 = 6,
  TIDE_UINT8 = 20,
  TIDE_INT8 = 21,
  TIDE_BF16 = 22,
  TIDE_COMPLEX64 = 23,  /* two float32: real, imaginary (C++'s std::complex<float>) */
  TIDE_COMPLEX128 = 24, /* two float64 */
} TideDataType;

typedef enum TideLayout {
  TIDE_LAYOUT_ANY = 0, /* a kernel that accepts any layout; the layout of plain dense data */
  TIDE_LAYOUT_NCHW = 1,
  TIDE_LAYOUT_NHWC = 2,
  /* A kernel library's own blocked layout (oneDNN's); the exact format lives with the data
   * (Tensor_Format). The core hands such data only to kernels of the same layout, converts it
   * with the transforms the library's plugin registers for everything else, and fetches it plain.
   */
  TIDE_LAYOUT_OPAQUE = 3,
} TideLayout;

/* oneDNN's name for the opaque layout (its plugin and tests use it). */
#define TIDE_LAYOUT_ONEDNN TIDE_LAYOUT_OPAQUE

/* A place: a device kind (an id the host interns from a name such as "cpu" or "gpu", see
 * TideHostApi.PlaceKind_Id) and a device ordinal. A plain value, copied freely. */
typedef struct TidePlace {
  int32_t kind;
  int32_t device;
} TidePlace;

/* ========================================================================================== */
/* Attributes                                                                                 */
/* ========================================================================================== */

typedef enum TideAttrType {
  TIDE_ATTR_INT = 0,
  TIDE_ATTR_FLOAT = 1,
  TIDE_ATTR_STRING = 2,
  TIDE_ATTR_INTS = 3,
  TIDE_ATTR_FLOATS = 4,
  TIDE_ATTR_STRINGS = 5,
  TIDE_ATTR_BOOLEAN = 6,
  TIDE_ATTR_BOOLEANS = 7,
  TIDE_ATTR_BLOCK = 8,
  TIDE_ATTR_LONG = 9,
  TIDE_ATTR_BLOCKS = 10,
  TIDE_ATTR_LONGS = 11,
  TIDE_ATTR_FLOAT64S = 12,
  /* 13, 14 (VAR, VARS) and 16, 17 (SCALAR, SCALARS) are PaddlePaddle's; the host converts or
   * refuses them when it loads a program, so a plugin never sees them. */
  TIDE_ATTR_FLOAT64 = 15, /* double precision (e.g. a float64 kernel's epsilon or beta) */
} TideAttrType;

/* An attribute value. Arrays and strings are borrowed from whoever holds the value: for values
 * the host returns, they live as long as the op they came from (see the Attributes section of
 * TideHostApi); for values a plugin passes in, the host copies what it keeps. */
typedef struct TideAttrValue {
  size_t struct_size;
  TideAttrType type;
  int32_t i;                  /* INT, BOOLEAN (0/1), BLOCK (block index) */
  int64_t l;                  /* LONG */
  float f;                    /* FLOAT */
  const char* s;              /* STRING: NUL-terminated */
  const int32_t* ints;        /* INTS, BOOLEANS (0/1), BLOCKS (block indices) */
  const int64_t* longs;       /* LONGS */
  const float* floats;        /* FLOATS */
  const char* const* strings; /* STRINGS */
  size_t count;               /* element count of the list forms */
  double d;                   /* FLOAT64 (and FLOAT's value widened, from hosts that have it) */
  const double* doubles;      /* FLOAT64S */
} TideAttrValue;

/* ========================================================================================== */
/* Tensors, variables and scopes: opaque handles to core objects. The core owns every one      */
/* (a tensor from Tensor_Create is the caller's); see TideHostApi for how long each is valid.  */
/* ========================================================================================== */

typedef struct TideTensor TideTensor;             /* a LoDTensor */
typedef struct TideSelectedRows TideSelectedRows; /* rows + height + value tensor */
typedef struct TideTensorArray TideTensorArray;   /* a LoDTensorArray */
typedef struct TideVariable TideVariable;         /* a named slot in a scope */
typedef struct TideScope TideScope;
typedef struct TideStepScopes TideStepScopes; /* a list of scopes (a loop's iterations) */

/* What a variable holds. */
typedef enum TideVarType {
  TIDE_VAR_UNINITIALIZED = -1,
  TIDE_VAR_LOD_TENSOR = 7,
  TIDE_VAR_SELECTED_ROWS = 8,
  TIDE_VAR_FEED_MINIBATCH = 9,
  TIDE_VAR_FETCH_LIST = 10,
  TIDE_VAR_STEP_SCOPES = 11,
  TIDE_VAR_LOD_RANK_TABLE = 12,
  TIDE_VAR_LOD_TENSOR_ARRAY = 13,
  TIDE_VAR_RAW = 17,
} TideVarType;

/* ========================================================================================== */
/* Contexts, and the plugin callbacks that receive them                                       */
/* ========================================================================================== */

/* The core's context for one place (one per place, shared by every executor and thread that
 * runs there; see TideDeviceDef). Valid until the process ends. */
typedef struct TideDeviceContext TideDeviceContext;
/* What a callback is handed. Each is the core's and valid only during that callback. */
typedef struct TideKernelContext TideKernelContext;
typedef struct TideInferShapeContext TideInferShapeContext;
typedef struct TideGradOpMaker TideGradOpMaker;
typedef struct TideGradOp TideGradOp;
typedef struct TideOpRunContext TideOpRunContext;

/* Callbacks a plugin registers. `user_data` is the pointer given at registration, owned by the
 * plugin and never touched by the core. Each returns NULL on success or a status made with
 * TideHostApi.Status_Create, which the core frees. None may throw.
 * Threads:
 *  - TideKernelFn and TideOpRunFn run on the thread of the executor running the op (the caller
 *    of a run: a C++ thread, or Python's with the GIL released). Several executors may run at
 *    once on several threads, so kernels of different ops (and of one op type) run
 *    concurrently; one op of one prepared program runs on one thread at a time (a prepared
 *    program is not run from two threads at once), which is what makes KernelContext_State
 *    lock-free.
 *  - TideInferShapeFn runs on the thread building the program (compile time) or running it.
 *  - TideGradMakerFn runs on the thread that appends the backward pass.
 *  - TideAttrCheckFn runs where an op's attributes are checked: when the op is added to a
 *    program or prepared for running.
 *  Any of them may run concurrently with another call of the same callback on another thread:
 *  keep `user_data` read-only or lock it. */
typedef TideStatus* (*TideKernelFn)(TideKernelContext* ctx, void* user_data);
typedef TideStatus* (*TideInferShapeFn)(TideInferShapeContext* ctx, void* user_data);
typedef TideStatus* (*TideGradMakerFn)(TideGradOpMaker* maker, void* user_data);
typedef TideStatus* (*TideOpRunFn)(TideOpRunContext* ctx, void* user_data);
/* Checks one attribute value after defaults are filled; `value` is borrowed. */
typedef TideStatus* (*TideAttrCheckFn)(const TideAttrValue* value, void* user_data);
/* Converts `in` (on ctx's place) into `out`: a layout transform (same dtype) or a dtype cast
 * (same layout). The core has set out's dims; the function allocates out with
 * Tensor_MutableData and must not keep either pointer. Runs on the thread that needs the
 * conversion (an executor's, or one reading a tensor out), concurrently with other calls. */
typedef TideStatus* (*TideTransformFn)(const TideTensor* in, TideTensor* out,
                                       TideDeviceContext* ctx, void* user_data);

/* ========================================================================================== */
/* Registration records: what a plugin hands TideHostApi.Registrar_*. All strings and arrays  */
/* are borrowed for the duration of the call; the core copies what it keeps. Function         */
/* pointers and user_data must stay valid while the process runs (plugins are never unloaded). */
/* ========================================================================================== */

/* The core's registration session for one plugin: valid only during tide_plugin_register. */
typedef struct TideRegistrar TideRegistrar;

/* Flags of an op's input or output argument (OpProto.Var). */
enum {
  TIDE_ARG_DUPLICABLE = 1,   /* takes a list of variables */
  TIDE_ARG_DISPENSABLE = 2,  /* may be absent */
  TIDE_ARG_INTERMEDIATE = 4, /* an output only the op itself (or its grad) reads */
  /* an input that a float16 / bfloat16 kernel reads in float32 (Paddle's rule for the scale,  */
  /* bias and statistics of batch_norm and layer_norm): the data transform casts it to float32 */
  /* where it casts the other inputs to the kernel's type                                      */
  TIDE_ARG_FLOAT32_PARAM = 8,
};

typedef struct TideArgDef {
  size_t struct_size;
  const char* name;    /* e.g. "X" */
  const char* comment; /* may be NULL */
  uint32_t flags;      /* TIDE_ARG_* */
} TideArgDef;

typedef struct TideAttrDef {
  size_t struct_size;
  const char* name;
  TideAttrType type;
  const char* comment;                /* may be NULL */
  const TideAttrValue* default_value; /* NULL: the attribute is required */
  TideAttrCheckFn check;              /* may be NULL */
  void* check_data;
} TideAttrDef;

/* An input and an output of an op (parameter names, as in its TideArgDefs). */
typedef struct TideInPlacePair {
  const char* input;
  const char* output;
} TideInPlacePair;

typedef struct TideOpDef {
  size_t struct_size;
  const char* type;    /* "name" for in-tree packs, "vendor.name" for others */
  const char* comment; /* may be NULL */
  const TideArgDef* inputs;
  size_t num_inputs;
  const TideArgDef* outputs;
  size_t num_outputs;
  const TideAttrDef* attrs;
  size_t num_attrs;
  /* Shape (and at compile time, dtype and var-type) inference; NULL: none. */
  TideInferShapeFn infer_shape;
  void* infer_shape_data;
  /* Gradient: a maker callback, or the name of the grad op for Fluid's default rule (inputs:
   * forward inputs, outputs and output grads; outputs: input grads; attrs copied). Both NULL:
   * the op has no gradient. */
  TideGradMakerFn grad_maker;
  void* grad_maker_data;
  const char* default_grad_op;
  /* Which input's dtype selects the kernel (NULL: the first input holding data), or, prefixed
   * with "attr:", an INT attribute holding a TideDataType (e.g. "attr:dtype"). */
  const char* kernel_dtype_source;
  /* An operator without kernels (control flow, I/O) runs through this instead; NULL for an
   * operator whose kernels are registered with Registrar_AddKernel. */
  TideOpRunFn run;
  void* run_data;
  /* 1: the op has no gradient by design (its outputs do not depend differentiably on its
   * inputs: comparisons, shape-only inputs, random numbers). An op with neither a gradient nor
   * this flag, met by append_backward on the way to a parameter, is an error naming it. */
  int32_t no_gradient;
  /* Input / output pairs the op computes in place: every kernel of the op, on every device,
   * computes right when the output is bound to the input's variable and ends with the input's
   * dims (element-wise math, an optimizer's Param / ParamOut, batch_norm's Mean / MeanOut). For
   * any other input an output shares a variable with (concat(X = [a, b], Out = a)), and for a
   * pair whose output takes other dims (an element-wise op broadcasting X to Out), the core
   * hands the kernel a copy of the input first. NULL / 0 (or a struct without the fields):
   * none. */
  const TideInPlacePair* in_place;
  size_t num_in_place;
  /* Output views: input / output pairs where every kernel of the op, on every device, writes
   * exactly the input's bytes into the output, only its dims changed (reshape, squeeze,
   * flatten and their grads), and copies nothing when the output's data already is the input's.
   * Where the input is a temporary whose last use is this op, and the kernel reads it as it is,
   * the executor hands the output the input's memory before the kernel runs and has the input
   * let go of it right after: a move, so no two live variables share the memory. NULL / 0 (or a
   * struct without the fields): none; the kernels copy. */
  const TideInPlacePair* views;
  size_t num_views;
} TideOpDef;

typedef struct TideKernelDef {
  size_t struct_size;
  const char* op_type;
  const char* place_kind; /* "cpu", "gpu", ... */
  TideDataType dtype;
  TideLayout layout;
  const char* library; /* "plain", "mkldnn", "cudnn", ... */
  TideKernelFn compute;
  void* user_data;
  /* 0: registering a key that already exists is an error. > 0: replaces a kernel of lower
   * priority under the same key (the override is logged). */
  int32_t priority;
  /* Inputs (the op's parameter names, `num_host_inputs` of them; copied) the kernel reads in host
   * memory (issue 33; TensorFlow's HostMemory, ONNX Runtime's OrtMemTypeCPUInput): shape, start,
   * end, axis and value tensors a device kernel needs on the host to size or configure its work.
   * The core hands the kernel such an input on the CPU place as it is (not moved to the kernel's
   * place, nor cast or re-laid-out to its key; data in a library's opaque layout is made plain),
   * copying it to host memory, after the work that wrote it, when an earlier op left it on a
   * device. The copy is the core's: valid while the kernel runs (a kernel queueing work that reads
   * the values later copies them, e.g. with a host-to-device copy). A name the op does not declare
   * is an error at registration. NULL / 0: none (absent below this field). */
  const char* const* host_inputs;
  size_t num_host_inputs;
} TideKernelDef;

/* A kernel library a plugin brings (oneDNN, cuDNN, a vendor's): kernels register with
 * `library` = name. An op asks for the library with the bool attribute `op_attr` (any op may
 * carry it), and every op at once with the bool flag `flag`, which the core defines when the
 * library registers (set by FLAGS_<flag> / TIDE_<FLAG> in the environment, --<flag>, or
 * tide.set_flags). NULL op_attr / flag: that way of asking does not exist. Strings are copied. */
typedef struct TideLibraryDef {
  size_t struct_size;
  const char* name;
  const char* op_attr;
  const char* flag;
  const char* description; /* for the flag's help; may be NULL */
} TideLibraryDef;

/* A layout transform on one place kind, e.g. cpu: ONEDNN -> NCHW (a oneDNN reorder). */
typedef struct TideLayoutTransformDef {
  size_t struct_size;
  const char* place_kind;
  TideLayout from;
  TideLayout to;
  TideTransformFn fn;
  void* user_data;
} TideLayoutTransformDef;

/* A data-type cast on one place kind, e.g. cpu: FP32 -> FP64. */
typedef struct TideDataTypeCastDef {
  size_t struct_size;
  const char* place_kind;
  TideDataType from;
  TideDataType to;
  TideTransformFn fn;
  void* user_data;
} TideDataTypeCastDef;

/* A pass over a whole program (Registrar_AddProgramPass; issue 33; TensorFlow's custom graph
 * optimizers): `run` reads a serialized ProgramDesc (proto/framework.proto; `len` bytes,
 * borrowed for the call) and either leaves *out NULL (the program is unchanged) or sets *out /
 * *out_len to a new serialized ProgramDesc in a buffer from TideHostApi.Buffer_Alloc, which the
 * core then owns (on a status, the core frees a buffer left in *out). `keep` (`num_keep` names,
 * borrowed) are variables read from outside the program after it runs (fetched, or read by
 * another program): the pass must leave them computed under their names. A pass must keep what
 * the program computes; the core refuses a result it cannot parse, naming the pass and the
 * plugin file. Where passes run (docs/writing_plugins.md): InferenceTranspiler.transpile, after
 * its own passes; and Executor::Prepare of an inference program (no op with a backward or
 * optimizer op_role, no grad op) on a place of `place_kind`, before the device's
 * get_capability. In both, passes run in the order they were registered. Threads: the thread
 * transpiling or preparing, concurrently with itself on another program. */
typedef TideStatus* (*TideProgramPassFn)(const char* program, size_t len, const char* const* keep,
                                         size_t num_keep, char** out, size_t* out_len,
                                         void* user_data);

typedef struct TideProgramPassDef {
  size_t struct_size;
  const char* name;       /* unique among passes, e.g. "acme.drop_identity_scale" */
  const char* place_kind; /* runs at prepare for this kind only; NULL: for every place */
  TideProgramPassFn run;
  void* user_data;
} TideProgramPassDef;

/* ========================================================================================== */
/* Devices: what a device plugin registers for its place kind (Registrar_AddDevice).          */
/* ========================================================================================== */

/* What `copy` moves, seen from ctx's device. "Host memory" is memory the host reads and writes
 * directly that is not this device's: ordinary or pinned host memory, or, for a copy between two
 * host-accessible places (the CPU and a host-accessible device), the other place's memory, which
 * the core has synchronised first. */
typedef enum TideCopyKind {
  TIDE_COPY_HOST_TO_DEVICE = 0,   /* src host memory, dst this device's */
  TIDE_COPY_DEVICE_TO_HOST = 1,   /* src this device's, dst host memory */
  TIDE_COPY_DEVICE_TO_DEVICE = 2, /* src and dst both this device's (within one device) */
} TideCopyKind;

/* What a device is (TideDeviceDef.properties). Strings are the plugin's and live as long as it
 * is loaded; NULL or "" when unknown. */
typedef struct TideDeviceProperties {
  size_t struct_size;
  const char* name;               /* e.g. "NVIDIA H100 80GB HBM3" */
  const char* vendor;             /* e.g. "NVIDIA" */
  const char* driver_version;     /* e.g. "12.4" */
  const char* compute_capability; /* e.g. "9.0"; the vendor's own notion of a device generation */
  uint64_t total_memory;          /* bytes */
  int32_t multiprocessor_count;   /* compute units; 0 when unknown */
} TideDeviceProperties;

/* --- Profiling and memory statistics (TideDeviceDef's last fields; issue 33) --------------- */

/* A device allocator's own figures (TideDeviceDef.memory_stats). The core sets struct_size
 * before the call; the plugin writes no field past it. Bytes; 0 where the device does not know. */
typedef struct TideMemoryStats {
  size_t struct_size;
  uint64_t bytes_in_use;      /* handed out by the device's allocator now */
  uint64_t bytes_reserved;    /* taken from the device by that allocator (in use, plus cached) */
  uint64_t peak_bytes_in_use; /* the most bytes_in_use since the device was first used */
  uint64_t bytes_limit;       /* the most the allocator may take; 0: no limit it knows */
} TideMemoryStats;

/* What a context's work is for (TideDeviceDef.context_create_role). */
typedef enum TideStreamRole {
  TIDE_STREAM_COMPUTE = 0,       /* kernels: the place's context, context_create's */
  TIDE_STREAM_COPY_IN = 1,       /* host-to-device copies of feeds and loaded batches */
  TIDE_STREAM_COPY_OUT = 2,      /* device-to-host copies of the values a run fetches */
  TIDE_STREAM_COMMUNICATION = 3, /* collectives (reserved: a device's collective library brings
                                  * its own communication stream, TideCollectiveDef.comm_stream
                                  * in tide/collective.h, as PaddlePaddle's xccl does) */
} TideStreamRole;

/* What a trace record is (TideTraceRecord.kind). */
typedef enum TideTraceKind {
  TIDE_TRACE_KERNEL = 0, /* device compute */
  TIDE_TRACE_COPY = 1,   /* a transfer (bytes says how many) */
  TIDE_TRACE_OTHER = 2,  /* anything else the device does: a memset, a collective, queue time */
} TideTraceKind;

/* One thing the device did, as its tracer recorded it. Borrowed: valid only during the `emit`
 * call that hands it to the core, which copies what it keeps. struct_size is the plugin's (the
 * core reads no field past it). Times are nanoseconds on the tracer's clock (now_ns). */
typedef struct TideTraceRecord {
  size_t struct_size;
  const char* name; /* e.g. the kernel's name or "memcpy HtoD"; NULL: "" */
  int32_t device;   /* the ordinal of the place it ran on */
  int32_t stream;   /* the plugin's number for the stream or queue, >= 0: one trace row each */
  uint64_t begin_ns, end_ns;
  uint64_t bytes; /* moved or set, for copies and memsets; else 0 */
  int32_t kind;   /* a TideTraceKind */
} TideTraceRecord;

/* What collect hands each record to. `sink` is the core's; call it only during collect. */
typedef void (*TideTraceEmitFn)(void* sink, const TideTraceRecord* record);

/* A device's own tracer (TideDeviceDef.tracer): the records of what its streams did (kernels,
 * copies, queue time), which tide.profiler merges into its Chrome trace under the device's rows.
 * The table is the plugin's and lives as long as the process; struct_size is the plugin's, and
 * the core calls no entry past it. All four entries are required where the table is given.
 * Threads: the core calls start, stop and collect from one thread at a time (the one that starts
 * or ends a profile), concurrently with any other device callback (kernels keep running), and
 * now_ns from any thread. The core calls start only when stopped and stop only when started.
 *  - start: begin recording every device of the kind (drops what an earlier session left).
 *  - stop: stop recording. The core synchronises the kind's contexts first, so the work queued
 *    while recording has run.
 *  - collect: hands every record made so far and not yet collected to `emit`, one call each, in
 *    any order, and forgets them. The core calls it after stop.
 *  - now_ns: the tracer's clock now, in ns: the clock of begin_ns / end_ns. The core reads it
 *    between two readings of its own clock (std::chrono::steady_clock, CLOCK_MONOTONIC on Linux)
 *    when a profile starts and when it is collected, and maps the records onto its clock with the
 *    offset whose bracket was narrowest; the trace's metadata gives that bracket. */
typedef struct TideDeviceTracer {
  size_t struct_size;
  TideStatus* (*start)(void* self);
  TideStatus* (*stop)(void* self);
  TideStatus* (*collect)(void* self, TideTraceEmitFn emit, void* sink);
  TideStatus* (*now_ns)(void* self, uint64_t* ns);
} TideDeviceTracer;

/* --- Subgraph claim-and-compile (TideDeviceDef.compiler; issue 33) ---------------------------
 * A device whose compiler wants whole subgraphs (ONNX Runtime's GetCapability / Compile): at
 * Executor::Prepare the core hands it the prepared program, serialized (a ProgramDesc of
 * proto/framework.proto, with the feed and fetch ops added and the shapes and data types its
 * VarDescs declare), and asks which groups of ops of the prepared block it takes. The core checks
 * the answer, replaces each group by one node whose inputs are the names the group reads from
 * outside and whose outputs are the names read outside it (by another op, block or fetch, or
 * persistable); the group's other temporaries are never made. When the node first runs with a
 * set of input shapes and data types, the core asks `compile` for a function, caches it by
 * (place, cache_key, the inputs' shapes and data types) and calls `run_compiled` on every run.
 * A new shape compiles again; a compile that answers TIDE_UNIMPLEMENTED declines those shapes,
 * and the group runs op by op (with the op's kernels) for them. */

/* The plugin's compiled function (opaque to the core). */
typedef struct TideCompiled TideCompiled;

/* One group a device takes. Borrowed from the plugin's TideCapability until release_capability;
 * the core copies what it keeps. */
typedef struct TideSubgraphGroup {
  size_t struct_size;
  const int32_t* ops; /* indices of the ops in the block (their order there is kept) */
  size_t num_ops;
  /* The plugin's name for the computation (NUL-terminated): two groups of one key, given
   * inputs of the same shapes and data types, share one compiled function. */
  const char* cache_key;
} TideSubgraphGroup;

/* What get_capability answers. The core sets struct_size and zeroes the rest before the call;
 * the plugin points `groups` at its own array (NULL / 0: it takes nothing) and may keep what it
 * needs to free it in `release_arg`. The core reads the groups, then calls release_capability
 * once with the same struct (also when it refuses the answer). */
typedef struct TideCapability {
  size_t struct_size;
  const TideSubgraphGroup* groups;
  size_t num_groups;
  void* release_arg; /* the plugin's */
} TideCapability;

/* One input or output of a group, for compile. Borrowed for the call. */
typedef struct TideCompileValue {
  size_t struct_size;
  const char* name; /* the variable's */
  TideDataType dtype;
  const int64_t* dims; /* inputs: the run's; outputs: as declared (-1: not known before running) */
  int32_t rank;
} TideCompileValue;

/* What compile is asked for. Borrowed for the call: copy what the compiled function keeps. */
typedef struct TideCompileRequest {
  size_t struct_size;
  int32_t device;                 /* the place's ordinal */
  const char* program;            /* the serialized program get_capability saw */
  size_t program_len;             /* its bytes */
  int32_t block_idx;              /* the block the group is in */
  const TideSubgraphGroup* group; /* as the plugin answered it (ops, cache_key) */
  const TideCompileValue* inputs; /* in the order run_compiled gets them */
  size_t num_inputs;
  const TideCompileValue* outputs; /* likewise */
  size_t num_outputs;
} TideCompileRequest;

/* The device's compiler (TideDeviceDef.compiler): all five entries, or no table. The table is
 * the plugin's and lives as long as the process; struct_size is the plugin's. None may throw.
 * Threads: get_capability and compile run on the thread preparing or running the program, and
 * may run concurrently with each other and with any device callback (two executors prepare at
 * once); run_compiled as a kernel does (on the executor's thread; one node of one prepared
 * program at a time, nodes of other programs concurrently, also with one compiled function);
 * release_compiled once per compiled function, on any thread, after its last run_compiled. */
typedef struct TideDeviceCompiler {
  size_t struct_size;
  /* Which groups of ops of block `block_idx` of `program` (`len` bytes, serialized; borrowed
   * for the call) the device takes on `device`: fills `out` (see TideCapability). Called once
   * per block the executor prepares for a place of the kind. The core refuses, naming the
   * plugin file and the group, an op index out of range or repeated, two groups sharing an op,
   * an op without kernels (feed, fetch, control flow), a variable that is not a LoDTensor, and a
   * group whose inputs depend on its own outputs through an op outside it (fusing would make a
   * cycle). A status: the prepare fails with it. */
  TideStatus* (*get_capability)(void* self, int32_t device, const char* program, size_t len,
                                int32_t block_idx, TideCapability* out);
  /* Frees what `cap->groups` points at (any thread). */
  void (*release_capability)(void* self, TideCapability* cap);
  /* A compiled function for `request` in *compiled (the plugin's, until release_compiled).
   * TIDE_UNIMPLEMENTED: the device declines these shapes (the group runs op by op for them,
   * without asking again); another status fails the run. */
  TideStatus* (*compile)(void* self, const TideCompileRequest* request, TideCompiled** compiled);
  /* Runs a compiled function, asynchronously on `ctx` (the device's context of the place, as
   * context_create made it) like a kernel: inputs are LoDTensors on the place (borrowed for the
   * call, of the shapes and data types it was compiled for, in the request's order); the plugin
   * sizes and allocates each output (Tensor_Resize, Tensor_MutableData on the place) and may
   * keep no tensor pointer past the call. */
  TideStatus* (*run_compiled)(void* self, TideCompiled* compiled, void* ctx,
                              const TideTensor* const* inputs, size_t num_inputs,
                              TideTensor* const* outputs, size_t num_outputs);
  /* Frees a compiled function: when the core's cache drops it (at exit or tide.shutdown(),
   * before the device's finalize, after the contexts were synchronised). */
  void (*release_compiled)(void* self, TideCompiled* compiled);
} TideDeviceCompiler;

/* --- Capture and replay (TideDeviceDef.graphs; issue 34) ------------------------------------
 * A device that can record the work queued on a context and queue it again as one unit (CUDA
 * graphs: cudaStreamBeginCapture, cudaStreamEndCapture, cudaGraphLaunch). The core captures a
 * frozen model's run (tide.aot, FrozenModel's `capture`) once its kernels are warm, then replays
 * it instead of calling the kernels: no host work per op. All four entries, or no table; the
 * table is the plugin's and lives as long as the process; struct_size is the plugin's. None may
 * throw.
 *  - capture_begin: from now on the work queued on ctx (kernels, device-to-device copies,
 *    memsets) is recorded, not run, until capture_end on the same thread. Meanwhile the core
 *    queues no host-to-device or device-to-host copy, event or synchronize on ctx; a plugin may
 *    fail such calls (CUDA does) and then fails capture_end. alloc may still be called (the
 *    core's pool growing), and other threads may use the device's other contexts: only ctx's
 *    own work is recorded (CUDA's relaxed capture mode).
 *  - capture_end: ends the capture; *graph is what was recorded (the plugin's), or NULL and an
 *    error when the capture failed (a kernel did what the device cannot record): ctx is out of
 *    capture mode either way, and the recorded work never ran.
 *  - graph_launch: queues the recorded work on ctx, in its order, on the same addresses as when
 *    captured (the core keeps every block the capture used alive and in place until
 *    graph_destroy, and writes new inputs into them before a launch).
 *  - graph_destroy: after the core synchronised the context of the graph's last launch. */
typedef struct TideDeviceGraphs {
  size_t struct_size;
  TideStatus* (*capture_begin)(void* self, void* ctx);
  TideStatus* (*capture_end)(void* self, void* ctx, void** graph);
  TideStatus* (*graph_launch)(void* self, void* ctx, void* graph);
  void (*graph_destroy)(void* self, void* graph);
} TideDeviceGraphs;

/* A device plugin's functions for one place kind. `self` is TideDeviceDef.self, owned by the
 * device plugin; `ctx` is what context_create returned; `event` what event_create returned.
 * The table and `self` must stay valid while the process runs. None of the functions may throw.
 *
 * Threads: which device callbacks run concurrently. The core keeps ONE context per place,
 * shared by every executor and every thread that uses the place, and serialises none of the
 * calls below except where stated. So:
 *  - Every function may be called from any thread, including threads the plugin never saw
 *    before (an executor's caller, Python's thread, a thread dropping the last tensor of a
 *    block, the thread running exit handlers).
 *  - Every function may run concurrently with any other, also on the same device, the same
 *    context and the same event: two threads may queue copies, memsets and event records on one
 *    context, or record and wait on one event, at the same time (CUDA's stream and event
 *    functions behave so). Work queued from one thread runs in the order it was queued; work
 *    queued by two threads at once is ordered however the plugin serialises it.
 *  - Except: context_create is called at most once per place, and never concurrently with
 *    another context_create of any kind (the core's context pool holds its lock). It runs on
 *    the first thread that uses the place.
 *  - Except: context_destroy runs once per context, at exit (or tide.shutdown()), after
 *    synchronize on it; event_destroy runs once per event, after the core's last use of it.
 *    The core makes no call on that context or event afterwards.
 *  - Except: finalize runs once, after every context of the kind was destroyed and the core's
 *    memory pool gave back every block no tensor holds; only `free` follows it, for tensors
 *    freed later during exit.
 *  - `free` may come while work queued on a context still uses the block (a temporary dropped
 *    at the end of a run): under contract 2 release it in stream order (see `free`).
 * Kernels reach the plugin's own objects (a stream, library handles) through context_extension
 * from executor threads at the same time as the core's calls above: what the extension exposes
 * must be safe to use concurrently in the same way. */
typedef struct TideDeviceDef {
  size_t struct_size;

  /* --- What the kind is (plain values, read at registration) --- */
  const char* kind; /* the place kind it provides, e.g. "cpu"; copied */
  void* self;
  int32_t host_accessible; /* 1: the host CPU can read and write this memory directly */
  size_t alignment;        /* of every block alloc returns */
  /* DLPack's DLDeviceType for this kind's memory (kDLCPU = 1, kDLCUDA = 2, kDLExtDev = 12, or
   * the value DLPack assigned the vendor), so tide.from_dlpack / __dlpack__ exchange its tensors
   * with other frameworks without a copy; the device ordinal is the place's. 0: no DLPack. */
  int32_t dlpack_device_type;
  /* Defaults of the kind's fraction_of_<kind>_memory_to_use and initial_<kind>_memory_in_mb
   * flags; 0: 1.0 and 64. */
  double memory_fraction_default;
  uint64_t initial_memory_mb_default;

  /* --- Devices of the kind. Called often (device_count on every place check): keep them cheap. */
  int32_t (*device_count)(void* self);
  /* Fills `props` (the core sets props->struct_size first; write no field past it). Optional;
   * NULL: the core reports the kind, the ordinal and memory_info's total. */
  TideStatus* (*properties)(void* self, int32_t device, TideDeviceProperties* props);
  /* Total and free bytes of a device, for fraction_of_<kind>_memory_to_use. */
  TideStatus* (*memory_info)(void* self, int32_t device, size_t* total, size_t* available);

  /* --- Memory --- */
  /* Raw device memory for the core's allocator (which carves tensors out of it). NULL *ptr and
   * a status on failure. The core frees each block exactly once, with the size it asked for:
   * when its pool gives cached memory back (tide.memory.empty_cache, a large tensor's block) and
   * at exit, before finalize. */
  TideStatus* (*alloc)(void* self, int32_t device, size_t size, void** ptr);
  /* Contract 2: `free` may come while work queued on the device's context still reads or writes
   * the block; release it in stream order (after that work, e.g. cudaFreeAsync, or a free queued
   * on the stream), never at once. Contract 1 (or none declared): the core synchronises the
   * device's context before each free. */
  void (*free)(void* self, int32_t device, void* ptr, size_t size);
  /* Page-locked host memory the device copies from and to without staging (cudaHostAlloc). The
   * core uses it to stage host-to-device copies of feeds, so they overlap compute. Optional, both
   * or neither; NULL: the core copies from ordinary host memory. */
  TideStatus* (*host_alloc)(void* self, size_t size, void** ptr);
  void (*host_free)(void* self, void* ptr);

  /* --- Contexts: one per place, a stream of work --- */
  /* Made on the first use of the place (see Threads above) and destroyed at exit. *ctx is the
   * plugin's. */
  TideStatus* (*context_create)(void* self, int32_t device, void** ctx);
  void (*context_destroy)(void* self, void* ctx);
  /* Device-specific handles for op packs, e.g. name "tide.cpu" -> const TideCpuContext*.
   * Returns NULL for a name it does not know. The pointer is the plugin's and lives as long as
   * ctx. */
  const void* (*context_extension)(void* self, void* ctx, const char* name);
  /* Waits until all work queued on ctx is done. Reports an error raised by queued work. */
  TideStatus* (*synchronize)(void* self, void* ctx);

  /* --- Transfers, queued on a context --- */
  /* Copies `size` bytes, queued on ctx's stream; synchronize before reading on the host.
   * When may the core reuse a HOST_TO_DEVICE copy's source:
   *  - Contract 2, ordinary (pageable) host memory: as soon as copy returns. The plugin has
   *    taken the source's bytes by then (the core may free or change them right after), as
   *    cudaMemcpyAsync from pageable memory does.
   *  - Contract 2, memory the plugin's host_alloc returned: the core keeps the source alive and
   *    unchanged until an event recorded after the copy is done, so the copy may read it later.
   *  - Contract 1 (or none declared): after the core synchronised ctx, which it does right after
   *    every host-to-device copy.
   * A DEVICE_TO_HOST copy's destination is read by the core only after synchronize. */
  TideStatus* (*copy)(void* self, void* ctx, TideCopyKind kind, void* dst, const void* src,
                      size_t size);
  /* Copies `size` bytes from `src` on device `src_device` of this kind to `dst` on ctx's device,
   * queued on ctx's stream (a peer copy, e.g. gpu:0 -> gpu:1). The core has made ctx wait for
   * the source's queued work first (an event, or synchronising the source's context when the
   * device has no events) and synchronises ctx after. Optional; NULL: the core stages such
   * copies through host memory (device to host, then host to device). */
  TideStatus* (*copy_peer)(void* self, void* ctx, void* dst, int32_t src_device, const void* src,
                           size_t size);
  /* Sets `size` bytes at dst (on ctx's device) to `value`, queued on ctx's stream. Optional;
   * NULL: the core copies from a host buffer of that value. */
  TideStatus* (*memset)(void* self, void* ctx, void* dst, int32_t value, size_t size);

  /* --- Events: a marker in a context's stream, done when the work queued before it is. ---
   * Optional, all six or none; NULL: the core synchronises contexts instead (correct, but the
   * host waits). event_create makes an event (the plugin's) for ctx's device; record marks the
   * work queued on ctx so far (recording again moves the marker); query sets *done to 1 when that
   * work is done, 0 if not (an event never recorded is done); context_wait_event makes work
   * queued on ctx later wait for the event, without blocking the host. A fault of the work an
   * event marks reaches the contexts that wait for it: their synchronize reports it too (CUDA's
   * faults are sticky to the whole device, which keeps this), so a copy stream that waited for a
   * failed kernel never hands the host its garbage as a result. */
  TideStatus* (*event_create)(void* self, void* ctx, void** event);
  void (*event_destroy)(void* self, void* event);
  TideStatus* (*event_record)(void* self, void* ctx, void* event);
  TideStatus* (*event_query)(void* self, void* event, int32_t* done);
  TideStatus* (*event_synchronize)(void* self, void* event);
  TideStatus* (*context_wait_event)(void* self, void* ctx, void* event);

  /* --- End of life --- */
  /* Called once when the process ends (or at tide.shutdown()), after every context of this
   * kind was synchronised and destroyed and the core's memory pool freed every block no tensor
   * holds: release what the plugin holds. The core calls nothing of the device after it except
   * `free`, for memory still held by tensors freed later during exit. Optional; NULL: nothing
   * to do. */
  void (*finalize)(void* self);

  /* --- The contract (after finalize: a table that ends there declares none) --- */
  /* The device contract the plugin implements: TIDE_DEVICE_CONTRACT of the header it was built
   * with (tide::Device sets it). 0 or absent: contract 1, for which the core synchronises as
   * that contract needs (and logs once that it does). Higher than the core's
   * TIDE_DEVICE_CONTRACT: the device is refused at registration, both contracts named. */
  uint32_t contract;

  /* --- Profiling and memory statistics (after the contract: a table that ends there has none;
   * each optional; NULL: not supported) --- */
  /* The time between two events' markers, in ms, as cudaEventElapsedTime: both recorded and done
   * (an error otherwise), `end` recorded after `start` on the same context. Requires the six event
   * functions. The core times ops with it while profiling (tide.profiler): an event before and
   * after each kernel, resolved at the end of the run, so it need not wait for the device after
   * every op. Any thread, concurrently with the other event calls; *ms must be finite and >= 0
   * (the conformance kit checks). NULL: the profiler synchronises after each op instead. */
  TideStatus* (*event_elapsed_ms)(void* self, void* start, void* end, float* ms);
  /* The device's own tracer (see TideDeviceTracer), or NULL. The plugin's; valid while the process
   * runs. */
  const TideDeviceTracer* tracer;
  /* Fills `stats` with the device allocator's figures for `device` (see TideMemoryStats), shown
   * by tide.memory.stats beside the core's allocator. Any thread, concurrently with alloc and
   * free: the figures may be a moment old. NULL: the core reports its own allocator only. */
  TideStatus* (*memory_stats)(void* self, int32_t device, TideMemoryStats* stats);

  /* --- Subgraph claim-and-compile (after memory_stats: a table that ends there has none) --- */
  /* The device's compiler (see TideDeviceCompiler), or NULL: the device runs op by op. The
   * plugin's; valid while the process runs. */
  const TideDeviceCompiler* compiler;

  /* --- Streams with roles (after compiler: a table that ends there has none) --- */
  /* Makes a further context of `device` for work of `role` (a TideStreamRole other than
   * TIDE_STREAM_COMPUTE, whose context is context_create's) at `priority`: 0 the device's
   * default, lower numbers first (CUDA's order; the plugin clamps to its range). The core queues
   * on it only copies, memsets and events, never a kernel, and orders it against the place's
   * compute context with events: work on a role context that compute reads is followed by
   * context_wait_event on the compute context, and memory the core writes there is memory no
   * queued work of another context still uses. context_destroy destroys it (after synchronize),
   * before the place's compute context. Same threads rules as context_create: at most once per
   * place and role, never concurrently with another create. Requires the six event functions
   * (registration refuses it without them); devices of contract 1 get no role context.
   * Optional; NULL: every role's work goes on the place's one context. The core asks for
   * TIDE_STREAM_COPY_IN and TIDE_STREAM_COPY_OUT at priority -1 (copies are short and feed the
   * compute stream or the host) when the --copy_stream flag is on (default), each on first use:
   * copy-in for uploads, copy-out for the downloads of the values a run fetches (the host waits
   * for those copies only, not for the work the run queued after them). */
  TideStatus* (*context_create_role)(void* self, int32_t device, int32_t role, int32_t priority,
                                     void** ctx);

  /* --- Capture and replay (after context_create_role: a table that ends there has none) --- */
  /* The device's capture and replay (see TideDeviceGraphs), or NULL: the core calls kernels op by
   * op. Used under contract 2 only (a contract-1 device's is ignored). The plugin's; valid while
   * the process runs. */
  const TideDeviceGraphs* graphs;

  /* --- Host functions (after graphs: a table that ends there has none) --- */
  /* Queues `fn(data)` on ctx's stream, as cudaLaunchHostFunc: the plugin calls it once, on a
   * thread of its own, when the work queued on ctx before it is done; work queued on ctx after
   * it waits until it returns, and host functions of one context run in the order queued. fn
   * does not fail and must not call the device plugin nor the core's host API (it copies host
   * memory, sets flags, wakes threads). synchronize(ctx) returns after every host function queued
   * before it returned, or, when queued work faulted, after the plugin dropped those it will not
   * call (CUDA calls none after a fault): the core uses fn only to finish early what it would
   * otherwise do after synchronize. Never queued while ctx is capturing. Any thread, as copy.
   * Contract 2 only (a contract-1 device's is ignored). Optional; NULL: the core does that work
   * after synchronize. The core queues one after each download of a fetched value on the
   * TIDE_STREAM_COPY_OUT context, to move it out of pinned memory as soon as it lands. */
  TideStatus* (*launch_host_func)(void* self, void* ctx, void (*fn)(void* data), void* data);

  /* --- ABI 1.1: why there is no device (after launch_host_func: a 1.0 table ends there) --- */
  /* Why device_count is 0, in words a user can act on ("no OpenCL platform: is an ICD
   * installed?", "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime
   * version"). The core adds it to the error of a place of this kind that does not exist and to
   * the device listings (tide.device_unavailable_reason, tide-plugins). Returns NULL or "" when
   * there is nothing to say (devices were found). The string is the plugin's and stays valid
   * while the process runs. Any thread; cheap, like device_count. Optional; NULL: no reason. */
  const char* (*unavailable_reason)(void* self);
} TideDeviceDef;

/* ========================================================================================== */
/* Plugin info and version negotiation                                                        */
/* ========================================================================================== */

/* The plugin's description of itself. Static storage, owned by the plugin. */
typedef struct TidePluginInfo {
  size_t struct_size;
  const char* name;    /* unique, e.g. "ops_math", "device_cpu", "acme.npu" */
  const char* version; /* the plugin's own version, e.g. "0.1.0" */
  uint32_t abi_major;  /* the ABI version the plugin speaks (see tide_plugin_info) */
  uint32_t abi_minor;
  const char* const* requires; /* NULL-terminated names of plugins to load first, or NULL */
  const char* description;     /* one line, may be NULL */
  /* The oldest host minor the plugin runs on (same major): a host older than that refuses the
   * plugin with both versions named, instead of letting its first call of a missing host
   * function crash. Absent (an older plugin): 0. A plugin that checks every newer host function
   * before calling it (TIDE_HAS_FIELD, or TIDE_HOST_FN in plugin.hpp) may set it lower than
   * the minor it was built against. */
  uint32_t min_abi_minor;
} TidePluginInfo;

/* The ABI versions the host supports: major is fixed, minors from min_minor to max_minor. */
typedef struct TideAbiRange {
  size_t struct_size;
  uint32_t major;
  uint32_t min_minor;
  uint32_t max_minor;
} TideAbiRange;

/* ========================================================================================== */
/* The host API: the core's functions, handed to tide_plugin_register. The table is the core's */
/* and lives as long as the process. Check struct_size before calling a function newer than   */
/* the host you run on (TIDE_HAS_FIELD); every function below is in ABI 1.0 unless its comment */
/* says otherwise.                                                                            */
/* ========================================================================================== */
/*
 * Ownership and lifetime, unless an entry says otherwise:
 * - Pointers passed in are borrowed for the call; strings and records are copied if kept.
 * - Handles and pointers returned are the core's: the caller never frees them. Each entry (or
 *   the rule opening its section) says how long one stays valid.
 * - Only three things are owned by the caller: a TideStatus* (Status_Free it, or return it to
 *   the core, which frees it), a tensor from Tensor_Create (Tensor_Destroy it), and the memory a
 *   device plugin's alloc returns (the core's allocator frees it through the plugin).
 * - No host function throws: those that can fail return a status; getters return NULL, -1 or
 *   TIDE_UNDEFINED for what is absent.
 *
 * Threads, unless a section says otherwise: a function may be called from any thread, and
 * concurrently with calls on OTHER objects; calls that read one object may run concurrently,
 * but a call that changes an object (a tensor, variable, selected rows, array) must not run
 * concurrently with any other call on it. The kernel, shape-inference, grad-maker and op-run
 * contexts are used only by the callback they were handed to, on its thread, while it runs
 * (threads the callback starts and joins before returning may read what it read through them).
 */
typedef struct TideHostApi {
  size_t struct_size;
  uint32_t abi_major; /* the host's */
  uint32_t abi_minor;

  /* ======================================================================================== */
  /* Status and errors. Any thread, concurrently.                                              */
  /* ======================================================================================== */
  /* A new status, owned by the caller (return it from a callback, or Status_Free it). `message`
   * is copied. */
  TideStatus* (*Status_Create)(TideCode code, const char* message);
  void (*Status_Free)(TideStatus* status);           /* accepts NULL */
  TideCode (*Status_Code)(const TideStatus* status); /* TIDE_OK for NULL */
  /* Owned by `status`, valid until it is freed; "" for NULL. */
  const char* (*Status_Message)(const TideStatus* status);

  /* ======================================================================================== */
  /* Logging and flags. Any thread, concurrently.                                              */
  /* ======================================================================================== */
  /* `plugin` names the caller; goes to the core's log (glog). */
  void (*Log)(TideLogSeverity severity, const char* plugin, const char* message);
  /* Copies flag `name`'s current value as NUL-terminated text (truncated to `capacity`) into
   * `value` (the caller's buffer); returns the value's full length, or -1 when the core has no
   * such flag. */
  int64_t (*Flag_Get)(const char* name, char* value, size_t capacity);

  /* ======================================================================================== */
  /* Places and device contexts. Any thread, concurrently: a device context is shared by every */
  /* thread using its place, and these pass through to the device callbacks (TideDeviceDef,    */
  /* "Threads"). A TideDeviceContext* is valid until the process ends.                         */
  /* ======================================================================================== */
  /* Interns a place-kind name; the id is stable for the process. */
  int32_t (*PlaceKind_Id)(const char* name);
  /* Owned by the host, valid while the process runs. NULL for an unknown id. */
  const char* (*PlaceKind_Name)(int32_t kind);
  TidePlace (*DeviceContext_Place)(const TideDeviceContext* ctx);
  /* The device plugin's extension struct called `name` (see e.g. tide/cpu_context.h), or NULL.
   * Owned by the device plugin; valid as long as the context. */
  const void* (*DeviceContext_Extension)(TideDeviceContext* ctx, const char* name);
  TideStatus* (*DeviceContext_Synchronize)(TideDeviceContext* ctx);
  /* Sets `size` bytes at dst (memory of ctx's place) to `value`, queued on ctx: the device's
   * memset, or a copy from the host where it has none. */
  TideStatus* (*DeviceContext_Memset)(TideDeviceContext* ctx, void* dst, int32_t value,
                                      size_t size);

  /* ======================================================================================== */
  /* Attributes: an op's attribute `name` with defaults filled, through the context a callback  */
  /* was handed; NULL when the op has none by that name. Threads: the callback's (see above).  */
  /* The value and its arrays are owned by the op, valid while the callback runs.             */
  /* ======================================================================================== */
  const TideAttrValue* (*KernelContext_Attr)(const TideKernelContext* ctx, const char* name);
  const TideAttrValue* (*InferShape_Attr)(const TideInferShapeContext* ctx, const char* name);
  const TideAttrValue* (*GradMaker_Attr)(const TideGradOpMaker* m, const char* name);
  const TideAttrValue* (*OpRun_Attr)(const TideOpRunContext* ctx, const char* name);

  /* ======================================================================================== */
  /* Tensors (LoDTensors), SelectedRows and tensor arrays. Threads: the default rule (one      */
  /* writer per object). A TideTensor* is borrowed from what holds it: a kernel's input or     */
  /* output for the kernel call, a variable's tensor as long as the variable, an array element */
  /* until the array is resized.                                                               */
  /* ======================================================================================== */
  /* A tensor the caller owns, destroyed with Tensor_Destroy (accepts NULL); any thread. */
  TideTensor* (*Tensor_Create)(void);
  void (*Tensor_Destroy)(TideTensor* t);
  TideDataType (*Tensor_DataType)(const TideTensor* t); /* TIDE_UNDEFINED before data */
  int32_t (*Tensor_Rank)(const TideTensor* t);
  /* Owned by the tensor; valid until its dims next change (Resize, ShareDataWith, CopyTo into
   * it). */
  const int64_t* (*Tensor_Dims)(const TideTensor* t);
  int64_t (*Tensor_Numel)(const TideTensor* t);
  TidePlace (*Tensor_Place)(const TideTensor* t);
  /* The tensor's memory (owned by the core's allocation, which every tensor sharing it keeps
   * alive); NULL when the tensor holds no data. Valid until the tensor's memory is replaced
   * (MutableData needing more bytes or another place; ShareDataWith; AdoptData; CopyTo into
   * it) or the tensor goes. */
  const void* (*Tensor_Data)(const TideTensor* t);
  /* A number naming the tensor's bytes as they are now: renewed whenever the core sees them
   * written (Tensor_MutableData, an op's outputs after its kernel), never the same for two
   * allocations. 0 when the tensor holds no data or its memory is shared where writes go unseen
   * (a numpy view, DLPack, Tensor_AdoptData): then nothing derived from the bytes may be cached.
   * Lets a kernel keep a converted copy (a reordered filter) until the bytes change; key it on
   * the data pointer too (views of one allocation share the number). */
  uint64_t (*Tensor_ContentVersion)(const TideTensor* t);
  TideLayout (*Tensor_Layout)(const TideTensor* t);
  void (*Tensor_SetLayout)(TideTensor* t, TideLayout layout);
  /* A layout's own format code (e.g. a dnnl_format_tag_t for TIDE_LAYOUT_OPAQUE); 0 when the
   * plugin that set the layout set none. Copied with the tensor's data and layout. */
  int64_t (*Tensor_Format)(const TideTensor* t);
  void (*Tensor_SetFormat)(TideTensor* t, int64_t format);
  TideStatus* (*Tensor_Resize)(TideTensor* t, const int64_t* dims, int32_t rank);
  /* Allocates (or reuses) memory for the tensor's current dims on `place`, through the core's
   * allocator. `*data` is owned by the tensor, valid as Tensor_Data's result is. */
  TideStatus* (*Tensor_MutableData)(TideTensor* t, TideDataType dtype, TidePlace place,
                                    void** data);
  /* dst shares src's memory, dims, dtype and layout (not its LoD). */
  TideStatus* (*Tensor_ShareDataWith)(TideTensor* dst, const TideTensor* src);
  /* Makes `data` (`bytes` long, on `place`, owned by the caller until now) the tensor's memory
   * for its current dims as `dtype`: no copy (a received message, a buffer of another library).
   * On success the core owns `data` and calls release(release_arg) exactly once, when no tensor
   * uses the memory any more; on failure release is not called and the caller keeps ownership.
   * `release` runs on whichever thread drops the last tensor using the memory: an executor's
   * thread (a temporary released after its last reader), the thread destroying a scope or
   * tensor (Python's, possibly without the GIL), or the thread running exit handlers, possibly
   * after the plugin's tide_plugin_finalize. It may run while the core holds a scope's lock, so
   * it must not call any host function but Log, must not throw and must not wait for other Tide
   * work. Work queued on the place's context may still read device memory when it runs: order
   * the memory's reuse after that work (stream order), as a device's `free` does. */
  TideStatus* (*Tensor_AdoptData)(TideTensor* t, void* data, size_t bytes, TideDataType dtype,
                                  TidePlace place, void (*release)(void* release_arg),
                                  void* release_arg);
  /* Deep copy of data, dims, dtype, layout and LoD to `place` (device copies through the
   * device plugins), queued on ctx (NULL: the destination place's context). Host memory is
   * written when it returns; device memory in its context's stream order (work queued there
   * later sees it; synchronise the context before reading it from the host). */
  TideStatus* (*Tensor_CopyTo)(const TideTensor* src, TidePlace place, TideDeviceContext* ctx,
                               TideTensor* dst);

  /* --- LoD --- */
  size_t (*Tensor_LoDLevels)(const TideTensor* t);
  /* Offsets of one LoD level (*length of them; NULL and 0 past the last level). Owned by the
   * tensor; valid until its LoD changes. */
  const uint64_t* (*Tensor_LoD)(const TideTensor* t, size_t level, size_t* length);
  /* Replaces the LoD with `levels` levels: level k has lengths[k] offsets at offsets[k]. */
  TideStatus* (*Tensor_SetLoD)(TideTensor* t, const uint64_t* const* offsets, const size_t* lengths,
                               size_t levels);

  /* --- SelectedRows --- */
  int64_t (*SelectedRows_Height)(const TideSelectedRows* sr);
  void (*SelectedRows_SetHeight)(TideSelectedRows* sr, int64_t height);
  /* Owned by sr; valid until its rows change. */
  const int64_t* (*SelectedRows_Rows)(const TideSelectedRows* sr, size_t* count);
  void (*SelectedRows_SetRows)(TideSelectedRows* sr, const int64_t* rows, size_t count);
  /* Owned by sr; valid as long as sr. */
  TideTensor* (*SelectedRows_Value)(TideSelectedRows* sr);

  /* --- Tensor arrays --- */
  size_t (*TensorArray_Size)(const TideTensorArray* a);
  void (*TensorArray_Resize)(TideTensorArray* a, size_t size);
  /* Owned by the array; NULL when out of range; valid until the array is resized. */
  TideTensor* (*TensorArray_At)(TideTensorArray* a, size_t i);

  /* ======================================================================================== */
  /* Variables and scopes. A TideVariable* is owned by its scope and valid until the scope is  */
  /* dropped or the executor releases the variable (a temporary, after its last reader); what */
  /* a variable holds is owned by it and valid as long as it. Scopes lock themselves: the     */
  /* Scope_* functions are safe from any thread, concurrently; the Variable_Get* functions     */
  /* that make the variable's object change it (one writer).                                  */
  /* ======================================================================================== */
  TideVarType (*Variable_Type)(const TideVariable* var);
  /* Gets the LoDTensor the variable holds, making it one if it holds nothing. A variable of
   * another type is an error. */
  TideStatus* (*Variable_GetTensor)(TideVariable* var, TideTensor** out);
  TideStatus* (*Variable_GetSelectedRows)(TideVariable* var, TideSelectedRows** out);
  TideStatus* (*Variable_GetTensorArray)(TideVariable* var, TideTensorArray** out);
  /* Gets the LoDRankTable the variable holds, making it one if it holds nothing: an int64 CPU
   * tensor [n, 2] of (sequence index, length) rows, longest first, whose LoD is the table's
   * coarse LoD (DynamicRNN). */
  TideStatus* (*Variable_GetRankTable)(TideVariable* var, TideTensor** out);
  /* Looks up `name` here and in the parents; NULL when absent. */
  TideVariable* (*Scope_FindVar)(const TideScope* scope, const char* name);
  /* Looks up `name` in this scope only (not its parents); NULL when absent. */
  TideVariable* (*Scope_FindLocalVar)(const TideScope* scope, const char* name);
  /* Finds or creates `name` in this scope. */
  TideVariable* (*Scope_Var)(TideScope* scope, const char* name);
  /* A child scope, owned by `scope`, valid until Scope_DropKids or its parent goes. */
  TideScope* (*Scope_NewScope)(TideScope* scope);
  /* Destroys the kids (no other thread may be using them). */
  void (*Scope_DropKids)(TideScope* scope);

  /* ======================================================================================== */
  /* Kernel context: what a kernel sees. Parameter names are the OpProto's. Threads: the      */
  /* kernel's own, during the call. Everything returned is valid for the kernel call (its     */
  /* attributes: KernelContext_Attr, in Attributes).                                          */
  /* ======================================================================================== */
  /* Owned by the op. */
  const char* (*KernelContext_OpType)(const TideKernelContext* ctx);
  TidePlace (*KernelContext_Place)(const TideKernelContext* ctx);
  /* The place's context, shared (valid until the process ends). */
  TideDeviceContext* (*KernelContext_DeviceContext)(TideKernelContext* ctx);
  size_t (*KernelContext_InputCount)(const TideKernelContext* ctx, const char* param);
  size_t (*KernelContext_OutputCount)(const TideKernelContext* ctx, const char* param);
  /* The variable bound to input `param`[i]; NULL when absent (a dispensable input). */
  TideVariable* (*KernelContext_InputVar)(TideKernelContext* ctx, const char* param, size_t i);
  TideVariable* (*KernelContext_OutputVar)(TideKernelContext* ctx, const char* param, size_t i);
  /* The variable name bound to param[i], for messages (owned by the op); NULL when absent. */
  const char* (*KernelContext_InputName)(const TideKernelContext* ctx, const char* param, size_t i);
  const char* (*KernelContext_OutputName)(const TideKernelContext* ctx, const char* param,
                                          size_t i);
  /* Shortcuts for the common case: the LoDTensor bound to param[i]. Input returns NULL when
   * the input is absent or holds another type (and may be a converted copy the core made for
   * this kernel); Output makes the variable a LoDTensor (NULL when absent or of another type). */
  const TideTensor* (*KernelContext_Input)(TideKernelContext* ctx, const char* param, size_t i);
  TideTensor* (*KernelContext_Output)(TideKernelContext* ctx, const char* param, size_t i);
  /* Scratch memory on the kernel's place, owned by the core and freed when the kernel returns
   * (reused by work queued later on the same context, so work the kernel queued may still use
   * it). */
  TideStatus* (*KernelContext_TempAlloc)(TideKernelContext* ctx, size_t size, void** data);
  /* The op's kernel state: one slot per op (as prepared for running) for the kernel running it,
   * kept across runs, for what a kernel derives once from the op's attributes and its inputs (a
   * compiled primitive, a reordered weight) instead of on every run; ONNX Runtime's kernel
   * instance, PJRT's executable. KernelContext_State returns what this kernel set for this op
   * (owned by the op, valid until the slot is set again or the op goes), or NULL: before its
   * first SetState, and after another kernel ran the op (a fallback, a kernel declining).
   * SetState hands `state` to the op (on failure the caller keeps it), freeing the old state
   * first. The core calls `free_state(state)` (which must not throw) when the op goes (its
   * prepared program is dropped, on the thread dropping it) or another kernel sets the slot. An
   * op runs on one thread at a time, so the state needs no lock of its own; the state must not
   * keep the run's tensors, only what it derived. */
  void* (*KernelContext_State)(const TideKernelContext* ctx);
  TideStatus* (*KernelContext_SetState)(TideKernelContext* ctx, void* state,
                                        void (*free_state)(void* state));

  /* ======================================================================================== */
  /* Shape inference. At compile time it reads and writes VarDescs (dims with -1 for the batch */
  /* dim); at run time, tensors. Threads: the callback's own, during the call. Names returned  */
  /* are owned by the op, valid for the call (attributes: InferShape_Attr, in Attributes).     */
  /* ======================================================================================== */
  const char* (*InferShape_OpType)(const TideInferShapeContext* ctx);
  int32_t (*InferShape_IsRuntime)(const TideInferShapeContext* ctx);
  size_t (*InferShape_InputCount)(const TideInferShapeContext* ctx, const char* param);
  size_t (*InferShape_OutputCount)(const TideInferShapeContext* ctx, const char* param);
  const char* (*InferShape_InputName)(const TideInferShapeContext* ctx, const char* param,
                                      size_t i);
  const char* (*InferShape_OutputName)(const TideInferShapeContext* ctx, const char* param,
                                       size_t i);
  /* Writes up to `capacity` dims (into the caller's array) and the rank; an error when the
   * input is absent. */
  TideStatus* (*InferShape_InputDims)(const TideInferShapeContext* ctx, const char* param, size_t i,
                                      int64_t* dims, int32_t capacity, int32_t* rank);
  TideStatus* (*InferShape_SetOutputDims)(TideInferShapeContext* ctx, const char* param, size_t i,
                                          const int64_t* dims, int32_t rank);
  TideDataType (*InferShape_InputDataType)(const TideInferShapeContext* ctx, const char* param,
                                           size_t i);
  /* Compile time only (a no-op at run time, where kernels set dtypes). */
  void (*InferShape_SetOutputDataType)(TideInferShapeContext* ctx, const char* param, size_t i,
                                       TideDataType dtype);
  TideVarType (*InferShape_InputVarType)(const TideInferShapeContext* ctx, const char* param,
                                         size_t i);
  /* Compile time only. */
  void (*InferShape_SetOutputVarType)(TideInferShapeContext* ctx, const char* param, size_t i,
                                      TideVarType type);
  /* Compile time: the input variable's lod_level; run time: the number of LoD levels its tensor
   * has. -1 when the input is absent or not a tensor. */
  int32_t (*InferShape_InputLoDLevel)(const TideInferShapeContext* ctx, const char* param,
                                      size_t i);
  /* Compile time only (at run time kernels set the LoD). */
  void (*InferShape_SetOutputLoDLevel)(TideInferShapeContext* ctx, const char* param, size_t i,
                                       int32_t level);
  /* Output param[j] gets input param[i]'s LoD (run time) or lod_level (compile time). */
  TideStatus* (*InferShape_ShareLoD)(TideInferShapeContext* ctx, const char* in_param, size_t i,
                                     const char* out_param, size_t j);

  /* ======================================================================================== */
  /* Control flow: operators without kernels (TideOpDef.run), the sub-blocks they run and the  */
  /* step scopes they keep for their gradients. OpRun_*: the callback's own thread, during the */
  /* call; names returned are owned by the op, valid for the call (attributes: OpRun_Attr).   */
  /* ======================================================================================== */
  const char* (*OpRun_OpType)(const TideOpRunContext* ctx);
  /* The scope the op runs in (the core's; valid for the call). */
  TideScope* (*OpRun_Scope)(TideOpRunContext* ctx);
  TidePlace (*OpRun_Place)(const TideOpRunContext* ctx);
  TideDeviceContext* (*OpRun_DeviceContext)(TideOpRunContext* ctx);
  /* Variable names bound to a parameter. */
  const char* const* (*OpRun_Inputs)(const TideOpRunContext* ctx, const char* param, size_t* count);
  const char* const* (*OpRun_Outputs)(const TideOpRunContext* ctx, const char* param,
                                      size_t* count);
  /* Runs block `block_idx` of the op's program in `scope` on the op's place, on this thread,
   * before it returns. */
  TideStatus* (*OpRun_RunBlock)(TideOpRunContext* ctx, int32_t block_idx, TideScope* scope);
  /* Step scopes: the scopes a control-flow op ran its block in (a while loop's iterations, a
   * conditional block's run), kept in a STEP_SCOPES variable for its gradient op. Threads: the
   * default rule (one writer per list). Gets the list the variable holds, making it one if it
   * holds nothing; owned by the variable, valid as long as it. */
  TideStatus* (*Variable_GetStepScopes)(TideVariable* var, TideStepScopes** out);
  size_t (*StepScopes_Size)(const TideStepScopes* s);
  /* Owned by its parent scope; NULL when out of range; valid until StepScopes_Clear. */
  TideScope* (*StepScopes_At)(TideStepScopes* s, size_t i);
  /* A new child scope of `parent` (owned by `parent`, valid until StepScopes_Clear), appended
   * to the list. */
  TideScope* (*StepScopes_Push)(TideStepScopes* s, TideScope* parent);
  /* Deletes the listed scopes (and their kids) from their parents and empties the list. */
  void (*StepScopes_Clear)(TideStepScopes* s);

  /* ======================================================================================== */
  /* Gradient op makers. Threads: the maker's own, during the call. Names and lists returned   */
  /* are owned by the maker, valid until the maker callback returns (attributes:              */
  /* GradMaker_Attr, in Attributes).                                                          */
  /* ======================================================================================== */
  const char* (*GradMaker_OpType)(const TideGradOpMaker* m);
  /* The forward op's parameter names (inputs or outputs). */
  const char* const* (*GradMaker_InputParams)(const TideGradOpMaker* m, size_t* count);
  const char* const* (*GradMaker_OutputParams)(const TideGradOpMaker* m, size_t* count);
  /* The forward variables bound to a parameter. */
  const char* const* (*GradMaker_Input)(const TideGradOpMaker* m, const char* param, size_t* count);
  const char* const* (*GradMaker_Output)(const TideGradOpMaker* m, const char* param,
                                         size_t* count);
  /* Gradient variable names of a forward input (to write) or output (to read); the name is
   * "@EMPTY@" where no gradient is wanted (no_grad_set, stop_gradient). */
  const char* const* (*GradMaker_InputGrad)(const TideGradOpMaker* m, const char* param,
                                            size_t* count);
  const char* const* (*GradMaker_OutputGrad)(const TideGradOpMaker* m, const char* param,
                                             size_t* count);
  /* The gradient block the core built for the forward op's block attribute `attr` (the grad
   * ops of that block's ops, in reverse, its gradient variables declared in it): what a
   * control-flow op's grad op runs. -1 when the attribute is not a block of the op. */
  int32_t (*GradMaker_GradBlock)(const TideGradOpMaker* m, const char* attr);
  /* A new grad op, owned by the maker (which adds it to the program when the callback
   * succeeds), valid until the maker callback returns. */
  TideGradOp* (*GradMaker_NewOp)(TideGradOpMaker* m, const char* type);
  void (*GradOp_SetInput)(TideGradOp* op, const char* param, const char* const* args, size_t count);
  void (*GradOp_SetOutput)(TideGradOp* op, const char* param, const char* const* args,
                           size_t count);
  void (*GradOp_SetAttr)(TideGradOp* op, const char* name, const TideAttrValue* value);
  /* Copies the forward op's attributes that the grad op's schema declares. */
  void (*GradOp_CopyAttrs)(TideGradOp* op);

  /* ======================================================================================== */
  /* Registration. Only during tide_plugin_register, on its thread (the core registers one    */
  /* plugin at a time). Records are copied (see "Registration records" for the callbacks and  */
  /* user_data they carry); on failure of the plugin's registration nothing it added is kept. */
  /* ======================================================================================== */
  TideStatus* (*Registrar_AddOp)(TideRegistrar* r, const TideOpDef* def);
  TideStatus* (*Registrar_AddKernel)(TideRegistrar* r, const TideKernelDef* def);
  /* Registers a kernel library (see TideLibraryDef). Registering the same name again with the
   * same attribute and flag is a no-op. */
  TideStatus* (*Registrar_AddLibrary)(TideRegistrar* r, const TideLibraryDef* def);
  TideStatus* (*Registrar_AddDevice)(TideRegistrar* r, const TideDeviceDef* def);
  TideStatus* (*Registrar_AddLayoutTransform)(TideRegistrar* r, const TideLayoutTransformDef* def);
  TideStatus* (*Registrar_AddDataTypeCast)(TideRegistrar* r, const TideDataTypeCastDef* def);

  /* ======================================================================================== */
  /* Program passes and their buffers (issue 33; appended: check TIDE_HAS_FIELD).             */
  /* ======================================================================================== */
  /* Registers a program pass (see TideProgramPassDef); a name already registered is an error.
   * Registration rules as above. */
  TideStatus* (*Registrar_AddProgramPass)(TideRegistrar* r, const TideProgramPassDef* def);
  /* A buffer of `size` bytes (NULL when out of memory) for a pass's result, owned by the caller
   * until it hands it to the core through TideProgramPassFn's *out; else Buffer_Free it. Any
   * thread. */
  char* (*Buffer_Alloc)(size_t size);
  void (*Buffer_Free)(char* buffer); /* accepts NULL */
} TideHostApi;

/* ========================================================================================== */
/* The symbols every plugin exports.                                                          */
/* ========================================================================================== */

/* Returns the plugin's info, answering with the ABI version it will speak: a major the host
 * supports and a minor no higher than host->max_minor. `host` is borrowed. Called once, on the
 * thread loading plugins. */
typedef const TidePluginInfo* (*TidePluginInfoFn)(const TideAbiRange* host);
/* Registers the plugin's ops, kernels and devices. `host` lives as long as the process;
 * `registrar` only for this call. On failure nothing the plugin registered is kept. Called
 * once, on the thread loading plugins, never concurrently with another plugin's. */
typedef TideStatus* (*TidePluginRegisterFn)(const TideHostApi* host, TideRegistrar* registrar);

/* Optional third symbol: called once when the process ends, for a plugin that loaded, after every
 * device's finalize, in the reverse of the load order: release what the plugin holds (thread
 * pools, library handles, caches). The core calls nothing of the plugin after it but a device's
 * `free` and a Tensor_AdoptData release, for tensors freed later during exit; what the plugin
 * registered stays in the core's tables, unused, until the process is gone (plugins are never
 * unloaded). Must not throw. */
typedef void (*TidePluginFinalizeFn)(void);

/* The layout revision the plugin was built with (TIDE_ABI_LAYOUT), exported by every plugin
 * until 1.0 is released; TIDE_PLUGIN(...) in plugin.hpp defines it, a plugin written against this
 * header alone writes TIDE_DEFINE_PLUGIN_ABI_LAYOUT once in one source file. The host calls it
 * first, on the thread loading plugins, and loads nothing of a plugin whose revision differs from
 * its own or that has none (built before revisions existed). */
typedef uint32_t (*TidePluginAbiLayoutFn)(void);

#define TIDE_PLUGIN_INFO_SYMBOL "tide_plugin_info"
#define TIDE_PLUGIN_REGISTER_SYMBOL "tide_plugin_register"
#define TIDE_PLUGIN_FINALIZE_SYMBOL "tide_plugin_finalize"
#define TIDE_PLUGIN_ABI_LAYOUT_SYMBOL "tide_plugin_abi_layout"

#ifdef __cplusplus
} /* extern "C" */
#define TIDE_EXTERN_C_ extern "C"
#else
#define TIDE_EXTERN_C_
#endif

#define TIDE_DEFINE_PLUGIN_ABI_LAYOUT                                       \
  TIDE_EXTERN_C_ TIDE_PLUGIN_EXPORT uint32_t tide_plugin_abi_layout(void);  \
  TIDE_EXTERN_C_ TIDE_PLUGIN_EXPORT uint32_t tide_plugin_abi_layout(void) { \
    return TIDE_ABI_LAYOUT;                                                 \
  }

#endif /* TIDE_PLUGIN_API_H_ */
