"""
Tide core bindings (descs, tensors, scopes, executor, plugins)
"""
from __future__ import annotations
import typing
__all__: list[str] = ['AlreadyExistsError', 'BlockDesc', 'Executor', 'FrozenModel', 'InternalError', 'InvalidArgumentError', 'LoDTensor', 'NotFoundError', 'OpDesc', 'OutOfRangeError', 'Place', 'PreconditionError', 'PreparedBlock', 'ProgramDesc', 'ResourceExhaustedError', 'Scope', 'SelectedRows', 'TideError', 'UnavailableError', 'UnimplementedError', 'VarDesc', 'Variable', 'aot_compile', 'aot_freeze', 'append_backward', 'check_device_contracts', 'check_device_entries', 'check_place', 'data_types', 'device_contract', 'device_count', 'device_has_compiler', 'device_kinds', 'device_properties', 'device_trace_clocks', 'device_traces', 'device_unavailable_reason', 'find_paddle_model_files', 'from_dlpack', 'get_flag', 'grad_ops', 'grad_var_name', 'has_op', 'initialize', 'load_paddle_inference_model', 'load_plugin', 'memory_empty_cache', 'memory_stats', 'memory_used', 'op_events', 'op_kernels', 'op_profile_report', 'op_profiles', 'op_proto', 'op_timings', 'orphan_kernel_warnings', 'paddle_op_versions', 'parse_place', 'pir_op_table', 'plugin_search_path', 'plugins', 'plugins_json', 'prepare_flags_version', 'program_op_versions', 'registered_ops', 'reset_op_profiles', 'run_program_passes', 'set_flag', 'shutdown', 'start_profile', 'stop_profile']
class TideError(RuntimeError):
    pass
class InvalidArgumentError(TideError, ValueError):
    pass
class NotFoundError(TideError, LookupError):
    pass
class OutOfRangeError(TideError, IndexError):
    pass
class UnimplementedError(TideError, NotImplementedError):
    pass
class ResourceExhaustedError(TideError, MemoryError):
    pass
class PreconditionError(TideError):
    pass
class AlreadyExistsError(TideError):
    pass
class UnavailableError(TideError):
    pass
class InternalError(TideError):
    pass
class VarDesc:
    dtype: int
    lod_level: int
    persistable: bool
    shape: list[int]
    stop_gradient: bool
    type: int
    zero_dim: bool
    def __repr__(self) -> str:
        ...
    def to_proto_text(self, throw_on_error: bool = True) -> str:
        ...
    def to_string(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
class BlockDesc:
    forward_block_idx: int
    def all_ops(self) -> list[OpDesc]:
        ...
    def all_vars(self) -> list[VarDesc]:
        ...
    def append_op(self) -> OpDesc:
        ...
    def find_var(self, arg0: str) -> VarDesc:
        ...
    def find_var_recursive(self, arg0: str) -> VarDesc:
        ...
    def has_var(self, arg0: str) -> bool:
        ...
    def insert_op(self, arg0: int) -> OpDesc:
        ...
    def op(self, arg0: int) -> OpDesc:
        ...
    def op_size(self) -> int:
        ...
    def prepend_op(self) -> OpDesc:
        ...
    def remove_ops(self, arg0: int, arg1: int) -> None:
        ...
    def remove_var(self, arg0: str) -> None:
        ...
    def rename_var(self, arg0: str, arg1: str) -> None:
        ...
    def to_proto_text(self, throw_on_error: bool = True) -> str:
        ...
    def var(self, arg0: str) -> VarDesc:
        ...
    @property
    def idx(self) -> int:
        ...
    @property
    def parent_idx(self) -> int:
        ...
class OpDesc:
    type: str
    def __repr__(self) -> str:
        ...
    def attr(self, arg0: str) -> typing.Any:
        ...
    def attr_names(self) -> list[str]:
        ...
    def attr_type(self, arg0: str) -> str:
        ...
    def check(self) -> None:
        ...
    def has_attr(self, arg0: str) -> bool:
        ...
    def infer_shape(self, arg0: BlockDesc) -> None:
        ...
    def input(self, arg0: str) -> list:
        ...
    def input_arg_names(self) -> list:
        ...
    def inputs(self) -> dict:
        ...
    def output(self, arg0: str) -> list:
        ...
    def output_arg_names(self) -> list:
        ...
    def outputs(self) -> dict:
        ...
    def remove_attr(self, arg0: str) -> None:
        ...
    def rename_input(self, arg0: str, arg1: str) -> None:
        ...
    def rename_output(self, arg0: str, arg1: str) -> None:
        ...
    def set_attr(self, arg0: str, arg1: typing.Any) -> None:
        ...
    def set_input(self, arg0: str, arg1: list[str]) -> None:
        ...
    def set_output(self, arg0: str, arg1: list[str]) -> None:
        ...
    def to_proto_text(self, throw_on_error: bool = True) -> str:
        ...
    def to_string(self) -> str:
        ...
class ProgramDesc:
    @staticmethod
    def parse(arg0: bytes) -> ProgramDesc:
        ...
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, arg0: ProgramDesc) -> None:
        ...
    def append_block(self, arg0: BlockDesc) -> BlockDesc:
        ...
    def block(self, arg0: int) -> BlockDesc:
        ...
    def num_blocks(self) -> int:
        ...
    def serialize(self) -> bytes:
        ...
    def to_proto_text(self, throw_on_error: bool = True) -> str:
        ...
    def to_string(self) -> str:
        ...
    @property
    def version(self) -> int:
        ...
