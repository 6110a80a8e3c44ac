"""SelectedRows (sparse gradient) inputs, Fluid 1.x semantics, against numpy: sum merges
duplicate rows (Fluid's MergeAdd: each row once, ascending, values added), scale keeps the rows
and scales the values, clip_by_norm merges the rows and then clips by the merged norm, lazy Adam
writes only the listed rows of its outputs, and an embedding looked up with repeated ids trains
with a sparse gradient exactly as with a dense one (SGD and Adam)."""

import numpy as np
import pytest

import tide

DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


def run_op(
    op,
    sparse_inputs,
    attrs=None,
    dense_inputs=None,
    dtype="float32",
    height=10,
    width=4,
    out_type="SELECTED_ROWS",
    out_name="out",
):
    """Runs `op` with SelectedRows inputs {param: [(rows, values)]} (and dense ones
    {param: array}); returns the output variable as (rows, values, height) or an array."""
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        ins = {}
        for param, parts in sparse_inputs.items():
            ins[param] = [
                b.create_var(
                    name="%s%d" % (param.lower(), i),
                    type="SELECTED_ROWS",
                    shape=[height, width],
                    dtype=dtype,
                    persistable=True,
                )
                for i in range(len(parts))
            ]
        for param, arr in (dense_inputs or {}).items():
            ins.setdefault(param, []).append(
                b.create_var(
                    name=param.lower() + "_dense",
                    shape=list(arr.shape),
                    dtype=dtype,
                    persistable=True,
                )
            )
        out = b.create_var(
            name=out_name, type=out_type, shape=[height, width], dtype=dtype, persistable=True
        )
        b.append_op(op, inputs=ins, outputs={"Out": out}, attrs=attrs or {})
    scope = tide.Scope()
    for param, parts in sparse_inputs.items():
        for i, (rows, values) in enumerate(parts):
            sr = scope.var("%s%d" % (param.lower(), i)).get_selected_rows()
            sr.set_rows(list(rows))
            sr.set_height(height)
            sr.get_tensor().set(np.ascontiguousarray(values, dtype=dtype), tide.CPUPlace(), False)
    for param, arr in (dense_inputs or {}).items():
        scope.var(param.lower() + "_dense").get_tensor().set(
            np.ascontiguousarray(arr), tide.CPUPlace(), False
        )
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    v = scope.find_var(out_name)
    if out_type == "SELECTED_ROWS":
        sr = v.get_selected_rows()
        return list(sr.rows()), np.array(sr.get_tensor()), sr.height()
    return np.array(v.get_tensor())


def merged(parts, width):
    """numpy MergeAdd: sorted distinct rows and the sum of each row's values (float64)."""
    rows = sorted({r for rs, _ in parts for r in rs})
    vals = np.zeros((len(rows), width))
    for rs, v in parts:
        for r, row in zip(rs, v.astype(np.float64)):
            vals[rows.index(r)] += row
    return rows, vals


