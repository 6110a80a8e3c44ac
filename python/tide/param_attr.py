"""ParamAttr: how a layer's parameter is named, initialised, regularised and trained."""

from .initializer import Initializer


class ParamAttr:
    def __init__(
        self,
        name=None,
        initializer=None,
        learning_rate=1.0,
        regularizer=None,
        trainable=True,
        gradient_clip=None,
        do_model_average=False,
    ):
        self.name = name
        self.initializer = initializer
        self.learning_rate = learning_rate
        self.regularizer = regularizer
        self.trainable = trainable
        self.gradient_clip = gradient_clip
        self.do_model_average = do_model_average

    @staticmethod
    def to_attr(arg):
        """None or True -> defaults (Fluid's bias_attr=True); a str -> a name; False stays False
        (no such parameter)."""
        if arg is None or arg is True:
            return ParamAttr()
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if arg is False:
            return False
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        raise TypeError(
            "a parameter attribute must be a ParamAttr, a name, an initializer, None "
            "or False, got %r" % (arg,)
        )