class Place:
    """
    A device of a kind a device plugin provides: Place("cpu"), Place("gpu", 1), a vendor's Place("acme", 0). Made for any kind name; using it (an Executor's run, a tensor on it) needs a loaded plugin of that kind.
    """
    def __eq__(self, arg0: Place) -> bool:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, kind: str, device: int = 0) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def __str__(self) -> str:
        ...
    @property
    def device(self) -> int:
        ...
    @property
    def kind(self) -> str:
        ...
class LoDTensor:
    def __array__(self, dtype: typing.Any = None, copy: typing.Any = None) -> numpy.ndarray:
        ...
    def __dlpack__(self, *, stream: typing.Any = None, max_version: typing.Any = None, dl_device: typing.Any = None, copy: typing.Any = None) -> typing.Any:
        ...
    def __dlpack_device__(self) -> tuple:
        ...
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, array: numpy.ndarray, place: Place = ..., share: bool = True) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def _content_version(self) -> int:
        """
        The core's content version of the data (0: shared where writes go unseen); for tests.
        """
    def _is_initialized(self) -> bool:
        ...
    def dtype(self) -> str:
        ...
    def lod(self) -> list[list[int]]:
        ...
    def numpy(self) -> numpy.ndarray:
        """
        A numpy view of the data (a host copy for device tensors).
        """
    def place(self) -> Place:
        ...
    def recursive_sequence_lengths(self) -> list[list[int]]:
        ...
    def set(self, array: numpy.ndarray, place: Place = ..., share: bool = True) -> None:
        """
        Holds `array` on `place`; on the host a contiguous array is shared, not copied.
        """
    def set_lod(self, lod: typing.Any) -> None:
        ...
    def set_recursive_sequence_lengths(self, arg0: typing.Any) -> None:
        ...
    def shape(self) -> list[int]:
        ...
class SelectedRows:
    def __init__(self) -> None:
        ...
    def get_tensor(self) -> LoDTensor:
        ...
    def height(self) -> int:
        ...
    def rows(self) -> list[int]:
        ...
    def set_height(self, arg0: int) -> None:
        ...
    def set_rows(self, arg0: list[int]) -> None:
        ...
class Variable:
    def get_selected_rows(self) -> SelectedRows:
        ...
    def get_tensor(self) -> LoDTensor:
        ...
    def get_tensor_list(self) -> list[LoDTensor]:
        ...
    def is_initialized(self) -> bool:
        ...
    @property
    def type(self) -> int:
        ...
class Scope:
    def __init__(self) -> None:
        ...
    def drop_kids(self) -> None:
        ...
    def erase_vars(self, arg0: list[str]) -> None:
        ...
    def find_local_var(self, arg0: str) -> Variable:
        ...
    def find_var(self, arg0: str) -> Variable:
        """
        Looks here and in the parents; None when absent.
        """
    def local_var_names(self) -> list[str]:
        ...
    def new_scope(self) -> Scope:
        ...
    def var(self, arg0: str) -> Variable:
        """
        Finds or creates a local variable.
        """
