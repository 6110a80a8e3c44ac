"""The layers' argument checks, Fluid 1.8's (data_feeder.py: check_type, check_dtype,
check_variable_and_dtype): a wrong argument is a TypeError naming the layer, the argument, what
it must be and what it was, before any op is appended."""

import numbers

from ..core import convert_dtype
from ..framework import Variable

__all__ = ["check_type", "check_dtype", "check_variable_and_dtype", "check_var", "is_int"]

FLOATS = ("float16", "float32", "float64", "bfloat16")
INTS = ("int32", "int64")
COMPLEX = ("complex64", "complex128")  # the layers whose ops have complex kernels take them


def is_int(v):
    """An integer (Python's or numpy's), not a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _type_name(t):
    if t is type(None):
        return "None"
    return "a Variable" if t is Variable else t.__name__


def _received(v):
    text = repr(v)
    return "%s (%s)" % (type(v).__name__, text if len(text) <= 40 else text[:37] + "...")


def check_type(value, arg, expected, layer):
    """value is an instance of `expected` (a type or a tuple of them)."""
    types = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool) and bool not in types:
        pass  # True is an int to Python, never an axis or a size to a layer
    elif isinstance(value, types) or (int in types and is_int(value)):
        return
    names = [_type_name(t) for t in types]
    wanted = names[0] if len(names) == 1 else "%s or %s" % (", ".join(names[:-1]), names[-1])
    raise TypeError(
        "%s: the type of '%s' must be %s, but received %s" % (layer, arg, wanted, _received(value))
    )


def check_dtype(dtype, arg, expected, layer):
    """dtype (a name, numpy dtype or TideDataType code) is one of the `expected` names."""
    try:
        name = convert_dtype(dtype)
    except ValueError:
        name = None
    if name not in expected:
        raise TypeError(
            "%s: the data type of '%s' must be one of %s, but received %s"
            % (layer, arg, ", ".join(expected), name or repr(dtype))
        )


def check_variable_and_dtype(value, arg, expected_dtypes, layer):
    check_type(value, arg, Variable, layer)
    check_dtype(value.dtype, arg, expected_dtypes, layer)


def check_var(layer, arg, value):
    """value is a Variable (the layers' shorthand, in their (layer, argument, value) order)."""
    check_type(value, arg, Variable, layer)
