"""Sequence layers over LoDTensors (the ops_sequence pack), with Fluid 1.x's names and
arguments. Where an op changes the LoD level of its output (which compile-time shape inference
cannot say through the SDK), the layer sets the output's lod_level."""
from ..core import convert_dtype, dtype_code
from ..framework import Variable
from ..layer_helper import LayerHelper
from .nn import fill_constant

__all__ = [
    "sequence_pool", "sequence_first_step", "sequence_last_step", "sequence_softmax",
    "sequence_expand", "sequence_expand_as", "sequence_concat", "sequence_reshape",
    "sequence_slice", "sequence_pad", "sequence_unpad", "sequence_mask", "sequence_reverse",
    "lod_reset",
]

_POOL_TYPES = ("SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST")


def _check_var(layer, name, v):
    if not isinstance(v, Variable):
        raise TypeError("%s: '%s' must be a Variable, got %r" % (layer, name, v))


def _out(helper, dtype, stop_gradient=False):
    return helper.create_variable_for_type_inference(dtype, stop_gradient=stop_gradient)


def _set_lod_level(var, level):
    var.desc.lod_level = max(0, int(level))


def sequence_pool(input, pool_type, is_test=False, pad_value=0.0):
    """One row per sequence of input's last LoD level: SUM, AVERAGE, SQRT (sum / sqrt(len)),
    MAX, LAST or FIRST (case-insensitive); empty sequences give pad_value."""
    _check_var("sequence_pool", "input", input)
    pool_type = str(pool_type).upper()
    if pool_type not in _POOL_TYPES:
        raise ValueError("sequence_pool: pool_type must be one of %s, got %r" % (_POOL_TYPES, pool_type))
    helper = LayerHelper("sequence_pool")
    out = _out(helper, input.dtype)
    max_index = _out(helper, "int32", stop_gradient=True)
    helper.append_op("sequence_pool", inputs={"X": input},
                     outputs={"Out": out, "MaxIndex": max_index},
                     attrs={"pooltype": pool_type, "is_test": bool(is_test),
                            "pad_value": float(pad_value)})
    _set_lod_level(out, input.lod_level - 1)
    return out


def sequence_first_step(input):
    return sequence_pool(input, "first")


def sequence_last_step(input):
    return sequence_pool(input, "last")


def sequence_softmax(input, use_cudnn=False, name=None):
    _check_var("sequence_softmax", "input", input)
    helper = LayerHelper("sequence_softmax", name=name)
    out = _out(helper, input.dtype)
    helper.append_op("sequence_softmax", inputs={"X": input}, outputs={"Out": out},
                     attrs={"use_cudnn": bool(use_cudnn)})
    return out


def sequence_expand(x, y, ref_level=-1, name=None):
    _check_var("sequence_expand", "x", x)
    _check_var("sequence_expand", "y", y)
    helper = LayerHelper("sequence_expand", name=name)
    out = _out(helper, x.dtype)
    helper.append_op("sequence_expand", inputs={"X": x, "Y": y}, outputs={"Out": out},
                     attrs={"ref_level": int(ref_level)})
    return out


def sequence_expand_as(x, y, name=None):
    _check_var("sequence_expand_as", "x", x)
    _check_var("sequence_expand_as", "y", y)
    helper = LayerHelper("sequence_expand_as", name=name)
    out = _out(helper, x.dtype)
    helper.append_op("sequence_expand_as", inputs={"X": x, "Y": y}, outputs={"Out": out})
    _set_lod_level(out, max(1, y.lod_level))
    return out


def sequence_concat(input, name=None):
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError("sequence_concat: input must be a non-empty list of Variables")
    for i, v in enumerate(input):
        _check_var("sequence_concat", "input[%d]" % i, v)
    helper = LayerHelper("sequence_concat", name=name)
    out = _out(helper, input[0].dtype)
    helper.append_op("sequence_concat", inputs={"X": list(input)}, outputs={"Out": out})
    _set_lod_level(out, 1)
    return out


