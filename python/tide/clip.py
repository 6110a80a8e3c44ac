"""Gradient clipping by value, by norm and by global norm (applied before regularisation).

A complex gradient's norm is that of its real view (sqrt of the sum of re^2 + im^2, PyTorch's
abs(g)): clipping by norm and by global norm take it; clipping by value refuses it (a bound on each
part or on abs(g) would both be guesses; PyTorch's clamp refuses complex too)."""

from . import unique_name
from .core import dtype_code, is_complex_dtype, real_dtype
from .framework import default_main_program


class BaseGradientClipAttr:
    """The base of gradient clipping rules (grad_clip= of an optimizer or a ParamAttr): `_process` turns [(param, grad)] into [(param, clipped grad)], appending the clipping ops."""

    def _process(self, params_grads):
        """[(param, grad)] -> [(param, clipped grad)], appending the clipping ops."""
        raise NotImplementedError


class GradientClipByValue(BaseGradientClipAttr):
    """g = clip(g, min, max); min defaults to -max. A sparse (SelectedRows) gradient is clipped
    as Fluid 1.8's clip op clips it: its rows merged first (a row listed twice is one row holding
    the sum), then the merged values clipped; the clipped gradient is a SelectedRows."""

    def __init__(self, max, min=None):
        self.max = float(max)
        self.min = -self.max if min is None else float(min)
        if not self.min <= self.max:
            raise ValueError("GradientClipByValue: min %r > max %r" % (self.min, self.max))

    def _process(self, params_grads):
        out = []
        for p, g in params_grads:
            if is_complex_dtype(g.dtype):
                raise TypeError(
                    "GradientClipByValue cannot clip the complex gradient of parameter '%s' "
                    "(%s); clip complex gradients by norm or by global norm" % (p.name, g.dtype)
                )
            c = g.block.create_var(
                name=unique_name.generate(g.name + "@CLIP"),
                dtype=g.dtype,
                shape=g.shape,
                type=g.type,
            )
            g.block.append_op(
                "clip",
                inputs={"X": g},
                outputs={"Out": c},
                attrs={"min": self.min, "max": self.max},
            )
            out.append((p, c))
        return out


class GradientClipByNorm(BaseGradientClipAttr):
    """g = g * clip_norm / max(norm(g), clip_norm), per gradient; a complex g is clipped as its
    real view (norm(g)^2 the sum of re^2 + im^2)."""

    def __init__(self, clip_norm):
        self.clip_norm = float(clip_norm)

    def _process(self, params_grads):
        out = []
        for p, g in params_grads:
            block = g.block
            x = _real_view(block, g) if is_complex_dtype(g.dtype) else g
            c = block.create_var(
                name=unique_name.generate(g.name + "@CLIP"), dtype=x.dtype, shape=x.shape
            )
            block.append_op(
                "clip_by_norm",
                inputs={"X": x},
                outputs={"Out": c},
                attrs={"max_norm": self.clip_norm},
            )
            if x is not g:
                c = _complex_of(block, c, g)
            out.append((p, c))
        return out


