"""tide.layers: Fluid-style layers. Any op a loaded plugin registered is also a layer here,
generated from its proto: tide.layers.<op_type>(inputs..., attrs...)."""

from .. import _C
from ..framework import program_guard  # noqa: F401  (Fluid exposes it here too)
from . import generated as _generated
from . import math_op_patch as _math_op_patch
from .control_flow import *  # noqa: F401,F403
from .control_flow import __all__ as _control_flow_all
from .crf import *  # noqa: F401,F403
from .crf import __all__ as _crf_all
from .io import *  # noqa: F401,F403
from .io import __all__ as _io_all
from .learning_rate_scheduler import *  # noqa: F401,F403
from .learning_rate_scheduler import __all__ as _lr_all
from .logic import *  # noqa: F401,F403
from .logic import __all__ as _logic_all
from .nn import *  # noqa: F401,F403
from .nn import __all__ as _nn_all
from .rnn import *  # noqa: F401,F403
from .rnn import __all__ as _rnn_all
from .sequence import *  # noqa: F401,F403
from .sequence import __all__ as _sequence_all

_math_op_patch.monkey_patch_variable()  # a + b, a < b on Variables build these layers' ops

__all__ = (
    list(_nn_all)
    + list(_logic_all)
    + list(_control_flow_all)
    + list(_lr_all)
    + list(_sequence_all)
    + list(_rnn_all)
    + list(_crf_all)
    + list(_io_all)
)


def op_layer(op_type):
    """The layer of registered op `op_type` by its exact name ("acme.axpb"): what
    tide.layers.acme_axpb is, and the way to each of two ops whose layer names collide."""
    if not _C.has_op(op_type):
        raise ValueError("tide.layers.op_layer: no loaded plugin registers op '%s'" % op_type)
    return _generated.make_layer(op_type)


def __getattr__(name):
    op_type = _generated.op_type_for(name)
    if op_type is None:
        raise AttributeError(
            "tide.layers has no layer '%s' and no loaded plugin registers an op of that name" % name
        )
    return _generated.make_layer(op_type)