def rand(rng, shape, dtype):
    return rng.uniform(-1, 1, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_merges_duplicate_rows(dtype):
    rng = np.random.RandomState(0)
    parts = [
        ([7, 1, 7], rand(rng, (3, 4), dtype)),
        ([], np.zeros((0, 4), dtype)),
        ([9, 1, 0, 9], rand(rng, (4, 4), dtype)),
    ]
    rows, values, height = run_op("sum", {"X": parts}, dtype=dtype)
    want_rows, want = merged(parts, 4)
    assert rows == want_rows == [0, 1, 7, 9] and height == 10
    np.testing.assert_allclose(values, want, **TOL[dtype])


def test_sum_of_sparse_and_dense_adds_every_listed_row():
    rng = np.random.RandomState(1)
    dense = rand(rng, (10, 4), "float64")
    parts = [([3, 3, 5], rand(rng, (3, 4), "float64")), ([5, 0], rand(rng, (2, 4), "float64"))]
    got = run_op(
        "sum", {"X": parts}, dense_inputs={"X": dense}, dtype="float64", out_type="LOD_TENSOR"
    )
    want = dense.copy()
    for rs, v in parts:
        np.add.at(want, rs, v)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_sum_of_sparse_and_dense_with_no_rows():
    """Dense inputs of height 0 and a SelectedRows listing no rows sum to the empty dense tensor
    (the CPU kernel divided by the height, 0; tide/ops/sum.hpp's rule, the CUDA kernel's, does
    not)."""
    got = run_op(
        "sum",
        {"X": [([], np.zeros((0, 4), "float32"))]},
        dense_inputs={"X": np.zeros((0, 4), "float32")},
        height=0,
        out_type="LOD_TENSOR",
    )
    assert got.shape == (0, 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias_after_scale", [True, False])
def test_scale_of_selected_rows_keeps_rows(dtype, bias_after_scale):
    rng = np.random.RandomState(2)
    x = rand(rng, (3, 4), dtype)
    rows, values, height = run_op(
        "scale",
        {"X": [([4, 2, 4], x)]},
        dtype=dtype,
        attrs={"scale": 2.5, "bias": 0.5, "bias_after_scale": bias_after_scale},
    )
    x64 = x.astype(np.float64)
    want = x64 * 2.5 + 0.5 if bias_after_scale else (x64 + 0.5) * 2.5
    assert rows == [4, 2, 4] and height == 10  # Fluid's scale does not merge
    np.testing.assert_allclose(values, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("max_norm", [0.5, 100.0], ids=["clipped", "unclipped"])
def test_clip_by_norm_of_selected_rows_merges_first(dtype, max_norm):
    rng = np.random.RandomState(3)
    parts = [([6, 1, 6, 6], rand(rng, (4, 4), dtype))]
    rows, values, height = run_op(
        "clip_by_norm", {"X": parts}, dtype=dtype, attrs={"max_norm": max_norm}
    )
    want_rows, m = merged(parts, 4)
    # The norm is that of the merged rows (repeated rows added first), as in Fluid.
    norm = np.sqrt((m**2).sum())
    want = m * (max_norm / norm if norm > max_norm else 1.0)
    assert rows == want_rows == [1, 6] and height == 10
    np.testing.assert_allclose(values, want, **TOL[dtype])
    if max_norm < 1:
        assert np.isclose(np.sqrt((values.astype(np.float64) ** 2).sum()), max_norm, rtol=1e-5)


# -- lazy Adam with outputs that are not its inputs ----------------------------------------------
def run_lazy_adam(ins, rows, values, prefill, dtype="float64"):
    """One lazy adam step whose outputs are separate variables; `prefill` gives their contents
    before the step ({} = not created: they start empty)."""
    main = tide.Program()
    names = ["Param", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"]
    outs = {"ParamOut": "param_out", "Moment1Out": "m1_out", "Moment2Out": "m2_out"}
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        v = {
            n: b.create_var(name=n.lower(), shape=ins[n].shape, dtype=dtype, persistable=True)
            for n in names
        }
        grad = b.create_var(
            name="grad",
            type="SELECTED_ROWS",
            shape=ins["Param"].shape,
            dtype=dtype,
            persistable=True,
        )
        o = {
            p: b.create_var(name=n, shape=ins["Param"].shape, dtype=dtype, persistable=True)
            for p, n in outs.items()
        }
        b.append_op("adam", inputs=dict(v, Grad=grad), outputs=o, attrs={"lazy_mode": True})
    scope = tide.Scope()
    for n in names:
        scope.var(n.lower()).get_tensor().set(np.ascontiguousarray(ins[n]), tide.CPUPlace(), False)
    for n, arr in prefill.items():
        scope.var(n).get_tensor().set(np.ascontiguousarray(arr), tide.CPUPlace(), False)
    sr = scope.var("grad").get_selected_rows()
    sr.set_rows(list(rows))
    sr.set_height(ins["Param"].shape[0])
    sr.get_tensor().set(np.ascontiguousarray(values), tide.CPUPlace(), False)
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    return {n: np.array(scope.find_var(n).get_tensor()) for n in outs.values()}


def adam_ref(p, m1, m2, g, lr, b1p, b2p, beta1=0.9, beta2=0.999, eps=1e-8):
    m1 = beta1 * m1 + (1 - beta1) * g
    m2 = beta2 * m2 + (1 - beta2) * g * g
    # bias-corrected moments, epsilon joining sqrt(m2_hat) (Paddle 2+, PyTorch)
    return p - lr * (m1 / (1 - b1p)) / (np.sqrt(m2 / (1 - b2p)) + eps), m1, m2


@pytest.mark.parametrize("prefilled", [True, False], ids=["prefilled_outputs", "fresh_outputs"])
def test_lazy_adam_writes_only_listed_rows_of_separate_outputs(prefilled):
    rng = np.random.RandomState(4)
    shape = (5, 3)
    ins = {
        "Param": rand(rng, shape, "float64"),
        "LearningRate": np.array([0.1]),
        "Moment1": rand(rng, shape, "float64") * 0.1,
        "Moment2": np.abs(rand(rng, shape, "float64")) * 0.1,
        "Beta1Pow": np.array([0.9**3]),
        "Beta2Pow": np.array([0.999**3]),
    }
    rows, values = [3, 0, 3], rand(rng, (3, 3), "float64")
    sentinel = {n: np.full(shape, 7.0 + i) for i, n in enumerate(["param_out", "m1_out", "m2_out"])}
    got = run_lazy_adam(ins, rows, values, sentinel if prefilled else {})
    g = np.zeros(shape)
    np.add.at(g, rows, values)  # a repeated row takes the sum of its gradients
    want = adam_ref(ins["Param"], ins["Moment1"], ins["Moment2"], g, 0.1, 0.9**3, 0.999**3)
    listed, others = [0, 3], [1, 2, 4]
    for name, w, src in zip(
        ["param_out", "m1_out", "m2_out"], want, ["Param", "Moment1", "Moment2"]
    ):
        np.testing.assert_allclose(got[name][listed], w[listed], rtol=1e-12, err_msg=name)
        # Fluid: rows the gradient does not list are not written; a fresh output starts as its input.
        keep = sentinel[name] if prefilled else ins[src]
        np.testing.assert_array_equal(got[name][others], keep[others], err_msg=name)


# -- end to end: an embedding with repeated ids, sparse vs dense gradient ------------------------
def train_embedding(is_sparse, optimizer, steps=4):
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = 3
    with tide.program_guard(main, startup):
        ids = tide.layers.data("ids", [1], dtype="int64")
        y = tide.layers.data("y", [4], dtype="float32")
        emb = tide.layers.embedding(
            ids, size=[6, 4], is_sparse=is_sparse, param_attr=tide.ParamAttr(name="table")
        )
        # the table is read twice: its two sparse gradients meet in a sum of SelectedRows
        emb2 = tide.layers.embedding(
            ids, size=[6, 4], is_sparse=is_sparse, param_attr=tide.ParamAttr(name="table")
        )
        diff = tide.layers.elementwise_sub(tide.layers.elementwise_add(emb, emb2), y)
        loss = tide.layers.mean(tide.layers.square(diff))
        optimizer().minimize(loss)
    exe, scope = tide.Executor(tide.CPUPlace()), tide.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.RandomState(5)
    for _ in range(steps):
        feed = {
            "ids": np.array([[1], [4], [1], [1], [2]], "int64"),
            "y": rng.uniform(-1, 1, (5, 4)).astype("float32"),
        }
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    return np.array(scope.find_var("table").get_tensor())


@pytest.mark.parametrize(
    "name,optimizer",
    [
        ("sgd", lambda: tide.optimizer.SGD(learning_rate=0.2)),
        ("adam", lambda: tide.optimizer.Adam(learning_rate=0.05)),
    ],
)
def test_sparse_embedding_trains_as_dense(name, optimizer):
    """Non-lazy optimizers: a SelectedRows gradient with repeated rows gives the dense step."""
    sparse, dense = train_embedding(True, optimizer), train_embedding(False, optimizer)
    np.testing.assert_allclose(sparse, dense, rtol=1e-5, atol=1e-6)


def test_lazy_adam_leaves_rows_without_gradient_alone():
    lazy = train_embedding(True, lambda: tide.optimizer.Adam(learning_rate=0.05, lazy_mode=True))
    dense = train_embedding(False, lambda: tide.optimizer.Adam(learning_rate=0.05))
    init = train_embedding(True, lambda: tide.optimizer.SGD(learning_rate=0.1), steps=0)
    looked_up, never = [1, 2, 4], [0, 3, 5]
    np.testing.assert_array_equal(lazy[never], init[never])
    # Every looked-up row had a gradient at every step: lazy and dense Adam agree on them.
    np.testing.assert_allclose(lazy[looked_up], dense[looked_up], rtol=1e-5, atol=1e-6)


# -- sgd on a SelectedRows Param (a parameter server's slice of a table) -------------------------
def run_sgd_on_rows(param_rows, param_values, grad_rows, grad_values, lr=0.5, out_name="param"):
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        p = b.create_var(
            name="param", type="SELECTED_ROWS", shape=[100, 3], dtype="float64", persistable=True
        )
        g = b.create_var(
            name="grad", type="SELECTED_ROWS", shape=[100, 3], dtype="float64", persistable=True
        )
        r = b.create_var(name="lr", shape=[1], dtype="float64", persistable=True)
        out = (
            p
            if out_name == "param"
            else b.create_var(
                name=out_name,
                type="SELECTED_ROWS",
                shape=[100, 3],
                dtype="float64",
                persistable=True,
            )
        )
        b.append_op(
            "sgd", inputs={"Param": p, "Grad": g, "LearningRate": r}, outputs={"ParamOut": out}
        )
    scope = tide.Scope()
    for name, rows, values in (
        ("param", param_rows, param_values),
        ("grad", grad_rows, grad_values),
    ):
        sr = scope.var(name).get_selected_rows()
        sr.set_rows(list(rows))
        sr.set_height(100)
        sr.get_tensor().set(np.ascontiguousarray(values), tide.CPUPlace(), False)
    scope.var("lr").get_tensor().set(np.array([lr]), tide.CPUPlace(), False)
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    sr = scope.find_var("param").get_selected_rows()
    return list(sr.rows()), np.array(sr.get_tensor())


def test_sgd_on_selected_rows_param_updates_rows_by_id():
    rng = np.random.RandomState(6)
    pv, gv = rand(rng, (3, 3), "float64"), rand(rng, (3, 3), "float64")
    rows, got = run_sgd_on_rows([40, 7, 93], pv, [93, 40, 93], gv)
    want = pv.copy()
    want[2] -= 0.5 * (gv[0] + gv[2])  # id 93, listed twice
    want[0] -= 0.5 * gv[1]  # id 40
    assert rows == [40, 7, 93]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_sgd_on_selected_rows_param_errors():
    rng = np.random.RandomState(7)
    pv, gv = rand(rng, (2, 3), "float64"), rand(rng, (1, 3), "float64")
    with pytest.raises(tide.TideError, match=r"sgd.*row id 5.*does not hold"):
        run_sgd_on_rows([1, 2], pv, [5], gv)
    with pytest.raises(tide.TideError, match=r"sgd.*ParamOut must be the same variable"):
        run_sgd_on_rows([1, 2], pv, [1], gv, out_name="other")


def run_lookup_in_rows(table_rows, values, ids, height=100, padding_idx=-1, grad=False):
    """lookup_table with W a SelectedRows (a parameter server's table); with grad, also the dense
    W@GRAD of Out@GRAD = 1. Returns Out (and W@GRAD)."""
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        w = b.create_var(
            name="w",
            type="SELECTED_ROWS",
            shape=[height, values.shape[1]],
            dtype="float64",
            persistable=True,
        )
        i = b.create_var(name="ids", shape=[len(ids), 1], dtype="int64", persistable=True)
        out = b.create_var(name="out", dtype="float64", persistable=True)
        b.append_op(
            "lookup_table",
            inputs={"W": w, "Ids": i},
            outputs={"Out": out},
            attrs={"padding_idx": padding_idx},
        )
        if grad:
            dout = b.create_var(name="dout", dtype="float64", persistable=True)
            dw = b.create_var(name="dw", dtype="float64", persistable=True)
            b.append_op(
                "lookup_table_grad",
                inputs={"W": w, "Ids": i, "Out@GRAD": dout},
                outputs={"W@GRAD": dw},
                attrs={"padding_idx": padding_idx},
            )
    scope = tide.Scope()
    sr = scope.var("w").get_selected_rows()
    sr.set_rows(list(table_rows))
    sr.set_height(height)
    sr.get_tensor().set(values, tide.CPUPlace(), False)
    scope.var("ids").get_tensor().set(np.array(ids, "int64").reshape(-1, 1), tide.CPUPlace(), False)
    if grad:
        scope.var("dout").get_tensor().set(
            np.ones((len(ids), values.shape[1])), tide.CPUPlace(), False
        )
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    got = np.array(scope.find_var("out").get_tensor())
    return (got, np.array(scope.find_var("dw").get_tensor())) if grad else got


def test_lookup_table_in_a_selected_rows_table_finds_rows_by_id():
    """Fluid's LookupTableKernel on a SelectedRows W: Out[i] is the value row whose id is Ids[i]."""
    rng = np.random.RandomState(8)
    values = rand(rng, (3, 4), "float64")
    got = run_lookup_in_rows([40, 7, 93], values, [93, 7, 93, 40, 5], padding_idx=5)
    want = np.stack([values[2], values[1], values[2], values[0], np.zeros(4)])
    np.testing.assert_array_equal(got, want)
    got, dw = run_lookup_in_rows([40, 7, 93], values, [93, 7, 93], grad=True)
    want_dw = np.zeros((100, 4))
    want_dw[93] = 2
    want_dw[7] = 1
    assert dw.shape == (100, 4)  # the whole table's gradient: [height, D]
    np.testing.assert_array_equal(dw, want_dw)


def test_lookup_table_in_a_selected_rows_table_names_a_missing_id():
    values = np.ones((2, 3))
    with pytest.raises(
        tide.TideError,
        match=r"lookup_table.*Ids \('ids'\)\[1\] = 8 is not among the 2 rows of "
        r"W \('w'\), a SelectedRows",
    ):
        run_lookup_in_rows([1, 2], values, [1, 8])
    with pytest.raises(tide.TideError, match=r"lookup_table.*Ids.*= 100 is out of range.*100 rows"):
        run_lookup_in_rows([1, 2], values, [100])
