"""Learning-rate schedules computed in the program (Fluid's learning_rate_scheduler): a step
counter the program increments each run, and a learning-rate variable the optimizer reads."""

from .. import unique_name
from ..framework import default_main_program, default_startup_program
from .control_flow import Switch
from .logic import less_than
from .nn import assign, cast, elementwise_min, elementwise_pow, fill_constant, floor, scale

__all__ = ["autoincreased_step_counter", "piecewise_decay", "exponential_decay", "noam_decay"]


def autoincreased_step_counter(counter_name=None, begin=1, step=1):
    """An int64 [1] persistable counter: `begin` on the program's first run, then + `step` on
    every run (the increment is the main program's first op)."""
    name = counter_name or "@STEP_COUNTER@"
    block = default_main_program().global_block()
    if block.has_var(name):
        return block.var(name)
    counter = block.create_var(name=name, dtype="int64", shape=[1], persistable=True)
    startup = default_startup_program().global_block()
    startup.create_var(name=name, dtype="int64", shape=[1], persistable=True)
    startup.append_op(
        "fill_constant",
        outputs={"Out": name},
        attrs={"shape": [1], "dtype": counter.desc.dtype, "value": float(begin - step)},
    )
    block._prepend_op(
        "increment",
        inputs={"X": [counter]},
        outputs={"Out": [counter]},
        attrs={"step": float(step)},
    )
    counter.stop_gradient = True
    return counter


def piecewise_decay(boundaries, values):
    """values[0] for steps < boundaries[0], values[1] up to boundaries[1], ..., values[-1] after,
    the step counting the main program's runs from 0 (built on Switch, as Fluid does)."""
    if len(values) - len(boundaries) != 1:
        raise ValueError(
            "piecewise_decay: len(values) must be len(boundaries) + 1, got %d and %d"
            % (len(values), len(boundaries))
        )
    if list(boundaries) != sorted(boundaries):
        raise ValueError("piecewise_decay: boundaries must increase, got %s" % (list(boundaries),))
    step = _decay_step_counter()
    block = default_main_program().global_block()
    lr = block.create_var(
        name=unique_name.generate("learning_rate"), dtype="float32", shape=[1], persistable=True
    )
    startup = default_startup_program().global_block()
    startup.create_var(name=lr.name, dtype="float32", shape=[1], persistable=True)
    startup.append_op(
        "fill_constant",
        outputs={"Out": lr.name},
        attrs={"shape": [1], "dtype": lr.desc.dtype, "value": float(values[0])},
    )
    with Switch() as switch:
        for boundary, value in zip(boundaries, values):
            boundary_var = fill_constant([1], "float32", float(boundary))
            value_var = fill_constant([1], "float32", float(value))
            with switch.case(less_than(step, boundary_var)):
                assign(value_var, lr)
        last = fill_constant([1], "float32", float(values[-1]))
        with switch.default():
            assign(last, lr)
    lr.stop_gradient = True
    return lr


def _decay_step_counter(begin=0):
    """The schedules' float32 step: the main program's runs counted from `begin` (Fluid's)."""
    return cast(autoincreased_step_counter("@LR_DECAY_COUNTER@", begin=begin, step=1), "float32")


def exponential_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """learning_rate * decay_rate ** (step / decay_steps), the exponent floored with staircase."""
    if decay_steps <= 0:
        raise ValueError("exponential_decay: decay_steps must be > 0, got %r" % (decay_steps,))
    exponent = scale(_decay_step_counter(), 1.0 / decay_steps)
    if staircase:
        exponent = floor(exponent)
    rate = fill_constant([1], "float32", float(decay_rate))
    return scale(elementwise_pow(rate, exponent), float(learning_rate))


def noam_decay(d_model, warmup_steps, learning_rate=1.0):
    """The Transformer's schedule: learning_rate * d_model ** -0.5 * min(step ** -0.5,
    warmup_steps ** -1.5 * step), the step counted from 1."""
    step = _decay_step_counter(begin=1)
    decay = elementwise_pow(step, fill_constant([1], "float32", -0.5))
    warmup = scale(step, float(warmup_steps) ** -1.5)
    return scale(elementwise_min(decay, warmup), float(learning_rate) * float(d_model) ** -0.5)
