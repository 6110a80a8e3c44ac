"""Layers: functions that append ops (and their parameters) to the default programs, with
Fluid's names and arguments."""

import numpy as np

from .. import unique_name
from ..core import LoDTensor, complex_dtype, convert_dtype, dtype_code, real_dtype
from ..framework import Variable
from ..initializer import Constant, Normal
from ..layer_helper import LayerHelper
from ..param_attr import ParamAttr
from .checks import (
    COMPLEX,
    FLOATS,
    INTS,
    check_dtype,
    check_type,
    check_var,
    check_variable_and_dtype,
    is_int,
)
from .tensor_args import contains_var, int_items, int_tensor, int_tensor_list, list_arg

__all__ = [
    "data",
    "fc",
    "mean",
    "square_error_cost",
    "cross_entropy",
    "softmax",
    "softmax_with_cross_entropy",
    "relu",
    "sigmoid",
    "tanh",
    "square",
    "elementwise_add",
    "elementwise_sub",
    "elementwise_mul",
    "elementwise_div",
    "matmul",
    "mul",
    "scale",
    "sums",
    "fill_constant",
    "fill_zeros_like",
    "assign",
    "cast",
    "concat",
    "reshape",
    "conv2d",
    "pool2d",
    "adaptive_pool2d",
    "batch_norm",
    "dropout",
    "embedding",
    "accuracy",
    "transpose",
    "split",
    "flatten",
    "topk",
    "lrn",
    "uniform_random",
    "gaussian_random",
    "create_parameter",
    "create_global_var",
]


def _single(helper, op_type, inputs, attrs=None, dtype=None, out_param="Out"):
    """One op with one output; returns the output."""
    first = next(iter(inputs.values()))
    first = first[0] if isinstance(first, (list, tuple)) else first
    out = helper.create_variable_for_type_inference(dtype or first.dtype)
    helper.append_op(op_type, inputs=inputs, outputs={out_param: out}, attrs=attrs or {})
    return out


def data(
    name,
    shape,
    dtype="float32",
    lod_level=0,
    append_batch_size=True,
    stop_gradient=True,
    type="LOD_TENSOR",
):
    """A variable fed at run time. With append_batch_size, -1 (the batch) is put in front."""
    shape = [int(d) for d in shape]
    if append_batch_size and (not shape or shape[0] != -1):
        shape = [-1] + shape
    helper = LayerHelper("data", name=name)
    return helper.main_program.global_block().create_var(
        name=name,
        shape=shape,
        dtype=convert_dtype(dtype),
        lod_level=lod_level,
        stop_gradient=stop_gradient,
        type=type,
    )


