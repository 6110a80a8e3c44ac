"""Op tests of the ops_optimizers pack: one step of each optimizer op against numpy through
OpTest (ParamOut and the state outputs as outputs), float32 and float64, and the SelectedRows
(sparse) gradients run through the executor with the updates in place, as the Python optimizers
build them."""

import numpy as np
import pytest
from op_test import make

import tide

DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=2e-6, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-14)}


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def f64(d):
    return {k: np.asarray(v, np.float64) for k, v in d.items()}


def cast(d, dtype):
    return {k: np.asarray(v).astype(dtype) for k, v in d.items()}


F = np.float32  # float attributes reach the kernels as float32 values (float64 ones exactly)


# ---------------------------------------------------------------------------------------------
# numpy references: one step, in float64, from float64 copies of the inputs
def sgd_ref(i, a):
    return {"ParamOut": i["Param"] - i["LearningRate"][0] * i["Grad"]}


def momentum_ref(i, a):
    mu, lr = float(F(a["mu"])), i["LearningRate"][0]
    v = mu * i["Velocity"] + i["Grad"]
    if a.get("use_nesterov", False):
        p = i["Param"] - lr * (i["Grad"] + mu * v)
    else:
        p = i["Param"] - lr * v
    return {"ParamOut": p, "VelocityOut": v}


def adam_ref(i, a):  # adam's attributes are float64: exact
    b1, b2, eps = (
        float(a.get(k, d)) for k, d in (("beta1", 0.9), ("beta2", 0.999), ("epsilon", 1e-8))
    )
    g = i["Grad"]
    m1 = b1 * i["Moment1"] + (1 - b1) * g
    m2 = b2 * i["Moment2"] + (1 - b2) * g * g
    # The paper's bias-corrected form (Paddle 2+, PyTorch): epsilon joins sqrt(m2_hat).
    m1_hat, m2_hat = m1 / (1 - i["Beta1Pow"][0]), m2 / (1 - i["Beta2Pow"][0])
    return {
        "ParamOut": i["Param"] - i["LearningRate"][0] * m1_hat / (np.sqrt(m2_hat) + eps),
        "Moment1Out": m1,
        "Moment2Out": m2,
    }


def adagrad_ref(i, a):
    eps = float(F(a.get("epsilon", 1e-6)))
    m = i["Moment"] + i["Grad"] ** 2
    return {
        "ParamOut": i["Param"] - i["LearningRate"][0] * i["Grad"] / (np.sqrt(m) + eps),
        "MomentOut": m,
    }


def rmsprop_ref(i, a):
    eps, decay, mom = (
        float(F(a.get(k, d))) for k, d in (("epsilon", 1e-10), ("decay", 0.9), ("momentum", 0.0))
    )
    g = i["Grad"]
    ms = decay * i["MeanSquare"] + (1 - decay) * g * g
    out = {"MeanSquareOut": ms}
    denom = ms
    if a.get("centered", False):
        mg = decay * i["MeanGrad"] + (1 - decay) * g
        denom = ms - mg * mg
        out["MeanGradOut"] = mg
    out["MomentOut"] = mom * i["Moment"] + i["LearningRate"][0] * g / np.sqrt(denom + eps)
    out["ParamOut"] = i["Param"] - out["MomentOut"]
    return out


def optimizer_inputs(op, rng, shape, dtype, lr_dtype=None):
    lr = np.array([0.05], lr_dtype or dtype)
    p, g = rand(rng, shape, dtype), rand(rng, shape, dtype, -2, 2)
    ins = {"Param": p, "Grad": g, "LearningRate": lr}
    if op == "momentum":
        ins["Velocity"] = rand(rng, shape, dtype)
    elif op == "adam":
        ins.update(
            Moment1=rand(rng, shape, dtype),
            Moment2=rand(rng, shape, dtype, 0.01, 1),
            Beta1Pow=np.array([0.9**3], dtype),
            Beta2Pow=np.array([0.999**3], dtype),
        )
    elif op == "adagrad":
        ins["Moment"] = rand(rng, shape, dtype, 0, 1)
    elif op == "rmsprop":
        ins.update(
            MeanSquare=rand(rng, shape, dtype, 0.5, 1),
            Moment=rand(rng, shape, dtype),
            MeanGrad=rand(rng, shape, dtype, -0.3, 0.3),
        )
    return ins


REFS = {
    "sgd": sgd_ref,
    "momentum": momentum_ref,
    "adam": adam_ref,
    "adagrad": adagrad_ref,
    "rmsprop": rmsprop_ref,
}

