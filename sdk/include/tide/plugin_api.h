/* tide/plugin_api.h: the whole binary interface between the Tide core and its plugins.
 *
 * Rules (see CHANGELOG.md beside this SDK for what each minor version added):
 *  - C types only. No C++ type, exception, STL container or allocator ownership crosses it.
 *  - Every struct begins with `size_t struct_size`, set by whoever fills the struct to
 *    TIDE_STRUCT_SIZE(type, last_field) of the version it was built with. Fields are only ever
 *    appended; a reader checks `struct_size >=` the end of a field before touching it.
 *  - Functions that can fail return a TideStatus* (NULL = success). The caller owns a returned
 *    status and frees it with TideHostApi.Status_Free.
 *  - Every pointer's owner and lifetime is written beside it. "Borrowed" means the callee may
 *    read it only for the duration of the call.
 *
 * A plugin exports two symbols (see the end of this file): tide_plugin_info and
 * tide_plugin_register. Most authors never touch this header: tide/plugin.hpp wraps it. */
#ifndef TIDE_PLUGIN_API_H_
#define TIDE_PLUGIN_API_H_

#include <stddef.h>
#include <stdint.h>

#define TIDE_ABI_MAJOR 1
#define TIDE_ABI_MINOR 0

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

/* ------------------------------------------------------------------------------------------ */
/* Enumerations. Values match proto/framework.proto so they can be stored in programs.         */

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
} TideDataType;

typedef enum TideLayout {
  TIDE_LAYOUT_ANY = 0, /* a kernel that accepts any layout; the layout of plain dense data */
  TIDE_LAYOUT_NCHW = 1,
  TIDE_LAYOUT_NHWC = 2,
  /* A kernel library's own blocked layout (oneDNN's); the exact format lives with the data
   * (Tensor_Format). The core hands such data only to kernels of the same layout, converts it
   * with the transforms the library's plugin registers for everything else, and fetches it plain. */
  TIDE_LAYOUT_OPAQUE = 3,
} TideLayout;

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
  TIDE_ATTR_FLOAT64 = 15,  /* double precision (e.g. a float64 kernel's epsilon or beta) */
} TideAttrType;

/* Flags of an op's input or output argument (OpProto.Var). */
enum {
  TIDE_ARG_DUPLICABLE = 1,   /* takes a list of variables */
  TIDE_ARG_DISPENSABLE = 2,  /* may be absent */
  TIDE_ARG_INTERMEDIATE = 4, /* an output only the op itself (or its grad) reads */
};

typedef enum TideLogSeverity {
  TIDE_LOG_INFO = 0,
  TIDE_LOG_WARNING = 1,
  TIDE_LOG_ERROR = 2,
} TideLogSeverity;

typedef enum TideCopyKind {
  TIDE_COPY_HOST_TO_DEVICE = 0,
  TIDE_COPY_DEVICE_TO_HOST = 1,
  TIDE_COPY_DEVICE_TO_DEVICE = 2, /* within one device */
} TideCopyKind;

/* ------------------------------------------------------------------------------------------ */
/* Opaque handles. All are owned by the core unless a comment says otherwise.                  */

typedef struct TideStatus TideStatus;
typedef struct TideTensor TideTensor;             /* a LoDTensor */
typedef struct TideSelectedRows TideSelectedRows; /* rows + height + value tensor */
typedef struct TideTensorArray TideTensorArray;   /* a LoDTensorArray */
typedef struct TideVariable TideVariable;         /* a named slot in a scope */
typedef struct TideScope TideScope;
typedef struct TideStepScopes TideStepScopes;     /* a list of scopes (a loop's iterations) */
typedef struct TideDeviceContext TideDeviceContext; /* the core's context for one place */
typedef struct TideKernelContext TideKernelContext;
typedef struct TideInferShapeContext TideInferShapeContext;
typedef struct TideGradOpMaker TideGradOpMaker;
typedef struct TideGradOp TideGradOp;
typedef struct TideOpRunContext TideOpRunContext;
typedef struct TideRegistrar TideRegistrar;

/* A place: a device kind (an id the host interns from a name such as "cpu" or "gpu", see
 * TideHostApi.PlaceKind_Id) and a device ordinal. A plain value, copied freely. */
