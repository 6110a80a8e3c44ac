"""Fluid 1.6+'s tensor-valued layer arguments: a shape, bounds, axes or counts given as an int
Variable, or as a list mixing ints and one-element int Variables, become the op's tensor inputs
(Paddle's ShapeTensor / ShapeTensorList, StartsTensor / StartsTensorList, ...), which the op
reads when it runs. The attribute keeps the ints, with -1 where a Variable stands."""

from ..framework import Variable
from .checks import INTS, check_dtype, check_type, is_int

__all__ = ["contains_var", "int_tensor", "int_tensor_list", "int_items", "list_arg"]


def contains_var(values):
    return any(isinstance(v, Variable) for v in values)


def int_tensor(layer, arg, var):
    """An int32/int64 Variable used as an argument: never differentiated."""
    check_dtype(var.dtype, arg, INTS, layer)
    var.stop_gradient = True
    return var


def int_tensor_list(layer, arg, values):
    """Every item as a one-element int tensor: the Variables as given, each int filled into a new
    int32 [1] (Fluid's _convert_to_tensor_list)."""
    from .nn import fill_constant  # breaks the cycle nn -> tensor_args -> nn

    return [
        int_tensor(layer, "%s[%d]" % (arg, i), v)
        if isinstance(v, Variable)
        else fill_constant([1], "int32", v, force_cpu=True)
        for i, v in enumerate(values)
    ]


def int_items(layer, arg, values):
    """values (a list or tuple) holds ints and Variables only; returns it as a list."""
    check_type(values, arg, (list, tuple), layer)
    for i, v in enumerate(values):
        check_type(v, "%s[%d]" % (arg, i), (int, Variable), layer)
    return list(values)


def list_arg(layer, arg, value, inputs, attrs, attr, tensor, tensor_list, one_int=False):
    """Puts an int-list argument where the op reads it: a Variable -> inputs[tensor] (1-D); a list
    with Variables -> inputs[tensor_list] (every item a tensor) and attrs[attr] with -1 for each
    Variable; a list of ints (or, with one_int, an int) -> attrs[attr]."""
    if one_int and is_int(value):
        value = [value]
    check_type(value, arg, (list, tuple, Variable), layer)
    if isinstance(value, Variable):
        inputs[tensor] = int_tensor(layer, arg, value)
        return
    items = int_items(layer, arg, value)
    attrs[attr] = [-1 if isinstance(v, Variable) else int(v) for v in items]
    if contains_var(items):
        inputs[tensor_list] = int_tensor_list(layer, arg, items)
