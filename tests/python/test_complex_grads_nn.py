"""Gradients of ops_nn's data-movement ops for complex inputs (reshape / squeeze / flatten,
transpose, concat / split, slice / strided_slice, pad, expand_v2 / expand_as_v2, tile, stack /
unstack / unbind, gather / gather_nd, index_select, flip / roll, set_value). Their grads only
move Out@GRAD back or sum its repeats, so with Paddle's convention (X@GRAD = dL/dRe(X) +
i dL/dIm(X)) the real rule holds unchanged. Each op's output against numpy, then its gradient
against central finite differences of the real and the imaginary parts (OpTest.check_grad),
complex128 with a tight tolerance and complex64 with a loose one; the summing grad ops
(repeated gather indices, broadcast expands, tiles, set_value's broadcast value) run directly
against numpy (np.add.at); a chain of them through append_backward, with unused outputs
(zero-filled grads) and an input read twice (summed grads); and the errors of bad input to the
grad kernels."""

import numpy as np
import pytest
from op_test import make

import tide

CDTYPES = ["complex64", "complex128"]
# (max_relative_error, numeric_grad_delta): the loss is linear in each input, so complex128's
# differences are exact to rounding; complex64's loss is summed in float32.
GRAD_TOL = {"complex64": (0.02, 0.01), "complex128": (1e-6, 1e-4)}
BIG = 2**63 - 1  # Paddle's open end (set_value)


def grad_args(dtype):
    err, delta = GRAD_TOL[dtype]
    return {"max_relative_error": err, "numeric_grad_delta": delta}


def crand(rng, shape, dtype):
    return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)


def i64(v):
    return np.array(v, "int64")


def set_value_attrs(axes, starts, ends, steps, decrease=()):
    return {"axes": axes, "starts": starts, "ends": ends, "steps": steps,
            "decrease_axes": list(decrease), "none_axes": []}  # fmt: skip


