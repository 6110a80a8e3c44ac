"""Optimizers: minimize(loss) appends backward, gradient clipping, regularisation and the
update ops (from the ops_optimizers plugin), in that order (as in Fluid).

SGD, Momentum and Adam train complex64 / complex128 parameters (e.g. a Fourier neural operator's
spectral weights) by PyTorch's rule: a complex parameter is updated as its real view
(torch.view_as_real), each real and imaginary part one real element; for Adam the second moment is
kept per part, not as abs(g)^2. Their Param-shaped accumulators take the parameter's dtype, the
one-element ones (Adam's beta powers) its real type. The other optimizers refuse complex
parameters, naming them."""

import warnings

from . import _C, unique_name
from .backward import _names, append_backward
from .clip import append_gradient_clip_ops
from .core import dtype_code, is_complex_dtype, real_dtype
from .framework import (
    OP_ROLE_OPTIMIZE,
    Variable,
    default_startup_program,
    op_role_guard,
    program_guard,
)
from .initializer import Constant
from .regularizer import append_regularization_ops

__all__ = [
    "SGD",
    "Momentum",
    "LarsMomentum",
    "Adam",
    "Adagrad",
    "RMSProp",
    "SGDOptimizer",
    "MomentumOptimizer",
    "LarsMomentumOptimizer",
    "AdamOptimizer",
    "AdagradOptimizer",
    "RMSPropOptimizer",
    "Optimizer",
]


class Optimizer:
    """The base of the optimizers: minimize(loss) appends backward, gradient clipping, regularisation and the update ops.

    Args:
        learning_rate (float|Variable): the learning rate, > 0, or a variable holding it.
        regularization (WeightDecayRegularizer): applied to every parameter without its own, or None.
        grad_clip (BaseGradientClipAttr): clips the gradients, or None.
        name (str): the prefix of its accumulators' names, or None.
    """

    def __init__(self, learning_rate, regularization=None, grad_clip=None, name=None):
        if not isinstance(learning_rate, (float, int, Variable)) or isinstance(learning_rate, bool):
            raise TypeError(
                "learning_rate must be a float or a Variable, got %r" % (learning_rate,)
            )
        if not isinstance(learning_rate, Variable) and learning_rate <= 0:
            raise ValueError("learning_rate must be > 0, got %r" % (learning_rate,))
        self._learning_rate = learning_rate
        self.regularization = regularization
        self.grad_clip = grad_clip
        self._name = name or unique_name.generate(type(self).__name__.lower())
        self._lr_var = None
        self._accumulators = {}  # (name, param name) -> Variable

    # --- learning rate and accumulators: persistable variables set by the startup program ---
    def _global_learning_rate(self, program):
        if isinstance(self._learning_rate, Variable):
            return self._learning_rate
        if self._lr_var is None or self._lr_var.block.program is not program:
            block = program.global_block()
            self._lr_var = block.create_var(
                name=unique_name.generate("learning_rate"),
                shape=[1],
                dtype="float32",
                persistable=True,
                stop_gradient=True,
            )
            Constant(float(self._learning_rate))(self._lr_var, block)
        return self._lr_var

    def _param_learning_rate(self, param, block):
        lr = self._global_learning_rate(block.program)
        factor = (
            param.optimize_attr.get("learning_rate", 1.0)
            if hasattr(param, "optimize_attr")
            else 1.0
        )
        if factor == 1.0:
            return lr
        scaled = block.create_var(
            name=unique_name.generate(param.name + ".lr"), shape=[1], dtype=lr.dtype
        )
        block.append_op(
            "scale", inputs={"X": lr}, outputs={"Out": scaled}, attrs={"scale": float(factor)}
        )
        return scaled

    # The update op's type, and whether it has complex64 / complex128 kernels (which update a
    # complex parameter as its real view).
    _update_op = None
    _trains_complex = False

    def _add_accumulator(self, name, param, fill_value=0.0, shape=None, dtype=None):
        block = param.block.program.global_block()
        var = block.create_var(
            name=unique_name.generate("%s_%s" % (param.name, name)),
            shape=list(shape if shape is not None else param.shape),
            dtype=dtype or param.dtype,
            persistable=True,
            stop_gradient=True,
        )
        Constant(fill_value)(var, block)
        self._accumulators[(name, param.name)] = var
        return var

    def _get_accumulator(self, name, param):
        return self._accumulators[(name, param.name)]

    # --- what each optimizer defines ---
    def _create_accumulators(self, block, params):
        pass

    def _append_optimize_op(self, block, param, grad, lr):
        raise NotImplementedError

    def _finish_update(self, block, params_grads):
        pass

    # --- the pipeline ---
    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        return append_backward(loss, parameter_list, no_grad_set)

    def _check_complex_params(self, params_grads):
        if self._trains_complex or self._update_op is None:  # None: the op's own check decides
            return
        for p, _ in params_grads:
            if is_complex_dtype(p.dtype):
                raise TypeError(
                    "%s cannot train the complex parameter '%s' (%s): its update op '%s' updates "
                    "float32 and float64 parameters only; SGD, Momentum and Adam train complex "
                    "ones (as their real view)"
                    % (type(self).__name__, p.name, p.dtype, self._update_op)
                )

    def apply_gradients(self, params_grads):
        """Clip, regularise, then append the update ops; returns the update ops."""
        params_grads = [(p, g) for p, g in params_grads if g is not None]
        params_grads = sorted(params_grads, key=lambda pg: pg[0].name)
        self._check_complex_params(params_grads)
        params_grads = append_gradient_clip_ops(params_grads, self.grad_clip)
        params_grads = append_regularization_ops(params_grads, self.regularization)
        if not params_grads:
            return []
        # The current block: block 0, or a sub-block whose run is conditional (mixed precision
        # skips the update of a step whose gradients overflowed).
        block = params_grads[0][0].block.program.current_block()
        with op_role_guard(OP_ROLE_OPTIMIZE):
            self._create_accumulators(block, [p for p, _ in params_grads])
            ops = []
            for p, g in params_grads:
                lr = self._param_learning_rate(p, block)
                ops.append(self._append_optimize_op(block, p, g, lr))
            self._finish_update(block, params_grads)
        return ops

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        """Appends backward and optimisation to loss's program; returns (update ops, params_grads)."""
        program = loss.block.program
        startup = startup_program or default_startup_program()
        with program_guard(program, startup):
            params_grads = self.backward(loss, startup, parameter_list, no_grad_set)
            ops = self.apply_gradients(params_grads)
        _warn_if_nothing_trains(loss, params_grads, parameter_list, no_grad_set)
        return ops, params_grads


