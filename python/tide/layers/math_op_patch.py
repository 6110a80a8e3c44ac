"""Variable's arithmetic and ordering operators, set once by tide.layers at import (Fluid's
layers/math_op_patch.py): a + b appends an elementwise_add op, a < b a less_than op, and a number
on either side becomes a [1] tensor of the Variable's dtype. framework.py defines Variable without
them, so the core does not import the layers built on it. == and != keep their identity meaning:
Variables are used in sets, dicts and `in` tests."""

from ..framework import Variable
from . import logic, nn

_ARITHMETIC = {
    "add": "elementwise_add",
    "sub": "elementwise_sub",
    "mul": "elementwise_mul",
    "truediv": "elementwise_div",
}
_ORDERING = {"lt": "less_than", "le": "less_equal", "gt": "greater_than", "ge": "greater_equal"}


def _as_variable(var, value):
    """value itself, or a [1] tensor of var's dtype holding it (x + 1.0)."""
    if isinstance(value, Variable):
        return value
    return nn.fill_constant([1], var.dtype, float(value))


def _method(name, body):
    body.__name__ = name
    body.__qualname__ = "Variable." + name
    return body


def _arithmetic(name, op_type, reverse):
    def method(self, other):
        other = _as_variable(self, other)
        x, y = (other, self) if reverse else (self, other)
        return nn._elementwise(op_type, x, y)

    return _method(name, method)


def _ordering(name, op_type):
    def method(self, other):
        return getattr(logic, op_type)(self, _as_variable(self, other))

    return _method(name, method)


def monkey_patch_variable():
    """Sets the operators on Variable (Parameter inherits them); setting them again is harmless."""
    for short, op_type in _ARITHMETIC.items():
        for name, reverse in ((f"__{short}__", False), (f"__r{short}__", True)):
            setattr(Variable, name, _arithmetic(name, op_type, reverse))
    for short, op_type in _ORDERING.items():
        name = f"__{short}__"
        setattr(Variable, name, _ordering(name, op_type))
