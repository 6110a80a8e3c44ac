"""decorate(optimizer): the optimizer of mixed-precision training (Fluid's
OptimizerWithMixedPrecision). minimize(loss) rewrites the forward ops for the low type
(rewrite.py), multiplies the loss by the loss scale, appends backward from the scaled loss,
divides the gradients by the scale and checks them (check_finite_and_unscale), adapts the scale
(update_loss_scaling) and runs the wrapped optimizer's update only on a step whose gradients are
all finite: an overflowed step changes no parameter and no optimizer state."""

import math
import warnings

from ... import unique_name
from ...core import CPUPlace
from ...framework import (
    OP_ROLE_OPTIMIZE,
    Variable,
    default_startup_program,
    op_role_guard,
    program_guard,
)
from ...initializer import Constant
from ...layers.control_flow import ConditionalBlock
from ...optimizer import _warn_if_nothing_trains
from .amp_lists import AutoMixedPrecisionLists, AutoMixedPrecisionListsBF16
from .rewrite import _runs_low, run_rewriter


def _persistable(block, name, dtype, value):
    var = block.create_var(
        name=unique_name.generate(name),
        shape=[1],
        dtype=dtype,
        persistable=True,
        stop_gradient=True,
    )
    Constant(value)(var, block)
    return var


class OptimizerWithMixedPrecision:
    """An optimizer wrapped for mixed precision; made by `decorate` or `decorate_bf16` (their
    arguments)."""

    def __init__(
        self,
        optimizer,
        amp_lists,
        dtype,
        init_loss_scaling,
        use_dynamic_loss_scaling,
        incr_every_n_steps,
        decr_every_n_nan_or_inf,
        incr_ratio,
        decr_ratio,
        place,
    ):
        if not hasattr(optimizer, "apply_gradients") or not hasattr(optimizer, "backward"):
            raise TypeError("decorate: %r is not a tide optimizer" % (optimizer,))
        if not 0 < init_loss_scaling < math.inf:  # refuses NaN too
            raise ValueError(
                "decorate: init_loss_scaling must be > 0 and finite, got %r" % init_loss_scaling
            )
        if use_dynamic_loss_scaling:
            if incr_every_n_steps < 1 or decr_every_n_nan_or_inf < 1:
                raise ValueError(
                    "decorate: incr_every_n_steps and decr_every_n_nan_or_inf must be >= 1, got "
                    "%r and %r" % (incr_every_n_steps, decr_every_n_nan_or_inf)
                )
            if incr_ratio <= 1 or not 0 < decr_ratio < 1:
                raise ValueError(
                    "decorate: incr_ratio must be > 1 and decr_ratio in (0, 1), got %r and %r"
                    % (incr_ratio, decr_ratio)
                )
        self._optimizer = optimizer
        self._amp_lists = amp_lists
        self._dtype = dtype
        self._init_loss_scaling = float(init_loss_scaling)
        self._dynamic = bool(use_dynamic_loss_scaling)
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._incr_ratio = float(incr_ratio)
        self._decr_ratio = float(decr_ratio)
        self._place = place
        self._loss_scaling = None
        self._scaled_loss = None
        self._found_inf = None
        self.low_precision_ops = []  # the op types the rewrite put in the low type

    def get_loss_scaling(self):
        """The variable holding the current loss scale (float32, one element)."""
        return self._loss_scaling

    def get_scaled_loss(self):
        """The loss multiplied by the loss scale, which backward starts from."""
        return self._scaled_loss

    def get_found_inf(self):
        """The bool variable that says whether this step's gradients overflowed (dynamic loss
        scaling only; None otherwise)."""
        return self._found_inf

    def _scales(self):
        return self._dynamic or self._init_loss_scaling != 1.0

    def _warn_if_nothing_low(self, declined, stacklevel):
        """A rewrite that puts no op in the low type trains in float32 only: says so (as
        bf16_inference does), with why and what to do, instead of a log line per op."""
        place = self._place if self._place is not None else CPUPlace()
        if declined:
            why = "its allow-listed ops (%s) have no %s kernels (forward and gradient) there" % (
                ", ".join(sorted(declined)),
                self._dtype,
            )
            if self._dtype == "float16" and any(
                _runs_low(t, "bfloat16", place.kind) for t in declined
            ):
                todo = "use decorate_bf16(optimizer, place=...) there (bfloat16 kernels)"
            else:
                todo = "pass place= a device with %s kernels for them%s" % (
                    self._dtype,
                    " (a CUDA GPU, or the CPU with device_mkldnn for bfloat16)"
                    if self._dtype == "bfloat16"
                    else " (a CUDA GPU; on the CPU, decorate_bf16)",
                )
        else:
            why = "none of its ops is on the lists' white list (nor a gray op after one)"
            todo = "put the op types to compute in %s on amp_lists' custom_white_list" % self._dtype
        warnings.warn(
            "mixed precision: no op runs in %s on %s: %s; the program trains in float32. To "
            "compute in a low type, %s." % (self._dtype, place, why, todo),
            RuntimeWarning,
            stacklevel=stacklevel,
        )

    def backward(
        self, loss, startup_program=None, parameter_list=None, no_grad_set=None, _stacklevel=2
    ):
        """Rewrites the program, scales the loss and appends backward; returns [(param, grad)].
        Warns (RuntimeWarning) when the rewrite puts no op in the low type."""
        if not isinstance(loss, Variable):
            raise TypeError("backward: loss must be a Variable, got %r" % (loss,))
        program = loss.block.program
        block = program.global_block()
        rewriter = run_rewriter(program, self._amp_lists, self._dtype, self._place)
        self.low_precision_ops = rewriter.low_ops
        if not self.low_precision_ops:
            self._warn_if_nothing_low(rewriter.declined, _stacklevel + 1)
        if loss.dtype != "float32":
            raise ValueError(
                "mixed precision: the loss '%s' is %s; it must be float32 (compute it with an op "
                "of the black list, or put its op on custom_black_list)" % (loss.name, loss.dtype)
            )
        self._scaled_loss = loss
        if self._scales():
            with program_guard(program, startup_program or default_startup_program()):
                self._loss_scaling = _persistable(
                    block, "loss_scaling", "float32", self._init_loss_scaling
                )
                self._scaled_loss = block.create_var(
                    name=unique_name.generate(loss.name + ".scaled"), dtype="float32"
                )
                block.append_op(
                    "elementwise_mul",
                    inputs={"X": loss, "Y": self._loss_scaling},
                    outputs={"Out": self._scaled_loss},
                )
        return self._optimizer.backward(
            self._scaled_loss, startup_program, parameter_list, no_grad_set
        )

    def _unscale(self, block, grads, startup):
        with op_role_guard(OP_ROLE_OPTIMIZE):
            if not self._dynamic:
                for g in grads:
                    block.append_op(
                        "scale",
                        inputs={"X": g},
                        outputs={"Out": g},
                        attrs={"scale": 1.0 / self._init_loss_scaling},
                    )
                return None, None
            with program_guard(block.program, startup):
                good = _persistable(block, "num_good_steps", "int32", 0)
                bad = _persistable(block, "num_bad_steps", "int32", 0)
            found_inf = block.create_var(
                name=unique_name.generate("find_infinite_scale"), dtype="bool"
            )
            block.append_op(
                "check_finite_and_unscale",
                inputs={"X": grads, "Scale": self._loss_scaling},
                outputs={"Out": grads, "FoundInfinite": found_inf},
            )
            block.append_op(
                "update_loss_scaling",
                inputs={
                    "X": grads,
                    "FoundInfinite": found_inf,
                    "PrevLossScaling": self._loss_scaling,
                    "InGoodSteps": good,
                    "InBadSteps": bad,
                },
                outputs={
                    "Out": grads,
                    "LossScaling": self._loss_scaling,
                    "OutGoodSteps": good,
                    "OutBadSteps": bad,
                },
                attrs={
                    "incr_every_n_steps": self._incr_every_n_steps,
                    "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
                    "incr_ratio": self._incr_ratio,
                    "decr_ratio": self._decr_ratio,
                },
            )
            finite = block.create_var(name=unique_name.generate("all_finite"), dtype="bool")
            block.append_op("logical_not", inputs={"X": found_inf}, outputs={"Out": finite})
        return found_inf, finite

    def apply_gradients(self, params_grads, startup_program=None):
        """Unscales and checks the gradients, adapts the loss scale, then appends the wrapped
        optimizer's update, run only when every gradient is finite; returns its update ops."""
        params_grads = [(p, g) for p, g in params_grads if g is not None]
        if not params_grads or not self._scales():
            return self._optimizer.apply_gradients(params_grads)
        for p, g in params_grads:
            if g.type != "LOD_TENSOR":
                raise NotImplementedError(
                    "mixed precision with loss scaling: the gradient of '%s' is a %s; only dense "
                    "gradients are supported (use is_sparse=False)" % (p.name, g.type)
                )
        block = params_grads[0][0].block.program.global_block()
        startup = startup_program or default_startup_program()
        self._found_inf, finite = self._unscale(block, [g for _, g in params_grads], startup)
        if finite is None:
            return self._optimizer.apply_gradients(params_grads)
        with program_guard(block.program, startup):
            skip_on_overflow = ConditionalBlock([finite], is_scalar_condition=True)
            with skip_on_overflow.block():
                ops = self._optimizer.apply_gradients(params_grads)
        return ops

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        """Rewrites, scales, appends backward and the guarded update; returns (update ops,
        params_grads) as Optimizer.minimize does."""
        program = loss.block.program
        startup = startup_program or default_startup_program()
        with program_guard(program, startup):
            params_grads = self.backward(loss, startup, parameter_list, no_grad_set, _stacklevel=3)
            ops = self.apply_gradients(params_grads, startup)
        _warn_if_nothing_trains(loss, params_grads, parameter_list, no_grad_set)
        return ops, params_grads


