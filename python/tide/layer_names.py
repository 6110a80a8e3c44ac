"""Which registered ops a layer name means: tide.layers.<name> of an op a plugin adds ("acme.axpb"
is tide.layers.acme_axpb), and the ops whose names collide there ("ac_me.x" and "ac.me_x"). Reads
only the registry (_C), so tide.plugins warns of collisions without importing tide.layers."""

from . import _C


class AmbiguousLayerError(RuntimeError):
    """Two registered ops map to one layer name ("ac_me.x" and "ac.me_x" are both
    tide.layers.ac_me_x): the message names both and their plugins; tide.layers.op_layer(op_type)
    reaches each."""


def op_types_for(name):
    """Every registered op a layer name can mean: the name itself, and each '_' read as the
    vendor's dot ("acme_axpb" -> "acme.axpb"; the vendor or the op name may hold '_' too:
    "my_lab_fast_gelu" -> "my_lab.fast_gelu")."""
    candidates = [name] + [name[:i] + "." + name[i + 1 :] for i, c in enumerate(name) if c == "_"]
    return [t for t in candidates if _C.has_op(t)]


def _plugin_of(op_type):
    for r in _C.plugins():
        if r["status"] == "loaded" and op_type in r["ops"]:
            return "plugin '%s', %s" % (r["name"], r["file"])
    return "the core"


def collision_message(name, op_types):
    ops = " and ".join("'%s' (%s)" % (t, _plugin_of(t)) for t in op_types)
    return (
        "tide.layers.%s is ambiguous: ops %s map to it; use tide.layers.op_layer(op_type), "
        "e.g. tide.layers.op_layer(%r)(...)" % (name, ops, op_types[0])
    )


def op_type_for(name):
    """The registered op a layer name refers to, or None; AmbiguousLayerError when several do."""
    found = op_types_for(name)
    if len(found) > 1:
        raise AmbiguousLayerError(collision_message(name, found))
    return found[0] if found else None


def layer_name_collisions(op_types):
    """A message for each of `op_types` whose layer name another registered op maps to too."""
    out = []
    for t in op_types:
        name = t.replace(".", "_")
        found = op_types_for(name)
        if len(found) > 1:
            out.append(collision_message(name, found))
    return out
