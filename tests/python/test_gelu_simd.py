"""float32 gelu and gelu_grad's vectorized CPU kernels (plugins/ops_math/act_simd.cc), the exact
erf form and approximate=True's tanh form, against float64 references written here with
math.erfc: over a dense grid of [-10, 10] the forward is within a few float32 ulps of the float64
value everywhere, its tail below -3 included (where 0.5 x (1 + erf(x / sqrt2)) in float32 cancels
to nothing); the grads too, except near their zero at x = -0.75, where the bound is in ulps of
the terms summed (Phi(x) and x phi(x)). The extremes (+-inf, NaN, +-0, denormals, +-1e30), sizes
that are not a multiple of any vector width, finite differences, in place, float64 still on the
generic kernel (tide/ops/activation.hpp's GeluAct), and a compiled model (tide.aot.compile), which
still calls that kernel for float32 too.

Bounds: measured at every float32 x (C++, the AVX-512 clone) 6.3 ulps (erf form) and 3.6 (tanh
form), 8.4 without FMA (the baseline clone); the grads 5.0 / 7.8 outside (-1.5, -0.4) (9.3
without FMA), and within 3.8 / 5.3 ulps of the terms' sum everywhere.
"""

import math
import shutil

import numpy as np
import pytest
from op_test import make

import tide

SQRT_2_PI = math.sqrt(2 / math.pi)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def ref_gelu(x, approximate):
    """float64 gelu of x, and the magnitude its terms sum to (for the grads' error scale)."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if approximate:
            # 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)): no cancellation below 0.
            return x / (1 + np.exp(-2 * SQRT_2_PI * (x + 0.044715 * x**3)))
        return 0.5 * x * _erfc(-x / math.sqrt(2)).astype(np.float64)


def ref_gelu_grad(x, approximate):
    """float64 gelu'(x) and |first term| + |second term| (the scale its error is judged on)."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if approximate:
            e = np.exp(-2 * SQRT_2_PI * (x + 0.044715 * x**3))
            s = 1 / (1 + e)
            s_1_s = 1 / ((1 + e) * (1 + 1 / e))  # s (1 - s), finite where e is 0 or inf
            second = x * s_1_s * 2 * SQRT_2_PI * (1 + 3 * 0.044715 * x**2)
            return s + second, s + np.abs(second)
        cdf = 0.5 * _erfc(-x / math.sqrt(2)).astype(np.float64)
        second = x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        return cdf + second, cdf + np.abs(second)


def ulps(got, want, scale=None):
    """|got - want| in float32 ulps of |want| (or of `scale`), denormal ulps below 2^-126."""
    scale = np.abs(want) if scale is None else scale
    tiny = np.float64(2.0**-126)
    exp = np.floor(np.log2(np.maximum(scale, tiny)))
    return np.abs(got.astype(np.float64) - want) / np.exp2(exp - 23)


def run_gelu(x, approximate, dout=None):
    """gelu's Out of a float32 x by the op alone, and gelu_grad's X@GRAD where dout is given."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        block = main.global_block()
        xv = tide.layers.data(
            name="x", shape=list(x.shape), dtype=str(x.dtype), append_batch_size=False
        )
        out = block.create_var(name="out", dtype=str(x.dtype))
        attrs = {"approximate": approximate}
        block.append_op("gelu", inputs={"X": [xv]}, outputs={"Out": [out]}, attrs=attrs)
        fetch, feed = [out], {"x": x}
        if dout is not None:
            g = tide.layers.data(
                name="g", shape=list(x.shape), dtype=str(x.dtype), append_batch_size=False
            )
            dx = block.create_var(name="dx", dtype=str(x.dtype))
            block.append_op(
                "gelu_grad",
                inputs={"X": [xv], "Out@GRAD": [g]},
                outputs={"X@GRAD": [dx]},
                attrs=attrs,
            )
            fetch.append(dx)
            feed["g"] = dout
    got = tide.Executor(tide.CPUPlace()).run(main, feed=feed, fetch_list=fetch, scope=tide.Scope())
    return [np.asarray(v) for v in got]


# The grads' zero is at x = -0.7518 (erf form) and -0.7525 (tanh form): around it the error is
# judged in ulps of the terms summed.
NEAR_ZERO = (-1.5, -0.4)
BOUND = {
    # (forward, grad outside NEAR_ZERO, grad near it in ulps of the terms)
    False: (10, 8, 6),
    True: (5, 11, 6),
}


@pytest.fixture(scope="module")
def grid():
    """2e6 + 1 evenly spaced float32 in [-10, 10] with each form's float64 values."""
    x = np.linspace(-10, 10, 2_000_001).astype(np.float32)
    refs = {a: (ref_gelu(x, a), ref_gelu_grad(x, a)) for a in (False, True)}
    return x, refs


