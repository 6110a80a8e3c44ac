"""Drawing a program (Fluid's fluid.debugger.draw_block_graphviz, as one call):

    tide.debugger.draw_program(tide.default_main_program(), "net.dot")   # Graphviz text
    tide.debugger.draw_program(program, "net.svg")   # rendered by Graphviz's `dot`, when installed

Ops are boxes, variables ellipses labelled with their shape and data type (parameters and other
persistable variables bold), edges go from inputs to ops to outputs, and each block is a cluster;
a control-flow op points (dashed) at the block it runs.
"""
import os
import shutil
import subprocess

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
    lines = ["digraph program {", "  compound=true;", "  node [fontname=\"Helvetica\", fontsize=10];"]
    declared = {}  # (block, var) -> node id
    edges = []
    for b in range(program.num_blocks):
        block = program.block(b)
        lines.append("  subgraph cluster_b%d {" % b)
        lines.append("    label=%s; style=rounded; color=gray;" % _quote(
            "block %d" % b + ("" if block.parent_idx < 0 else " (parent %d)" % block.parent_idx)))
        lines.append("    anchor_b%d [shape=point, style=invis];" % b)
        for i, op in enumerate(block.ops):
            op_id = "op_b%d_%d" % (b, i)
            lines.append("    %s [shape=box, style=\"rounded,filled\", fillcolor=\"#dbe9f6\", label=%s];"
                         % (op_id, _quote(op.type)))
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
                    edges.append((op_id, "anchor_b%d" % sub, "style=dashed, lhead=cluster_b%d, label=%s"
                                  % (sub, _quote(attr))))
        for (owner, name), vid in declared.items():
            if owner == b:
                label, persistable = _var_label(program, b, name)
                lines.append("    %s [shape=ellipse, label=%s%s];"
                             % (vid, _quote(label), ", style=bold" if persistable else ""))
        lines.append("  }")
    # Variables first met in a later block but declared in an earlier one.
    for (owner, name), vid in declared.items():
        if not any(l.strip().startswith(vid + " ") for l in lines):
            label, persistable = _var_label(program, owner, name)
            lines.append("  %s [shape=ellipse, label=%s%s];"
                         % (vid, _quote(label), ", style=bold" if persistable else ""))
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
        raise RuntimeError("draw_program: rendering %s needs Graphviz's 'dot' program (apt install "
                           "graphviz), or give a .dot path for the text" % path)
    proc = subprocess.run([exe, "-T" + _RENDERED[ext], "-o", path], input=dot, text=True,
                          capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError("draw_program: dot failed on %s: %s" % (path, proc.stderr.strip()))
    return path


__all__ = ["draw_program", "to_dot"]