CASES = {  # name: op, attrs
    "sgd": ("sgd", {}),
    "momentum": ("momentum", {"mu": 0.9}),
    "momentum_nesterov": ("momentum", {"mu": 0.85, "use_nesterov": True}),
    "adam": ("adam", {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}),
    "adam_other_betas": ("adam", {"beta1": 0.5, "beta2": 0.75, "epsilon": 1e-3}),
    "adagrad": ("adagrad", {"epsilon": 1e-6}),
    "adagrad_big_epsilon": ("adagrad", {"epsilon": 0.5}),
    "rmsprop": ("rmsprop", {"epsilon": 1e-6, "decay": 0.9, "momentum": 0.0}),
    "rmsprop_momentum": ("rmsprop", {"epsilon": 1e-6, "decay": 0.8, "momentum": 0.7}),
    "rmsprop_centered": (
        "rmsprop",
        {"epsilon": 1e-6, "decay": 0.9, "momentum": 0.5, "centered": True},
    ),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_optimizer_step(case, dtype, rng):
    op, attrs = CASES[case]
    ins = optimizer_inputs(op, rng, (3, 4), dtype)
    if op == "rmsprop" and not attrs.get("centered"):
        del ins["MeanGrad"]
    want = REFS[op](f64(ins), attrs)
    t = make(op, ins, cast(want, dtype), attrs)
    t.check_output(**TOL[dtype])
    # Every output moved: the test would notice an op that left its state alone.
    for k, v in want.items():
        src = {"ParamOut": "Param"}.get(k, k[:-3])
        assert not np.allclose(v, ins[src].astype(np.float64)), k


@pytest.mark.parametrize("dtype,lr_dtype", [("float64", "float32"), ("float32", "float64")])
@pytest.mark.parametrize("op", ["sgd", "momentum", "adam", "adagrad", "rmsprop"])
def test_learning_rate_of_the_other_float_type(op, dtype, lr_dtype, rng):
    """Fluid makes the learning rate float32 even for float64 parameters; either type works."""
    attrs = {"mu": 0.9} if op == "momentum" else {}
    ins = optimizer_inputs(op, rng, (5,), dtype, lr_dtype=lr_dtype)
    ins.pop("MeanGrad", None)
    lr = ins["LearningRate"][0].astype(dtype)  # the kernel reads it as Param's type
    want = REFS[op](f64(dict(ins, LearningRate=np.array([lr]))), attrs)
    make(op, ins, cast(want, dtype), attrs).check_output(**TOL[dtype])


def test_adam_does_not_advance_beta_pows(rng):
    """As Fluid 1.x: Beta1Pow / Beta2Pow are inputs only (the Python optimizer scales them)."""
    ins = optimizer_inputs("adam", rng, (4,), "float64")
    want = adam_ref(f64(ins), {})
    t = make("adam", ins, want)
    t.check_output(**TOL["float64"])
    # lr_t's bias correction: with Beta1Pow = 0.9^3, Beta2Pow = 0.999^3 the first step moves
    # Param by lr * sqrt(1 - 0.999^3) / (1 - 0.9^3) * m1 / (sqrt(m2) + eps * sqrt(1 - 0.999^3)).
    lr_t = 0.05 * np.sqrt(1 - 0.999**3) / (1 - 0.9**3)
    np.testing.assert_allclose(
        ins["Param"] - want["ParamOut"],
        lr_t * want["Moment1Out"] / (np.sqrt(want["Moment2Out"]) + 1e-8 * np.sqrt(1 - 0.999**3)),
        rtol=1e-12,
    )


# ---------------------------------------------------------------------------------------------
# SelectedRows gradients, through the executor, updates in place (ParamOut is Param, ...)
STATE = {  # op: [(input, output)] of the Param-shaped state besides Param
    "sgd": [],
    "momentum": [("Velocity", "VelocityOut")],
    "adam": [("Moment1", "Moment1Out"), ("Moment2", "Moment2Out")],
    "adagrad": [("Moment", "MomentOut")],
    "rmsprop": [
        ("MeanSquare", "MeanSquareOut"),
        ("Moment", "MomentOut"),
        ("MeanGrad", "MeanGradOut"),
    ],
}
SCALARS = {
    "sgd": ["LearningRate"],
    "momentum": ["LearningRate"],
    "adagrad": ["LearningRate"],
    "rmsprop": ["LearningRate"],
    "adam": ["LearningRate", "Beta1Pow", "Beta2Pow"],
}


def run_sparse(op, attrs, ins, rows, values, height, dtype):
    """Runs `op` once with Grad a SelectedRows(rows, values, height), every state variable its
    own output; returns {input name: array after the step}."""
    state = [s for s in STATE[op] if s[0] in ins]
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        b = main.global_block()
        v = {}
        for name in ["Param"] + [s for s, _ in state] + SCALARS[op]:
            arr = ins[name]
            v[name] = b.create_var(
                name=name.lower(), shape=arr.shape, dtype=arr.dtype.name, persistable=True
            )
        grad = b.create_var(
            name="grad",
            type="SELECTED_ROWS",
            shape=ins["Param"].shape,
            dtype=dtype,
            persistable=True,
        )
        inputs = dict(v, Grad=grad)
        outputs = {"ParamOut": v["Param"]}
        outputs.update({o: v[s] for s, o in state})
        b.append_op(op, inputs=inputs, outputs=outputs, attrs=attrs)
    scope = tide.Scope()
    for name in v:
        scope.var(name.lower()).get_tensor().set(
            np.ascontiguousarray(ins[name]), tide.CPUPlace(), False
        )
    sr = scope.var("grad").get_selected_rows()
    sr.set_rows(list(rows))
    sr.set_height(height)
    sr.get_tensor().set(np.ascontiguousarray(values), tide.CPUPlace(), False)
    tide.Executor(tide.CPUPlace()).run(main, scope=scope)
    return {name: np.array(scope.find_var(name.lower()).get_tensor()) for name in v}


def dense_of(rows, values, shape):
    g = np.zeros(shape)
    np.add.at(g, np.asarray(rows), values.astype(np.float64))
    return g


@pytest.mark.parametrize("dtype", DTYPES)
def test_sgd_selected_rows(dtype, rng):
    """Only the listed rows move; a row listed twice takes both gradients."""
    p = rand(rng, (5, 3), dtype)
    rows = [3, 0, 3]
    values = rand(rng, (3, 3), dtype, -2, 2)
    lr = np.array([0.5], dtype)
    got = run_sparse("sgd", {}, {"Param": p, "LearningRate": lr}, rows, values, 5, dtype)
    want = p.astype(np.float64).copy()
    for r, g in zip(rows, values.astype(np.float64)):
        want[r] -= 0.5 * g
    np.testing.assert_allclose(got["Param"], want, **TOL[dtype])
    untouched = [1, 2, 4]
    np.testing.assert_array_equal(got["Param"][untouched], p[untouched])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "case", ["momentum", "momentum_nesterov", "adam", "rmsprop", "rmsprop_centered"]
)
def test_selected_rows_counts_as_zero_elsewhere(case, dtype, rng):
    """Non-lazy sparse updates: the same step as with the dense gradient (rows summed, 0 on the
    rows the SelectedRows does not list: their state still decays and they still move)."""
    op, attrs = CASES[case]
    ins = optimizer_inputs(op, rng, (4, 2), dtype)
    if op == "rmsprop" and not attrs.get("centered"):
        del ins["MeanGrad"]
    rows, values = [2, 0, 2], rand(rng, (3, 2), dtype, -2, 2)
    got = run_sparse(op, attrs, ins, rows, values, 4, dtype)
    dense = dict(f64(ins), Grad=dense_of(rows, values, (4, 2)))
    want = REFS[op](dense, attrs)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else TOL[dtype]
    np.testing.assert_allclose(got["Param"], want["ParamOut"], **tol)
    for s, o in STATE[op]:
        if s in ins:
            np.testing.assert_allclose(got[s], want[o], err_msg=s, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["adagrad", "adam_lazy"])
