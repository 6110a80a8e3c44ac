"""Initializers: ops added to the startup program that fill a parameter (Fluid's initializer)."""

import math

from . import unique_name
from .core import dtype_code, is_complex_dtype, real_dtype
from .framework import default_startup_program


def _fans(shape):
    """fan_in and fan_out of a [in, out] weight or a [out_c, in_c, kh, kw] filter."""
    shape = list(shape)
    if len(shape) < 2:
        n = shape[0] if shape else 1
        return n, n
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = 1
    for d in shape[2:]:
        receptive *= d
    return shape[1] * receptive, shape[0] * receptive


class Initializer:
    """The base of parameter initializers: calling one with (var, block) appends the op that fills `var` to `block` (the startup program's)."""

    def __call__(self, var, block):
        raise NotImplementedError

    @staticmethod
    def _startup_var(var, block):
        """The parameter's twin in the startup program (made on first use)."""
        startup = default_startup_program().global_block()
        if var.name in startup.vars:
            return startup, startup.vars[var.name]
        v = startup.create_var(
            name=var.name, shape=var.shape, dtype=var.dtype, type=var.type, persistable=True
        )
        return startup, v

    @staticmethod
    def _seed(seed):
        return seed or default_startup_program()._next_seed()

    def _random(self, var, block, op_type, attrs):
        """Appends random op `op_type` filling `var`; a complex parameter gets two draws, its real
        and its imaginary parts each drawn as a real parameter of its real type would be (the
        parts of torch.view_as_real), joined by `complex`."""
        startup, v = self._startup_var(var, block)
        if not is_complex_dtype(var.dtype):
            attrs = dict(attrs, dtype=dtype_code(var.dtype), seed=self._seed(self.seed))
            return startup.append_op(op_type, outputs={"Out": v}, attrs=attrs)
        real, parts = real_dtype(var.dtype), []
        for part in ("real", "imag"):
            p = startup.create_var(
                name=unique_name.generate("%s.%s_init" % (var.name, part)),
                shape=var.shape,
                dtype=real,
            )
            attrs_p = dict(
                attrs, dtype=dtype_code(real), seed=self._seed(self.seed and self.seed + len(parts))
            )
            startup.append_op(op_type, outputs={"Out": p}, attrs=attrs_p)
            parts.append(p)
        return startup.append_op(
            "complex", inputs={"X": parts[0], "Y": parts[1]}, outputs={"Out": v}
        )


class Constant(Initializer):
    """Fills a parameter with one value (ConstantInitializer is the same class).

    Args:
        value (float): the value.
    """

    def __init__(self, value=0.0):
        self.value = float(value)

    def __call__(self, var, block):
        startup, v = self._startup_var(var, block)
        return startup.append_op(
            "fill_constant",
            outputs={"Out": v},
            attrs={"shape": list(var.shape), "dtype": dtype_code(var.dtype), "value": self.value},
        )


class Uniform(Initializer):
    """U[low, high); Fluid 1.8's diag_num elements at flat positions k * (diag_step + 1) set to
    diag_val (an identity-like start). Of a complex parameter: its real and imaginary parts each
    U[low, high)."""

    def __init__(self, low=-1.0, high=1.0, seed=0, diag_num=0, diag_step=0, diag_val=1.0):
        if not low < high:
            raise ValueError("Uniform initializer needs low < high, got %r, %r" % (low, high))
        if diag_num < 0 or diag_step < 0:
            raise ValueError(
                "Uniform initializer needs diag_num and diag_step >= 0, got %r, %r"
                % (diag_num, diag_step)
            )
        self.low, self.high, self.seed = float(low), float(high), int(seed)
        self.diag_num, self.diag_step, self.diag_val = (
            int(diag_num),
            int(diag_step),
            float(diag_val),
        )

    def __call__(self, var, block):
        attrs = {"shape": list(var.shape), "min": self.low, "max": self.high}
        if self.diag_num:
            attrs.update(diag_num=self.diag_num, diag_step=self.diag_step, diag_val=self.diag_val)
        return self._random(var, block, "uniform_random", attrs)


class Normal(Initializer):
    """Fills a parameter with samples of a normal distribution (NormalInitializer is the same class);
    of a complex parameter, its real and imaginary parts each.

    Args:
        loc (float): the mean.
        scale (float): the standard deviation.
        seed (int): the seed; 0: a random one.
    """

    def __init__(self, loc=0.0, scale=1.0, seed=0):
        self.loc, self.scale, self.seed = float(loc), float(scale), int(seed)

    def __call__(self, var, block):
        attrs = {"shape": list(var.shape), "mean": self.loc, "std": self.scale}
        return self._random(var, block, "gaussian_random", attrs)


class Xavier(Initializer):
    """Glorot: U(+-sqrt(6 / (fan_in + fan_out))) or N(0, sqrt(2 / (fan_in + fan_out)))."""

    def __init__(self, uniform=True, fan_in=None, fan_out=None, seed=0):
        self.uniform, self.fan_in, self.fan_out, self.seed = uniform, fan_in, fan_out, seed

    def __call__(self, var, block):
        fi, fo = _fans(var.shape)
        fi = self.fan_in or fi
        fo = self.fan_out or fo
        if self.uniform:
            limit = math.sqrt(6.0 / (fi + fo))
            return Uniform(-limit, limit, self.seed)(var, block)
        return Normal(0.0, math.sqrt(2.0 / (fi + fo)), self.seed)(var, block)


class MSRA(Initializer):
    """He: U(+-sqrt(6 / fan_in)) or N(0, sqrt(2 / fan_in))."""

    def __init__(self, uniform=True, fan_in=None, seed=0):
        self.uniform, self.fan_in, self.seed = uniform, fan_in, seed

    def __call__(self, var, block):
        fi = self.fan_in or _fans(var.shape)[0]
        if self.uniform:
            limit = math.sqrt(6.0 / fi)
            return Uniform(-limit, limit, self.seed)(var, block)
        return Normal(0.0, math.sqrt(2.0 / fi), self.seed)(var, block)


# Fluid's aliases.
ConstantInitializer = Constant
UniformInitializer = Uniform
NormalInitializer = Normal
XavierInitializer = Xavier
MSRAInitializer = MSRA
