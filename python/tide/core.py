"""The compiled core (tide._C) and the small conversions every module needs: dtypes, places."""

import numpy as np

from . import _C

# Errors raised by the core. Each also derives from the matching built-in exception.
TideError = _C.TideError
InvalidArgumentError = _C.InvalidArgumentError
NotFoundError = _C.NotFoundError
OutOfRangeError = _C.OutOfRangeError
UnimplementedError = _C.UnimplementedError
ResourceExhaustedError = _C.ResourceExhaustedError
PreconditionError = _C.PreconditionError
AlreadyExistsError = _C.AlreadyExistsError
UnavailableError = _C.UnavailableError
InternalError = _C.InternalError


class PluginError(TideError):
    """A plugin file could not be loaded; the message carries the loader's reason."""


class EOFException(OutOfRangeError):
    """A non-iterable reader (tide.io.DataLoader, PyReader, layers.py_reader) has no batch left
    in this pass: Executor.run raises it; call the reader's reset(), then start() the next pass
    (Fluid's fluid.core.EOFException)."""


# Data types: name -> the C ABI's TideDataType code, from the SDK's one table (through the core),
# so Python, the core and plugins name them alike.
_DTYPE_CODES = {name: code for name, code, _size in _C.data_types()}
_DTYPE_NAMES = {v: k for k, v in _DTYPE_CODES.items()}

# Variable types: the C ABI's TideVarType codes.
VAR_TYPES = {
    "LOD_TENSOR": 7,
    "SELECTED_ROWS": 8,
    "FEED_MINIBATCH": 9,
    "FETCH_LIST": 10,
    "STEP_SCOPES": 11,
    "LOD_RANK_TABLE": 12,
    "LOD_TENSOR_ARRAY": 13,
    "RAW": 17,
}
VAR_TYPE_NAMES = {v: k for k, v in VAR_TYPES.items()}
VAR_TYPES.update(DENSE_TENSOR=7, DENSE_TENSOR_ARRAY=13)  # Paddle 3.x's names, accepted


def convert_dtype(dtype):
    """'float32', np.float32, np.dtype('float32') or a TideDataType code -> 'float32'."""
    if isinstance(dtype, str) and dtype in _DTYPE_CODES:
        return dtype
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype not in _DTYPE_NAMES:
            raise ValueError("unknown data type code %d" % dtype)
        return _DTYPE_NAMES[dtype]
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise ValueError("unknown data type %r" % (dtype,)) from None
    if name not in _DTYPE_CODES:
        raise ValueError("data type %r is not supported by Tide" % (dtype,))
    return name


def bfloat16_dtype():
    """numpy's bfloat16 dtype: ml_dtypes' (numpy has none of its own), which tensors of Tide's
    bfloat16 go to and come from.

    Raises:
        ImportError: ml_dtypes is not installed.
    """
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError(
            "numpy has no bfloat16 of its own: Tide's bfloat16 tensors go to and from numpy as "
            "ml_dtypes.bfloat16 (pip install ml_dtypes)"
        ) from None
    return np.dtype(ml_dtypes.bfloat16)


def dtype_code(dtype):
    """The TideDataType code (framework.proto's VarType) of `dtype`, a name or numpy dtype.

    Args:
        dtype (str|np.dtype): the data type.

    Returns:
        int: its code.
    """
    return _DTYPE_CODES[convert_dtype(dtype)]


def dtype_name(code):
    """The name ("float32", ...) of a TideDataType code; "undefined" for an unknown one.

    Args:
        code (int): the code.

    Returns:
        str: its name.
    """
    return _DTYPE_NAMES.get(code, "undefined")


def is_float_dtype(dtype):
    """Whether `dtype` is a floating-point type (float16, bfloat16, float32, float64).

    Args:
        dtype (str|np.dtype): the data type.
    """
    return convert_dtype(dtype) in ("float16", "bfloat16", "float32", "float64")


_REAL_OF_COMPLEX = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF_REAL = {r: c for c, r in _REAL_OF_COMPLEX.items()}


def _type_name(dtype):
    """A name as it is (a variable's dtype, even "undefined"), anything else converted."""
    return dtype if isinstance(dtype, str) else convert_dtype(dtype)


def is_complex_dtype(dtype):
    """Whether `dtype` is complex64 or complex128.

    Args:
        dtype (str|np.dtype): the data type.
    """
    return _type_name(dtype) in _REAL_OF_COMPLEX


def real_dtype(dtype):
    """The type of a complex type's parts (float32 for complex64, float64 for complex128); any
    other type itself.

    Args:
        dtype (str|np.dtype): the data type.
    """
    name = _type_name(dtype)
    return _REAL_OF_COMPLEX.get(name, name)


def complex_dtype(dtype):
    """The complex type whose parts are `dtype` (complex64 for float32, complex128 for float64).

    Args:
        dtype (str|np.dtype): float32 or float64.

    Raises:
        ValueError: another type.
    """
    name = _type_name(dtype)
    if name not in _COMPLEX_OF_REAL:
        raise ValueError("no complex type has %s parts (float32 or float64 only)" % name)
    return _COMPLEX_OF_REAL[name]


# Places: where programs run. A place kind is whatever a device plugin registered.
Place = _C.Place


def CPUPlace():
    """The host CPU (provided by the CPU device plugin)."""
    return _C.Place("cpu", 0)


def CUDAPlace(device_id=0):
    """GPU `device_id` (provided by the CUDA device plugin)."""
    return _C.Place("gpu", int(device_id))


LoDTensor = _C.LoDTensor
Tensor = _C.LoDTensor  # Fluid's core.Tensor: a LoDTensor whose LoD stays empty
Scope = _C.Scope