def _where_gradients_stop(block, params, loss):
    """Between `params` and `loss` in `block`: the types of the ops that declare no gradient
    (arg_max, a plugin's NoGradient op) and the variables with stop_gradient."""
    ops = list(block.ops)
    last = max((i for i, op in enumerate(ops) if loss in op.output_arg_names), default=-1)
    ops = ops[: last + 1]  # the forward part: backward ops come after the loss's
    reached, after_params = set(params), set()
    for i, op in enumerate(ops):
        if reached.intersection(op.input_arg_names):
            reached.update(op.output_arg_names)
            after_params.add(i)
    wanted, no_grad_ops = {loss}, set()
    for i in reversed(range(len(ops))):
        op = ops[i]
        if not wanted.intersection(op.output_arg_names):
            continue
        wanted.update(op.input_arg_names)
        if i in after_params and _C.has_op(op.type) and not _C.op_proto(op.type)["has_grad"]:
            no_grad_ops.add(op.type)
    between = (reached & wanted) - set(params)
    stopped = [n for n in between if n in block.vars and block.vars[n].stop_gradient]
    return sorted(no_grad_ops), sorted(stopped)


def _warn_if_nothing_trains(loss, params_grads, parameter_list=None, no_grad_set=None):
    """A minimize() with nothing to train is almost always a mistake (training would silently
    change nothing): warns, naming the loss and why, when no parameter got a gradient."""
    if any(g is not None for _, g in params_grads):
        return
    block = loss.block.program.global_block()
    if parameter_list is None:
        all_params = block.all_parameters()
        params = [p.name for p in all_params if p.trainable]
        frozen = sorted(p.name for p in all_params if not p.trainable)
        what = "%s: trainable=False" % ", ".join(frozen) if frozen else "none at all"
    else:
        params = _names(parameter_list)
        what = "parameter_list is empty"
    if not params:
        warnings.warn(
            "minimize(loss '%s'): the program has no trainable parameters (%s), so nothing is "
            "updated and training changes nothing" % (loss.name, what),
            UserWarning,
            stacklevel=3,
        )
        return
    why = []
    stopped = set(_names(no_grad_set))
    stopped.update(n for n in params if n in block.vars and block.vars[n].stop_gradient)
    stopped = sorted(stopped.intersection(params))
    if stopped:
        why.append("%s: stop_gradient or in no_grad_set" % ", ".join(stopped))
    no_grad_ops, stopped_vars = _where_gradients_stop(block, params, loss.name)
    if no_grad_ops:
        why.append(
            "the gradient stops at op(s) that declare none: %s"
            % ", ".join("'%s'" % t for t in no_grad_ops)
        )
    if stopped_vars:
        why.append("stop_gradient on the way: %s" % ", ".join(stopped_vars))
    if not why:
        why.append("no gradient from the loss reaches them")
    shown = sorted(params) if len(params) <= 8 else sorted(params)[:8] + ["..."]
    warnings.warn(
        "minimize(loss '%s'): no trainable parameter receives a gradient (parameters: %s; %s), "
        "so nothing is updated and training changes nothing"
        % (loss.name, ", ".join(shown), "; ".join(why)),
        UserWarning,
        stacklevel=3,
    )


