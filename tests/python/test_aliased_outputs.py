"""An op whose output is bound to the variable one of its inputs reads (a hand-written or
transpiled program: concat(X=[a, a], Out=a), transpose2(X=a, Out=a)): its kernel reads the input
as the op found it, a copy where the op is not declared in place or the output takes other dims
(core/executor/aliased_inputs.h). Ops declared in place (activations, element-wise math,
optimizers) run on the variable itself, with no copy. Each result against numpy."""

import numpy as np
import pytest

import tide
from tide import layers


def run_aliased(op, inputs, outputs, attrs, value, fetch_out="Out", runs=2):
    """Builds a = value, then op(inputs, outputs, attrs) where the names "a" in the argument
    lists stand for a itself; runs the program `runs` times and returns a after each run."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        b = main.global_block()
        a = b.create_var(name="a", shape=value.shape, dtype=str(value.dtype), persistable=True)
        extra = {}

        def resolve(spec):
            out = {}
            for param, names in spec.items():
                out[param] = []
                for n in names:
                    if isinstance(n, str) and n == "a":
                        out[param].append(a)
                    elif isinstance(n, str):
                        extra.setdefault(n, b.create_var(name=n, dtype=str(value.dtype)))
                        out[param].append(extra[n])
                    else:
                        out[param].append(layers.assign(n))
            return out

        b.append_op(op, inputs=resolve(inputs), outputs=resolve(outputs), attrs=attrs)
    exe = tide.Executor(tide.CPUPlace())
    got = []
    scope = tide.Scope()
    for _ in range(runs):
        # A copy each run: a shared array would be the variable the op writes.
        scope.var("a").get_tensor().set(value, tide.CPUPlace(), share=False)
        (out,) = exe.run(main, scope=scope, fetch_list=[a])
        got.append(np.array(out, copy=True))
    return got


A = np.arange(6, dtype=np.float32).reshape(2, 3)
SQUARE = np.arange(9, dtype=np.float32).reshape(3, 3)


@pytest.mark.parametrize(
    "op, inputs, outputs, attrs, value, want",
    [
        ("concat", {"X": ["a", "a"]}, {"Out": ["a"]}, {"axis": 0}, A, np.concatenate([A, A])),
        (
            "concat",
            {"X": ["a", A + 1]},
            {"Out": ["a"]},
            {"axis": 1},
            A,
            np.concatenate([A, A + 1], axis=1),
        ),
        ("stack", {"X": ["a", "a"]}, {"Y": ["a"]}, {"axis": 1}, A, np.stack([A, A], axis=1)),
        # Same dims in and out, but not element-wise: a copy all the same.
        (
            "transpose2",
            {"X": ["a"]},
            {"Out": ["a"], "XShape": ["xs"]},
            {"axis": [1, 0]},
            SQUARE,
            SQUARE.T,
        ),
        ("flip", {"X": ["a"]}, {"Out": ["a"]}, {"axis": [0, 1]}, A, A[::-1, ::-1]),
        (
            "roll",
            {"X": ["a"]},
            {"Out": ["a"]},
            {"shifts": [1], "axis": [1]},
            A,
            np.roll(A, 1, axis=1),
        ),
        ("tile", {"X": ["a"]}, {"Out": ["a"]}, {"repeat_times": [2, 2]}, A, np.tile(A, (2, 2))),
        # Declared in place, but Y broadcast to X's dims: Out (Y's variable) grows, so Y is copied.
        (
            "elementwise_add",
            {"X": [np.ones((4, 3), np.float32)], "Y": ["a"]},
            {"Out": ["a"]},
            {"axis": -1},
            A[0],
            np.ones((4, 3), np.float32) + A[0],
        ),
        # Declared in place with the same dims: runs on the variable itself.
        ("relu", {"X": ["a"]}, {"Out": ["a"]}, {}, A - 2, np.maximum(A - 2, 0)),
        ("elementwise_mul", {"X": ["a"], "Y": ["a"]}, {"Out": ["a"]}, {"axis": -1}, A, A * A),
        ("scale", {"X": ["a"]}, {"Out": ["a"]}, {"scale": 2.0, "bias": 1.0}, A, A * 2 + 1),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_an_output_sharing_its_input_gives_numpys_result(op, inputs, outputs, attrs, value, want):
    for got in run_aliased(op, inputs, outputs, attrs, value):  # the second run: cached shapes
        np.testing.assert_array_equal(got, want)


def copies_logged(capfd, core_flags, op, inputs, outputs, attrs, value):
    core_flags(log_kernels=True)
    capfd.readouterr()
    run_aliased(op, inputs, outputs, attrs, value, runs=1)
    return "its kernel reads a copy" in capfd.readouterr().err


def test_only_ops_not_declared_in_place_read_a_copy(capfd, core_flags):
    assert copies_logged(
        capfd, core_flags, "concat", {"X": ["a", "a"]}, {"Out": ["a"]}, {"axis": 0}, A
    )
    assert copies_logged(
        capfd,
        core_flags,
        "transpose2",
        {"X": ["a"]},
        {"Out": ["a"], "XShape": ["xs"]},
        {"axis": [1, 0]},
        SQUARE,
    )
    assert not copies_logged(capfd, core_flags, "relu", {"X": ["a"]}, {"Out": ["a"]}, {}, A)
    assert not copies_logged(
        capfd,
        core_flags,
        "elementwise_add",
        {"X": ["a"], "Y": [A]},
        {"Out": ["a"]},
        {"axis": -1},
        A,
    )


def test_sgd_updates_its_parameter_in_place_without_a_copy(capfd, core_flags):
    # ParamOut = Param, as every optimizer op a program's minimize() appends is bound.
    grad = np.full_like(A, 0.5)
    lr = np.array([0.1], np.float32)
    core_flags(log_kernels=True)
    capfd.readouterr()
    got = run_aliased(
        "sgd", {"Param": ["a"], "Grad": [grad], "LearningRate": [lr]}, {"ParamOut": ["a"]}, {}, A
    )
    np.testing.assert_allclose(got[-1], A - 0.1 * grad, rtol=1e-6)
    assert "its kernel reads a copy" not in capfd.readouterr().err


def test_an_aliased_input_that_holds_nothing_is_named():
    main = tide.Program()
    with tide.program_guard(main, tide.Program()):
        b = main.global_block()
        a = b.create_var(name="never_set", shape=[2, 3], dtype="float32")
        b.append_op("concat", inputs={"X": [a, a]}, outputs={"Out": [a]}, attrs={"axis": 0})
    with pytest.raises(Exception, match="never_set"):
        tide.Executor(tide.CPUPlace()).run(main, scope=tide.Scope(), fetch_list=[a])