typedef struct TidePlace {
  int32_t kind;
  int32_t device;
} TidePlace;

/* An attribute value. Arrays and strings are borrowed from whoever holds the value: for values
 * the host returns, they live as long as the op they came from. */
typedef struct TideAttrValue {
  size_t struct_size;
  TideAttrType type;
  int32_t i;         /* INT, BOOLEAN (0/1), BLOCK (block index) */
  int64_t l;         /* LONG */
  float f;           /* FLOAT */
  const char* s;     /* STRING: NUL-terminated */
  const int32_t* ints;    /* INTS, BOOLEANS (0/1), BLOCKS (block indices) */
  const int64_t* longs;   /* LONGS */
  const float* floats;    /* FLOATS */
  const char* const* strings; /* STRINGS */
  size_t count;               /* element count of the list forms */
  double d;                   /* FLOAT64 (and FLOAT's value widened, from hosts that have it) */
  const double* doubles;      /* FLOAT64S */
} TideAttrValue;

/* ------------------------------------------------------------------------------------------ */
/* Callbacks a plugin registers. `user_data` is the pointer given at registration, owned by the
 * plugin and never touched by the core. Each returns NULL on success or a status made with
 * TideHostApi.Status_Create. None may throw.                                                   */

typedef TideStatus* (*TideKernelFn)(TideKernelContext* ctx, void* user_data);
typedef TideStatus* (*TideInferShapeFn)(TideInferShapeContext* ctx, void* user_data);
typedef TideStatus* (*TideGradMakerFn)(TideGradOpMaker* maker, void* user_data);
typedef TideStatus* (*TideOpRunFn)(TideOpRunContext* ctx, void* user_data);
/* Checks one attribute value after defaults are filled; `value` is borrowed. */
typedef TideStatus* (*TideAttrCheckFn)(const TideAttrValue* value, void* user_data);

/* ------------------------------------------------------------------------------------------ */
/* Registration records. All strings and arrays are borrowed for the duration of the
 * Registrar_* call; the core copies what it keeps.                                             */

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
  const char* comment;            /* may be NULL */
  const TideAttrValue* default_value; /* NULL: the attribute is required */
  TideAttrCheckFn check;          /* may be NULL */
  void* check_data;
} TideAttrDef;

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
} TideKernelDef;

/* A device plugin's functions for one place kind. `self` is `TideDeviceDef.self`, owned by
 * the device plugin. `ctx` is what context_create returned. */
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

