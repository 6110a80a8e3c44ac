"""Layers of the ops_control pack's small ops, with Fluid's names and arguments: comparisons and
logical ops (bool outputs that take no gradient), increment, is_empty,
fill_constant_batch_size_like and Print."""

from ..core import convert_dtype, dtype_code
from ..layer_helper import LayerHelper
from .checks import check_var, check_variable_and_dtype
from .nn import unsqueeze

__all__ = [
    "less_than",
    "less_equal",
    "greater_than",
    "greater_equal",
    "equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "increment",
    "is_empty",
    "fill_constant_batch_size_like",
    "Print",
]


def _bool_out(helper, layer, out):
    """`out` (checked to be a bool Variable), or a new bool temporary; no gradient flows."""
    if out is None:
        out = helper.create_variable_for_type_inference("bool")
    else:
        check_var(layer, "out", out)
        if out.dtype != "bool":
            raise TypeError(
                "%s: the output '%s' must be bool, it is %s" % (layer, out.name, out.dtype)
            )
    out.stop_gradient = True
    return out


def _rows_like(x, y):
    """y with trailing 1-dims added when it has x's leading dims and x's other dims are all 1:
    Fluid up to 1.1 compared X and Y of equal size element by element, so a [N] limit against
    a [N, 1] label (Fluid's IfElse example) compared row by row; broadcasting Y over X's last
    dims would refuse it."""
    xs, ys = tuple(x.shape), tuple(y.shape)
    if 0 < len(ys) < len(xs) and xs[: len(ys)] == ys and all(d == 1 for d in xs[len(ys) :]):
        return unsqueeze(y, axes=list(range(len(ys), len(xs))))
    return y


def _compare(op_type, x, y, cond, attrs):
    kinds = ("bool", "float32", "float64", "int32", "int64")  # Fluid 1.8's, and bool (equal)
    check_variable_and_dtype(x, "x", kinds, op_type)
    check_variable_and_dtype(y, "y", kinds, op_type)
    y = _rows_like(x, y)
    helper = LayerHelper(op_type)
    cond = _bool_out(helper, op_type, cond)
    helper.append_op(op_type, inputs={"X": [x], "Y": [y]}, outputs={"Out": [cond]}, attrs=attrs)
    return cond


def less_than(x, y, force_cpu=None, cond=None):
    """cond = x < y elementwise (bool); y is broadcast over x as in elementwise ops."""
    attrs = {} if force_cpu is None else {"force_cpu": bool(force_cpu)}
    return _compare("less_than", x, y, cond, attrs)


def less_equal(x, y, cond=None):
    """cond = x <= y elementwise (bool)."""
    return _compare("less_equal", x, y, cond, {})


def greater_than(x, y, cond=None):
    """cond = x > y elementwise (bool)."""
    return _compare("greater_than", x, y, cond, {})


def greater_equal(x, y, cond=None):
    """cond = x >= y elementwise (bool)."""
    return _compare("greater_equal", x, y, cond, {})


def equal(x, y, cond=None):
    """cond = x == y elementwise (bool)."""
    return _compare("equal", x, y, cond, {})


def not_equal(x, y, cond=None):
    """cond = x != y elementwise (bool)."""
    return _compare("not_equal", x, y, cond, {})


def _logical(op_type, x, y, out, name):
    check_variable_and_dtype(x, "x", ("bool",), op_type)
    inputs = {"X": [x]}
    if y is not None:
        check_variable_and_dtype(y, "y", ("bool",), op_type)
        if x.dtype != y.dtype:
            raise TypeError(
                "%s: x and y must have one data type, got %s and %s" % (op_type, x.dtype, y.dtype)
            )
        inputs["Y"] = [y]
    helper = LayerHelper(op_type, name=name)
    if out is None and name is not None:
        out = helper.main_program.current_block().create_var(name=name, dtype="bool")
    out = _bool_out(helper, op_type, out)
    helper.append_op(op_type, inputs=inputs, outputs={"Out": [out]})
    return out


def logical_and(x, y, out=None, name=None):
    """out = x && y elementwise; x and y are bool of the same shape."""
    return _logical("logical_and", x, y, out, name)


def logical_or(x, y, out=None, name=None):
    """out = x || y elementwise; x and y are bool of the same shape."""
    return _logical("logical_or", x, y, out, name)


def logical_xor(x, y, out=None, name=None):
    """out = x != y elementwise; x and y are bool of the same shape."""
    return _logical("logical_xor", x, y, out, name)


def logical_not(x, out=None, name=None):
    """out = !x elementwise; x is bool."""
    return _logical("logical_not", x, None, out, name)


def increment(x, value=1.0, in_place=True):
    """x + value for a one-element x; in place (the result is x itself) unless in_place=False."""
    check_var("increment", "x", x)
    helper = LayerHelper("increment")
    out = x if in_place else helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "increment", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"step": float(value)}
    )
    return out


def is_empty(x, cond=None):
    """cond = [x has no elements], a one-element bool variable."""
    check_var("is_empty", "x", x)
    helper = LayerHelper("is_empty")
    cond = _bool_out(helper, "is_empty", cond)
    helper.append_op("is_empty", inputs={"X": [x]}, outputs={"Out": [cond]})
    return cond


def fill_constant_batch_size_like(input, shape, dtype, value, input_dim_idx=0, output_dim_idx=0):
    """A tensor of `shape` filled with `value`, whose dim output_dim_idx is input's dim
    input_dim_idx (the batch size, known only at run time)."""
    check_var("fill_constant_batch_size_like", "input", input)
    helper = LayerHelper("fill_constant_batch_size_like")
    dtype = convert_dtype(dtype)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "fill_constant_batch_size_like",
        inputs={"Input": [input]},
        outputs={"Out": [out]},
        attrs={
            "shape": [int(d) for d in shape],
            "dtype": dtype_code(dtype),
            "value": float(value),
            "input_dim_idx": int(input_dim_idx),
            "output_dim_idx": int(output_dim_idx),
        },
    )
    out.stop_gradient = True
    return out


def Print(
    input,
    first_n=-1,
    message=None,
    summarize=-1,
    print_tensor_name=True,
    print_tensor_type=True,
    print_tensor_shape=True,
    print_tensor_lod=True,
    print_phase="both",
):
    """Logs input (name, dtype, shape, LoD, the first `summarize` values) through the core's log
    each time it runs, and returns it passed through; its gradient is printed too unless
    print_phase is 'forward'."""
    check_var("Print", "input", input)
    if str(print_phase).lower() not in ("forward", "backward", "both"):
        raise ValueError(
            "Print: print_phase must be 'forward', 'backward' or 'both', got %r" % (print_phase,)
        )
    helper = LayerHelper("print_" + input.name)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "print",
        inputs={"In": [input]},
        outputs={"Out": [out]},
        attrs={
            "first_n": int(first_n),
            "message": message or "",
            "summarize": int(summarize),
            "print_tensor_name": bool(print_tensor_name),
            "print_tensor_type": bool(print_tensor_type),
            "print_tensor_shape": bool(print_tensor_shape),
            "print_tensor_lod": bool(print_tensor_lod),
            "print_phase": str(print_phase).lower(),
        },
    )
    return out