def sequence_reshape(input, new_dim):
    _check_var("sequence_reshape", "input", input)
    helper = LayerHelper("sequence_reshape")
    out = _out(helper, input.dtype)
    helper.append_op("sequence_reshape", inputs={"X": input}, outputs={"Out": out},
                     attrs={"new_dim": int(new_dim)})
    _set_lod_level(out, 1)
    return out


def sequence_slice(input, offset, length, name=None):
    for n, v in (("input", input), ("offset", offset), ("length", length)):
        _check_var("sequence_slice", n, v)
    helper = LayerHelper("sequence_slice", name=name)
    out = _out(helper, input.dtype)
    offset.stop_gradient = True
    length.stop_gradient = True
    helper.append_op("sequence_slice", inputs={"X": input, "Offset": offset, "Length": length},
                     outputs={"Out": out})
    _set_lod_level(out, 1)
    return out


def sequence_pad(x, pad_value, maxlen=None, name=None):
    """(out [num_seqs, maxlen or the longest, ...], length int64 [num_seqs]); pad_value is a
    Variable of 1 element or one step of x (a number is made into one)."""
    _check_var("sequence_pad", "x", x)
    if not isinstance(pad_value, Variable):
        pad_value = fill_constant([1], x.dtype, float(pad_value))
    helper = LayerHelper("sequence_pad", name=name)
    out = _out(helper, x.dtype)
    length = _out(helper, "int64", stop_gradient=True)
    pad_value.stop_gradient = True
    helper.append_op("sequence_pad", inputs={"X": x, "PadValue": pad_value},
                     outputs={"Out": out, "Length": length},
                     attrs={"padded_length": -1 if maxlen is None else int(maxlen)})
    _set_lod_level(out, 0)
    return out, length


def sequence_unpad(x, length, name=None):
    _check_var("sequence_unpad", "x", x)
    _check_var("sequence_unpad", "length", length)
    helper = LayerHelper("sequence_unpad", name=name)
    out = _out(helper, x.dtype)
    length.stop_gradient = True
    helper.append_op("sequence_unpad", inputs={"X": x, "Length": length}, outputs={"Out": out})
    _set_lod_level(out, 1)
    return out


def sequence_mask(x, maxlen=None, dtype="int64", name=None):
    _check_var("sequence_mask", "x", x)
    helper = LayerHelper("sequence_mask", name=name)
    y = _out(helper, convert_dtype(dtype), stop_gradient=True)
    helper.append_op("sequence_mask", inputs={"X": x}, outputs={"Y": y},
                     attrs={"maxlen": -1 if maxlen is None else int(maxlen),
                            "out_dtype": dtype_code(dtype)})
    return y


def sequence_reverse(x, name=None):
    _check_var("sequence_reverse", "x", x)
    helper = LayerHelper("sequence_reverse", name=name)
    y = _out(helper, x.dtype)
    helper.append_op("sequence_reverse", inputs={"X": x}, outputs={"Y": y})
    return y


def lod_reset(x, y=None, target_lod=None):
    """x's data with y's LoD (or y's data as offsets when y has no LoD), or target_lod."""
    _check_var("lod_reset", "x", x)
    helper = LayerHelper("lod_reset")
    out = _out(helper, x.dtype)
    if y is not None:
        _check_var("lod_reset", "y", y)
        helper.append_op("lod_reset", inputs={"X": x, "Y": y}, outputs={"Out": out})
        _set_lod_level(out, y.lod_level if y.lod_level > 0 else 1)
    elif target_lod is not None:
        helper.append_op("lod_reset", inputs={"X": x}, outputs={"Out": out},
                         attrs={"target_lod": [int(v) for v in target_lod]})
        _set_lod_level(out, 1)
    else:
        raise ValueError("lod_reset: y and target_lod are both None; one must give the new LoD")
    return out