typedef struct TideDeviceDef {
  size_t struct_size;
  const char* kind; /* the place kind it provides, e.g. "cpu" */
  void* self;
  int32_t host_accessible; /* 1: the host CPU can read and write this memory directly */
  size_t alignment;        /* of every block alloc returns */
  int32_t (*device_count)(void* self);
  /* Raw device memory for the core's allocator. Must not throw; NULL ptr + status on failure. */
  TideStatus* (*alloc)(void* self, int32_t device, size_t size, void** ptr);
  void (*free)(void* self, int32_t device, void* ptr, size_t size);
  /* Total and free bytes of a device, for fraction_of_<kind>_memory_to_use. */
  TideStatus* (*memory_info)(void* self, int32_t device, size_t* total, size_t* available);
  /* One context per place, created on first use and destroyed at exit. */
  TideStatus* (*context_create)(void* self, int32_t device, void** ctx);
  void (*context_destroy)(void* self, void* ctx);
  /* Waits until all work queued on ctx is done. */
  TideStatus* (*synchronize)(void* self, void* ctx);
  /* Copies `size` bytes, queued on ctx's stream; synchronize before reading on the host.
   * HOST_TO_DEVICE from ordinary (pageable) host memory: the plugin has taken the source's bytes
   * when copy returns (the core may free or change them), as cudaMemcpyAsync from pageable memory
   * does. From memory the plugin's host_alloc returned, the core keeps the source alive and
   * unchanged until an event recorded after the copy is done. */
  TideStatus* (*copy)(void* self, void* ctx, TideCopyKind kind, void* dst, const void* src,
                      size_t size);
  /* Device-specific handles for op packs, e.g. name "tide.cpu" -> const TideCpuContext*.
   * Returns NULL for a name it does not know. The pointer lives as long as ctx. */
  const void* (*context_extension)(void* self, void* ctx, const char* name);
  /* Called once when the process ends (or tide.shutdown()), after every context of this kind
   * was synchronised and destroyed: release what the plugin holds. The core calls nothing of
   * the device after it except `free`, for memory still held by tensors freed during exit.
   * NULL: nothing to do. */
  void (*finalize)(void* self);
  /* Defaults of the kind's fraction_of_<kind>_memory_to_use and initial_<kind>_memory_in_mb
   * flags; 0: 1.0 and 64. */
  double memory_fraction_default;
  uint64_t initial_memory_mb_default;
  /* Copies `size` bytes from `src` on device `src_device` of this kind to `dst` on ctx's device,
   * queued on ctx's stream (a peer copy, e.g. gpu:0 -> gpu:1). The core has made ctx wait for
   * the source's queued work first (an event, or synchronising the source's context when the
   * device has no events) and synchronises ctx after. NULL: the core stages such copies
   * through host memory (device to host, then host to device). */
  TideStatus* (*copy_peer)(void* self, void* ctx, void* dst, int32_t src_device, const void* src,
                           size_t size);

  /* --- Properties, memset, pinned host memory and events. Each may be NULL. --- */
  /* Fills `props` (the core sets props->struct_size first; write no field past it). NULL: the
   * core reports the kind, the ordinal and memory_info's total. */
  TideStatus* (*properties)(void* self, int32_t device, TideDeviceProperties* props);
  /* Sets `size` bytes at dst (on ctx's device) to `value`, queued on ctx's stream. NULL: the core
   * copies from a host buffer of that value. */
  TideStatus* (*memset)(void* self, void* ctx, void* dst, int32_t value, size_t size);
  /* Page-locked host memory the device copies from and to without staging (cudaHostAlloc). The
   * core uses it to stage host-to-device copies of feeds, so they overlap compute. Both or
   * neither; NULL: the core copies from ordinary host memory. */
  TideStatus* (*host_alloc)(void* self, size_t size, void** ptr);
  void (*host_free)(void* self, void* ptr);
  /* Events: a marker in a context's stream, done when the work queued before it is. All six or
   * none; NULL: the core synchronises contexts instead (correct, but the host waits).
   * event_create makes an event for ctx's device; record marks the work queued on ctx so far
   * (recording again moves the marker); query sets *done to 1 when that work is done, 0 if not
   * (an event never recorded is done); context_wait_event makes work queued on ctx later wait
   * for the event, without blocking the host. */
  TideStatus* (*event_create)(void* self, void* ctx, void** event);
  void (*event_destroy)(void* self, void* event);
  TideStatus* (*event_record)(void* self, void* ctx, void* event);
  TideStatus* (*event_query)(void* self, void* event, int32_t* done);
  TideStatus* (*event_synchronize)(void* self, void* event);
  TideStatus* (*context_wait_event)(void* self, void* ctx, void* event);
  /* DLPack's DLDeviceType for this kind's memory (kDLCPU = 1, kDLCUDA = 2, kDLExtDev = 12, or
   * the value DLPack assigned the vendor), so tide.from_dlpack / __dlpack__ exchange its tensors
   * with other frameworks without a copy; the device ordinal is the place's. 0: no DLPack. */
  int32_t dlpack_device_type;
} TideDeviceDef;

/* Converts `in` (on ctx's place) into `out`: a layout transform (same dtype) or a dtype cast
 * (same layout). The core has set out's dims; the function allocates out with
 * Tensor_MutableData and must not keep either pointer. */
typedef TideStatus* (*TideTransformFn)(const TideTensor* in, TideTensor* out, TideDeviceContext* ctx,
                                       void* user_data);

/* oneDNN's name for the opaque layout (its plugin and tests use it). */
#define TIDE_LAYOUT_ONEDNN TIDE_LAYOUT_OPAQUE

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

