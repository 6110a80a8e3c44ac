"""Looking at a program (Fluid's fluid.debugger): as code, or drawn as a graph.

    print(tide.debugger.pprint_program_codes(tide.default_main_program()))
    tide.debugger.draw_program(tide.default_main_program(), "net.dot")   # Graphviz text
    tide.debugger.draw_program(program, "net.svg")   # rendered by Graphviz's `dot`, when installed

pprint_program_codes / pprint_block_codes write each block as Fluid's did: its variables
("Tensor fc_0.w_0 (tensor(type=float32, shape=[13, 1]))"), then its ops as assignments
("fc_0.tmp_0 = mul(X=x, Y=fc_0.w_0) [{x_num_col_dims=1,...}]"), leaving out the backward part
unless show_backward.

In the drawing (draw_program, Fluid's draw_block_graphviz as one call), ops are boxes, variables
ellipses labelled with their shape and data type (parameters and other persistable variables
bold), edges go from inputs to ops to outputs, and each block is a cluster; a control-flow op
points (dashed) at the block it runs.
"""

import os
import shutil
import subprocess

from . import _C
from .core import _DTYPE_NAMES, VAR_TYPE_NAMES, VAR_TYPES

_RENDERED = {".svg": "svg", ".png": "png", ".pdf": "pdf"}


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _declaring_block(program, block, name):
    while block is not None:
        if block.desc.has_var(name):
            return block.idx
        block = program.block(block.parent_idx) if block.parent_idx >= 0 else None
    return None


def _var_label(program, block_idx, name):
    desc = program.block(block_idx).desc.var(name)
    parts = [name]
    if desc.type == VAR_TYPES["LOD_TENSOR"]:
        dtype = _DTYPE_NAMES.get(desc.dtype, "")
        parts.append(("%s %s" % (list(desc.shape), dtype)).strip())
        if desc.lod_level:
            parts.append("lod_level %d" % desc.lod_level)
    else:
        parts.append(VAR_TYPE_NAMES.get(desc.type, "type %d" % desc.type))
    return "\n".join(parts), desc.persistable


