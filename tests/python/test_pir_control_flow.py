"""PIR programs with control flow (Paddle 3.x's pd_op.if and pd_op.while, made by
tools/paddle_control_flow_models.py): they load as Fluid's conditional_block / select_input and
while ops with sub-blocks, and run to Paddle's outputs for inputs that take each branch and several
trip counts (cases.npz), and to a numpy reference of the forward written here; a loop left by
`break`, its list stacked and read at -1 and -2, too. PaddlePaddle itself is not needed."""

import json
import os
import shutil

import numpy as np
import pytest
from kernel_libraries import LIBS

import tide

FIXTURES = os.path.join(
    os.environ.get("TIDE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
    "tests",
    "fixtures",
    "paddle",
    "pir",
)
MODELS = [
    "cond_if",
    "cond_while",
    "cond_nested",
    "cond_while_swap",
    "cond_while_break",
    "cond_while_gru",
    "cond_while_reshape",
]


def cases(name):
    """[(feed, Paddle's output)]: the fixture's input and each of cases.npz."""
    d = os.path.join(FIXTURES, name)
    if os.path.exists(os.path.join(d, "input.npy")):
        first = {"x": np.load(os.path.join(d, "input.npy"))}
    else:
        with np.load(os.path.join(d, "inputs.npz")) as f:
            first = {k: f[k] for k in f.files}
    out = [(first, np.load(os.path.join(d, "expected.npy")))]
    with np.load(os.path.join(d, "cases.npz")) as f:
        for i in range(json.load(open(os.path.join(d, "info.json")))["cases"]):
            out.append(({k: f["%s_%d" % (k, i)] for k in first}, f["out_%d" % i]))
    return out


def load(name, exe, optimize=True):
    scope = tide.Scope()
    with tide.scope_guard(scope):
        program, feeds, fetches = tide.io.load_inference_model(
            os.path.join(FIXTURES, name, "inference"), exe, optimize=optimize
        )
    return program, feeds, fetches, scope


def params(scope, program):
    return {
        v.name: np.array(scope.find_var(v.name).get_tensor())
        for v in program.global_block().vars.values()
        if v.persistable and scope.find_var(v.name) is not None and v.type == "LOD_TENSOR"
    }


@pytest.mark.parametrize("optimize", [True, False], ids=["optimized", "as_saved"])
@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", MODELS)
def test_cases_match_paddle(name, lib, optimize):
    """Every case, one after the other on one loaded program (a run leaves nothing to the next:
    a tensor array starts empty, the counter at its initial value)."""
    exe = tide.Executor(tide.CPUPlace())
    program, feeds, fetches, scope = load(name, exe, optimize)
    tide.set_flags({"use_mkldnn": lib == "mkldnn"})
    try:
        for feed, expected in cases(name) + cases(name)[::-1]:
            (out,) = exe.run(program, feed=feed, fetch_list=fetches, scope=scope)
            np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    finally:
        tide.set_flags({"use_mkldnn": False})


def cond_if_numpy(p, x):
    y = x @ p["linear_0.w_0"] + p["linear_0.b_0"]
    if x.mean() > 0:
        a, b = np.tanh(y) * 2.0, y.max(axis=1, keepdims=True)
    else:
        a, b = y - x.sum(), np.exp(y).mean(axis=1, keepdims=True)
    return (a * b) @ p["linear_1.w_0"] + p["linear_1.b_0"] + b, x.mean() > 0


def cond_while_numpy(p, x, n):
    u = x @ p["linear_0.w_0"] + p["linear_0.b_0"]
    h = np.tanh(u)
    states, i, branches = [h], 0, set()
    while i < n:
        h = np.tanh(h @ p["linear_1.w_0"] + u)
        branches.add(h.mean() > 0)
        h = h * 0.5 if h.mean() > 0 else h + 0.25
        states.append(h)
        i += 1
    out = (h + states[i]) @ p["linear_2.w_0"] + p["linear_2.b_0"] + len(states)
    return out, (i, frozenset(branches))


def cond_nested_numpy(p, x, n):
    if x.mean() <= 0:
        return x * 2.0, (False, n)
    h, i = x, 0
    while i < n:
        h = np.tanh(h @ p["linear_0.w_0"] + p["linear_0.b_0"]) + 0.3
        if h.sum() > 3.0:
            h = h - 1.0
        i += 1
    return h + i, (True, n)


def while_swap_numpy(p, x, n):
    a, b = x, x * 2.0
    for _ in range(n):
        a, b = b, a + b * 0.5
    return a - b, n


def while_break_numpy(p, x, n, budget):
    u = x @ p["linear_0.w_0"] + p["linear_0.b_0"]
    h = np.tanh(u)
    states, spent, i, broke = [h], 0.0, 0, False
    while i < n:
        h = np.tanh(h @ p["linear_1.w_0"] + u)
        states.append(h)
        spent += np.abs(h).mean()
        i += 1
        if spent > budget:
            broke = True
            break
    # list[-2] of a list of one is its first element: Paddle clamps the index at 0.
    y = (np.stack(states).mean(0) + states[-1]) @ p["linear_2.w_0"] + p["linear_2.b_0"]
    y = y + states[max(len(states) - 2, 0)].mean()
    return y + np.concatenate(states, axis=1).sum(1, keepdims=True) * 0.1 + i, (n, i, broke)


def test_numpy_reference_and_branches_taken():
    """Tide's outputs equal a numpy forward of each model; the cases take both branches of the
    if, of the if inside the loop and of the if around a loop, and the loops run 0, 1, 3, 5 and 7
    times (the swap 0, 1, 3 and 4, the loop in a branch 0, 1, 3 and 6, the loop with a break
    0 to 8 times, left by its condition or by the break)."""
    exe = tide.Executor(tide.CPUPlace())
    seen = {}
    for name, reference in [
        ("cond_if", cond_if_numpy),
        ("cond_while", cond_while_numpy),
        ("cond_nested", cond_nested_numpy),
        ("cond_while_swap", while_swap_numpy),
        ("cond_while_break", while_break_numpy),
    ]:
        program, feeds, fetches, scope = load(name, exe)
        p = params(scope, program)
        seen[name] = set()
        for feed, _ in cases(name):
            (out,) = exe.run(program, feed=feed, fetch_list=fetches, scope=scope)
            args = [feed["x"].astype(np.float64)] + ([int(feed["n"][0])] if "n" in feed else [])
            args += [float(feed["budget"][0])] if "budget" in feed else []
            want, path = reference({k: v.astype(np.float64) for k, v in p.items()}, *args)
            np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
            seen[name].add(path)
    assert seen["cond_if"] == {True, False}
    assert {n for n, _ in seen["cond_while"]} == {0, 1, 3, 5, 7}
    assert set().union(*(b for _, b in seen["cond_while"])) == {True, False}
    assert seen["cond_while_swap"] == {0, 1, 3, 4}
    assert seen["cond_nested"] == {(True, 3), (False, 3), (True, 0), (True, 1), (True, 6)}
    # (n, iterations, left by break): none; n reached within the budget; a break at the first
    # step, at the last, and in mid-loop (6 and 8 of 9).
    assert seen["cond_while_break"] == {
        (6, 6, True),
        (0, 0, False),
        (4, 4, False),
        (6, 1, True),
        (9, 6, True),
        (9, 8, True),
        (1, 1, True),
    }


def test_translated_program():
    """pd_op.if: two conditional_blocks (on the condition and its negation) and a select_input per
    result; pd_op.while: a while (is_test) whose body assigns the next condition and carried value
    back; the if inside the loop is a block of the loop's block; each control-flow op lists the
    outer variables its sub-block reads (Input / X) and writes (Out)."""
    exe = tide.Executor(tide.CPUPlace())
    program, _, _, _ = load("cond_if", exe, optimize=False)
    ops = [op.type for op in program.global_block().ops]
    assert ops.count("conditional_block") == 2 and ops.count("select_input") == 2, ops
    assert program.num_blocks == 3
    program, _, _, _ = load("cond_while", exe, optimize=False)
    assert [b.parent_idx for b in program.blocks] == [-1, 0, 1, 1]
    (loop,) = [op for op in program.global_block().ops if op.type == "while"]
    assert loop.attr("is_test")
    x, out = set(loop.input("X")), set(loop.output("Out"))
    assert {"linear_1.w_0", "n"} <= x and loop.input("Condition")[0] in out
    body = [op.type for op in program.block(1).ops]
    assert body.count("conditional_block") == 2 and "increment" in body and "write_to_array" in body
    assert body[-1] == "assign", body
    program, _, _, _ = load("cond_nested", exe, optimize=False)
    (branch,) = [op for op in program.global_block().ops if op.type == "conditional_block"][:1]
    loops = [op for op in program.block(branch.attr("sub_block")).ops if op.type == "while"]
    assert len(loops) == 1 and "n" in loops[0].input("X")


def test_break_stack_and_list_index_translated():
    """A break: logical_and of the [1] loop condition and the 0-D break flag, before the loop and
    in its body; the list stacked and concatenated (tensor_array_to_tensor) and read at -1 and -2
    (slice_array_dense, the index an attribute)."""
    exe = tide.Executor(tide.CPUPlace())
    program, _, _, _ = load("cond_while_break", exe, optimize=False)
    ops = program.global_block().ops
    types = [op.type for op in ops]
    assert "logical_and" in types and types.count("while") == 1
    (loop,) = [op for op in ops if op.type == "while"]
    assert "logical_and" in [op.type for op in program.block(loop.attr("sub_block")).ops]
    joins = [op for op in ops if op.type == "tensor_array_to_tensor"]
    assert sorted((op.attr("use_stack"), op.attr("axis")) for op in joins) == [
        (False, 1),
        (True, 0),
    ]
    reads = [op for op in ops if op.type == "slice_array_dense"]
    assert sorted(op.attr("starts")[0] for op in reads) == [-2, -1]


def copy(tmp_path, name):
    d = tmp_path / name
    shutil.copytree(os.path.join(FIXTURES, name), d)
    return d


def edit(d, old, new):
    text = (d / "inference.json").read_text()
    assert old in text, old
    (d / "inference.json").write_text(text.replace(old, new))


def expect_error(d, *parts):
    with pytest.raises(tide.TideError) as e:
        tide.io.load_inference_model(str(d / "inference"), tide.Executor(tide.CPUPlace()))
    for p in parts:
        assert p in str(e.value), str(e.value)


def test_unknown_operations_in_regions_listed(tmp_path):
    """Operations Tide lacks inside an if's region and a loop body are listed with the others,
    in one error, as outside control flow."""
    d = copy(tmp_path, "cond_if")
    edit(d, '"#":"1.exp"', '"#":"1.expx"')  # in the false region only
    edit(d, '"#":"1.tanh"', '"#":"1.tanhx"')  # in the true region
    expect_error(
        d,
        "2 PIR operation type(s) have no translation to Tide ops",
        "pd_op.expx (1 op), pd_op.tanhx (1 op)",
    )
    d = copy(tmp_path, "cond_while")
    edit(d, '"#":"1.scale"', '"#":"1.scalex"')  # in the if inside the loop
    edit(d, '"#":"1.increment_"', '"#":"1.incrementx_"')
    expect_error(
        d,
        "2 PIR operation type(s) have no translation to Tide ops",
        "pd_op.incrementx_ (1 op), pd_op.scalex (2 ops)",
    )


def test_unknown_control_flow_operation_listed(tmp_path):
    """An operation with regions Tide does not read: listed with the operations of its regions
    that Tide lacks, never a crash."""
    d = copy(tmp_path, "cond_while")
    edit(d, '"#":"1.while"', '"#":"1.loop"')
    edit(d, '"#":"1.greater_than"', '"#":"1.greater_thanx"')
    expect_error(d, "pd_op.greater_thanx (1 op), pd_op.loop (1 op)")