/* ------------------------------------------------------------------------------------------ */
/* The host API: the core's functions, handed to tide_plugin_register. The table lives as long
 * as the process. Check struct_size before calling a function newer than the host you run on
 * (TIDE_HAS_FIELD); every function below is in ABI 1.0 unless its comment says otherwise.
 *
 * Ownership and lifetime, unless a function's comment says otherwise:
 * - Pointers passed in are borrowed for the call; strings and records are copied if kept.
 * - Handles returned (TideTensor*, TideVariable*, TideScope*, TideSelectedRows*, ...) are
 *   borrowed from what holds them: a kernel's inputs and outputs for the kernel call, a scope's
 *   variables until the scope is dropped, a variable's object until the variable changes type.
 * - Arrays and strings returned (dims, LoD offsets, rows, names) are valid until the object they
 *   describe next changes (resize, set LoD, set rows) or, for op and parameter names, as long as
 *   the context they came from.
 * - Only three things are owned by the caller: a TideStatus* (Status_Free it, or return it to
 *   the core, which frees it), a tensor from Tensor_Create (Tensor_Destroy it), and memory from
 *   a device plugin's alloc (the core's allocator frees it through the plugin).
 * Threads: registration runs on one thread. Kernels of different ops may run on different
 * threads at once (separate executors), so the functions a kernel or shape inference calls are
 * safe on the objects that kernel was handed; two threads must not change the same variable,
 * tensor or scope at once. Flag_Get, PlaceKind_*, Log and Status_* are safe from any thread.
 */