@pytest.mark.parametrize("approximate", [False, True])
def test_forward_within_a_few_ulps_of_float64_on_a_dense_grid(grid, approximate):
    x, refs = grid
    (out,) = run_gelu(x, approximate)
    want = refs[approximate][0]
    err = ulps(out, want)
    assert err.max() <= BOUND[approximate][0], (err.max(), x[err.argmax()])
    # The tail has all its bits: gelu(-6) is -6e-9, gelu(-10) -8e-23 (erf form).
    assert np.all(out[x < 0] < 0) and np.all(out[x > 0] > 0)


@pytest.mark.parametrize("approximate", [False, True])
def test_grad_within_a_few_ulps_of_float64_on_a_dense_grid(grid, approximate):
    x, refs = grid
    (_, dx) = run_gelu(x, approximate, dout=np.ones_like(x))
    want, scale = refs[approximate][1]
    near = (x > NEAR_ZERO[0]) & (x < NEAR_ZERO[1])
    err = ulps(dx, want)
    assert err[~near].max() <= BOUND[approximate][1], (
        err[~near].max(),
        x[~near][err[~near].argmax()],
    )
    err_near = ulps(dx[near], want[near], scale[near])
    assert err_near.max() <= BOUND[approximate][2], err_near.max()


@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("n", [1, 7, 17, 1000003])
def test_sizes_not_a_multiple_of_the_vector_width(approximate, n):
    # Every element, the loop's tail ones included, against float64; dOut not all ones.
    rng = np.random.RandomState(n)
    x = rng.uniform(-8, 8, n).astype(np.float32)
    dout = rng.uniform(-2, 2, n).astype(np.float32)
    out, dx = run_gelu(x, approximate, dout)
    assert out.shape == dx.shape == (n,)
    assert ulps(out, ref_gelu(x, approximate)).max() <= BOUND[approximate][0]
    grad, scale = ref_gelu_grad(x, approximate)
    # dOut * gelu': one more rounding, judged in ulps of dOut times the terms.
    err = ulps(dx, dout * grad, np.abs(dout) * scale)
    assert err.max() <= BOUND[approximate][1] + 1, err.max()


DENORMALS = [1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, -1.1754942e-38]


@pytest.mark.parametrize("approximate", [False, True])
def test_extremes(approximate):
    x = np.array(
        [np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 1e30, -1e30, 3.4e38, -3.4e38, 20, -20]
        + DENORMALS,
        np.float32,
    )
    out, dx = run_gelu(x, approximate, dout=np.ones_like(x))
    nan = np.isnan(x)
    assert np.all(np.isnan(out[nan])) and np.all(np.isnan(dx[nan]))
    x, out, dx = x[~nan], out[~nan], dx[~nan]
    big = np.abs(x) >= 20
    # gelu(x) = x above, 0 (or -0) below; gelu' = 1 above, 0 below.
    np.testing.assert_array_equal(out[big], np.where(x[big] > 0, x[big], 0))
    np.testing.assert_array_equal(dx[big], np.where(x[big] > 0, 1, 0))
    assert np.all(np.signbit(out[big & (x < 0)]) | (out[big & (x < 0)] == 0))
    # +-0 keep their sign; denormals give x / 2 to a denormal ulp; the grad is 1/2 at them.
    small = ~big
    np.testing.assert_array_equal(np.signbit(out[x == 0]), np.signbit(x[x == 0]))
    assert np.all(
        np.abs(out[small].astype(np.float64) - x[small] / 2) <= 2.0**-149 + 1e-7 * np.abs(x[small])
    )
    np.testing.assert_allclose(dx[small], 0.5, rtol=1e-6)


