"""Layers made from an op's registered proto, so an op a plugin adds at run time is usable as
tide.layers.<op>(...) at once (a vendor op "acme.axpb" is tide.layers.acme_axpb)."""

from .. import _C
from ..framework import Variable, _names
from ..layer_helper import LayerHelper
from ..layer_names import AmbiguousLayerError, op_type_for, op_types_for  # noqa: F401


def make_layer(op_type):
    proto = _C.op_proto(op_type)
    inputs = proto["inputs"]
    outputs = [o for o in proto["outputs"] if not o["intermediate"]]
    attr_names = {a["name"] for a in proto["attrs"]}

    def layer(*args, **kwargs):
        name = kwargs.pop("name", None)
        helper = LayerHelper(op_type.replace(".", "_"), name=name)
        if len(args) > len(inputs):
            # zip() would drop the extras and build the op without them
            raise TypeError(
                "%s() takes %d positional argument(s), its inputs %s, but %d were given"
                % (op_type, len(inputs), [i["name"] for i in inputs], len(args))
            )
        given = {}
        for spec, value in zip(inputs, args):
            attr = spec["name"].lower()
            if not isinstance(value, (Variable, list, tuple)) and attr in attr_names:
                # A number for an input an attribute of its name also holds: clip(x, -1.0, 1.0)
                # (Fluid's min / max attributes; the Min / Max inputs are Paddle 2.x's tensors).
                if attr in kwargs:
                    raise TypeError("%s(): got multiple values for '%s'" % (op_type, attr))
                kwargs[attr] = value
                continue
            given[spec["name"]] = value
        for key, value in list(kwargs.items()):
            if key in attr_names and not isinstance(value, (Variable, list, tuple)):
                continue  # an attribute (clip's min vs its Min input): inputs are Variables
            for spec in inputs:
                if key in (spec["name"], spec["name"].lower()):
                    if spec["name"] in given:
                        raise TypeError(
                            "%s(): got multiple values for input '%s'" % (op_type, spec["name"])
                        )
                    given[spec["name"]] = kwargs.pop(key)
                    break
        unknown = set(kwargs) - attr_names
        if unknown:
            raise TypeError(
                "%s(): unknown argument(s) %s; inputs are %s, attributes are %s"
                % (op_type, sorted(unknown), [i["name"] for i in inputs], sorted(attr_names))
            )
        for spec in inputs:
            if spec["name"] not in given and not spec["dispensable"]:
                raise TypeError("%s(): missing input '%s'" % (op_type, spec["name"]))
        first = next((v for v in given.values() if isinstance(v, Variable)), None)
        if first is None:
            first = next((v[0] for v in given.values() if isinstance(v, (list, tuple)) and v), None)
        dtype = first.dtype if isinstance(first, Variable) else "float32"
        outs = {}
        for spec in proto["outputs"]:
            outs[spec["name"]] = helper.create_variable_for_type_inference(dtype)
        helper.append_op(
            op_type, inputs={k: _names(v) for k, v in given.items()}, outputs=outs, attrs=kwargs
        )
        result = [outs[o["name"]] for o in outputs]
        return result[0] if len(result) == 1 else tuple(result)

    layer.__name__ = op_type.replace(".", "_")
    # Outputs in the order the layer returns them (a tuple when more than one).
    layer.__doc__ = "%s\n\nInputs: %s\nOutputs: %s\nAttributes: %s" % (
        proto["comment"],
        ", ".join(i["name"] for i in inputs) or "none",
        ", ".join(o["name"] for o in outputs) or "none",
        ", ".join("%s=%r" % (a["name"], a.get("default")) for a in proto["attrs"]) or "none",
    )
    return layer