def test_selected_rows_updates_only_listed_rows(case, dtype, rng):
    """Sparse adagrad and lazy adam: the listed rows take the dense step with the summed
    gradient; the others keep their values and state exactly."""
    op = "adam" if case == "adam_lazy" else "adagrad"
    attrs = {"lazy_mode": True} if op == "adam" else {"epsilon": 1e-6}
    ins = optimizer_inputs(op, rng, (5, 3), dtype)
    rows, values = [4, 1, 4], rand(rng, (3, 3), dtype, -2, 2)
    got = run_sparse(op, attrs, ins, rows, values, 5, dtype)
    dense = dict(f64(ins), Grad=dense_of(rows, values, (5, 3)))
    want = REFS[op](dense, attrs)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else TOL[dtype]
    listed, others = [1, 4], [0, 2, 3]
    np.testing.assert_allclose(got["Param"][listed], want["ParamOut"][listed], **tol)
    np.testing.assert_array_equal(got["Param"][others], ins["Param"][others])
    for s, o in STATE[op]:
        np.testing.assert_allclose(got[s][listed], want[o][listed], err_msg=s, **tol)
        np.testing.assert_array_equal(got[s][others], ins[s][others], err_msg=s)


def test_sgd_selected_rows_without_rows_changes_nothing(rng):
    p = rand(rng, (3, 2), "float64")
    got = run_sparse(
        "sgd", {}, {"Param": p, "LearningRate": np.array([0.1])}, [], np.zeros((0, 2)), 3, "float64"
    )
    np.testing.assert_array_equal(got["Param"], p)


def test_sgd_selected_rows_bad_row_is_an_error(rng):
    p = rand(rng, (3, 2), "float32")
    with pytest.raises(tide.TideError, match="rows must be in"):
        run_sparse(
            "sgd",
            {},
            {"Param": p, "LearningRate": np.array([0.1], "float32")},
            [1, 3],
            np.ones((2, 2), "float32"),
            3,
            "float32",
        )