@pytest.mark.parametrize("approximate", [False, True])
def test_the_tail_keeps_its_bits(approximate):
    # Down to the denormals: gelu(-13.3) is -1.5e-39 (erf form), gelu(-10.5) -7e-43 (tanh form);
    # both round to 0 below about -14.2 and -10.9.
    x = np.array([-3, -5, -6, -8, -10, -10.5, -12, -13, -13.3, -14, -14.5, -15, -16], np.float32)
    out, dx = run_gelu(x, approximate, dout=np.ones_like(x))
    want = ref_gelu(x, approximate)
    grad, _ = ref_gelu_grad(x, approximate)
    # Normal results to a few ulps; denormal ones to a couple of denormal ulps.
    assert ulps(out, want).max() <= BOUND[approximate][0]
    assert ulps(dx, grad).max() <= BOUND[approximate][1]
    assert np.all(out[want < -1e-37] < 0)


@pytest.mark.parametrize("approximate", [False, True])
def test_float64_keeps_the_generic_kernel(approximate):
    x = np.linspace(-5, 5, 1001)
    out, dx = run_gelu(x, approximate, dout=np.ones_like(x))
    assert out.dtype == np.float64 and dx.dtype == np.float64
    np.testing.assert_allclose(out, ref_gelu(x, approximate), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dx, ref_gelu_grad(x, approximate)[0], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("approximate", [False, True])
def test_check_grad(approximate):
    x = np.random.RandomState(3).uniform(-4, 4, (3, 11)).astype(np.float32)
    out = ref_gelu(x, approximate).astype(np.float32)
    t = make("gelu", {"X": x}, {"Out": out}, {"approximate": approximate})
    t.check_output(atol=1e-6, rtol=1e-6)
    t.check_grad(["X"], "Out", max_relative_error=0.02, numeric_grad_delta=0.01)


def test_in_place_gives_the_same_values():
    # gelu declares X -> Out in place: the kernel reads each element before writing it.
    x = np.random.RandomState(4).uniform(-6, 6, 4099).astype(np.float32)
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        xv = tide.layers.data(name="x", shape=[4099], dtype="float32", append_batch_size=False)
        y = tide.layers.scale(xv, scale=1.0)
        main.global_block().append_op("gelu", inputs={"X": [y]}, outputs={"Out": [y]})
    (got,) = tide.Executor(tide.CPUPlace()).run(
        main, feed={"x": x}, fetch_list=[y], scope=tide.Scope()
    )
    (want,) = run_gelu(x, False)
    np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="building a compiled model needs cmake")
def test_a_compiled_model_computes_the_executors_bits(tmp_path):
    # tide.aot.compile calls tide/kernels/registry.hpp's direct kernels where it lists the data
    # type: its gelu row leaves float32 to the plugin (this kernel), so a compiled model computes
    # the executor's bits (docs/aot.md's promise).
    from test_aot_compile import compile_and_build, ops_in, run_main

    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[1000], dtype="float32")
        fetches = [tide.layers.gelu(x), tide.layers.gelu(x, approximate=True)]
    src, model_main = compile_and_build(tmp_path, main, ["x"], fetches, {"x": [(1, 4), 1000]})
    assert [t for t, _ in ops_in(src)] == ["gelu", "gelu"]
    xs = np.random.RandomState(5).uniform(-8, 8, (3, 1000)).astype(np.float32)
    got = run_main(model_main, tmp_path, [xs])
    want = tide.Executor(tide.CPUPlace()).run(main, feed={"x": xs}, fetch_list=fetches)
    for g, w, approximate in zip(got, want, (False, True)):
        assert g.dtype == np.float32 and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
        np.testing.assert_allclose(g, ref_gelu(xs, approximate), rtol=1e-6, atol=5e-7)