def fc(input, size, num_flatten_dims=1, param_attr=None, bias_attr=None, act=None, name=None):
    """Fully connected: act(sum_i flatten(input_i) * W_i + b)."""
    check_type(input, "input", (list, tuple, Variable), "fc")
    for x in input if isinstance(input, (list, tuple)) else [input]:
        check_variable_and_dtype(x, "input", FLOATS, "fc")
    helper = LayerHelper(
        "fc", input=input, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    inputs = helper.multiple_input()
    dtype = helper.input_dtype()
    attrs = param_attr if isinstance(param_attr, (list, tuple)) else [param_attr] * len(inputs)
    partials = []
    for x, attr in zip(inputs, attrs):
        in_dim = 1
        for d in x.shape[num_flatten_dims:]:
            if d < 0:
                raise ValueError(
                    "fc: the input's dims after num_flatten_dims must be known, got %r" % (x.shape,)
                )
            in_dim *= d
        w = helper.create_parameter(attr, [in_dim, size], dtype)
        tmp = helper.create_variable_for_type_inference(dtype)
        helper.append_op(
            "mul",
            inputs={"X": x, "Y": w},
            outputs={"Out": tmp},
            attrs={"x_num_col_dims": num_flatten_dims, "y_num_col_dims": 1},
        )
        partials.append(tmp)
    pre_bias = partials[0]
    if len(partials) > 1:
        pre_bias = helper.create_variable_for_type_inference(dtype)
        helper.append_op("sum", inputs={"X": partials}, outputs={"Out": pre_bias})
    pre_act = helper.append_bias_op(pre_bias, dim_start=num_flatten_dims)
    return helper.append_activation(pre_act)


def mean(x, name=None):
    """The mean of all elements of `x`: a one-element tensor.

    Args:
        x (Variable): a float tensor.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the mean, shape [1].
    """
    helper = LayerHelper("mean", name=name)
    check_variable_and_dtype(x, "x", FLOATS + COMPLEX, "mean")
    return _single(helper, "mean", {"X": x})


def square_error_cost(input, label):
    """(input - label)^2, elementwise."""
    check_variable_and_dtype(input, "input", ("float32", "float64"), "square_error_cost")
    check_variable_and_dtype(label, "label", ("float32", "float64"), "square_error_cost")
    helper = LayerHelper("square_error_cost")
    diff = _single(helper, "elementwise_sub", {"X": input, "Y": label})
    return _single(helper, "square", {"X": diff})


def cross_entropy(input, label, soft_label=False, ignore_index=-100):
    """-log(input[label]) per row; with soft_label, -sum(label * log(input)). Hard labels emit
    cross_entropy2 (Fluid 1.6+), whose gradient reads only the matched probabilities."""
    check_variable_and_dtype(input, "input", FLOATS, "cross_entropy")
    check_var("cross_entropy", "label", label)
    helper = LayerHelper("cross_entropy")
    if soft_label:
        return _single(
            helper,
            "cross_entropy",
            {"X": input, "Label": label},
            {"soft_label": True, "ignore_index": ignore_index},
            out_param="Y",
        )
    out = helper.create_variable_for_type_inference(input.dtype)
    xshape = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    match_x = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    helper.append_op(
        "cross_entropy2",
        inputs={"X": input, "Label": label},
        outputs={"Y": out, "XShape": xshape, "MatchX": match_x},
        attrs={"ignore_index": ignore_index},
    )
    return out


def softmax_with_cross_entropy(
    logits, label, soft_label=False, ignore_index=-100, return_softmax=False
):
    """Softmax of `logits` and the cross entropy against `label` in one numerically stable op.

    Args:
        logits (Variable): unscaled scores [N, K].
        label (Variable): int64 class ids [N, 1], or probabilities [N, K] with soft_label.
        soft_label (bool): `label` holds a distribution over the K classes.
        ignore_index (int): a hard label with this value gives 0 loss.
        return_softmax (bool): also return the softmax.

    Returns:
        Variable: the loss [N, 1]; (loss, softmax) with return_softmax.
    """
    helper = LayerHelper("softmax_with_cross_entropy")
    softmax_out = helper.create_variable_for_type_inference(logits.dtype)
    loss = helper.create_variable_for_type_inference(logits.dtype)
    helper.append_op(
        "softmax_with_cross_entropy",
        inputs={"Logits": logits, "Label": label},
        outputs={"Softmax": softmax_out, "Loss": loss},
        attrs={"soft_label": soft_label, "ignore_index": ignore_index},
    )
    return (loss, softmax_out) if return_softmax else loss


def softmax(input, axis=-1, name=None, use_cudnn=False):
    """Softmax over `axis`: exp(x) / sum(exp(x)).

    Args:
        input (Variable): a float tensor.
        axis (int): the dim normalised; -1 is the last.
        name (str): the output's name prefix, or None.
        use_cudnn (bool): Fluid's argument; the kernel is chosen by place.

    Returns:
        Variable: the probabilities, input's shape.
    """
    check_variable_and_dtype(input, "input", FLOATS, "softmax")
    return _single(LayerHelper("softmax", name=name), "softmax", {"X": input}, {"axis": axis})


def _activation(op_type, dtypes=FLOATS):
    def layer(x, name=None):
        check_variable_and_dtype(x, "x", dtypes, op_type)
        return _single(LayerHelper(op_type, name=name), op_type, {"X": x})

    layer.__name__ = op_type
    layer.__doc__ = "Elementwise %s." % op_type
    return layer


relu = _activation("relu")
sigmoid = _activation("sigmoid", FLOATS + COMPLEX)
tanh = _activation("tanh", FLOATS + COMPLEX)
square = _activation("square", FLOATS + COMPLEX)


# The element-wise ops with complex kernels.
_COMPLEX_ELEMENTWISE = (
    "elementwise_add",
    "elementwise_sub",
    "elementwise_mul",
    "elementwise_div",
    "elementwise_pow",
)


def _elementwise(op_type, x, y, axis=-1, act=None, name=None):
    kinds = FLOATS + INTS + (COMPLEX if op_type in _COMPLEX_ELEMENTWISE else ())
    check_variable_and_dtype(x, "x", kinds, op_type)
    check_variable_and_dtype(y, "y", kinds, op_type)
    helper = LayerHelper(op_type, act=act, name=name)
    out = _single(helper, op_type, {"X": x, "Y": y}, {"axis": axis})
    return helper.append_activation(out)


def elementwise_add(x, y, axis=-1, act=None, name=None):
    """x + y, broadcasting `y` over `x` from `axis` (Fluid's elementwise_add).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_add", x, y, axis, act, name)


def elementwise_sub(x, y, axis=-1, act=None, name=None):
    """x - y, broadcasting `y` over `x` from `axis` (Fluid's elementwise_sub).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_sub", x, y, axis, act, name)


def elementwise_mul(x, y, axis=-1, act=None, name=None):
    """x * y, broadcasting `y` over `x` from `axis` (Fluid's elementwise_mul).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_mul", x, y, axis, act, name)


def elementwise_div(x, y, axis=-1, act=None, name=None):
    """x / y, broadcasting `y` over `x` from `axis` (Fluid's elementwise_div).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_div", x, y, axis, act, name)


def matmul(x, y, transpose_x=False, transpose_y=False, alpha=1.0, name=None):
    """The matrix product alpha * op(x) @ op(y), batched over leading dims.

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand.
        transpose_x (bool): transpose x's last two dims first.
        transpose_y (bool): transpose y's last two dims first.
        alpha (float): the scale of the product.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the product.
    """
    check_variable_and_dtype(x, "x", FLOATS, "matmul")
    check_variable_and_dtype(y, "y", FLOATS, "matmul")
    return _single(
        LayerHelper("matmul", name=name),
        "matmul",
        {"X": x, "Y": y},
        {"transpose_X": transpose_x, "transpose_Y": transpose_y, "alpha": float(alpha)},
    )


def mul(x, y, x_num_col_dims=1, y_num_col_dims=1, name=None):
    """Matrix product of `x` and `y` flattened to matrices (Fluid's mul op, behind fc).

    Args:
        x (Variable): flattened to 2-D at x_num_col_dims.
        y (Variable): flattened to 2-D at y_num_col_dims.
        x_num_col_dims (int): x's leading dims that form the rows.
        y_num_col_dims (int): y's leading dims that form the rows.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's leading dims followed by y's trailing dims.
    """
    check_variable_and_dtype(x, "x", FLOATS, "mul")
    check_variable_and_dtype(y, "y", FLOATS, "mul")
    return _single(
        LayerHelper("mul", name=name),
        "mul",
        {"X": x, "Y": y},
        {"x_num_col_dims": x_num_col_dims, "y_num_col_dims": y_num_col_dims},
    )


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    """scale * x + bias (or scale * (x + bias) when not bias_after_scale).

    Args:
        x (Variable): the input.
        scale (float): the factor.
        bias (float): the offset.
        bias_after_scale (bool): add the bias after scaling.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape and type.
    """
    check_variable_and_dtype(x, "x", FLOATS + ("int8", "int16", "uint8") + INTS + COMPLEX, "scale")
    helper = LayerHelper("scale", act=act, name=name)
    out = _single(
        helper,
        "scale",
        {"X": x},
        {"scale": float(scale), "bias": float(bias), "bias_after_scale": bias_after_scale},
    )
    return helper.append_activation(out)


def sums(input, out=None):
    """The elementwise sum of a list of tensors (the sum op).

    Args:
        input (Variable|list): the tensors, of one shape.
        out (Variable): where to write the sum, or None for a new variable.

    Returns:
        Variable: the sum.
    """
    check_type(input, "input", (Variable, tuple, list), "sums")
    for x in input if isinstance(input, (list, tuple)) else [input]:
        check_variable_and_dtype(x, "input", ("float32", "float64") + INTS + COMPLEX, "sums")
    if out is not None:
        check_variable_and_dtype(out, "out", ("float32", "float64") + INTS + COMPLEX, "sums")
    helper = LayerHelper("sum", input=input)
    inputs = helper.multiple_input()
    if out is None:
        out = helper.create_variable_for_type_inference(inputs[0].dtype)
    helper.append_op("sum", inputs={"X": inputs}, outputs={"Out": out})
    return out


def _shape_arg(layer, shape, inputs, attrs):
    """Fluid's shape argument of the creation layers: ints, an int Variable (ShapeTensor) or a
    list mixing ints and one-element int Variables (ShapeTensorList)."""
    list_arg(layer, "shape", shape, inputs, attrs, "shape", "ShapeTensor", "ShapeTensorList")
    if not isinstance(shape, Variable) and not shape:
        raise ValueError("%s: 'shape' must not be empty" % layer)


def fill_constant(shape, dtype, value, force_cpu=False, out=None):
    """A tensor of `shape` (ints, an int Variable, or ints mixed with one-element int
    Variables) filled with `value`."""
    check_dtype(dtype, "dtype", ("bool",) + FLOATS + INTS + COMPLEX, "fill_constant")
    dtype = convert_dtype(dtype)
    helper = LayerHelper("fill_constant")
    inputs, attrs = {}, {"dtype": dtype_code(dtype), "value": float(value), "force_cpu": force_cpu}
    if dtype in INTS and is_int(value) and float(np.float32(value)) != value:  # float32 drops bits
        attrs["str_value"] = str(int(value))
    _shape_arg("fill_constant", shape, inputs, attrs)
    if out is None:
        out = helper.create_variable_for_type_inference(dtype)
    else:
        check_variable_and_dtype(out, "out", (dtype,), "fill_constant")
    helper.append_op("fill_constant", inputs=inputs, outputs={"Out": out}, attrs=attrs)
    out.stop_gradient = True
    return out


def zeros(shape, dtype, force_cpu=False):
    """A tensor of `shape` filled with 0 (fill_constant).

    Args:
        shape (list|Variable): the shape.
        dtype (str): the element type.
        force_cpu (bool): keep it in CPU memory.

    Returns:
        Variable: the tensor.
    """
    return fill_constant(shape, dtype, 0.0, force_cpu)


def ones(shape, dtype, force_cpu=False):
    """A tensor of `shape` filled with 1 (fill_constant).

    Args:
        shape (list|Variable): the shape.
        dtype (str): the element type.
        force_cpu (bool): keep it in CPU memory.

    Returns:
        Variable: the tensor.
    """
    return fill_constant(shape, dtype, 1.0, force_cpu)


def fill_zeros_like(x):
    """A tensor of zeros with `x`'s shape and type.

    Args:
        x (Variable): the tensor whose shape and type are taken.

    Returns:
        Variable: the zeros.
    """
    return _single(LayerHelper("fill_zeros_like"), "fill_zeros_like", {"X": x})


# assign_value's attribute for each numpy dtype (Fluid 1.8: float32, int32; Paddle 2.0: int64,
# bool; Paddle 2.6: float64).
_ASSIGN_VALUES = {
    "float32": ("fp32_values", float),
    "float64": ("fp64_values", float),
    "int32": ("int32_values", int),
    "int64": ("int64_values", int),
    "bool": ("bool_values", int),
}


def assign(input, output=None):
    """output = a copy of `input`: a Variable (the assign op), or the values of a numpy array or a
    LoDTensor without LoD (Fluid's assign_value op, the values held in the program)."""
    check_type(input, "input", (Variable, np.ndarray, LoDTensor), "assign")
    helper = LayerHelper("assign")
    if isinstance(input, Variable):
        check_dtype(input.dtype, "input", ("bool",) + FLOATS + INTS + COMPLEX, "assign")
        if output is None:
            output = helper.create_variable_for_type_inference(input.dtype)
        helper.append_op("assign", inputs={"X": input}, outputs={"Out": output})
        return output
    if isinstance(input, LoDTensor):
        if input.lod():
            raise ValueError(
                "assign: a LoDTensor with LoD %s cannot be held in the program (its "
                "values can); feed it instead" % (input.lod(),)
            )
        input = np.array(input)
    dtype = convert_dtype(input.dtype)
    if dtype not in _ASSIGN_VALUES:
        raise TypeError(
            "assign: a numpy array's data type must be one of %s, but received %s"
            % (", ".join(_ASSIGN_VALUES), dtype)
        )
    if input.size > 1024 * 1024:
        raise ValueError(
            "assign: the array holds %d values, more than 1024 * 1024 (save it to a "
            "file and load it instead)" % input.size
        )
    attr, cast = _ASSIGN_VALUES[dtype]
    if output is None:
        output = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "assign_value",
        outputs={"Out": output},
        attrs={
            "dtype": dtype_code(dtype),
            "shape": [int(d) for d in input.shape],
            attr: [cast(v) for v in input.flat],
        },
    )
    return output


def cast(x, dtype):
    """`x` converted to `dtype`.

    Args:
        x (Variable): the input.
        dtype (str|np.dtype): the target type.

    Returns:
        Variable: x's values as dtype.
    """
    kinds = ("bool", "uint8", "int8", "int16") + FLOATS + INTS + COMPLEX
    check_variable_and_dtype(x, "x", kinds, "cast")
    check_dtype(dtype, "dtype", kinds, "cast")
    helper = LayerHelper("cast")
    dtype = convert_dtype(dtype)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "cast",
        inputs={"X": x},
        outputs={"Out": out},
        attrs={"in_dtype": dtype_code(x.dtype), "out_dtype": dtype_code(dtype)},
    )
    return out


_MOVE_TYPES = ("bool",) + FLOATS + INTS + COMPLEX  # the dtypes the data-moving layers take


def _axis_arg(layer, arg, axis, inputs, attrs):
    """An int axis, or a one-element int Variable read when the op runs (AxisTensor)."""
    check_type(axis, arg, (int, Variable), layer)
    if isinstance(axis, Variable):
        inputs["AxisTensor"] = int_tensor(layer, arg, axis)
    else:
        attrs["axis"] = int(axis)


def concat(input, axis=0, name=None):
    """The inputs joined along axis (an int, or an int Variable read at run time)."""
    check_type(input, "input", (list, tuple, Variable), "concat")
    inputs = [input] if isinstance(input, Variable) else list(input)
    if not inputs:
        raise ValueError("concat: 'input' must hold at least one Variable")
    for i, x in enumerate(inputs):
        check_variable_and_dtype(x, "input[%d]" % i, _MOVE_TYPES, "concat")
        if x.dtype != inputs[0].dtype:
            raise TypeError(
                "concat: all of 'input' must have one data type, but input[0] is %s "
                "and input[%d] is %s" % (inputs[0].dtype, i, x.dtype)
            )
    op_inputs, attrs = {"X": inputs}, {}
    _axis_arg("concat", "axis", axis, op_inputs, attrs)
    return _single(
        LayerHelper("concat", name=name), "concat", op_inputs, attrs, dtype=inputs[0].dtype
    )


def _check_reshape_ints(x, shape):
    """Fluid's rules for the ints of reshape's shape: one -1, a 0 within x's rank, no other
    negative."""
    unknown = [i for i, d in enumerate(shape) if is_int(d) and d == -1]
    if len(unknown) > 1:
        raise ValueError(
            "reshape: only one dim of 'shape' may be -1, but shape[%d] and "
            "shape[%d] are" % tuple(unknown[:2])
        )
    for i, d in enumerate(shape):
        if is_int(d) and d == 0 and i >= len(x.shape):
            raise ValueError(
                "reshape: shape[%d] = 0 copies x's dim %d, but x has %d dims" % (i, i, len(x.shape))
            )
        if is_int(d) and d < -1:
            raise ValueError(
                "reshape: shape[%d] = %d; a dim must be > 0, 0 (copy) or -1 (infer)" % (i, d)
            )


def reshape(x, shape, actual_shape=None, act=None, inplace=False, name=None):
    """Out has `shape`; a 0 copies the input's dim, one -1 is inferred. shape may be an int
    Variable, or mix ints with one-element int Variables (read when the op runs); actual_shape
    (an int Variable) overrides a shape of ints. Emits reshape2 (Fluid 1.6+: its gradient reads
    XShape, not x)."""
    check_variable_and_dtype(x, "x", _MOVE_TYPES, "reshape")
    check_type(shape, "shape", (list, tuple, Variable), "reshape")
    check_type(actual_shape, "actual_shape", (Variable, type(None)), "reshape")
    helper = LayerHelper("reshape2", act=act, name=name)
    inputs, attrs = {"X": x}, {}
    if isinstance(shape, Variable):
        inputs["Shape"] = int_tensor("reshape", "shape", shape)
    else:
        shape = int_items("reshape", "shape", shape)
        if not shape:
            raise ValueError("reshape: 'shape' must not be empty")
        _check_reshape_ints(x, shape)
        attrs["shape"] = [-1 if isinstance(d, Variable) else int(d) for d in shape]
        if contains_var(shape):
            inputs["ShapeTensor"] = int_tensor_list("reshape", "shape", shape)
        elif actual_shape is not None:
            inputs["Shape"] = int_tensor("reshape", "actual_shape", actual_shape)
    out = helper.create_variable_for_type_inference(x.dtype)
    xshape = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    helper.append_op("reshape2", inputs=inputs, outputs={"Out": out, "XShape": xshape}, attrs=attrs)
    return helper.append_activation(out)


def transpose(x, perm, name=None):
    """`x` with its dims permuted.

    Args:
        x (Variable): the input.
        perm (list): the new order of x's dims.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the transposed tensor.
    """
    check_variable_and_dtype(x, "x", FLOATS + INTS + COMPLEX, "transpose")
    check_type(perm, "perm", (list, tuple), "transpose")
    if len(perm) != len(x.shape):
        raise ValueError(
            "transpose: 'perm' is a permutation of x's %d dims, but has %d entries "
            "(x's shape %s, perm %s)" % (len(x.shape), len(perm), list(x.shape), list(perm))
        )
    n = len(perm)
    if any(not is_int(p) or not -n <= p < n for p in perm) or len({int(p) % n for p in perm}) != n:
        raise ValueError(
            "transpose: 'perm' %s is not a permutation of x's dims 0..%d"
            % (list(perm), len(perm) - 1)
        )
    return _single(LayerHelper("transpose", name=name), "transpose", {"X": x}, {"axis": list(perm)})


def flatten(x, axis=1, name=None):
    """`x` as a matrix: the dims before `axis` make the rows, the rest the columns.

    Args:
        x (Variable): the input.
        axis (int): where the columns start.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: a 2-D tensor.
    """
    return _single(LayerHelper("flatten", name=name), "flatten", {"X": x}, {"axis": axis})


def _check_sections(input, num_or_sections, dim):
    """Fluid's checks of split's parts against input's (known) dim."""
    size = input.shape[dim] if is_int(dim) and -len(input.shape) <= dim < len(input.shape) else -1
    if is_int(num_or_sections):
        if num_or_sections < 2:
            raise ValueError(
                "split: 'num_or_sections' as an int must be > 1, got %d" % num_or_sections
            )
        if size >= 0 and size % num_or_sections:
            raise ValueError(
                "split: input's dim %d (%d) is not divisible by num_or_sections %d"
                % (dim, size, num_or_sections)
            )
        return
    if sum(1 for s in num_or_sections if is_int(s) and s == -1) > 1:
        raise ValueError(
            "split: only one of 'num_or_sections' may be -1, got %r" % (num_or_sections,)
        )
    if size >= 0 and len(num_or_sections) > size:
        raise ValueError(
            "split: %d sections for input's dim %d of size %d" % (len(num_or_sections), dim, size)
        )


def split(input, num_or_sections, dim=-1, name=None):
    """input cut along dim (an int, or an int Variable read at run time) into num_or_sections
    equal parts (an int) or parts of the listed sizes (ints and one-element int Variables; one
    -1 takes the rest)."""
    check_variable_and_dtype(input, "input", _MOVE_TYPES, "split")
    check_type(num_or_sections, "num_or_sections", (int, list, tuple), "split")
    helper = LayerHelper("split", name=name)
    inputs, attrs = {"X": input}, {}
    if is_int(dim) and dim < 0:
        dim += len(input.shape)
    _axis_arg("split", "dim", dim, inputs, attrs)
    if is_int(num_or_sections):
        n, attrs["num"] = int(num_or_sections), int(num_or_sections)
    else:
        num_or_sections = int_items("split", "num_or_sections", num_or_sections)
        n = len(num_or_sections)
        attrs["num"] = 0
        attrs["sections"] = [-1 if isinstance(s, Variable) else int(s) for s in num_or_sections]
        if contains_var(num_or_sections):
            inputs["SectionsTensorList"] = int_tensor_list(
                "split", "num_or_sections", num_or_sections
            )
    _check_sections(input, num_or_sections, dim)
    outs = [
        helper.create_variable_for_type_inference(input.dtype) for _ in [0] * n
    ]  # (range is a layer here)
    helper.append_op("split", inputs=inputs, outputs={"Out": outs}, attrs=attrs)
    return outs


def topk(input, k, name=None):
    """The k largest entries of each row of input and their int64 indices; k an int or a
    one-element int Variable read when the op runs (top_k's K)."""
    check_variable_and_dtype(input, "input", FLOATS + INTS, "topk")
    check_type(k, "k", (int, Variable), "topk")
    helper = LayerHelper("top_k", name=name)
    inputs, attrs = {"X": input}, {}
    if isinstance(k, Variable):
        inputs["K"] = int_tensor("topk", "k", k)
    else:
        if k < 1:
            raise ValueError("topk: 'k' must be >= 1, got %d" % k)
        attrs["k"] = int(k)
    values = helper.create_variable_for_type_inference(input.dtype)
    indices = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "top_k", inputs=inputs, outputs={"Out": values, "Indices": indices}, attrs=attrs
    )
    return values, indices


