"""Data types: Python's names and codes are the SDK's one table (tide/plugin/data_type.hpp), read
through the core, and a tensor of each type round-trips name <-> code <-> numpy dtype through
Python, the core and back. (The C++ side: tests/cpp/core/data_type_test.cc.)"""

import numpy as np
import pytest

import tide
from tide import core

# What the ABI says (sdk/include/tide/plugin_api.h, TideDataType): written out once here, so that
# a change of the table that Python would silently follow fails a test instead.
ABI = {
    "bool": (0, 1),
    "int16": (1, 2),
    "int32": (2, 4),
    "int64": (3, 8),
    "float16": (4, 2),
    "float32": (5, 4),
    "float64": (6, 8),
    "uint8": (20, 1),
    "int8": (21, 1),
    "bfloat16": (22, 2),
    "complex64": (23, 8),
    "complex128": (24, 16),
}
NUMPY_TYPES = sorted(ABI)  # bfloat16's numpy dtype is ml_dtypes' (test_low_precision.py)


def test_the_table_is_the_abis():
    assert {name: (code, size) for name, code, size in tide._C.data_types()} == ABI


@pytest.mark.parametrize("name", sorted(ABI))
def test_names_and_codes_round_trip_in_python(name):
    code = ABI[name][0]
    assert core.dtype_code(name) == code
    assert core.dtype_name(code) == name
    assert core.convert_dtype(code) == name
    assert core.convert_dtype(name) == name


@pytest.mark.parametrize("name", NUMPY_TYPES)
def test_a_tensor_of_each_type_round_trips_through_the_core(name):
    if name == "bfloat16":
        pytest.importorskip("ml_dtypes")
    dtype = tide.framework.to_numpy_dtype(name)
    array = np.arange(6).reshape(2, 3).astype(dtype)
    if dtype.kind == "c":
        array = array + 1j * array[::-1]  # an imaginary part that is not the real one
    t = tide.LoDTensor()
    t.set(array, tide.CPUPlace())
    assert t.dtype() == name  # the core's name for what numpy handed it
    assert core.dtype_code(t.dtype()) == ABI[name][0]
    assert core.convert_dtype(dtype) == name
    back = np.array(t)
    assert back.dtype == dtype
    np.testing.assert_array_equal(back, array)


def test_what_is_no_type_is_refused():
    assert core.dtype_name(7) == "undefined"
    with pytest.raises(ValueError, match="unknown data type code 25"):
        core.convert_dtype(25)
    with pytest.raises(ValueError, match="not supported by Tide"):
        core.convert_dtype(np.uint32)
    t = tide.LoDTensor()
    with pytest.raises(tide.core.InvalidArgumentError, match="uint32.* has no Tide data type"):
        t.set(np.zeros(2, np.uint32), tide.CPUPlace())


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_a_complex_tensor_goes_to_numpy_by_dlpack(name):
    array = (np.arange(6) - 2.5j * np.arange(6)).astype(name).reshape(3, 2)
    t = tide.LoDTensor(array)
    back = np.from_dlpack(t)
    assert back.dtype == np.dtype(name)
    np.testing.assert_array_equal(back, array)
    np.testing.assert_array_equal(np.array(tide.from_dlpack(array)), array)