class PreparedBlock:
    def compiled_groups(self) -> list:
        """
        The groups of ops the place's device compiled at Prepare (issue 33): each one's label (device, plugin file, block, ops) and its runs through the compiled function and op by op.
        """
    def feed_names(self) -> list[str]:
        ...
    def fetch_names(self) -> list[str]:
        ...
    def kernel_choices(self) -> list[tuple[str, str]]:
        ...
    def num_ops(self) -> int:
        ...
    def program(self) -> ProgramDesc:
        ...
    def transform_counts(self) -> dict:
        """
        Transforms applied to inputs in the last run: layout transforms, device copies, casts, and conversions reused because their source had not changed.
        """
class Executor:
    def __init__(self, place: Place) -> None:
        ...
    def prepare(self, program: ProgramDesc, block_id: int = 0, feed_names: list[str] = [], fetch_names: list[str] = []) -> PreparedBlock:
        """
        Builds the op instances of a block once (with feed/fetch ops for the names given).
        """
    def run(self, prepared: PreparedBlock, scope: Scope, feeds: list[LoDTensor] = []) -> list[LoDTensor]:
        """
        Runs a prepared block; returns the fetched tensors (on the host).
        """
    @property
    def place(self) -> Place:
        ...
class FrozenModel:
    def __init__(self, path: str, place: Place) -> None:
        ...
    def run(self, feeds: list[LoDTensor]) -> list[LoDTensor]:
        """
        Runs the plan on feeds in feed_names order; the fetched tensors.
        """
    @property
    def arena_bytes(self) -> int:
        ...
    @property
    def capture(self) -> bool:
        """
        Capture and replay on the place's device (TideDeviceGraphs): off by default.
        """
    @capture.setter
    def capture(self, arg1: bool) -> None:
        ...
    @property
    def capture_note(self) -> str:
        ...
    @property
    def feed_names(self) -> list[str]:
        ...
    @property
    def fetch_names(self) -> list[str]:
        ...
    @property
    def num_ops(self) -> int:
        ...
    @property
    def num_ops_inferring_shapes(self) -> int:
        ...
    @property
    def range(self) -> tuple[int, int]:
        ...
    @property
    def replays(self) -> int:
        ...
def aot_compile(plan_path: str, out_dir: str, name: str = 'model', embed_params: bool = False) -> None:
    """
    Writes the frozen plan `plan_path` as <name>.cc (its constant tables and C functions tide_<name>_*), params.bin and, with embed_params, <name>_params.S into `out_dir`.
    """
def aot_freeze(program: ProgramDesc, feed_names: list[str], fetch_names: list[str], place: Place, shapes: dict[str, list[tuple[int, int]]], path: str, scope: Scope) -> tuple[int, int]:
    """
    Freezes block 0 of `program` (shapes: {feed: [(lower, upper) per dim]}) into the file `path`; returns (arena bytes, kernel ops).
    """
def append_backward(program: ProgramDesc, loss: str, parameters: list[str], no_grad_set: list[str]) -> list[tuple[str, str]]:
    """
    Appends the backward pass of `loss` to block 0; returns [(param, grad)].
    """
def check_device_contracts(place: Place) -> list:
    """
    Checks that the place's device keeps its device contract (copy, free).
    """
def check_device_entries(place: Place) -> list:
    """
    Checks the rules of the place's optional device entries (event timing, memory statistics, the tracer); those it lacks are skipped.
    """
def check_place(arg0: Place) -> None:
    """
    Raises unless the place exists.
    """
def data_types() -> list:
    """
    Every data type as (name, TideDataType code, bytes per element), in code order.
    """
def device_contract(place: Place) -> int:
    """
    The device contract the core follows for the place's device (1 where it declares none).
    """
def device_count(kind: str) -> int:
    """
    Devices of a place kind (0 when no plugin provides it).
    """
def device_has_compiler(place: Place) -> bool:
    """
    Whether the place's device compiles groups of ops (TideDeviceDef.compiler, issue 33).
    """
def device_kinds() -> list[str]:
    """
    The place kinds of the loaded device plugins, in load order.
    """
