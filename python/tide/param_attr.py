"""ParamAttr: how a layer's parameter is named, initialised, regularised and trained."""

from .initializer import Initializer


class ParamAttr:
    """How a layer makes a parameter (Fluid's ParamAttr).

    Args:
        name (str): the parameter's name, or None for a unique one.
        initializer (Initializer): its initializer, or None for the layer's default.
        learning_rate (float): a factor on the optimizer's learning rate for it.
        regularizer (WeightDecayRegularizer): its regularizer, or None.
        trainable (bool): whether the optimizer updates it.
        gradient_clip (BaseGradientClipAttr): its gradient clipping, or None.
        do_model_average (bool): Fluid's argument, kept for ModelAverage.
    """

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
