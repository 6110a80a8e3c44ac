"""LayerHelper: what layers share: inputs, parameters (in main and startup programs),
temporaries, appending ops, bias and activation."""

from . import unique_name
from .framework import Variable, default_main_program, default_startup_program
from .initializer import Constant, Xavier
from .param_attr import ParamAttr


class LayerHelper:
    def __init__(self, layer_type, **kwargs):
        self.layer_type = layer_type
        self.kwargs = kwargs
        name = kwargs.get("name")
        self.name = name if name else unique_name.generate(layer_type)

    @property
    def main_program(self):
        return default_main_program()

    @property
    def startup_program(self):
        return default_startup_program()

    def multiple_input(self, name="input"):
        inputs = self.kwargs.get(name)
        if isinstance(inputs, Variable):
            return [inputs]
        if not isinstance(inputs, (list, tuple)) or not inputs:
            raise TypeError(
                "layer %s: '%s' must be a Variable or a non-empty list of them"
                % (self.layer_type, name)
            )
        for v in inputs:
            if not isinstance(v, Variable):
                raise TypeError(
                    "layer %s: '%s' holds %r, not a Variable" % (self.layer_type, name, v)
                )
        return list(inputs)

    def input(self, name="input"):
        inputs = self.multiple_input(name)
        if len(inputs) != 1:
            raise TypeError("layer %s takes one '%s'" % (self.layer_type, name))
        return inputs[0]

    def input_dtype(self, name="input"):
        dtypes = {v.dtype for v in self.multiple_input(name)}
        if len(dtypes) != 1:
            raise TypeError(
                "layer %s: inputs have different data types %s" % (self.layer_type, sorted(dtypes))
            )
        return dtypes.pop()

    def create_parameter(self, attr, shape, dtype, is_bias=False, default_initializer=None):
        attr = ParamAttr.to_attr(attr)
        if attr is False:
            return None
        suffix = "b" if is_bias else "w"
        name = attr.name or unique_name.generate(self.name + "." + suffix)
        init = attr.initializer or default_initializer or (Constant(0.0) if is_bias else Xavier())
        block = self.main_program.global_block()
        if name in block.vars:  # shared by name (Fluid's weight sharing): same shape and dtype only
            existing = block.vars[name]
            if list(existing.shape) != [int(d) for d in shape] or existing.dtype != dtype:
                raise ValueError(
                    "layer %s: parameter '%s' exists with shape %s %s; cannot share it as %s %s"
                    % (
                        self.layer_type,
                        name,
                        list(existing.shape),
                        existing.dtype,
                        [int(d) for d in shape],
                        dtype,
                    )
                )
            return existing
        return block.create_parameter(
            name=name,
            shape=[int(d) for d in shape],
            dtype=dtype,
            trainable=attr.trainable,
            optimize_attr={"learning_rate": attr.learning_rate},
            regularizer=attr.regularizer,
            gradient_clip_attr=attr.gradient_clip,
            do_model_average=attr.do_model_average,
            initializer=init,
        )

    def create_variable_for_type_inference(self, dtype, stop_gradient=False):
        """A temporary whose shape the op's shape inference fills in."""
        return self.main_program.current_block().create_var(
            name=unique_name.generate(self.name + ".tmp"),
            dtype=dtype,
            persistable=False,
            stop_gradient=stop_gradient,
        )

    create_tmp_variable = create_variable_for_type_inference

    def create_global_variable(self, persistable=False, **kwargs):
        return self.main_program.global_block().create_var(persistable=persistable, **kwargs)

    def append_op(self, *args, **kwargs):
        return self.main_program.current_block().append_op(*args, **kwargs)

    def append_bias_op(self, input_var, dim_start=1, dim_end=None):
        bias_attr = self.kwargs.get("bias_attr")
        if bias_attr is False:
            return input_var
        shape = list(input_var.shape[dim_start:dim_end])
        b = self.create_parameter(bias_attr, shape, input_var.dtype, is_bias=True)
        out = self.create_variable_for_type_inference(input_var.dtype)
        self.append_op(
            "elementwise_add",
            inputs={"X": input_var, "Y": b},
            outputs={"Out": out},
            attrs={"axis": dim_start},
        )
        return out

    def append_activation(self, input_var):
        act = self.kwargs.get("act")
        if act is None:
            return input_var
        if isinstance(act, str):
            act = {"type": act}
        act = dict(act)
        act_type = act.pop("type")
        out = self.create_variable_for_type_inference(input_var.dtype)
        self.append_op(act_type, inputs={"X": input_var}, outputs={"Out": out}, attrs=act)
        return out