def device_properties(place: Place) -> dict:
    """
    What the device plugin reports of a place (TideDeviceProperties).
    """
def device_trace_clocks() -> list:
    """
    How each device kind's tracer clock was mapped onto the core's.
    """
def device_traces() -> list:
    """
    The device tracers' records of the last profile, on the profile's clock.
    """
def device_unavailable_reason(kind: str) -> str:
    """
    Why a place kind has no device (its plugin's reason, or that none provides it); "" when it has devices or its plugin gives no reason.
    """
def find_paddle_model_files(path: str, model_filename: str = '', params_filename: str = '') -> dict:
    ...
def from_dlpack(obj: typing.Any) -> LoDTensor:
    """
    A LoDTensor sharing the memory of a DLPack producer (numpy, PyTorch, ...).
    """
def get_flag(arg0: str) -> typing.Any:
    ...
def grad_ops(arg0: OpDesc, arg1: list[str]) -> list[OpDesc]:
    ...
def grad_var_name(arg0: str) -> str:
    ...
def has_op(arg0: str) -> bool:
    ...
def initialize() -> None:
    """
    Sets up flags and logging and loads the plugins on the plugin path (once).
    """
def load_paddle_inference_model(path: str, scope: Scope, place: Place, model_filename: str = '', params_filename: str = '') -> tuple:
    """
    Reads a PaddlePaddle inference model (program + parameters) and loads its parameters into `scope` on `place`: (ProgramDesc, feed names, fetch names, parameter names, files).
    """
def load_plugin(path: str) -> dict:
    """
    Loads one more plugin now; raises with the loader's reason when it fails.
    """
def memory_empty_cache(place: Place) -> None:
    ...
def memory_stats(arg0: Place) -> dict:
    ...
def memory_used(arg0: Place) -> int:
    ...
def op_events() -> tuple:
    """
    The profiled op runs: (type, kernel, start us, duration us, thread, place, device start us, device duration us; the last three "", -1, -1 where the device did not time the op), and how many were dropped past the limit.
    """
def op_kernels(arg0: str) -> list[str]:
    ...
def op_profile_report() -> str:
    """
    Per-op times recorded with --profile_ops.
    """
def op_profiles() -> list:
    ...
def op_proto(arg0: str) -> dict:
    """
    The op's inputs, outputs and attributes (with defaults), as a dict.
    """
def op_timings() -> list:
    """
    How the last profile timed each place's ops: method "events" (the device's times, aligned to within +- alignment_us) or "synchronised" (the host's, after a sync).
    """
def orphan_kernel_warnings(plugin_file: str = '') -> list[str]:
    """
    Kernels (of one plugin file, or of all) for an op no loaded plugin defines: one warning each.
    """
def paddle_op_versions() -> dict[str, int]:
    """
    The Paddle op versions whose semantics Tide implements (absent ops: version 0).
    """
def parse_place(arg0: str) -> Place:
    ...
def pir_op_table() -> dict:
    """
    The PIR operations Tide reads (core/io/pir_op_table.cc): {PIR op: its Fluid op, operands, results, attribute renames}.
    """
def plugin_search_path() -> list[str]:
    ...
def plugins() -> list:
    ...
def plugins_json() -> str:
    ...
def prepare_flags_version() -> int:
    """
    Changes so far of the flags a program's preparation reads (core/platform/flags.h).
    """
def program_op_versions(arg0: ProgramDesc) -> dict[str, int]:
    """
    A program's op_version_map (Paddle's: the version of each op's definition it was written with).
    """
def registered_ops() -> list[str]:
    ...
def reset_op_profiles() -> None:
    ...
def run_program_passes(program: bytes, place_kind: str = '', keep: list[str] = []) -> tuple:
    """
    Runs the program passes plugins registered for place_kind (every pass for ''; those for every place always) over a serialized ProgramDesc; returns (the result, the names of the passes that changed it).
    """
def set_flag(name: str, value: str) -> None:
    ...
def shutdown() -> None:
    """
    Ends the devices' and plugins' lives now (what happens at exit); see tide.shutdown.
    """
def start_profile() -> None:
    """
    Resets the op profile and starts the device tracers.
    """
def stop_profile() -> None:
    """
    Stops the device tracers and keeps their records (device_traces).
    """