typedef struct TideHostApi {
  size_t struct_size;
  uint32_t abi_major; /* the host's */
  uint32_t abi_minor;

  /* --- Status and logging --- */
  /* `message` is copied. */
  TideStatus* (*Status_Create)(TideCode code, const char* message);
  void (*Status_Free)(TideStatus* status); /* accepts NULL */
  TideCode (*Status_Code)(const TideStatus* status);
  /* Owned by `status`. */
  const char* (*Status_Message)(const TideStatus* status);
  /* `plugin` names the caller; goes to the core's log (glog). */
  void (*Log)(TideLogSeverity severity, const char* plugin, const char* message);
  /* Copies flag `name`'s current value as NUL-terminated text (truncated to `capacity`) into
   * `value`; returns the value's full length, or -1 when the core has no such flag. */
  int64_t (*Flag_Get)(const char* name, char* value, size_t capacity);

  /* --- Places --- */
  /* Interns a place-kind name; the id is stable for the process. */
  int32_t (*PlaceKind_Id)(const char* name);
  /* Owned by the host, lives as long as the process. NULL for an unknown id. */
  const char* (*PlaceKind_Name)(int32_t kind);

  /* --- Tensors. A TideTensor* is borrowed from its variable or context. --- */
  TideDataType (*Tensor_DataType)(const TideTensor* t); /* TIDE_UNDEFINED before data */
  int32_t (*Tensor_Rank)(const TideTensor* t);
  /* Valid until the tensor is next resized. */
  const int64_t* (*Tensor_Dims)(const TideTensor* t);
  int64_t (*Tensor_Numel)(const TideTensor* t);
  TideLayout (*Tensor_Layout)(const TideTensor* t);
  void (*Tensor_SetLayout)(TideTensor* t, TideLayout layout);
  TidePlace (*Tensor_Place)(const TideTensor* t);
  /* NULL when the tensor holds no data. */
  const void* (*Tensor_Data)(const TideTensor* t);
  TideStatus* (*Tensor_Resize)(TideTensor* t, const int64_t* dims, int32_t rank);
  /* Allocates (or reuses) memory for the tensor's current dims on `place`, through the core's
   * allocator. `*data` is owned by the tensor. */
  TideStatus* (*Tensor_MutableData)(TideTensor* t, TideDataType dtype, TidePlace place,
                                    void** data);
  /* dst shares src's memory, dims, dtype and layout (not its LoD). */
  TideStatus* (*Tensor_ShareDataWith)(TideTensor* dst, const TideTensor* src);
  /* Deep copy of data, dims, dtype, layout and LoD to `place` (device copies through the
   * device plugins), queued on ctx (NULL: the destination place's context). Host memory is
   * written when it returns; device memory in its context's stream order (work queued there
   * later sees it; synchronise the context before reading it from the host). */
  TideStatus* (*Tensor_CopyTo)(const TideTensor* src, TidePlace place, TideDeviceContext* ctx,
                               TideTensor* dst);
  size_t (*Tensor_LoDLevels)(const TideTensor* t);
  /* Offsets of one LoD level; valid until the LoD changes. */
  const uint64_t* (*Tensor_LoD)(const TideTensor* t, size_t level, size_t* length);
  /* Replaces the LoD with `levels` levels: level k has lengths[k] offsets at offsets[k]. */
  TideStatus* (*Tensor_SetLoD)(TideTensor* t, const uint64_t* const* offsets,
                               const size_t* lengths, size_t levels);
  /* A tensor the caller owns, destroyed with Tensor_Destroy (accepts NULL). */
  TideTensor* (*Tensor_Create)(void);
  void (*Tensor_Destroy)(TideTensor* t);

  /* --- Variables and the types they hold --- */
  TideVarType (*Variable_Type)(const TideVariable* var);
  /* Gets the LoDTensor the variable holds, making it one if it holds nothing. A variable of
   * another type is an error. The result is borrowed from the variable. */
  TideStatus* (*Variable_GetTensor)(TideVariable* var, TideTensor** out);
  TideStatus* (*Variable_GetSelectedRows)(TideVariable* var, TideSelectedRows** out);
  TideStatus* (*Variable_GetTensorArray)(TideVariable* var, TideTensorArray** out);
  int64_t (*SelectedRows_Height)(const TideSelectedRows* sr);
  void (*SelectedRows_SetHeight)(TideSelectedRows* sr, int64_t height);
  /* Valid until the rows change. */
  const int64_t* (*SelectedRows_Rows)(const TideSelectedRows* sr, size_t* count);
  void (*SelectedRows_SetRows)(TideSelectedRows* sr, const int64_t* rows, size_t count);
  TideTensor* (*SelectedRows_Value)(TideSelectedRows* sr); /* borrowed from sr */
  size_t (*TensorArray_Size)(const TideTensorArray* a);
  void (*TensorArray_Resize)(TideTensorArray* a, size_t size);
  /* NULL when out of range; valid until the array is resized. */
  TideTensor* (*TensorArray_At)(TideTensorArray* a, size_t i);

  /* --- Scopes --- */
  /* Looks up `name` here and in the parents; NULL when absent. Variables live as long as
   * their scope. */
  TideVariable* (*Scope_FindVar)(const TideScope* scope, const char* name);
  /* Finds or creates `name` in this scope. */
  TideVariable* (*Scope_Var)(TideScope* scope, const char* name);
  /* A child scope, owned by `scope`, destroyed by Scope_DropKids or with its parent. */
  TideScope* (*Scope_NewScope)(TideScope* scope);
  void (*Scope_DropKids)(TideScope* scope);

  /* --- Device contexts --- */
  TidePlace (*DeviceContext_Place)(const TideDeviceContext* ctx);
  /* The device plugin's extension struct called `name` (see e.g. tide/cpu_context.h), or NULL. */
  const void* (*DeviceContext_Extension)(TideDeviceContext* ctx, const char* name);
  TideStatus* (*DeviceContext_Synchronize)(TideDeviceContext* ctx);

  /* --- Kernel context: what a kernel sees. Parameter names are the OpProto's. --- */
  const char* (*KernelContext_OpType)(const TideKernelContext* ctx);
  TidePlace (*KernelContext_Place)(const TideKernelContext* ctx);
  TideDeviceContext* (*KernelContext_DeviceContext)(TideKernelContext* ctx);
  /* The op's attribute `name` with defaults filled; NULL when the op has none by that name. */
  const TideAttrValue* (*KernelContext_Attr)(const TideKernelContext* ctx, const char* name);
  size_t (*KernelContext_InputCount)(const TideKernelContext* ctx, const char* param);
  size_t (*KernelContext_OutputCount)(const TideKernelContext* ctx, const char* param);
  /* The variable bound to input `param`[i]; NULL when absent (a dispensable input). */
  TideVariable* (*KernelContext_InputVar)(TideKernelContext* ctx, const char* param, size_t i);
  TideVariable* (*KernelContext_OutputVar)(TideKernelContext* ctx, const char* param, size_t i);
  /* The variable name bound to param[i], for messages; NULL when absent. */
  const char* (*KernelContext_InputName)(const TideKernelContext* ctx, const char* param,
                                         size_t i);
  const char* (*KernelContext_OutputName)(const TideKernelContext* ctx, const char* param,
                                          size_t i);
  /* Shortcuts for the common case: the LoDTensor bound to param[i]. Input returns NULL when
   * the input is absent or holds another type; Output makes the variable a LoDTensor (NULL when
   * absent or of another type). Borrowed from the variable. */
  const TideTensor* (*KernelContext_Input)(TideKernelContext* ctx, const char* param, size_t i);
  TideTensor* (*KernelContext_Output)(TideKernelContext* ctx, const char* param, size_t i);
  /* Scratch memory on the kernel's place, freed when the kernel returns. */
  TideStatus* (*KernelContext_TempAlloc)(TideKernelContext* ctx, size_t size, void** data);

  /* --- Shape inference. At compile time it reads and writes VarDescs (dims with -1 for the
   * batch dim); at run time, tensors. --- */
  const char* (*InferShape_OpType)(const TideInferShapeContext* ctx);
  int32_t (*InferShape_IsRuntime)(const TideInferShapeContext* ctx);
  const TideAttrValue* (*InferShape_Attr)(const TideInferShapeContext* ctx, const char* name);
  size_t (*InferShape_InputCount)(const TideInferShapeContext* ctx, const char* param);
  size_t (*InferShape_OutputCount)(const TideInferShapeContext* ctx, const char* param);
  const char* (*InferShape_InputName)(const TideInferShapeContext* ctx, const char* param,
                                      size_t i);
  const char* (*InferShape_OutputName)(const TideInferShapeContext* ctx, const char* param,
                                       size_t i);
  /* Writes up to `capacity` dims and the rank; an error when the input is absent. */
  TideStatus* (*InferShape_InputDims)(const TideInferShapeContext* ctx, const char* param,
                                      size_t i, int64_t* dims, int32_t capacity, int32_t* rank);
  TideStatus* (*InferShape_SetOutputDims)(TideInferShapeContext* ctx, const char* param,
                                          size_t i, const int64_t* dims, int32_t rank);
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
  /* Output param[j] gets input param[i]'s LoD (run time) or lod_level (compile time). */
  TideStatus* (*InferShape_ShareLoD)(TideInferShapeContext* ctx, const char* in_param,
                                     size_t i, const char* out_param, size_t j);

  /* --- Gradient op makers. Names returned are borrowed from the maker. --- */
  const char* (*GradMaker_OpType)(const TideGradOpMaker* m);
  /* The forward op's parameter names (inputs or outputs). */
  const char* const* (*GradMaker_InputParams)(const TideGradOpMaker* m, size_t* count);
  const char* const* (*GradMaker_OutputParams)(const TideGradOpMaker* m, size_t* count);
  /* The forward variables bound to a parameter. */
  const char* const* (*GradMaker_Input)(const TideGradOpMaker* m, const char* param,
                                        size_t* count);
  const char* const* (*GradMaker_Output)(const TideGradOpMaker* m, const char* param,
                                         size_t* count);
  /* Gradient variable names of a forward input (to write) or output (to read); the name is
   * "@EMPTY@" where no gradient is wanted (no_grad_set, stop_gradient). */
  const char* const* (*GradMaker_InputGrad)(const TideGradOpMaker* m, const char* param,
                                            size_t* count);
  const char* const* (*GradMaker_OutputGrad)(const TideGradOpMaker* m, const char* param,
                                             size_t* count);
  const TideAttrValue* (*GradMaker_Attr)(const TideGradOpMaker* m, const char* name);
  /* A new grad op, owned by the maker. */
  TideGradOp* (*GradMaker_NewOp)(TideGradOpMaker* m, const char* type);
  void (*GradOp_SetInput)(TideGradOp* op, const char* param, const char* const* args,
                          size_t count);
  void (*GradOp_SetOutput)(TideGradOp* op, const char* param, const char* const* args,
                           size_t count);
  void (*GradOp_SetAttr)(TideGradOp* op, const char* name, const TideAttrValue* value);
  /* Copies the forward op's attributes that the grad op's schema declares. */
  void (*GradOp_CopyAttrs)(TideGradOp* op);

  /* --- Operators without kernels (control flow, I/O). --- */
  const char* (*OpRun_OpType)(const TideOpRunContext* ctx);
  TideScope* (*OpRun_Scope)(TideOpRunContext* ctx);
  TidePlace (*OpRun_Place)(const TideOpRunContext* ctx);
  TideDeviceContext* (*OpRun_DeviceContext)(TideOpRunContext* ctx);
  const TideAttrValue* (*OpRun_Attr)(const TideOpRunContext* ctx, const char* name);
  /* Variable names bound to a parameter; borrowed from the op. */
  const char* const* (*OpRun_Inputs)(const TideOpRunContext* ctx, const char* param,
                                     size_t* count);
  const char* const* (*OpRun_Outputs)(const TideOpRunContext* ctx, const char* param,
                                      size_t* count);
  /* Runs block `block_idx` of the op's program in `scope` on the op's place. */
  TideStatus* (*OpRun_RunBlock)(TideOpRunContext* ctx, int32_t block_idx, TideScope* scope);

  /* --- Registration (only during tide_plugin_register). Records are copied. --- */
  TideStatus* (*Registrar_AddOp)(TideRegistrar* r, const TideOpDef* def);
  TideStatus* (*Registrar_AddKernel)(TideRegistrar* r, const TideKernelDef* def);
  TideStatus* (*Registrar_AddDevice)(TideRegistrar* r, const TideDeviceDef* def);

  /* --- Layout details and transforms --- */
  /* A layout's own format code (e.g. a dnnl_format_tag_t for TIDE_LAYOUT_ONEDNN); 0 when the
   * plugin that set the layout set none. Copied with the tensor's data and layout. */
  int64_t (*Tensor_Format)(const TideTensor* t);
  void (*Tensor_SetFormat)(TideTensor* t, int64_t format);
  TideStatus* (*Registrar_AddLayoutTransform)(TideRegistrar* r, const TideLayoutTransformDef* def);
  TideStatus* (*Registrar_AddDataTypeCast)(TideRegistrar* r, const TideDataTypeCastDef* def);

  /* --- Adopting memory --- */
  /* Makes `data` (`bytes` long, on `place`, owned by the caller until now) the tensor's memory for
   * its current dims as `dtype`: no copy (a received message, a buffer of another library). The
   * core calls release(release_arg) once no tensor uses it any more; on failure it is not called
   * and the caller keeps ownership. */
  TideStatus* (*Tensor_AdoptData)(TideTensor* t, void* data, size_t bytes, TideDataType dtype,
                                  TidePlace place, void (*release)(void* release_arg),
                                  void* release_arg);

  /* --- Step scopes: the scopes a control-flow op ran its block in (a while loop's iterations,
   * a conditional block's run), kept in a variable for its gradient op. --- */
  /* Gets the step-scope list the variable holds, making it one if it holds nothing. Borrowed
   * from the variable. */
  TideStatus* (*Variable_GetStepScopes)(TideVariable* var, TideStepScopes** out);
  size_t (*StepScopes_Size)(const TideStepScopes* s);
  /* NULL when out of range. */
  TideScope* (*StepScopes_At)(TideStepScopes* s, size_t i);
  /* A new child scope of `parent` (owned by `parent`), appended to the list. */
  TideScope* (*StepScopes_Push)(TideStepScopes* s, TideScope* parent);
  /* Deletes the listed scopes (and their kids) from their parents and empties the list. */
  void (*StepScopes_Clear)(TideStepScopes* s);

  /* The gradient block the core built for the forward op's block attribute `attr` (the grad
   * ops of that block's ops, in reverse, its gradient variables declared in it): what a
   * control-flow op's grad op runs. -1 when the attribute is not a block of the op. */
  int32_t (*GradMaker_GradBlock)(const TideGradOpMaker* m, const char* attr);
  /* Looks up `name` in this scope only (not its parents); NULL when absent. */
  TideVariable* (*Scope_FindLocalVar)(const TideScope* scope, const char* name);

  /* --- LoD rank tables and LoD levels (DynamicRNN). --- */
  /* Gets the LoDRankTable the variable holds, making it one if it holds nothing: an int64 CPU
   * tensor [n, 2] of (sequence index, length) rows, longest first, whose LoD is the table's
   * coarse LoD. Borrowed from the variable. */
  TideStatus* (*Variable_GetRankTable)(TideVariable* var, TideTensor** out);
  /* Compile time: the input variable's lod_level; run time: the number of LoD levels its tensor
   * has. -1 when the input is absent or not a tensor. */
  int32_t (*InferShape_InputLoDLevel)(const TideInferShapeContext* ctx, const char* param,
                                      size_t i);
  /* Compile time only (at run time kernels set the LoD). */
  void (*InferShape_SetOutputLoDLevel)(TideInferShapeContext* ctx, const char* param, size_t i,
                                       int32_t level);
  /* Registers a kernel library (see TideLibraryDef). Registering the same name again with the
   * same attribute and flag is a no-op. */
  TideStatus* (*Registrar_AddLibrary)(TideRegistrar* r, const TideLibraryDef* def);
  /* Sets `size` bytes at dst (memory of ctx's place) to `value`, queued on ctx: the device's
   * memset, or a copy from the host where it has none. */
  TideStatus* (*DeviceContext_Memset)(TideDeviceContext* ctx, void* dst, int32_t value, size_t size);
  /* A number naming the tensor's bytes as they are now: renewed whenever the core sees them
   * written (Tensor_MutableData, an op's outputs after its kernel), never the same for two
   * allocations. 0 when the tensor holds no data or its memory is shared where writes go unseen
   * (a numpy view, DLPack, Tensor_AdoptData): then nothing derived from the bytes may be cached.
   * Lets a kernel keep a converted copy (a reordered filter) until the bytes change; key it on
   * the data pointer too (views of one allocation share the number). */
  uint64_t (*Tensor_ContentVersion)(const TideTensor* t);
  /* The op's kernel state: one slot per op (as prepared for running) for the kernel running it,
   * kept across runs, for what a kernel derives once from the op's attributes and its inputs (a
   * compiled primitive, a reordered weight) instead of on every run; ONNX Runtime's kernel
   * instance, PJRT's executable. KernelContext_State returns what this kernel set for this op,
   * or NULL: before its first SetState, and after another kernel ran the op (a fallback, a
   * kernel declining). SetState replaces it, freeing the old state first. The core calls
   * `free_state(state)` (which must not throw) when the op goes (its prepared program is
   * dropped) or another kernel sets the slot. An op runs on one thread at a time, so the state
   * needs no lock of its own; the state must not keep the run's tensors, only what it derived. */
  void* (*KernelContext_State)(const TideKernelContext* ctx);
  TideStatus* (*KernelContext_SetState)(TideKernelContext* ctx, void* state,
                                        void (*free_state)(void* state));
} TideHostApi;