class SGD(Optimizer):
    """param -= lr * grad."""

    _update_op = "sgd"
    _trains_complex = True

    def _append_optimize_op(self, block, param, grad, lr):
        return block.append_op(
            "sgd",
            inputs={"Param": param, "Grad": grad, "LearningRate": lr},
            outputs={"ParamOut": param},
        )


class Momentum(Optimizer):
    """v = mu * v + grad; param -= lr * v (or Nesterov)."""

    _update_op = "momentum"
    _trains_complex = True

    def __init__(self, learning_rate, momentum, use_nesterov=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self._momentum = float(momentum)
        self._use_nesterov = bool(use_nesterov)

    def _create_accumulators(self, block, params):
        for p in params:
            self._add_accumulator("velocity", p)

    def _append_optimize_op(self, block, param, grad, lr):
        v = self._get_accumulator("velocity", param)
        return block.append_op(
            "momentum",
            inputs={"Param": param, "Grad": grad, "Velocity": v, "LearningRate": lr},
            outputs={"ParamOut": param, "VelocityOut": v},
            attrs={"mu": self._momentum, "use_nesterov": self._use_nesterov},
        )


class LarsMomentum(Optimizer):
    """Momentum with a layer-wise learning rate (LARS, You et al.): local_lr = lr * lars_coeff *
    ||param|| / (||grad|| + lars_weight_decay * ||param||); v = mu * v + local_lr * (grad +
    lars_weight_decay * param); param -= v."""

    _update_op = "lars_momentum"

    def __init__(
        self, learning_rate, momentum, lars_coeff=0.001, lars_weight_decay=0.0005, **kwargs
    ):
        super().__init__(learning_rate, **kwargs)
        self._momentum = float(momentum)
        self._lars_coeff = float(lars_coeff)
        self._lars_weight_decay = float(lars_weight_decay)

    def _create_accumulators(self, block, params):
        for p in params:
            self._add_accumulator("velocity", p)

    def _append_optimize_op(self, block, param, grad, lr):
        v = self._get_accumulator("velocity", param)
        return block.append_op(
            "lars_momentum",
            inputs={"Param": param, "Grad": grad, "Velocity": v, "LearningRate": lr},
            outputs={"ParamOut": param, "VelocityOut": v},
            attrs={
                "mu": self._momentum,
                "lars_coeff": self._lars_coeff,
                "lars_weight_decay": self._lars_weight_decay,
            },
        )


class Adam(Optimizer):
    """Adam (Kingma & Ba); beta powers are kept as accumulators and scaled after each step."""

    _update_op = "adam"
    _trains_complex = True

    def __init__(
        self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, lazy_mode=False, **kwargs
    ):
        super().__init__(learning_rate, **kwargs)
        self._beta1, self._beta2, self._epsilon = float(beta1), float(beta2), float(epsilon)
        # Fluid's lazy Adam: a sparse gradient updates only the rows it lists.
        self._lazy_mode = bool(lazy_mode)

    def _create_accumulators(self, block, params):
        for p in params:
            self._add_accumulator("moment1", p)
            self._add_accumulator("moment2", p)
            # Real for a complex parameter: the op reads them as its parts' type.
            for name, beta in (("beta1_pow_acc", self._beta1), ("beta2_pow_acc", self._beta2)):
                self._add_accumulator(
                    name, p, fill_value=beta, shape=[1], dtype=real_dtype(p.dtype)
                )

    def _append_optimize_op(self, block, param, grad, lr):
        acc = lambda n: self._get_accumulator(n, param)  # noqa: E731
        return block.append_op(
            "adam",
            inputs={
                "Param": param,
                "Grad": grad,
                "LearningRate": lr,
                "Moment1": acc("moment1"),
                "Moment2": acc("moment2"),
                "Beta1Pow": acc("beta1_pow_acc"),
                "Beta2Pow": acc("beta2_pow_acc"),
            },
            outputs={"ParamOut": param, "Moment1Out": acc("moment1"), "Moment2Out": acc("moment2")},
            attrs={
                "beta1": self._beta1,
                "beta2": self._beta2,
                "epsilon": self._epsilon,
                "lazy_mode": self._lazy_mode,
            },
        )

    def _finish_update(self, block, params_grads):
        for p, _ in params_grads:
            for name, beta in (("beta1_pow_acc", self._beta1), ("beta2_pow_acc", self._beta2)):
                acc = self._get_accumulator(name, p)
                block.append_op(
                    "scale", inputs={"X": acc}, outputs={"Out": acc}, attrs={"scale": beta}
                )


class Adagrad(Optimizer):
    """m += grad^2; param -= lr * grad / (sqrt(m) + epsilon)."""

    _update_op = "adagrad"

    def __init__(self, learning_rate, epsilon=1e-6, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self._epsilon = float(epsilon)

    def _create_accumulators(self, block, params):
        for p in params:
            self._add_accumulator("moment", p)

    def _append_optimize_op(self, block, param, grad, lr):
        m = self._get_accumulator("moment", param)
        return block.append_op(
            "adagrad",
            inputs={"Param": param, "Grad": grad, "Moment": m, "LearningRate": lr},
            outputs={"ParamOut": param, "MomentOut": m},
            attrs={"epsilon": self._epsilon},
        )


class RMSProp(Optimizer):
    """RMSProp with optional momentum and centering (Fluid's rmsprop op)."""

    _update_op = "rmsprop"

    def __init__(
        self, learning_rate, rho=0.95, epsilon=1e-6, momentum=0.0, centered=False, **kwargs
    ):
        super().__init__(learning_rate, **kwargs)
        self._rho, self._epsilon = float(rho), float(epsilon)
        self._momentum, self._centered = float(momentum), bool(centered)

    def _create_accumulators(self, block, params):
        for p in params:
            self._add_accumulator("momentum", p)
            self._add_accumulator("mean_square", p)
            if self._centered:
                self._add_accumulator("mean_grad", p)

    def _append_optimize_op(self, block, param, grad, lr):
        acc = lambda n: self._get_accumulator(n, param)  # noqa: E731
        inputs = {
            "Param": param,
            "Grad": grad,
            "Moment": acc("momentum"),
            "MeanSquare": acc("mean_square"),
            "LearningRate": lr,
        }
        outputs = {
            "ParamOut": param,
            "MomentOut": acc("momentum"),
            "MeanSquareOut": acc("mean_square"),
        }
        if self._centered:
            inputs["MeanGrad"] = acc("mean_grad")
            outputs["MeanGradOut"] = acc("mean_grad")
        return block.append_op(
            "rmsprop",
            inputs=inputs,
            outputs=outputs,
            attrs={
                "epsilon": self._epsilon,
                "decay": self._rho,
                "momentum": self._momentum,
                "centered": self._centered,
            },
        )


SGDOptimizer = SGD
MomentumOptimizer = Momentum
LarsMomentumOptimizer = LarsMomentum
AdamOptimizer = Adam
AdagradOptimizer = Adagrad
RMSPropOptimizer = RMSProp

del dtype_code