def cases(rng, dtype):
    """{name: (op, inputs, expected outputs, attrs)} on complex data (x is [2, 3, 4]); every
    complex input is differentiated, every output expected (not XShape) is in the loss."""
    x = crand(rng, (2, 3, 4), dtype)
    b = crand(rng, (2, 1, 4), dtype)
    v = crand(rng, (2,), dtype)  # set_value's value, broadcast along the box's last dim
    boxed = x.copy()
    boxed[:, 0:3:2, 3:0:-2] = v
    const = x.copy()
    const[1, 1:3] = 1.5 - 0.5j
    return {
        "reshape": ("reshape", {"X": x}, {"Out": x.reshape(4, 6)}, {"shape": [4, -1]}),
        "reshape2": ("reshape2", {"X": x}, {"Out": x.reshape(6, 4), "XShape": None},
                     {"shape": [6, 4]}),
        "squeeze2": ("squeeze2", {"X": b}, {"Out": b[:, 0], "XShape": None}, {"axes": [1]}),
        "unsqueeze2": ("unsqueeze2", {"X": x}, {"Out": x[:, None], "XShape": None},
                       {"axes": [1]}),
        "flatten": ("flatten", {"X": x}, {"Out": x.reshape(2, 12)}, {"axis": 1}),
        "flatten2": ("flatten2", {"X": x}, {"Out": x.reshape(6, 4), "XShape": None},
                     {"axis": 2}),
        "flatten_contiguous_range": ("flatten_contiguous_range", {"X": x},
                                     {"Out": x.reshape(6, 4), "XShape": None},
                                     {"start_axis": 0, "stop_axis": 1}),
        "transpose": ("transpose", {"X": x}, {"Out": x.transpose(2, 0, 1)}, {"axis": [2, 0, 1]}),
        "transpose2": ("transpose2", {"X": x}, {"Out": x.transpose(1, 2, 0), "XShape": None},
                       {"axis": [1, 2, 0]}),
        "concat": ("concat", {"X": [("a", x), ("b", b)]}, {"Out": np.concatenate([x, b], 1)},
                   {"axis": 1}),
        "split": ("split", {"X": x}, {"Out": [("o0", x[:, :1]), ("o1", x[:, 1:])]},
                  {"axis": 1, "sections": [1, 2]}),
        "slice": ("slice", {"Input": x}, {"Out": x[:, 1:3, -3:]},
                  {"axes": [1, 2], "starts": [1, -3], "ends": [3, 100]}),
        "slice_decrease_axis": ("slice", {"Input": x}, {"Out": x[1]},
                                {"axes": [0], "starts": [1], "ends": [2], "decrease_axis": [0]}),
        "strided_slice_backwards": ("strided_slice", {"Input": x}, {"Out": x[:, 2:0:-1, 3::-2]},
                                    {"axes": [1, 2], "starts": [2, 3], "ends": [0, -5],
                                     "strides": [-1, -2]}),
        "pad": ("pad", {"X": x}, {"Out": np.pad(x, ((0, 0), (1, 0), (0, 2)), constant_values=1.5)},
                {"paddings": [0, 0, 1, 0, 0, 2], "pad_value": 1.5}),
        # [1, 3, 1] -> [2, 2, 3, 4]: a new leading dim and two broadcast dims (16 repeats summed)
        "expand_v2_broadcast": ("expand_v2", {"X": x[:1, :, :1]},
                                {"Out": np.broadcast_to(x[:1, :, :1], (2, 2, 3, 4))},
                                {"shape": [2, 2, -1, 4]}),
        "expand_as_v2": ("expand_as_v2", {"X": x[0, :, :1]},
                         {"Out": np.broadcast_to(x[0, :, :1], (2, 3, 4))},
                         {"target_shape": [2, 3, 4]}),
        "tile": ("tile", {"X": x[0, :, :2]}, {"Out": np.tile(x[0, :, :2], (2, 1, 3))},
                 {"repeat_times": [2, 1, 3]}),
        "stack": ("stack", {"X": [("a", x[:, 0]), ("b", x[:, 1])]},
                  {"Y": np.stack([x[:, 0], x[:, 1]], 1)}, {"axis": 1}),
        "unstack": ("unstack", {"X": x}, {"Y": [("y%d" % k, x[:, :, k]) for k in range(4)]},
                    {"axis": -1, "num": 4}),
        "unbind": ("unbind", {"X": x}, {"Out": [("u0", x[0]), ("u1", x[1])]}, {"axis": 0}),
        "gather_repeated": ("gather", {"X": x, "Index": i64([1, 0, 1, 1])},
                            {"Out": x[[1, 0, 1, 1]]}, {}),
        "gather_axis": ("gather", {"X": x, "Index": i64([3, 3, 0])}, {"Out": x[:, :, [3, 3, 0]]},
                        {"axis": 2}),
        "gather_nd_repeated": ("gather_nd", {"X": x, "Index": i64([[1, 2], [0, 0], [1, 2]])},
                               {"Out": x[[1, 0, 1], [2, 0, 2]]}, {}),
        "index_select_repeated": ("index_select", {"X": x, "Index": i64([2, 0, 2])},
                                  {"Out": x[:, [2, 0, 2]]}, {"dim": 1}),
        "flip": ("flip", {"X": x}, {"Out": x[::-1, :, ::-1]}, {"axis": [0, 2]}),
        "roll": ("roll", {"X": x}, {"Out": np.roll(x, (1, -2), axis=(1, 2))},
                 {"shifts": [1, -2], "axis": [1, 2]}),
        "roll_flat": ("roll", {"X": x}, {"Out": np.roll(x, 5)}, {"shifts": [5], "axis": []}),
        # x[:, 0:3:2, 3:0:-2] = v: Input@GRAD is Out@GRAD with the box zeroed; v's grad sums the
        # box over the dims v is broadcast along
        "set_value_tensor": ("set_value", {"Input": x, "ValueTensor": v}, {"Out": boxed},
                             set_value_attrs([1, 2], [0, 3], [3, 0], [2, -2])),
        # x[1, 1:3] = 1.5 - 0.5j: a complex constant
        "set_value_constant": ("set_value", {"Input": x}, {"Out": const},
                               dict(set_value_attrs([0, 1], [1, 1], [2, BIG], [1, 1],
                                                    decrease=[0]),
                                    values=[1.5], values_imag=[-0.5], shape=[1])),
    }  # fmt: skip


def complex_params(ins):
    """The inputs differentiated: every complex one (not the int Index)."""
    first = lambda v: v[0][1] if isinstance(v, list) else v  # noqa: E731
    return [p for p, v in ins.items() if np.iscomplexobj(first(v))]


CASE_NAMES = sorted(cases(np.random.RandomState(0), "complex128"))


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_complex_gradient(name, dtype, rng):
    op, ins, outs, attrs = cases(rng, dtype)[name]
    t = make(op, ins, outs, attrs)
    t.check_output(atol=0, rtol=0)  # only moves: exact
    loss_outputs = [p for p, v in outs.items() if v is not None]  # not XShape
    t.check_grad(complex_params(ins), loss_outputs, **grad_args(dtype))


# --- the summing grads against numpy, run as ops ----------------------------------------------

DOUT = "Out@GRAD"
DX = "X@GRAD"