def to_dot(program):
    """The program as Graphviz DOT text."""
    lines = ["digraph program {", "  compound=true;", '  node [fontname="Helvetica", fontsize=10];']
    declared = {}  # (block, var) -> node id
    edges = []
    for b in range(program.num_blocks):
        block = program.block(b)
        lines.append("  subgraph cluster_b%d {" % b)
        lines.append(
            "    label=%s; style=rounded; color=gray;"
            % _quote(
                "block %d" % b + ("" if block.parent_idx < 0 else " (parent %d)" % block.parent_idx)
            )
        )
        lines.append("    anchor_b%d [shape=point, style=invis];" % b)
        for i, op in enumerate(block.ops):
            op_id = "op_b%d_%d" % (b, i)
            lines.append(
                '    %s [shape=box, style="rounded,filled", fillcolor="#dbe9f6", label=%s];'
                % (op_id, _quote(op.type))
            )
            for side, names in (("in", op.input_arg_names), ("out", op.output_arg_names)):
                for name in names:
                    if name == "@EMPTY@":
                        continue
                    owner = _declaring_block(program, block, name)
                    if owner is None:
                        owner = b
                    vid = declared.get((owner, name))
                    if vid is None:
                        vid = "var_b%d_%d" % (owner, len(declared))
                        declared[(owner, name)] = vid
                    edges.append((vid, op_id) if side == "in" else (op_id, vid))
            for attr in op.attr_names:
                if op.desc.attr_type(attr) == "block":
                    sub = op.attr(attr)
                    sub = getattr(sub, "idx", sub)
                    edges.append(
                        (
                            op_id,
                            "anchor_b%d" % sub,
                            "style=dashed, lhead=cluster_b%d, label=%s" % (sub, _quote(attr)),
                        )
                    )
        for (owner, name), vid in declared.items():
            if owner == b:
                label, persistable = _var_label(program, b, name)
                lines.append(
                    "    %s [shape=ellipse, label=%s%s];"
                    % (vid, _quote(label), ", style=bold" if persistable else "")
                )
        lines.append("  }")
    # Variables first met in a later block but declared in an earlier one.
    for (owner, name), vid in declared.items():
        if not any(l.strip().startswith(vid + " ") for l in lines):
            label, persistable = _var_label(program, owner, name)
            lines.append(
                "  %s [shape=ellipse, label=%s%s];"
                % (vid, _quote(label), ", style=bold" if persistable else "")
            )
    for e in edges:
        lines.append("  %s -> %s%s;" % (e[0], e[1], " [%s]" % e[2] if len(e) > 2 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw_program(program, path):
    """Writes `program` as Graphviz: DOT text for a .dot (or any other) path, an image for .svg,
    .png or .pdf (needs Graphviz's `dot` on PATH; the error says so). Returns the path."""
    dot = to_dot(program)
    ext = os.path.splitext(path)[1].lower()
    if ext not in _RENDERED:
        with open(path, "w") as f:
            f.write(dot)
        return path
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            "draw_program: rendering %s needs Graphviz's 'dot' program (apt install "
            "graphviz), or give a .dot path for the text" % path
        )
    proc = subprocess.run(
        [exe, "-T" + _RENDERED[ext], "-o", path], input=dot, text=True, capture_output=True
    )
    if proc.returncode != 0:
        raise RuntimeError("draw_program: dot failed on %s: %s" % (path, proc.stderr.strip()))
    return path


def _repr_tensor(desc):
    dtype = _DTYPE_NAMES.get(desc.dtype, "undefined")
    return "tensor(type=%s, shape=%s)" % (dtype, list(desc.shape))


def repr_var(desc):
    """One variable as Fluid's debugger writes it: "<kind> <name> (<level>, tensor(...))"."""
    kind = VAR_TYPE_NAMES.get(desc.type, "type %d" % desc.type)
    if kind == "LOD_TENSOR":
        level = desc.lod_level
        reprs = _repr_tensor(desc)
        return "%s %s (%s)" % (
            "LoDTensor" if level > 0 else "Tensor",
            desc.name,
            "level=%d, %s" % (level, reprs) if level > 0 else reprs,
        )
    if kind == "SELECTED_ROWS":
        return "SelectedRows %s (%s)" % (desc.name, _repr_tensor(desc))
    if kind == "LOD_TENSOR_ARRAY":
        return "TensorArray %s (level=%d, %s)" % (desc.name, desc.lod_level, _repr_tensor(desc))
    return "%s %s" % (kind, desc.name)


def _repr_attr_value(op, name):
    value = op.attr(name)
    kind = op.attr_type(name)
    if kind in ("block", "blocks"):
        blocks = value if isinstance(value, (list, tuple)) else [value]
        idx = [getattr(b, "idx", b) for b in blocks]
        return str(idx[0] if kind == "block" else idx)
    is_dtype = name in ("dtype", "out_dtype", "in_dtype") and isinstance(value, int)
    if is_dtype and value in _DTYPE_NAMES:
        return "type.%s" % _DTYPE_NAMES[value]
    return str(value)


def repr_op(op):
    """One op as Fluid's debugger writes it: "outs = type(Param=arg, ...) [{attr=value,...}]",
    fill_constant as "out = value [shape=[...]]"."""

    def args(names):
        return names[0] if len(names) == 1 else str(list(names))

    inputs = ["%s=%s" % (param, args(names)) for param, names in sorted(op.inputs().items())]
    outputs = [args(names) for _, names in sorted(op.outputs().items())]
    attrs = {name: _repr_attr_value(op, name) for name in sorted(op.attr_names())}
    if op.type == "fill_constant":
        return "%s = %s [shape=%s]" % (",".join(outputs), attrs.get("value"), attrs.get("shape"))
    return "%s = %s(%s) [{%s}]" % (
        ", ".join(outputs),
        op.type,
        ", ".join(inputs),
        ",".join("%s=%s" % kv for kv in attrs.items()),
    )


def _is_backward_op(op):
    if op.type.endswith("_grad"):
        return True
    names = [p for p in op.inputs()] + [p for p in op.outputs()]
    names += op.input_arg_names() + op.output_arg_names()
    return any("@GRAD" in n for n in names)


def _block_desc(block):
    return block.desc if not isinstance(block, _C.BlockDesc) else block


def pprint_block_codes(block_desc, show_backward=False):
    """A block (a Block or its BlockDesc) as code: its variables, then its ops; the gradient
    variables and backward ops only with show_backward."""
    desc = _block_desc(block_desc)
    var_reprs = [repr_var(v) for v in desc.all_vars() if show_backward or "@GRAD" not in v.name]
    op_reprs = [repr_op(op) for op in desc.all_ops() if show_backward or not _is_backward_op(op)]
    return "// block-%d  parent-%d\n// variables\n%s\n\n// operators\n%s\n" % (
        desc.idx,
        desc.parent_idx,
        "\n".join(var_reprs),
        "\n".join(op_reprs),
    )


def pprint_program_codes(program_desc, show_backward=False):
    """Every block of a program (a Program or its ProgramDesc) as code (pprint_block_codes)."""
    desc = program_desc if isinstance(program_desc, _C.ProgramDesc) else program_desc.desc
    return "\n".join(
        pprint_block_codes(desc.block(i), show_backward) for i in range(desc.num_blocks())
    )


__all__ = [
    "draw_program",
    "to_dot",
    "pprint_program_codes",
    "pprint_block_codes",
    "repr_var",
    "repr_op",
]