def accuracy(input, label, k=1, correct=None, total=None):
    """Top-k accuracy of `input` (scores [N, C]) against int64 labels [N, 1]."""
    helper = LayerHelper("accuracy")
    values, indices = topk(input, k)
    acc = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    correct = correct or helper.create_variable_for_type_inference("int32", stop_gradient=True)
    total = total or helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "accuracy",
        inputs={"Out": values, "Indices": indices, "Label": label},
        outputs={"Accuracy": acc, "Correct": correct, "Total": total},
    )
    return acc


def _paddings(layer, padding, data_format="NCHW"):
    """Fluid 1.7's padding argument: "SAME" / "VALID", an int, [h, w], [top, bottom, left,
    right], or one [before, after] pair per input dim with [0, 0] for the batch and channel dims
    ([[0,0], [0,0], [t,b], [l,r]] in NCHW, [[0,0], [t,b], [l,r], [0,0]] in NHWC); returns (paddings
    attribute, padding_algorithm)."""
    if isinstance(padding, str):
        algo = padding.upper()
        if algo not in ("SAME", "VALID"):
            raise ValueError(
                "%s: padding must be 'SAME', 'VALID' or numbers, got %r" % (layer, padding)
            )
        return [0, 0], algo
    if is_int(padding):
        return [int(padding)] * 2, "EXPLICIT"
    check_type(padding, "padding", (str, int, list, tuple), layer)
    pads = list(padding)
    if len(pads) == 4 and all(isinstance(p, (list, tuple)) for p in pads):
        batch_and_channel = (0, 1) if data_format == "NCHW" else (0, 3)
        if any(list(pads[i]) != [0, 0] for i in batch_and_channel):
            raise ValueError(
                "%s: padding %r pads the batch or channel dim (data_format %s); only "
                "H and W may be padded" % (layer, padding, data_format)
            )
        spatial = (2, 3) if data_format == "NCHW" else (1, 2)
        pads = [p for i in spatial for p in pads[i]]
    if len(pads) not in (2, 4) or not all(is_int(p) for p in pads):
        raise TypeError(
            "%s: padding must be an int, 2 ints (h, w), 4 (top, bottom, left, right) "
            "or 4 [before, after] pairs, got %r" % (layer, padding)
        )
    return [int(p) for p in pads], "EXPLICIT"