def grad_op_cases(rng, dtype):
    """(grad op, inputs, X@GRAD expected, attrs): each sums repeated Out@GRAD elements."""
    x = crand(rng, (3, 4), dtype)
    idx = i64([2, 0, 2, 2])
    dout_gather = crand(rng, (4, 4), dtype)
    dx_gather = np.zeros_like(x)
    np.add.at(dx_gather, idx, dout_gather)

    nd = i64([[1, 3], [1, 3], [0, 0]])
    dout_nd = crand(rng, (3,), dtype)
    dx_nd = np.zeros_like(x)
    np.add.at(dx_nd, (nd[:, 0], nd[:, 1]), dout_nd)

    sel = i64([1, 1, 3])
    dout_sel = crand(rng, (3, 3), dtype)
    dx_sel = np.zeros_like(x)
    np.add.at(dx_sel, (slice(None), sel), dout_sel)

    dout_tile = crand(rng, (2, 3, 8), dtype)
    dx_tile = dout_tile.reshape(2, 3, 2, 4).sum(axis=(0, 2))

    xe = x[:, :1]
    dout_expand = crand(rng, (2, 3, 4), dtype)
    dx_expand = dout_expand.sum(axis=(0, 2)).reshape(3, 1)
    return {
        "gather_grad": ("gather_grad", {"X": x, "Index": idx, DOUT: dout_gather},
                        {DX: dx_gather}, {}),
        "gather_nd_grad": ("gather_nd_grad", {"X": x, "Index": nd, DOUT: dout_nd},
                           {DX: dx_nd}, {}),
        "index_select_grad": ("index_select_grad", {"X": x, "Index": sel, DOUT: dout_sel},
                              {DX: dx_sel}, {"dim": 1}),
        "tile_grad": ("tile_grad", {"X": x, DOUT: dout_tile}, {DX: dx_tile},
                      {"repeat_times": [2, 1, 2]}),
        "expand_v2_grad": ("expand_v2_grad", {"X": xe, DOUT: dout_expand}, {DX: dx_expand},
                           {"shape": [2, 3, 4]}),
    }  # fmt: skip


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", sorted(grad_op_cases(np.random.RandomState(0), "complex64")))
def test_summing_grad_ops_match_numpy(name, dtype, rng):
    op, ins, outs, attrs = grad_op_cases(rng, dtype)[name]
    tol = {"complex64": 1e-5, "complex128": 1e-12}[dtype]
    make(op, ins, outs, attrs).check_output(atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_set_value_grad_sums_the_value_and_zeroes_the_box(dtype, rng):
    dout = crand(rng, (2, 3, 4), dtype)
    v = crand(rng, (1, 2), dtype)  # broadcast to the box [2, 2, 2]
    a = set_value_attrs([1, 2], [0, 3], [3, 0], [2, -2])
    dx = dout.copy()
    dx[:, 0:3:2, 3:0:-2] = 0
    dv = dout[:, 0:3:2, 3:0:-2].sum(axis=(0, 1)).reshape(1, 2)
    make(
        "set_value_grad",
        {DOUT: dout, "ValueTensor": v},
        {"Input@GRAD": dx, "ValueTensor@GRAD": dv},
        a,
    ).check_output(atol=1e-5, rtol=1e-5)


# --- bad input --------------------------------------------------------------------------------


def test_grad_kernels_refuse_bad_input():
    x = crand(np.random.RandomState(1), (3, 4), "complex128")
    bad = [
        # an index out of X's range, named with its value
        ("gather_grad", {"X": x, "Index": i64([0, 3]), DOUT: x[:2]}, {},
         r"'gather_grad': Index \('index_in'\) holds 3, outside \[0, 3\)"),
        ("gather_nd_grad", {"X": x, "Index": i64([[3, 0]]), DOUT: x[0, :1]}, {},
         r"'gather_nd_grad': Index \('index_in'\) holds 3, outside \[0, 3\)"),
        ("index_select_grad", {"X": x, "Index": i64([4]), DOUT: x[:, :1]}, {"dim": 1},
         r"'index_select_grad': Index \('index_in'\)\[0\] = 4 is out of range \[0, 4\)"),
        # Out@GRAD of the wrong dims
        ("pad_grad", {"X": x, DOUT: x}, {"paddings": [1, 0, 0, 1]},
         r"'pad_grad': Out@GRAD has dims \[3, 4\], expected \[4, 5\]"),
        ("tile_grad", {"X": x, DOUT: x}, {"repeat_times": [2, 1]},
         r"'tile_grad': Out@GRAD has dims \[3, 4\], expected \[6, 4\]"),
        ("expand_v2_grad", {"X": x[:, :1], DOUT: x[:2]}, {"shape": [3, 4]},
         r"'expand_v2_grad': Out@GRAD has dims \[2, 4\], expected \[3, 4\]"),
        ("slice_grad", {"Input": x, DOUT: x}, {"axes": [0], "starts": [1], "ends": [2]},
         r"'slice_grad': Out@GRAD has dims \[3, 4\], expected \[1, 4\]"),
        ("transpose2_grad", {"XShape": np.zeros((0, 3, 4)), DOUT: x}, {"axis": [1, 0]},
         r"'transpose2_grad': Out@GRAD has dims \[3, 4\], expected \[4, 3\]"),
        # Out@GRAD of another type than X's (the kernel's)
        ("gather_grad", {"X": x, "Index": i64([0, 1]), DOUT: x[:2].astype("complex64")}, {},
         r"'gather_grad'.*complex128.*holds complex64, read as complex128"),
        ("gather_grad", {"X": x, "Index": i64([0, 1]), DOUT: x[:2].real.copy()}, {},
         r"'gather_grad'.*complex128.*holds float64, read as complex128"),
    ]  # fmt: skip
    for op, ins, attrs, match in bad:
        dx = "Input@GRAD" if "Input" in ins else DX
        with pytest.raises(tide.TideError, match=match):
            make(op, ins, {dx: x}, attrs).check_output()


# --- a chain of them through append_backward ----------------------------------------------------


def append(block, op, ins, dtype, attrs=None, outs=("Out",), n=1):
    """Appends `op`, each output in `outs` a new variable of `dtype` (a list of n for a
    duplicable one, when n > 1); returns them."""
    made = {}
    for param in outs:
        vs = [block.create_var(name=tide.unique_name.generate(op), dtype=dtype) for _ in range(n)]
        made[param] = vs if n > 1 else vs[0]
    block.append_op(op, inputs=ins, outputs=made, attrs=attrs or {})
    return [made[p] for p in outs]


@pytest.mark.parametrize("dtype", CDTYPES)
def test_unused_parts_and_a_reused_input_in_one_program(dtype, rng):
    """x feeds split (one part unused: its grad is zero-filled into concat), then transpose2,
    gather with a repeated index and unstack (two pieces unused: zero-filled into stack); x also
    feeds flip, so x@GRAD sums two paths. The gradient against central differences of the
    program's loss."""
    x = crand(rng, (2, 3, 4), dtype)
    rdt = {"complex64": "float32", "complex128": "float64"}[dtype]
    w1 = rng.uniform(0.5, 1.5, (2, 2, 2)).astype(rdt)
    w2 = rng.uniform(0.5, 1.5, (2, 3, 4, 2)).astype(rdt)
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        block = main.global_block()
        xv = block.create_var(name="x", shape=x.shape, dtype=dtype, stop_gradient=False)
        wv = [
            block.create_var(name=n, shape=w.shape, dtype=rdt) for n, w in (("w1", w1), ("w2", w2))
        ]
        (parts,) = append(block, "split", {"X": xv}, dtype, {"axis": 1, "sections": [1, 2]}, n=2)
        t, _ = append(block, "transpose2", {"X": parts[1]}, dtype, {"axis": [2, 0, 1]},
                      outs=("Out", "XShape"))  # fmt: skip
        idx = block.create_var(name="idx", shape=[3], dtype="int64")
        (g,) = append(block, "gather", {"X": t, "Index": idx}, dtype)
        (pieces,) = append(block, "unstack", {"X": g}, dtype, {"axis": 0, "num": 3}, ("Y",), 3)
        (f,) = append(block, "flip", {"X": xv}, dtype, {"axis": [1]})
        terms = []
        for v, w in ((pieces[1], wv[0]), (f, wv[1])):
            (re,) = append(block, "as_real", {"X": v}, rdt)
            (wr,) = append(block, "elementwise_mul", {"X": re, "Y": w}, rdt)
            terms.append(append(block, "mean", {"X": wr}, rdt)[0])
        (loss,) = append(block, "sum", {"X": terms}, rdt)
        forward = main.clone()
        tide.append_backward(loss)
    feeds = {"x": x, "w1": w1, "w2": w2, "idx": i64([3, 3, 0])}
    exe = tide.Executor(tide.CPUPlace())

    def run(program, x_value, fetch):
        with tide.scope_guard(tide.Scope()):
            feed = {n: tide.LoDTensor(np.ascontiguousarray(a)) for n, a in feeds.items()}
            feed["x"] = tide.LoDTensor(np.ascontiguousarray(x_value))
            return np.array(exe.run(program, feed=feed, fetch_list=[fetch])[0])

    got = run(main, x, "x@GRAD")
    err, delta = GRAD_TOL[dtype]
    numeric = np.zeros(x.shape, complex)
    for idx in np.ndindex(x.shape):
        for step in (delta, 1j * delta):
            hi, lo = x.copy(), x.copy()
            hi[idx] += step
            lo[idx] -= step
            diff = run(forward, hi, loss.name).item() - run(forward, lo, loss.name).item()
            numeric[idx] += diff / (2 * delta) * (step / delta)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got, numeric, rtol=err, atol=err * np.abs(numeric).max())
