"""Weight decay, added to gradients before the optimizer's update ops (Fluid's order:
backward -> clip -> regularisation -> optimisation)."""

import warnings

from .core import is_complex_dtype


class WeightDecayRegularizer:
    """The base of regularizers: calling one with (param, grad, block) appends the ops that add its term to the gradient and returns the new gradient."""

    def __call__(self, param, grad, block):
        raise NotImplementedError


class L2Decay(WeightDecayRegularizer):
    """grad += coeff * param (a complex param's real and imaginary parts alike: its real view)."""

    def __init__(self, regularization_coeff=0.0):
        self.coeff = float(regularization_coeff)

    def __call__(self, param, grad, block):
        decay = block.create_var(dtype=param.dtype, shape=param.shape)
        block.append_op(
            "scale", inputs={"X": param}, outputs={"Out": decay}, attrs={"scale": self.coeff}
        )
        return decay


class L1Decay(WeightDecayRegularizer):
    """grad += coeff * sign(param); refuses a complex param (whose sign would be a guess: z / abs(z)
    or each part's)."""

    def __init__(self, regularization_coeff=0.0):
        self.coeff = float(regularization_coeff)

    def __call__(self, param, grad, block):
        if is_complex_dtype(param.dtype):
            raise TypeError(
                "L1Decay cannot regularize the complex parameter '%s' (%s); L2Decay can (it "
                "decays the real and imaginary parts alike)" % (param.name, param.dtype)
            )
        sign = block.create_var(dtype=param.dtype, shape=param.shape)
        block.append_op("sign", inputs={"X": param}, outputs={"Out": sign})
        decay = block.create_var(dtype=param.dtype, shape=param.shape)
        block.append_op(
            "scale", inputs={"X": sign}, outputs={"Out": decay}, attrs={"scale": self.coeff}
        )
        return decay


L2DecayRegularizer = L2Decay
L1DecayRegularizer = L1Decay


def append_regularization_ops(params_grads, regularization=None):
    """A parameter's own regularizer wins over the optimizer's."""
    out = []
    for param, grad in params_grads:
        reg = getattr(param, "regularizer", None) or regularization
        if grad is None or reg is None:
            out.append((param, grad))
            continue
        if grad.type == "SELECTED_ROWS":
            warnings.warn(
                "regularization skipped for the sparse gradient of '%s'" % param.name, stacklevel=2
            )
            out.append((param, grad))
            continue
        block = grad.block
        decay = reg(param, grad, block)
        new_grad = block.create_var(name=grad.name + "@REG", dtype=grad.dtype, shape=grad.shape)
        block.append_op("sum", inputs={"X": [grad, decay]}, outputs={"Out": new_grad})
        out.append((param, new_grad))
    return out