def conv2d(
    input,
    num_filters,
    filter_size,
    stride=1,
    padding=0,
    dilation=1,
    groups=None,
    param_attr=None,
    bias_attr=None,
    use_cudnn=True,
    act=None,
    name=None,
    data_format="NCHW",
):
    """2-D convolution over NCHW (or NHWC) input, with a bias and an activation (Fluid's conv2d).

    Args:
        input (Variable): [N, C, H, W].
        num_filters (int): output channels.
        filter_size (int|tuple): the kernel's height and width.
        stride (int|tuple): the stride.
        padding (int|tuple|str): the padding, or "SAME" / "VALID".
        dilation (int|tuple): the dilation.
        groups (int): channel groups; None: 1.
        param_attr (ParamAttr): the filter's attributes.
        bias_attr (ParamAttr|bool): the bias's attributes; False: no bias.
        use_cudnn (bool): Fluid's argument; the kernel is chosen by place.
        act (str): an activation to apply, or None.
        name (str): the parameters' and output's name prefix, or None.
        data_format (str): "NCHW" or "NHWC".

    Returns:
        Variable: the output, [N, num_filters, H', W'].
    """
    check_variable_and_dtype(input, "input", FLOATS, "conv2d")
    if not isinstance(use_cudnn, bool):  # Fluid 1.8 raises ValueError here (TypeError in pool2d)
        raise ValueError("conv2d: use_cudnn must be True or False, but received %r" % (use_cudnn,))
    _check_data_format("conv2d", data_format)
    if len(input.shape) != 4:
        raise ValueError("conv2d: input must be 4-D, got shape %s" % (list(input.shape),))
    paddings, algo = _paddings("conv2d", padding, data_format)
    pair = lambda v: [v, v] if isinstance(v, int) else list(v)  # noqa: E731
    channel_axis = 1 if data_format == "NCHW" else 3
    channels = input.shape[channel_axis]
    if groups is not None and groups <= 0:
        raise ValueError("conv2d: groups must be > 0, got %d" % groups)
    if channels < 0 or channels % (groups or 1):
        raise ValueError(
            "conv2d: input channels %d must be known and divisible by groups %d"
            % (channels, groups or 1)
        )
    # Fluid's rule: a conv of one group per channel without cuDNN is a depthwise_conv2d.
    op_type = "conv2d"
    if groups == channels and num_filters % channels == 0 and not use_cudnn:
        op_type = "depthwise_conv2d"
    groups = groups or 1
    helper = LayerHelper(op_type, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    kh, kw = pair(filter_size)
    shape = [num_filters, channels // groups, kh, kw]
    std = (2.0 / (kh * kw * channels)) ** 0.5
    w = helper.create_parameter(
        param_attr, shape, input.dtype, default_initializer=Normal(0.0, std)
    )
    pre_bias = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        op_type,
        inputs={"Input": input, "Filter": w},
        outputs={"Output": pre_bias},
        attrs={
            "strides": pair(stride),
            "paddings": paddings,
            "dilations": pair(dilation),
            "groups": groups,
            "use_cudnn": use_cudnn,
            "padding_algorithm": algo,
            "data_format": data_format,
        },
    )
    return helper.append_activation(
        helper.append_bias_op(pre_bias, dim_start=channel_axis, dim_end=channel_axis + 1)
    )


def pool2d(
    input,
    pool_size=-1,
    pool_type="max",
    pool_stride=1,
    pool_padding=0,
    global_pooling=False,
    use_cudnn=True,
    ceil_mode=False,
    exclusive=True,
    name=None,
    data_format="NCHW",
):
    """2-D max or average pooling (Fluid's pool2d).

    Args:
        input (Variable): [N, C, H, W].
        pool_size (int|tuple): the window.
        pool_type (str): "max" or "avg".
        pool_stride (int|tuple): the stride.
        pool_padding (int|tuple): the padding.
        global_pooling (bool): pool the whole feature map.
        use_cudnn (bool): Fluid's argument; the kernel is chosen by place.
        ceil_mode (bool): round the output size up.
        exclusive (bool): average over the window's unpadded elements only.
        name (str): the output's name prefix, or None.
        data_format (str): "NCHW" or "NHWC".

    Returns:
        Variable: the pooled tensor.
    """
    if pool_type not in ("max", "avg"):
        raise ValueError("pool2d: pool_type must be 'max' or 'avg', got %r" % (pool_type,))
    check_variable_and_dtype(input, "input", FLOATS, "pool2d")
    if not isinstance(use_cudnn, bool):
        raise TypeError("pool2d: use_cudnn must be True or False, but received %r" % (use_cudnn,))
    _check_data_format("pool2d", data_format)
    if not global_pooling and pool_size == -1:
        raise ValueError("pool2d: pool_size is needed unless global_pooling is True")
    pair = lambda v: [v, v] if isinstance(v, int) else list(v)  # noqa: E731
    paddings, algo = _paddings("pool2d", pool_padding, data_format)
    if algo == "VALID" and ceil_mode:
        raise ValueError("pool2d: ceil_mode must be False when pool_padding is 'VALID'")
    return _single(
        LayerHelper("pool2d", name=name),
        "pool2d",
        {"X": input},
        {
            "pooling_type": pool_type,
            "ksize": pair(pool_size),
            "strides": pair(pool_stride),
            "paddings": paddings,
            "padding_algorithm": algo,
            "global_pooling": global_pooling,
            "ceil_mode": ceil_mode,
            "exclusive": exclusive,
            "data_format": data_format,
        },
    )


def adaptive_pool2d(input, pool_size, pool_type="max", name=None, data_format="NCHW"):
    """Fluid's adaptive_pool2d: pool to a pool_size (h, w) output; window i spans
    [floor(i * H / h), ceil((i + 1) * H / h))."""
    if pool_type not in ("max", "avg"):
        raise ValueError("adaptive_pool2d: pool_type must be 'max' or 'avg', got %r" % (pool_type,))
    check_variable_and_dtype(input, "input", FLOATS, "adaptive_pool2d")
    _check_data_format("adaptive_pool2d", data_format)
    size = [pool_size, pool_size] if isinstance(pool_size, int) else list(pool_size)
    return _single(
        LayerHelper("pool2d", name=name),
        "pool2d",
        {"X": input},
        {"pooling_type": pool_type, "ksize": size, "adaptive": True, "data_format": data_format},
    )


def batch_norm(
    input,
    act=None,
    is_test=False,
    momentum=0.9,
    epsilon=1e-5,
    param_attr=None,
    bias_attr=None,
    data_layout="NCHW",
    name=None,
    moving_mean_name=None,
    moving_variance_name=None,
):
    """Batch normalisation with learned scale and shift and running statistics (Fluid's batch_norm).

    Args:
        input (Variable): [N, C, ...] (NCHW) or [N, ..., C] (NHWC).
        act (str): an activation to apply, or None.
        is_test (bool): use the running mean and variance instead of the batch's.
        momentum (float): the running statistics' decay.
        epsilon (float): added to the variance.
        param_attr (ParamAttr): the scale's attributes.
        bias_attr (ParamAttr): the shift's attributes.
        data_layout (str): "NCHW" or "NHWC".
        name (str): the name prefix, or None.
        moving_mean_name (str): the running mean's name, or None.
        moving_variance_name (str): the running variance's name, or None.

    Returns:
        Variable: the normalised tensor.
    """
    check_variable_and_dtype(input, "input", FLOATS, "batch_norm")
    _check_data_format("batch_norm", data_layout, "data_layout")
    helper = LayerHelper(
        "batch_norm", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    dtype = input.dtype
    # Paddle's rule: float16/bfloat16 data keeps its scale, bias and statistics in float32.
    stat_dtype = "float32" if dtype in ("float16", "bfloat16") else dtype
    c = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    scale_p = helper.create_parameter(
        param_attr, [c], stat_dtype, default_initializer=Constant(1.0)
    )
    bias_p = helper.create_parameter(bias_attr, [c], stat_dtype, is_bias=True)
    block = helper.main_program.global_block()
    # Fluid's names (batch_norm_0.w_1 / .w_2 after the scale's w_0), so a checkpoint Fluid saved
    # loads into the same model built here.
    mean = block.create_parameter(
        name=moving_mean_name or unique_name.generate(helper.name + ".w"),
        shape=[c],
        dtype=stat_dtype,
        trainable=False,
        initializer=Constant(0.0),
    )
    var = block.create_parameter(
        name=moving_variance_name or unique_name.generate(helper.name + ".w"),
        shape=[c],
        dtype=stat_dtype,
        trainable=False,
        initializer=Constant(1.0),
    )
    saved_mean = helper.create_variable_for_type_inference(stat_dtype, stop_gradient=True)
    saved_var = helper.create_variable_for_type_inference(stat_dtype, stop_gradient=True)
    y = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "batch_norm",
        inputs={"X": input, "Scale": scale_p, "Bias": bias_p, "Mean": mean, "Variance": var},
        outputs={
            "Y": y,
            "MeanOut": mean,
            "VarianceOut": var,
            "SavedMean": saved_mean,
            "SavedVariance": saved_var,
        },
        attrs={
            "momentum": momentum,
            "epsilon": epsilon,
            "is_test": is_test,
            "data_layout": data_layout,
        },
    )
    return helper.append_activation(y)


def dropout(
    x,
    dropout_prob,
    is_test=False,
    seed=None,
    name=None,
    dropout_implementation="downgrade_in_infer",
):
    """Randomly zeroes elements with probability dropout_prob in training (Fluid's dropout).

    Args:
        x (Variable): the input.
        dropout_prob (float): the probability of dropping an element.
        is_test (bool): inference: no dropping.
        seed (int): a fixed seed, or None.
        name (str): the output's name prefix, or None.
        dropout_implementation (str): "downgrade_in_infer" (scale at inference) or
            "upscale_in_train" (scale kept elements by 1 / (1 - p) in training).

    Returns:
        Variable: x's shape.
    """
    check_variable_and_dtype(x, "x", FLOATS, "dropout")
    helper = LayerHelper("dropout", name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    mask = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    helper.append_op(
        "dropout",
        inputs={"X": x},
        outputs={"Out": out, "Mask": mask},
        attrs={
            "dropout_prob": float(dropout_prob),
            "is_test": is_test,
            "fix_seed": seed is not None,
            "seed": seed or 0,
            "dropout_implementation": dropout_implementation,
        },
    )
    return out


def embedding(input, size, is_sparse=False, padding_idx=None, param_attr=None, dtype="float32"):
    """Rows of a [vocab, dim] table looked up by int64 ids."""
    check_variable_and_dtype(input, "input", ("int64",), "embedding")
    check_dtype(dtype, "dtype", FLOATS, "embedding")
    helper = LayerHelper("embedding", param_attr=param_attr)
    w = helper.create_parameter(param_attr, list(size), dtype)
    pad = (
        -1 if padding_idx is None else (padding_idx if padding_idx >= 0 else size[0] + padding_idx)
    )
    return _single(
        helper,
        "lookup_table",
        {"Ids": input, "W": w},
        {"is_sparse": is_sparse, "padding_idx": pad},
        dtype=dtype,
    )


def _check_data_format(layer, data_format, arg="data_format"):
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("%s: %s must be 'NCHW' or 'NHWC', got %r" % (layer, arg, data_format))


def lrn(input, n=5, k=1.0, alpha=1e-4, beta=0.75, name=None, data_format="NCHW"):
    """Local response normalisation across the channels of a 4-D input (data_format "NCHW" or
    "NHWC")."""
    check_variable_and_dtype(input, "input", ("float32", "float64"), "lrn")
    if len(input.shape) != 4:
        raise ValueError("lrn: input must be 4-D, got shape %s" % (list(input.shape),))
    _check_data_format("lrn", data_format)
    helper = LayerHelper("lrn", name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    mid = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    helper.append_op(
        "lrn",
        inputs={"X": input},
        outputs={"Out": out, "MidOut": mid},
        attrs={
            "n": n,
            "k": float(k),
            "alpha": float(alpha),
            "beta": float(beta),
            "data_format": data_format,
        },
    )
    return out


def uniform_random(shape, dtype="float32", min=-1.0, max=1.0, seed=0):
    """Samples of U[min, max) in `shape` (ints, an int Variable, or ints mixed with one-element
    int Variables)."""
    check_dtype(dtype, "dtype", ("float32", "float64"), "uniform_random")
    helper = LayerHelper("uniform_random")
    inputs, attrs = (
        {},
        {"dtype": dtype_code(dtype), "min": float(min), "max": float(max), "seed": seed},
    )
    _shape_arg("uniform_random", shape, inputs, attrs)
    out = helper.create_variable_for_type_inference(convert_dtype(dtype))
    helper.append_op("uniform_random", inputs=inputs, outputs={"Out": out}, attrs=attrs)
    return out


def gaussian_random(shape, mean=0.0, std=1.0, seed=0, dtype="float32"):
    """A tensor of `shape` drawn from a normal distribution.

    Args:
        shape (list): the shape.
        mean (float): the mean.
        std (float): the standard deviation.
        seed (int): the seed; 0: a random one.
        dtype (str): the element type.

    Returns:
        Variable: the samples.
    """
    helper = LayerHelper("gaussian_random")
    out = helper.create_variable_for_type_inference(convert_dtype(dtype))
    helper.append_op(
        "gaussian_random",
        outputs={"Out": out},
        attrs={
            "shape": list(shape),
            "dtype": dtype_code(dtype),
            "mean": float(mean),
            "std": float(std),
            "seed": seed,
        },
    )
    return out


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False, default_initializer=None):
    """A parameter of the default main program, initialised by the startup program.

    Args:
        shape (list): its shape.
        dtype (str): its element type.
        name (str): its name, or None for a unique one.
        attr (ParamAttr): its attributes (initializer, regularizer, ...).
        is_bias (bool): initialise it as a bias (zeros) by default.
        default_initializer (Initializer): used when attr names none.

    Returns:
        Parameter: the parameter.
    """
    helper = LayerHelper("create_parameter")
    attr = ParamAttr.to_attr(attr)
    if name:
        attr.name = name
    return helper.create_parameter(attr, shape, convert_dtype(dtype), is_bias, default_initializer)


def create_global_var(shape, value, dtype, persistable=False, force_cpu=False, name=None):
    """A global variable filled with `value` by the startup program."""
    helper = LayerHelper("global_var", name=name)
    var = helper.create_global_variable(
        name=name or unique_name.generate("global_var"),
        shape=list(shape),
        dtype=convert_dtype(dtype),
        persistable=persistable,
        stop_gradient=True,
    )
    Constant(value)(var, helper.main_program.global_block())
    return var


# ---------------------------------------------------------------------------------------------
# Fluid's layers for the activations with attributes, reductions, tensor ops and norms (issue
# 14). The ops without attributes (exp, log, abs, ceil, ...) are generated layers.
def _act_with_attrs(op_type, *attr_defaults):
    """A layer op_type(x, <attrs in order>, name=None) with Fluid's defaults."""
    names = [n for n, _ in attr_defaults]

    def layer(x, *args, **kwargs):
        check_var(op_type, "x", x)
        name = kwargs.pop("name", None)
        if len(args) > len(names):
            raise TypeError(
                "%s() takes x and at most %d attributes %s" % (op_type, len(names), names)
            )
        attrs = dict(attr_defaults)
        attrs.update(zip(names, args))
        unknown = set(kwargs) - set(names)
        if unknown:
            raise TypeError(
                "%s(): unknown argument(s) %s; attributes are %s"
                % (op_type, sorted(unknown), names)
            )
        attrs.update(kwargs)
        for k, default in attr_defaults:
            if attrs[k] is None:
                attrs[k] = default
            if isinstance(default, bool):
                attrs[k] = bool(attrs[k])
            elif not isinstance(attrs[k], (int, float)):
                raise TypeError("%s(): '%s' must be a number, got %r" % (op_type, k, attrs[k]))
            else:
                attrs[k] = float(attrs[k])
        return _single(LayerHelper(op_type, name=name), op_type, {"X": x}, attrs)

    layer.__name__ = op_type
    layer.__doc__ = "Fluid's %s(x, %s, name=None)." % (
        op_type,
        ", ".join("%s=%r" % a for a in attr_defaults),
    )
    return layer


# The attribute-less activations (Fluid's generated layers op(x, name=None)), type-checked.
exp = _activation("exp", FLOATS + COMPLEX)
log = _activation("log", FLOATS + COMPLEX)
abs = _activation("abs", FLOATS + COMPLEX)  # noqa: A001 (Fluid's name); of complex: real
ceil = _activation("ceil")
floor = _activation("floor")
round = _activation("round")  # noqa: A001 (Fluid's name)
cos = _activation("cos", FLOATS + COMPLEX)
sin = _activation("sin", FLOATS + COMPLEX)
acos = _activation("acos", FLOATS + COMPLEX)
asin = _activation("asin", FLOATS + COMPLEX)
atan = _activation("atan", FLOATS + COMPLEX)
sqrt = _activation("sqrt", FLOATS + COMPLEX)
rsqrt = _activation("rsqrt", FLOATS + COMPLEX)
reciprocal = _activation("reciprocal", FLOATS + COMPLEX)
logsigmoid = _activation("logsigmoid")
softplus = _activation("softplus")
softsign = _activation("softsign")
tanh_shrink = _activation("tanh_shrink")

elu = _act_with_attrs("elu", ("alpha", 1.0))
leaky_relu = _act_with_attrs("leaky_relu", ("alpha", 0.02))
relu6 = _act_with_attrs("relu6", ("threshold", 6.0))


# --- complex values (paddle.complex, real, imag, as_complex, as_real, conj, angle) ----------

_REAL_FLOATS = ("float32", "float64")  # the real types complex values are made of


def complex(real, imag, name=None):  # noqa: A001 (Paddle's name)
    """real + i * imag, element-wise (paddle.complex; the complex op).

    Args:
        real (Variable): the real parts, float32 or float64.
        imag (Variable): the imaginary parts, real's data type; broadcast with real numpy-style.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: complex64 (of float32) or complex128 (of float64), the broadcast shape.
    """
    check_variable_and_dtype(real, "real", _REAL_FLOATS, "complex")
    check_variable_and_dtype(imag, "imag", _REAL_FLOATS, "complex")
    if real.dtype != imag.dtype:
        raise TypeError(
            "complex: 'real' is %s but 'imag' is %s; they must have one data type"
            % (real.dtype, imag.dtype)
        )
    helper = LayerHelper("complex", name=name)
    return _single(helper, "complex", {"X": real, "Y": imag}, dtype=complex_dtype(real.dtype))


def _complex_part(op_type, x, name):
    """real / imag / abs-like: a complex x to its real type."""
    check_variable_and_dtype(x, "x", COMPLEX, op_type)
    return _single(LayerHelper(op_type, name=name), op_type, {"X": x}, dtype=real_dtype(x.dtype))


def real(x, name=None):
    """The real parts of complex x (paddle.real).

    Args:
        x (Variable): complex64 or complex128.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape, float32 (of complex64) or float64 (of complex128).
    """
    return _complex_part("real", x, name)


def imag(x, name=None):
    """The imaginary parts of complex x (paddle.imag).

    Args:
        x (Variable): complex64 or complex128.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape, float32 (of complex64) or float64 (of complex128).
    """
    return _complex_part("imag", x, name)


def as_complex(x, name=None):
    """Complex values of the (real, imaginary) pairs along x's last dim (paddle.as_complex).

    Args:
        x (Variable): float32 or float64 of shape [..., 2].
        name (str): the output's name prefix, or None.

    Returns:
        Variable: complex64 / complex128 of shape [...] (x's without its last dim).
    """
    check_variable_and_dtype(x, "x", _REAL_FLOATS, "as_complex")
    if not x.shape or x.shape[-1] not in (2, -1):
        raise ValueError(
            "as_complex: 'x' must have a last dim of 2 (real, imaginary), got shape %s"
            % (list(x.shape),)
        )
    helper = LayerHelper("as_complex", name=name)
    return _single(helper, "as_complex", {"X": x}, dtype=complex_dtype(x.dtype))


def as_real(x, name=None):
    """The (real, imaginary) pairs of complex x along a new last dim (paddle.as_real).

    Args:
        x (Variable): complex64 or complex128.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: float32 / float64 of shape x.shape + [2].
    """
    return _complex_part("as_real", x, name)


def conj(x, name=None):
    """The complex conjugate of x, element-wise (paddle.conj); a real x is copied.

    Args:
        x (Variable): complex64, complex128, float32, float64, int32 or int64.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape and data type.
    """
    check_variable_and_dtype(x, "x", _REAL_FLOATS + INTS + COMPLEX, "conj")
    return _single(LayerHelper("conj", name=name), "conj", {"X": x})


def angle(x, name=None):
    """The angle (argument) of x, element-wise (paddle.angle): atan2(imag, real) of a complex x,
    in (-pi, pi]; of a real x pi where x < 0, else 0.

    Args:
        x (Variable): complex64, complex128, float32 or float64.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape; float32 / float64 (a complex x's real type, a real x's own).
    """
    check_variable_and_dtype(x, "x", _REAL_FLOATS + COMPLEX, "angle")
    helper = LayerHelper("angle", name=name)
    return _single(helper, "angle", {"X": x}, dtype=real_dtype(x.dtype))


def pow(x, factor=1.0, name=None):  # noqa: A001 (Fluid's name)
    """x ^ factor; `factor` a number or a one-element float32 Variable (the FactorTensor input,
    Fluid 1.8's). A complex x: numpy's x ** factor (principal branch)."""
    check_variable_and_dtype(x, "x", FLOATS + INTS + COMPLEX, "pow")
    check_type(factor, "factor", (float, int, Variable), "pow")
    inputs, attrs = {"X": x}, {}
    if isinstance(factor, Variable):
        check_variable_and_dtype(factor, "factor", ("float32",), "pow")
        factor.stop_gradient = True
        inputs["FactorTensor"] = factor
    else:
        attrs["factor"] = float(factor)
    return _single(LayerHelper("pow", name=name), "pow", inputs, attrs)


stanh = _act_with_attrs("stanh", ("scale_a", 0.67), ("scale_b", 1.7159))
hard_sigmoid = _act_with_attrs("hard_sigmoid", ("slope", 0.2), ("offset", 0.5))
swish = _act_with_attrs("swish", ("beta", 1.0))
brelu = _act_with_attrs("brelu", ("t_min", 0.0), ("t_max", 24.0))
soft_relu = _act_with_attrs("soft_relu", ("threshold", 40.0))
hard_swish = _act_with_attrs("hard_swish", ("threshold", 6.0), ("scale", 6.0), ("offset", 3.0))
hard_shrink = _act_with_attrs("hard_shrink", ("threshold", 0.5))
thresholded_relu = _act_with_attrs("thresholded_relu", ("threshold", 1.0))
gelu = _act_with_attrs("gelu", ("approximate", False))


def softshrink(x, alpha=None):
    """Fluid's softshrink: its `alpha` is the op's `lambda` (0.5 when None)."""
    check_var("softshrink", "x", x)
    return _single(
        LayerHelper("softshrink"),
        "softshrink",
        {"X": x},
        {"lambda": 0.5 if alpha is None else float(alpha)},
    )


def prelu(x, mode, param_attr=None, name=None):
    """Out = x > 0 ? x : alpha * x, alpha learnt: one ('all'), per channel or per element."""
    check_var("prelu", "x", x)
    if mode not in ("all", "channel", "element"):
        raise ValueError("prelu: mode must be 'all', 'channel' or 'element', got %r" % (mode,))
    helper = LayerHelper("prelu", param_attr=param_attr, name=name)
    if mode == "all":
        shape = [1]
    elif mode == "channel":
        shape = [x.shape[1]]
    else:
        shape = [int(d) for d in x.shape[1:]]
    alpha = helper.create_parameter(param_attr, shape, x.dtype, default_initializer=Constant(0.25))
    return _single(helper, "prelu", {"X": x, "Alpha": alpha}, {"mode": mode})


def elementwise_pow(x, y, axis=-1, act=None, name=None):
    """x ** y, broadcasting `y` over `x` from `axis` (Fluid's elementwise_pow).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_pow", x, y, axis, act, name)


def elementwise_mod(x, y, axis=-1, act=None, name=None):
    """x mod y, broadcasting `y` over `x` from `axis` (Fluid's elementwise_mod).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_mod", x, y, axis, act, name)


def elementwise_floordiv(x, y, axis=-1, act=None, name=None):
    """x // y, broadcasting `y` over `x` from `axis` (Fluid's elementwise_floordiv).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_floordiv", x, y, axis, act, name)


def elementwise_max(x, y, axis=-1, act=None, name=None):
    """max(x, y), broadcasting `y` over `x` from `axis` (Fluid's elementwise_max).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_max", x, y, axis, act, name)


def elementwise_min(x, y, axis=-1, act=None, name=None):
    """min(x, y), broadcasting `y` over `x` from `axis` (Fluid's elementwise_min).

    Args:
        x (Variable): the left operand.
        y (Variable): the right operand; its shape matches a run of x's dims starting at `axis`.
        axis (int): where y's dims start in x's; -1: aligned to x's last dims.
        act (str): an activation to apply to the result, or None.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the result, with x's shape.
    """
    return _elementwise("elementwise_min", x, y, axis, act, name)


def _int_list(layer, arg, value):
    if is_int(value):  # numpy integers too
        return [int(value)]
    if isinstance(value, (list, tuple)) and all(is_int(v) for v in value):
        return [int(v) for v in value]
    raise TypeError("%s: '%s' must be an int or a list of ints, got %r" % (layer, arg, value))


def _reduce(op_type, input, dim, keep_dim, name):
    check_var(op_type, "input", input)
    reduce_all = dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0)
    attrs = {"keep_dim": bool(keep_dim), "reduce_all": reduce_all}
    attrs["dim"] = [0] if attrs["reduce_all"] else _int_list(op_type, "dim", dim)
    return _single(LayerHelper(op_type, name=name), op_type, {"X": input}, attrs)


def reduce_sum(input, dim=None, keep_dim=False, name=None):
    """The sum over dim (an int or a list; every dim when None)."""
    return _reduce("reduce_sum", input, dim, keep_dim, name)


def reduce_mean(input, dim=None, keep_dim=False, name=None):
    """The mean of `input`'s elements over `dim` (Fluid's reduce_mean).

    Args:
        input (Variable): the tensor to reduce.
        dim (int|list): the dims to reduce; None: all of them.
        keep_dim (bool): keep the reduced dims with size 1.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the reduced tensor.
    """
    return _reduce("reduce_mean", input, dim, keep_dim, name)


def reduce_max(input, dim=None, keep_dim=False, name=None):
    """The maximum of `input`'s elements over `dim` (Fluid's reduce_max).

    Args:
        input (Variable): the tensor to reduce.
        dim (int|list): the dims to reduce; None: all of them.
        keep_dim (bool): keep the reduced dims with size 1.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the reduced tensor.
    """
    return _reduce("reduce_max", input, dim, keep_dim, name)


def reduce_min(input, dim=None, keep_dim=False, name=None):
    """The minimum of `input`'s elements over `dim` (Fluid's reduce_min).

    Args:
        input (Variable): the tensor to reduce.
        dim (int|list): the dims to reduce; None: all of them.
        keep_dim (bool): keep the reduced dims with size 1.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the reduced tensor.
    """
    return _reduce("reduce_min", input, dim, keep_dim, name)


def reduce_prod(input, dim=None, keep_dim=False, name=None):
    """The product of `input`'s elements over `dim` (Fluid's reduce_prod).

    Args:
        input (Variable): the tensor to reduce.
        dim (int|list): the dims to reduce; None: all of them.
        keep_dim (bool): keep the reduced dims with size 1.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the reduced tensor.
    """
    return _reduce("reduce_prod", input, dim, keep_dim, name)


def reduce_all(input, dim=None, keep_dim=False, name=None):
    """The logical and of `input`'s elements over `dim` (Fluid's reduce_all).

    Args:
        input (Variable): the tensor to reduce.
        dim (int|list): the dims to reduce; None: all of them.
        keep_dim (bool): keep the reduced dims with size 1.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the reduced tensor.
    """
    return _reduce("reduce_all", input, dim, keep_dim, name)


def reduce_any(input, dim=None, keep_dim=False, name=None):
    """The logical or of `input`'s elements over `dim` (Fluid's reduce_any).

    Args:
        input (Variable): the tensor to reduce.
        dim (int|list): the dims to reduce; None: all of them.
        keep_dim (bool): keep the reduced dims with size 1.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the reduced tensor.
    """
    return _reduce("reduce_any", input, dim, keep_dim, name)


def gather(input, index, overwrite=True, axis=0):
    """The slices of `input` at `index` along `axis`.

    Args:
        input (Variable): the source.
        index (Variable): int32 or int64 indices, 1-D.
        overwrite (bool): Fluid's argument (for the gradient of repeated indices).
        axis (int): the dim indexed.

    Returns:
        Variable: the gathered slices.
    """
    check_var("gather", "input", input)
    check_var("gather", "index", index)
    return _single(
        LayerHelper("gather"),
        "gather",
        {"X": input, "Index": index},
        {"overwrite": overwrite, "axis": axis},
    )


def gather_nd(input, index, name=None):
    """The slices of `input` addressed by the last dim of `index` (Fluid's gather_nd).

    Args:
        input (Variable): the source.
        index (Variable): int indices [..., k], k <= rank of input.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: index's leading dims followed by input's dims past k.
    """
    check_var("gather_nd", "input", input)
    check_var("gather_nd", "index", index)
    return _single(LayerHelper("gather_nd", name=name), "gather_nd", {"X": input, "Index": index})


def scatter(input, index, updates, name=None, overwrite=True):
    """A copy of `input` with the rows at `index` replaced by (or added to) `updates`.

    Args:
        input (Variable): the source.
        index (Variable): int row indices, 1-D.
        updates (Variable): the new rows.
        name (str): the output's name prefix, or None.
        overwrite (bool): replace the rows; False: add to them.

    Returns:
        Variable: input's shape.
    """
    for arg, v in (("input", input), ("index", index), ("updates", updates)):
        check_var("scatter", arg, v)
    return _single(
        LayerHelper("scatter", name=name),
        "scatter",
        {"X": input, "Ids": index, "Updates": updates},
        {"overwrite": overwrite},
    )


def slice(input, axes, starts, ends):  # noqa: A001 (Fluid's name)
    """input[starts:ends] on axes; starts and ends may be int Variables, or mix ints with
    one-element int Variables (Fluid 1.6+), read when the op runs."""
    check_var("slice", "input", input)
    inputs, attrs = {"Input": input}, {"axes": _int_list("slice", "axes", axes)}
    for arg, value, tensor in (("starts", starts, "StartsTensor"), ("ends", ends, "EndsTensor")):
        list_arg("slice", arg, value, inputs, attrs, arg, tensor, tensor + "List", one_int=True)
    return _single(LayerHelper("slice"), "slice", inputs, attrs)


def strided_slice(input, axes, starts, ends, strides):
    """input[starts:ends:strides] on axes; starts, ends and strides may each be an int Variable,
    or mix ints with one-element int Variables (Fluid 1.6+), read when the op runs. As Fluid's
    layer, infer_flags is -1 at each axis where a list holds a Variable."""
    check_var("strided_slice", "input", input)
    axes = _int_list("strided_slice", "axes", axes)
    inputs, attrs = {"Input": input}, {"axes": axes}
    infer_flags = [1] * len(axes)
    for arg, value, tensor in (
        ("starts", starts, "StartsTensor"),
        ("ends", ends, "EndsTensor"),
        ("strides", strides, "StridesTensor"),
    ):
        list_arg("strided_slice", arg, value, inputs, attrs, arg, tensor, tensor + "List")
        if isinstance(value, (list, tuple)):
            for i, v in enumerate(value[: len(axes)]):
                if isinstance(v, Variable):
                    infer_flags[i] = -1
    attrs["infer_flags"] = infer_flags
    return _single(LayerHelper("strided_slice"), "strided_slice", inputs, attrs)


def _with_xshape(op_type, inputs, attrs, name):
    x = inputs["X"]
    helper = LayerHelper(op_type, name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    xshape = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    helper.append_op(op_type, inputs=inputs, outputs={"Out": out, "XShape": xshape}, attrs=attrs)
    return out


def squeeze(input, axes, name=None):
    """`input` without the size-1 dims in `axes`.

    Args:
        input (Variable): the input.
        axes (list): the dims to remove.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the squeezed tensor.
    """
    check_var("squeeze", "input", input)
    return _with_xshape(
        "squeeze2", {"X": input}, {"axes": _int_list("squeeze", "axes", axes)}, name
    )


def unsqueeze(input, axes, name=None):
    """input with a dim of 1 inserted at each of axes (ints, an int Variable, or ints mixed with
    one-element int Variables, read when the op runs)."""
    check_var("unsqueeze", "input", input)
    inputs, attrs = {"X": input}, {}
    list_arg(
        "unsqueeze",
        "axes",
        axes,
        inputs,
        attrs,
        "axes",
        "AxesTensor",
        "AxesTensorList",
        one_int=True,
    )
    return _with_xshape("unsqueeze2", inputs, attrs, name)


def expand(x, expand_times, name=None):
    """x repeated expand_times[i] times along dim i; expand_times may be an int Variable, or mix
    ints with one-element int Variables (Fluid 1.6+: the op's ExpandTimes /
    expand_times_tensor inputs)."""
    check_var("expand", "x", x)
    inputs, attrs = {"X": x}, {}
    list_arg(
        "expand",
        "expand_times",
        expand_times,
        inputs,
        attrs,
        "expand_times",
        "ExpandTimes",
        "expand_times_tensor",
        one_int=True,
    )
    given = expand_times if isinstance(expand_times, (list, tuple)) else [expand_times]
    if any(is_int(t) and t <= 0 for t in given):
        raise ValueError("expand: each int of 'expand_times' must be > 0, got %r" % (expand_times,))
    return _single(LayerHelper("expand", name=name), "expand", inputs, attrs)


def expand_as(x, target_tensor, name=None):
    """`x` tiled to `target_tensor`'s shape.

    Args:
        x (Variable): the input.
        target_tensor (Variable): the tensor whose shape is taken.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the tiled tensor.
    """
    check_var("expand_as", "x", x)
    check_var("expand_as", "target_tensor", target_tensor)
    return _single(
        LayerHelper("expand_as", name=name), "expand_as", {"X": x, "target_tensor": target_tensor}
    )


def stack(x, axis=0, name=None):
    """The tensors of `x` joined along a new dim `axis`.

    Args:
        x (list): tensors of one shape.
        axis (int): where the new dim goes.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the stacked tensor.
    """
    xs = [x] if isinstance(x, Variable) else x
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError("stack: 'x' must be a Variable or a non-empty list of them, got %r" % (x,))
    for v in xs:
        check_var("stack", "x", v)
    helper = LayerHelper("stack", name=name)
    out = helper.create_variable_for_type_inference(xs[0].dtype)
    helper.append_op("stack", inputs={"X": list(xs)}, outputs={"Y": out}, attrs={"axis": axis})
    return out


def unstack(x, axis=0, num=None):
    """`x` split along `axis` into tensors without that dim.

    Args:
        x (Variable): the input.
        axis (int): the dim split.
        num (int): how many parts; None: x's size along axis.

    Returns:
        list: the parts.
    """
    check_var("unstack", "x", x)
    if num is None:
        num = x.shape[axis]
        if num < 0:
            raise ValueError("unstack: num is needed when x's dim %d is unknown" % axis)
    helper = LayerHelper("unstack")
    outs = [helper.create_variable_for_type_inference(x.dtype) for _ in [0] * num]
    helper.append_op(
        "unstack", inputs={"X": x}, outputs={"Y": outs}, attrs={"axis": axis, "num": num}
    )
    return outs


def unbind(input, axis=0):
    """`input` split along `axis` into one tensor per index, without that dim (Fluid 1.8's
    unbind, Paddle 2.x's paddle.unbind: the unbind op).

    Args:
        input (Variable): the input; its dim at `axis` must be known.
        axis (int): the dim split (negative: from the end).

    Returns:
        list: the parts.
    """
    check_var("unbind", "input", input)
    if not is_int(axis):
        raise TypeError("unbind: 'axis' must be an int, got %r" % (axis,))
    axis = int(axis)
    rank = len(input.shape)
    if not -rank <= axis < rank:
        raise ValueError("unbind: axis %d is out of range for rank %d" % (axis, rank))
    num = input.shape[axis]
    if num < 0:
        raise ValueError("unbind: input's dim %d is unknown; unbind needs it" % axis)
    if num == 0:  # no parts (as numpy's list(a) and torch.unbind); the op needs >= 1 output
        return []
    helper = LayerHelper("unbind")
    outs = [helper.create_variable_for_type_inference(input.dtype) for _ in [0] * num]
    helper.append_op("unbind", inputs={"X": input}, outputs={"Out": outs}, attrs={"axis": axis})
    return outs


def _arg(op_type, x, axis):
    check_var(op_type, "x", x)
    if not is_int(axis):
        raise TypeError("%s: 'axis' must be an int, got %r" % (op_type, axis))
    axis = int(axis)
    helper = LayerHelper(op_type)
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(op_type, inputs={"X": x}, outputs={"Out": out}, attrs={"axis": axis})
    return out


def argmax(x, axis=0):
    """The index of the largest element along `axis`.

    Args:
        x (Variable): the input.
        axis (int): the dim searched.

    Returns:
        Variable: int64 indices, without that dim.
    """
    return _arg("arg_max", x, axis)


def argmin(x, axis=0):
    """The index of the smallest element along `axis`.

    Args:
        x (Variable): the input.
        axis (int): the dim searched.

    Returns:
        Variable: int64 indices, without that dim.
    """
    return _arg("arg_min", x, axis)


def argsort(input, axis=-1, descending=False, name=None):
    """(sorted input, int64 indices) along axis."""
    check_var("argsort", "input", input)
    helper = LayerHelper("argsort", name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    ids = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "argsort",
        inputs={"X": input},
        outputs={"Out": out, "Indices": ids},
        attrs={"axis": axis, "descending": descending},
    )
    return out, ids


def one_hot(input, depth, allow_out_of_range=False):
    """One-hot vectors of the class ids in `input`.

    Args:
        input (Variable): int class ids [N, 1].
        depth (int): the number of classes.
        allow_out_of_range (bool): an id outside [0, depth) gives zeros instead of an error.

    Returns:
        Variable: float32 [N, depth].
    """
    check_var("one_hot", "input", input)
    if not is_int(depth):
        raise TypeError("one_hot: 'depth' must be an int, got %r" % (depth,))
    depth = int(depth)
    helper = LayerHelper("one_hot")
    out = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    helper.append_op(
        "one_hot",
        inputs={"X": input},
        outputs={"Out": out},
        attrs={
            "depth": depth,
            "allow_out_of_range": allow_out_of_range,
            "dtype": dtype_code("float32"),
        },
    )
    return out


def range(start, end, step, dtype):  # noqa: A001 (Fluid's name)
    """[start, end) by step; each a number or a one-element Variable."""
    dtype = convert_dtype(dtype)

    def as_var(v):
        return v if isinstance(v, Variable) else fill_constant([1], dtype, v)

    helper = LayerHelper("range")
    out = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    helper.append_op(
        "range",
        inputs={"Start": as_var(start), "End": as_var(end), "Step": as_var(step)},
        outputs={"Out": out},
    )
    return out


def shape(input):
    """The shape of `input` as an int32 tensor.

    Args:
        input (Variable): the tensor.

    Returns:
        Variable: 1-D, one element per dim.
    """
    check_var("shape", "input", input)
    helper = LayerHelper("shape")
    out = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op("shape", inputs={"Input": input}, outputs={"Out": out})
    return out


def where(condition):
    """The int64 coordinates [count, rank] of condition's true elements (op where_index)."""
    check_var("where", "condition", condition)
    helper = LayerHelper("where_index")
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("where_index", inputs={"Condition": condition}, outputs={"Out": out})
    return out


def cumsum(x, axis=None, exclusive=None, reverse=None):
    """Cumulative sum along `axis`.

    Args:
        x (Variable): the input.
        axis (int): the dim summed along; None: the last.
        exclusive (bool): leave each element out of its own sum.
        reverse (bool): sum from the end.

    Returns:
        Variable: x's shape.
    """
    check_var("cumsum", "x", x)
    return _single(
        LayerHelper("cumsum"),
        "cumsum",
        {"X": x},
        {
            "axis": -1 if axis is None else axis,
            "flatten": False,
            "exclusive": bool(exclusive),
            "reverse": bool(reverse),
        },
    )


def pad(x, paddings, pad_value=0.0, name=None):
    """`x` padded with `pad_value`.

    Args:
        x (Variable): the input.
        paddings (list): before and after sizes for each dim, [b0, a0, b1, a1, ...].
        pad_value (float): the value of the padding.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: the padded tensor.
    """
    check_var("pad", "x", x)
    return _single(
        LayerHelper("pad", name=name),
        "pad",
        {"X": x},
        {"paddings": _int_list("pad", "paddings", paddings), "pad_value": float(pad_value)},
    )


def label_smooth(label, prior_dist=None, epsilon=0.1, dtype="float32", name=None):
    """Smoothed labels: (1 - epsilon) * label + epsilon * prior (uniform by default).

    Args:
        label (Variable): one-hot labels.
        prior_dist (Variable): the prior distribution, or None for uniform.
        epsilon (float): the weight of the prior.
        dtype (str): the element type.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: label's shape.
    """
    check_var("label_smooth", "label", label)
    if not 0 <= epsilon <= 1:
        raise ValueError("label_smooth: epsilon must be in [0, 1], got %r" % (epsilon,))
    inputs = {"X": label}
    if prior_dist is not None:
        inputs["PriorDist"] = prior_dist
    return _single(
        LayerHelper("label_smooth", name=name), "label_smooth", inputs, {"epsilon": float(epsilon)}
    )


def l2_normalize(x, axis, epsilon=1e-12, name=None):
    """`x` divided by its L2 norm along `axis`.

    Args:
        x (Variable): the input.
        axis (int): the dim normalised.
        epsilon (float): the norm's lower bound.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: x's shape.
    """
    check_var("l2_normalize", "x", x)
    helper = LayerHelper("l2_normalize", name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    norm = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    helper.append_op(
        "norm",
        inputs={"X": x},
        outputs={"Out": out, "Norm": norm},
        attrs={"axis": 1 if axis is None else axis, "epsilon": float(epsilon)},
    )
    return out


def cos_sim(X, Y):
    """The cosine similarity of each row of X with the matching row of Y (or Y's one row).

    Args:
        X (Variable): [N, D].
        Y (Variable): [N, D] or [1, D].

    Returns:
        Variable: [N, 1].
    """
    check_var("cos_sim", "X", X)
    check_var("cos_sim", "Y", Y)
    helper = LayerHelper("cos_sim")
    out = helper.create_variable_for_type_inference(X.dtype)
    xn = helper.create_variable_for_type_inference(X.dtype)
    yn = helper.create_variable_for_type_inference(X.dtype)
    helper.append_op(
        "cos_sim", inputs={"X": X, "Y": Y}, outputs={"Out": out, "XNorm": xn, "YNorm": yn}
    )
    return out


def maxout(x, groups, name=None):
    """The maximum over each group of `groups` consecutive channels.

    Args:
        x (Variable): [N, C, H, W], C a multiple of groups.
        groups (int): the channels per group.
        name (str): the output's name prefix, or None.

    Returns:
        Variable: [N, C / groups, H, W].
    """
    check_var("maxout", "x", x)
    return _single(LayerHelper("maxout", name=name), "maxout", {"X": x}, {"groups": int(groups)})


def _norm_layer(
    op_type, input, affine_shape, scale, shift, param_attr, bias_attr, act, name, attrs, stats
):
    helper = LayerHelper(op_type, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    inputs = {"X": input}
    if scale:
        inputs["Scale"] = helper.create_parameter(
            param_attr, affine_shape, input.dtype, default_initializer=Constant(1.0)
        )
    if shift:
        inputs["Bias"] = helper.create_parameter(bias_attr, affine_shape, input.dtype, is_bias=True)
    y = helper.create_variable_for_type_inference(input.dtype)
    outs = {"Y": y}
    for s in stats:
        outs[s] = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    helper.append_op(op_type, inputs=inputs, outputs=outs, attrs=attrs)
    return helper.append_activation(y)


def layer_norm(
    input,
    scale=True,
    shift=True,
    begin_norm_axis=1,
    epsilon=1e-05,
    param_attr=None,
    bias_attr=None,
    act=None,
    name=None,
):
    """Layer normalisation over the dims from begin_norm_axis on, with learned scale and shift.

    Args:
        input (Variable): the input.
        scale (bool): learn a scale.
        shift (bool): learn a shift.
        begin_norm_axis (int): the first dim normalised.
        epsilon (float): added to the variance.
        param_attr (ParamAttr): the scale's attributes.
        bias_attr (ParamAttr): the shift's attributes.
        act (str): an activation to apply, or None.
        name (str): the name prefix, or None.

    Returns:
        Variable: input's shape.
    """
    check_var("layer_norm", "input", input)
    affine = 1
    for d in input.shape[begin_norm_axis:]:
        affine *= int(d)
    return _norm_layer(
        "layer_norm",
        input,
        [affine],
        scale,
        shift,
        param_attr,
        bias_attr,
        act,
        name,
        {"begin_norm_axis": begin_norm_axis, "epsilon": float(epsilon)},
        ["Mean", "Variance"],
    )


def group_norm(
    input,
    groups,
    epsilon=1e-05,
    param_attr=None,
    bias_attr=None,
    act=None,
    data_layout="NCHW",
    name=None,
):
    """Group normalisation: channels in `groups` groups, each normalised, with learned scale and shift.

    Args:
        input (Variable): [N, C, H, W].
        groups (int): the number of channel groups.
        epsilon (float): added to the variance.
        param_attr (ParamAttr): the scale's attributes.
        bias_attr (ParamAttr): the shift's attributes.
        act (str): an activation to apply, or None.
        data_layout (str): "NCHW".
        name (str): the name prefix, or None.

    Returns:
        Variable: input's shape.
    """
    check_var("group_norm", "input", input)
    if data_layout != "NCHW":
        raise ValueError(
            "group_norm: only data_layout 'NCHW' is supported, got %r" % (data_layout,)
        )
    return _norm_layer(
        "group_norm",
        input,
        [input.shape[1]],
        param_attr is not False,
        bias_attr is not False,
        param_attr,
        bias_attr,
        act,
        name,
        {"groups": int(groups), "epsilon": float(epsilon)},
        ["Mean", "Variance"],
    )


def instance_norm(input, epsilon=1e-05, param_attr=None, bias_attr=None, name=None):
    """Instance normalisation: each channel of each sample normalised, with learned scale and shift.

    Args:
        input (Variable): [N, C, H, W].
        epsilon (float): added to the variance.
        param_attr (ParamAttr): the scale's attributes.
        bias_attr (ParamAttr): the shift's attributes.
        name (str): the name prefix, or None.

    Returns:
        Variable: input's shape.
    """
    check_var("instance_norm", "input", input)
    return _norm_layer(
        "instance_norm",
        input,
        [input.shape[1]],
        param_attr is not False,
        bias_attr is not False,
        param_attr,
        bias_attr,
        None,
        name,
        {"epsilon": float(epsilon)},
        ["SavedMean", "SavedVariance"],
    )


def pad2d(
    input,
    paddings=None,
    mode="constant",
    pad_value=0.0,
    data_format="NCHW",  # noqa: B006
    name=None,
):
    """Pads H and W by paddings [top, bottom, left, right] (a list, or an int32 Variable)."""
    if paddings is None:
        paddings = [0, 0, 0, 0]
    check_var("pad2d", "input", input)
    inputs = {"X": input}
    attrs = {"mode": mode, "pad_value": float(pad_value), "data_format": data_format}
    if isinstance(paddings, Variable):
        inputs["Paddings"] = paddings
    else:
        attrs["paddings"] = _int_list("pad2d", "paddings", paddings)
    return _single(LayerHelper("pad2d", name=name), "pad2d", inputs, attrs)


def crop(x, shape=None, offsets=None, name=None):
    """x[offsets : offsets + shape]; shape a list or a Variable whose dims are used; offsets a
    list or an int32 Variable."""
    check_var("crop", "x", x)
    inputs, attrs = {"X": x}, {}
    if isinstance(shape, Variable):
        inputs["Y"] = shape
    elif shape is not None:
        attrs["shape"] = _int_list("crop", "shape", shape)
    else:
        raise TypeError("crop: 'shape' is required (a list of ints or a Variable)")
    if isinstance(offsets, Variable):
        inputs["Offsets"] = offsets
    elif offsets is not None:
        attrs["offsets"] = _int_list("crop", "offsets", offsets)
    return _single(LayerHelper("crop", name=name), "crop", inputs, attrs)


def _resize(
    layer,
    op_type,
    input,
    out_shape,
    scale,
    name,
    actual_shape,
    align_corners,
    align_mode,
    data_format,
):
    """The resize layers' common part: `layer` (the name errors give) appends op_type."""
    check_variable_and_dtype(input, "input", FLOATS, layer)
    if len(input.shape) != 4:
        raise ValueError("%s: input must be 4-D, got shape %s" % (layer, list(input.shape)))
    _check_data_format(layer, data_format)
    check_type(align_corners, "align_corners", bool, layer)
    if align_mode not in (0, 1):
        raise ValueError("%s: align_mode must be 0 or 1, got %r" % (layer, align_mode))
    check_type(scale, "scale", (int, float, Variable, type(None)), layer)
    if is_int(scale) or isinstance(scale, float):
        if scale <= 0:
            raise ValueError("%s: scale must be > 0, got %r" % (layer, scale))
    inputs = {"X": input}
    attrs = {
        "align_corners": align_corners,
        "align_mode": align_mode,
        "scale": 0.0,
        "interp_method": op_type.split("_")[0],
        "data_layout": data_format,
    }
    if actual_shape is not None:
        out_shape = actual_shape
    if isinstance(out_shape, Variable):  # Fluid 1.6+: the op's OutSize, read when it runs
        inputs["OutSize"] = int_tensor(layer, "out_shape", out_shape)
    elif out_shape is not None:
        _resize_out_shape(layer, out_shape, inputs, attrs)
    elif isinstance(scale, Variable):  # the op's Scale
        check_variable_and_dtype(scale, "scale", ("float32", "float64"), layer)
        scale.stop_gradient = True
        inputs["Scale"] = scale
    elif scale is not None:
        attrs["scale"] = float(scale)
    else:
        raise ValueError("%s: one of out_shape and scale is needed" % layer)
    return _single(LayerHelper(op_type, name=name), op_type, inputs, attrs)


def _resize_out_shape(layer, out_shape, inputs, attrs):
    """out_shape as a list of (out_h, out_w), each an int or a one-element int Variable (Fluid
    1.6+: then every item becomes the op's SizeTensor, and out_h / out_w hold -1 for each
    Variable)."""
    hw = int_items(layer, "out_shape", out_shape)
    if len(hw) != 2:
        raise ValueError("%s: out_shape needs (out_h, out_w), got %r" % (layer, out_shape))
    if any(is_int(v) and v <= 0 for v in hw):
        raise ValueError("%s: each int of out_shape must be > 0, got %r" % (layer, out_shape))
    attrs["out_h"], attrs["out_w"] = [-1 if isinstance(v, Variable) else int(v) for v in hw]
    if contains_var(hw):
        inputs["SizeTensor"] = int_tensor_list(layer, "out_shape", hw)


def resize_bilinear(
    input,
    out_shape=None,
    scale=None,
    name=None,
    actual_shape=None,
    align_corners=True,
    align_mode=1,
    data_format="NCHW",
):
    """Bilinear resize of the spatial dims (image_resize with resample="BILINEAR").

    Args:
        input (Variable): [N, C, H, W].
        out_shape (list|Variable): the output's [H, W], or None with scale.
        scale (float): the factor, used without out_shape.
        name (str): the output's name prefix, or None.
        actual_shape (Variable): an output shape computed at run time, or None.
        align_corners (bool): align the corner pixels.
        align_mode (int): 0 or 1, Fluid's interpolation of the sample points.
        data_format (str): "NCHW" or "NHWC".

    Returns:
        Variable: the resized tensor.
    """
    return _resize(
        "resize_bilinear",
        "bilinear_interp",
        input,
        out_shape,
        scale,
        name,
        actual_shape,
        align_corners,
        align_mode,
        data_format,
    )


def resize_nearest(
    input,
    out_shape=None,
    scale=None,
    name=None,
    actual_shape=None,
    align_corners=True,
    data_format="NCHW",
):
    """Nearest-neighbour resize of the spatial dims (image_resize with resample="NEAREST").

    Args:
        input (Variable): [N, C, H, W].
        out_shape (list|Variable): the output's [H, W], or None with scale.
        scale (float): the factor, used without out_shape.
        name (str): the output's name prefix, or None.
        actual_shape (Variable): an output shape computed at run time, or None.
        align_corners (bool): align the corner pixels.
        data_format (str): "NCHW" or "NHWC".

    Returns:
        Variable: the resized tensor.
    """
    return _resize(
        "resize_nearest",
        "nearest_interp",
        input,
        out_shape,
        scale,
        name,
        actual_shape,
        align_corners,
        1,
        data_format,
    )


def image_resize(
    input,
    out_shape=None,
    scale=None,
    name=None,
    resample="BILINEAR",
    actual_shape=None,
    align_corners=True,
    align_mode=1,
    data_format="NCHW",
):
    """Resizes the spatial dims of `input` (Fluid's image_resize).

    Args:
        input (Variable): [N, C, H, W].
        out_shape (list|Variable): the output's [H, W], or None with scale.
        scale (float): the factor, used without out_shape.
        name (str): the output's name prefix, or None.
        resample (str): "BILINEAR" or "NEAREST".
        actual_shape (Variable): an output shape computed at run time, or None.
        align_corners (bool): align the corner pixels.
        align_mode (int): 0 or 1, for bilinear.
        data_format (str): "NCHW" or "NHWC".

    Returns:
        Variable: the resized tensor.
    """
    check_type(resample, "resample", str, "image_resize")
    if resample.upper() not in ("BILINEAR", "NEAREST"):
        raise ValueError(
            "image_resize: resample must be 'BILINEAR' or 'NEAREST', got %r" % (resample,)
        )
    op = "bilinear_interp" if resample.upper() == "BILINEAR" else "nearest_interp"
    return _resize(
        "image_resize",
        op,
        input,
        out_shape,
        scale,
        name,
        actual_shape,
        align_corners,
        align_mode,
        data_format,
    )


__all__ += [
    "exp",
    "log",
    "abs",
    "ceil",
    "floor",
    "round",
    "cos",
    "sin",
    "acos",
    "asin",
    "atan",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "logsigmoid",
    "softplus",
    "softsign",
    "tanh_shrink",
    "elu",
    "leaky_relu",
    "relu6",
    "complex",
    "real",
    "imag",
    "as_complex",
    "as_real",
    "conj",
    "angle",
    "pow",
    "stanh",
    "hard_sigmoid",
    "swish",
    "brelu",
    "soft_relu",
    "hard_swish",
    "hard_shrink",
    "thresholded_relu",
    "gelu",
    "softshrink",
    "prelu",
    "elementwise_pow",
    "elementwise_mod",
    "elementwise_floordiv",
    "elementwise_max",
    "elementwise_min",
    "zeros",
    "ones",
    "reduce_sum",
    "reduce_mean",
    "reduce_max",
    "reduce_min",
    "reduce_prod",
    "reduce_all",
    "reduce_any",
    "gather",
    "gather_nd",
    "scatter",
    "slice",
    "strided_slice",
    "squeeze",
    "unsqueeze",
    "expand",
    "expand_as",
    "stack",
    "unstack",
    "unbind",
    "argmax",
    "argmin",
    "argsort",
    "one_hot",
    "range",
    "shape",
    "where",
    "cumsum",
    "pad",
    "label_smooth",
    "l2_normalize",
    "cos_sim",
    "maxout",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "pad2d",
    "crop",
    "resize_bilinear",
    "resize_nearest",
    "image_resize",
]
