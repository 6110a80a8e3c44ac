"""tide.debugger.draw_program (Graphviz) and tide.profiler's Chrome trace."""

import json
import shutil

import numpy as np
import pytest

import tide
from tide import layers


def _net_with_a_loop():
    x = layers.data(name="x", shape=[4], dtype="float32")
    h = layers.fc(input=x, size=3, act="relu")
    i = layers.fill_constant(shape=[1], dtype="int64", value=0)
    n = layers.fill_constant(shape=[1], dtype="int64", value=3)
    cond = layers.less_than(i, n)
    loop = layers.While(cond)
    with loop.block():
        layers.assign(layers.scale(h, 0.5), h)
        layers.increment(i, in_place=True)
        layers.less_than(i, n, cond=cond)
    return x, layers.mean(h)


def test_draw_program_writes_ops_variables_and_blocks(tmp_path):
    _net_with_a_loop()
    path = tide.debugger.draw_program(tide.default_main_program(), str(tmp_path / "net.dot"))
    dot = open(path).read()
    assert dot.startswith("digraph program {") and dot.rstrip().endswith("}")
    assert "cluster_b0" in dot and "cluster_b1" in dot  # the loop's body is its own block
    for op in ("mul", "relu", "while", "scale", "increment", "mean"):
        assert 'label="%s"' % op in dot, op
    assert "x\\n[-1, 4] float32" in dot  # a variable with its shape and dtype
    assert "style=bold" in dot  # the fc's parameters are persistable
    assert "lhead=cluster_b1" in dot  # while -> its block
    if shutil.which("dot"):
        svg = tide.debugger.draw_program(tide.default_main_program(), str(tmp_path / "net.svg"))
        assert open(svg).read().lstrip().startswith("<?xml")


def test_draw_program_says_what_rendering_needs(tmp_path, monkeypatch):
    _net_with_a_loop()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="needs Graphviz's 'dot'"):
        tide.debugger.draw_program(tide.default_main_program(), str(tmp_path / "net.png"))


def test_the_profiler_writes_a_chrome_trace_with_nested_loop_ops(tmp_path, capsys):
    x, loss = _net_with_a_loop()
    exe = tide.Executor(tide.CPUPlace())
    exe.run(tide.default_startup_program())
    path = str(tmp_path / "trace.json")
    with tide.profiler.profiler("All", "total", path):
        for _ in range(2):
            exe.run(feed={"x": np.ones((2, 4), "float32")}, fetch_list=[loss])
    assert "op (kernel)" in capsys.readouterr().out  # the report was printed
    trace = json.load(open(path))["traceEvents"]
    runs = [e for e in trace if e.get("ph") == "X"]
    names = [e["name"] for e in runs]
    # the fc layer runs as one fc op (fuse_fc_bias_act); 2 runs x 3 iterations of the loop
    assert names.count("fc") == 2 and names.count("scale") == 6
    while_ = [e for e in runs if e["name"] == "while"]
    scales = [e for e in runs if e["name"] == "scale"]
    # The loop body's ops sit inside the while op's box on the timeline.
    assert all(
        any(w["ts"] <= s["ts"] and s["ts"] + s["dur"] <= w["ts"] + w["dur"] + 1e-3 for w in while_)
        for s in scales
    )
    fc = next(e for e in runs if e["name"] == "fc")
    assert fc["args"]["kernel"].startswith("{cpu, float32") and fc["dur"] >= 0


def test_profiler_state_is_checked():
    with pytest.raises(ValueError, match="state must be"):
        with tide.profiler.profiler("TPU"):
            pass