class GradientClipByGlobalNorm(BaseGradientClipAttr):
    """All gradients scaled by clip_norm / max(global_norm, clip_norm), where global_norm is the
    L2 norm of all of them together (a complex gradient's squares those of its real and imaginary
    parts, abs(g)^2). A sparse (SelectedRows) gradient counts as Fluid 1.8's
    clip.py counts it: its rows merged first (merge_selected_rows: a row listed twice is one row
    holding the sum), its values taken as a tensor (get_tensor_from_selected_rows); it is scaled
    as listed, rows unmerged (Fluid multiplies it by elementwise_mul, Tide by scale with
    ScaleTensor: the same values)."""

    def __init__(self, clip_norm, group_name="default_group"):
        self.clip_norm = float(clip_norm)
        self.group_name = group_name

    def _process(self, params_grads):
        if not params_grads:
            return params_grads
        block = params_grads[0][1].block
        dtype = real_dtype(params_grads[0][1].dtype)  # the norm's: float32 for complex64
        sq = []
        for _, g in params_grads:
            s = block.create_var(
                name=unique_name.generate("global_norm_sq"), dtype=dtype, shape=[1]
            )
            values = _dense_values(block, g)
            if is_complex_dtype(values.dtype):
                values = _real_view(block, values)
            block.append_op("squared_l2_norm", inputs={"X": values}, outputs={"Out": s})
            sq.append(s)
        total = block.create_var(
            name=unique_name.generate("global_norm_sum"), dtype=dtype, shape=[1]
        )
        block.append_op("sum", inputs={"X": sq}, outputs={"Out": total})
        norm = block.create_var(name=unique_name.generate("global_norm"), dtype=dtype, shape=[1])
        block.append_op("sqrt", inputs={"X": total}, outputs={"Out": norm})
        limit = block.create_var(name=unique_name.generate("clip_norm"), dtype=dtype, shape=[1])
        block.append_op(
            "fill_constant",
            outputs={"Out": limit},
            attrs={"shape": [1], "dtype": dtype_code(dtype), "value": self.clip_norm},
        )
        denom = block.create_var(
            name=unique_name.generate("global_norm_max"), dtype=dtype, shape=[1]
        )
        block.append_op("elementwise_max", inputs={"X": norm, "Y": limit}, outputs={"Out": denom})
        factor = block.create_var(
            name=unique_name.generate("global_norm_scale"), dtype=dtype, shape=[1]
        )
        block.append_op("elementwise_div", inputs={"X": limit, "Y": denom}, outputs={"Out": factor})
        out = []
        for p, g in params_grads:
            c = block.create_var(
                name=unique_name.generate(g.name + "@CLIP"),
                dtype=g.dtype,
                shape=g.shape,
                type=g.type,
            )
            # Out keeps a SelectedRows g's rows and height; scale multiplies a complex g by the
            # real factor (elementwise_mul takes operands of one type).
            if g.type == "SELECTED_ROWS" or is_complex_dtype(g.dtype):
                block.append_op("scale", inputs={"X": g, "ScaleTensor": factor}, outputs={"Out": c})
            else:
                block.append_op("elementwise_mul", inputs={"X": g, "Y": factor}, outputs={"Out": c})
            out.append((p, c))
        return out


def _real_view(block, g):
    """A complex g's real view (as_real: its dims and 2, the real and imaginary parts)."""
    shape = list(g.shape) + [2] if g.shape is not None else None
    view = block.create_var(
        name=unique_name.generate(g.name + "@REAL_VIEW"), dtype=real_dtype(g.dtype), shape=shape
    )
    block.append_op("as_real", inputs={"X": g}, outputs={"Out": view})
    return view


def _complex_of(block, view, like):
    """The complex tensor of a real view (as_complex), shaped and typed as `like`."""
    z = block.create_var(name=unique_name.generate(view.name), dtype=like.dtype, shape=like.shape)
    block.append_op("as_complex", inputs={"X": view}, outputs={"Out": z})
    return z


def _dense_values(block, g):
    """g itself, or for a SelectedRows g its merged rows' values as a tensor (Fluid's clip.py)."""
    if g.type != "SELECTED_ROWS":
        return g
    merged = block.create_var(
        name=unique_name.generate(g.name + "@MERGED"),
        dtype=g.dtype,
        shape=g.shape,
        type="SELECTED_ROWS",
    )
    block.append_op("merge_selected_rows", inputs={"X": g}, outputs={"Out": merged})
    values = block.create_var(name=unique_name.generate(g.name + "@MERGED_VALUES"), dtype=g.dtype)
    block.append_op("get_tensor_from_selected_rows", inputs={"X": merged}, outputs={"Out": values})
    return values


def append_gradient_clip_ops(params_grads, clip=None):
    """Each parameter's own gradient_clip_attr wins over `clip`; parameters are grouped by clip."""
    groups = {}
    order = []
    for p, g in params_grads:
        c = getattr(p, "gradient_clip_attr", None) or clip
        key = id(c)
        if key not in groups:
            groups[key] = (c, [])
            order.append(key)
        groups[key][1].append((p, g))
    clipped = {}
    for key in order:
        c, pairs = groups[key]
        result = pairs if c is None else c._process(pairs)
        for (p, _), (_, g) in zip(pairs, result):
            clipped[p.name] = g
    return [(p, clipped[p.name]) for p, _ in params_grads]


def set_gradient_clip(clip, param_list=None, program=None):
    """Sets `clip` on the given parameters (default: every parameter of the program)."""
    program = program or default_main_program()
    params = param_list or program.global_block().all_parameters()
    for p in params:
        p = program.global_block().var(p) if isinstance(p, str) else p
        p.gradient_clip_attr = clip