/* ------------------------------------------------------------------------------------------ */
/* The two symbols every plugin exports.                                                       */

/* Returns the plugin's info, answering with the ABI version it will speak: a major the host
 * supports and a minor no higher than host->max_minor. `host` is borrowed. */
typedef const TidePluginInfo* (*TidePluginInfoFn)(const TideAbiRange* host);
/* Registers the plugin's ops, kernels and devices. `host` lives as long as the process;
 * `registrar` only for this call. On failure nothing the plugin registered is kept. */
typedef TideStatus* (*TidePluginRegisterFn)(const TideHostApi* host, TideRegistrar* registrar);

/* Optional third symbol: called once when the process ends, for a plugin that loaded, after every
 * device's finalize, in the reverse of the load order: release what the plugin holds (thread
 * pools, library handles, caches). The core calls nothing of the plugin after it; what the plugin
 * registered stays in the core's tables, unused, until the process is gone (plugins are never
 * unloaded). Must not throw. */
typedef void (*TidePluginFinalizeFn)(void);

#define TIDE_PLUGIN_INFO_SYMBOL "tide_plugin_info"
#define TIDE_PLUGIN_REGISTER_SYMBOL "tide_plugin_register"
#define TIDE_PLUGIN_FINALIZE_SYMBOL "tide_plugin_finalize"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDE_PLUGIN_API_H_ */