def decorate(
    optimizer,
    amp_lists=None,
    init_loss_scaling=2.0**15,
    incr_every_n_steps=1000,
    decr_every_n_nan_or_inf=2,
    incr_ratio=2.0,
    decr_ratio=0.8,
    use_dynamic_loss_scaling=True,
    dtype="float16",
    place=None,
):
    """Wraps `optimizer` for mixed-precision training (Fluid's
    `contrib.mixed_precision.decorate`).

    Args:
        optimizer (Optimizer): the optimizer to wrap; its update runs on float32 master weights.
        amp_lists (AutoMixedPrecisionLists): the op lists (default: Fluid's).
        init_loss_scaling (float): the loss scale at the start.
        incr_every_n_steps (int): grow the scale after this many steps in a row without overflow.
        decr_every_n_nan_or_inf (int): shrink it after this many overflowed steps.
        incr_ratio (float): the factor it grows by (> 1).
        decr_ratio (float): the factor it shrinks by (in (0, 1)); never below 1.
        use_dynamic_loss_scaling (bool): adapt the scale and skip overflowed steps; without it
            the scale stays init_loss_scaling and gradients are only divided by it.
        dtype (str): "float16" or "bfloat16".
        place (Place): where the program will run: the ops run in the low type only where its
            device has kernels for them in it (default: the CPU).

    Returns:
        OptimizerWithMixedPrecision: use its minimize(loss) as the optimizer's.
    """
    if amp_lists is None:
        amp_lists = (
            AutoMixedPrecisionListsBF16() if dtype == "bfloat16" else AutoMixedPrecisionLists()
        )
    return OptimizerWithMixedPrecision(
        optimizer,
        amp_lists,
        dtype,
        init_loss_scaling,
        use_dynamic_loss_scaling,
        incr_every_n_steps,
        decr_every_n_nan_or_inf,
        incr_ratio,
        decr_ratio,
        place,
    )


def decorate_bf16(optimizer, amp_lists=None, place=None):
    """Wraps `optimizer` for bfloat16 mixed-precision training (Paddle's `decorate_bf16`, not
    pure): bfloat16 has float32's range, so the loss is not scaled.

    Args:
        optimizer (Optimizer): the optimizer to wrap.
        amp_lists (AutoMixedPrecisionListsBF16): the op lists (default: Paddle's bf16 lists).
        place (Place): where the program will run (default: the CPU).

    Returns:
        OptimizerWithMixedPrecision: use its minimize(loss) as the optimizer's.
    """
    return decorate(
        optimizer,
        amp_lists or AutoMixedPrecisionListsBF16(),
        init_loss_scaling=1.0,
        use_dynamic_loss_scaling=False,
        dtype="bfloat16",
        place=place,
    )
