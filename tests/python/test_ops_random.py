"""Paddle's random ops (random): randint, randperm, bernoulli, multinomial, gumbel_softmax and
rrelu (plugins/ops_math/random_ops.cc). Their numbers are the generator's, not Paddle's, so the
checks are statistical (means, frequencies within ~5 standard errors, with fixed seeds), exact
where the draw does not enter (ranges, permutations, distinct indices, rrelu in test mode,
gumbel_softmax's temperature on a fixed draw), determinism of a fixed seed, gradients by central
differences on a fixed draw, and the errors of bad inputs and attributes."""

import numpy as np
import pytest
from op_test import make

import tide

RNG = np.random.RandomState(62)
DTYPES = ["float32", "float64"]
# TideDataType codes (the dtype attributes).
CODE = {"bool": 0, "int32": 2, "int64": 3, "float32": 5, "float64": 6}
GRAD = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-6}  # float64


def run(op, inputs, outputs, attrs):
    """The op's outputs ({param: array}); `outputs` holds placeholders giving their dtypes."""
    return make(op, inputs, outputs, attrs).forward()


# --- randint -------------------------------------------------------------------------------


def randint(shape, dtype="int64", **attrs):
    attrs.update(shape=list(shape), dtype=CODE[dtype])
    out = run("randint", {}, {"Out": np.zeros(shape, dtype)}, attrs)["Out"]
    assert out.dtype == np.dtype(dtype) and out.shape == tuple(shape)
    return out


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("low,high", [(0, 5), (-3, 4), (7, 8)])
def test_randint_statistics(dtype, low, high):
    x = randint((100, 100), dtype, low=low, high=high, seed=3)
    assert x.min() >= low and x.max() < high
    k, n = high - low, x.size
    counts = np.bincount(x.ravel() - low, minlength=k)
    assert len(counts) == k and np.all(
        np.abs(counts - n / k) < 5 * np.sqrt(n / k * (1 - 1 / k)) + 1
    )


def test_randint_shape_tensor_and_seed():
    out = run(
        "randint",
        {"ShapeTensor": np.array([2, 3, 4], np.int64)},
        {"Out": np.zeros((2, 3, 4), np.int64)},
        {"low": -2, "high": 2, "seed": 9},
    )["Out"]
    assert out.shape == (2, 3, 4) and out.min() >= -2 and out.max() < 2
    a, b = randint((60,), low=0, high=1000, seed=5), randint((60,), low=0, high=1000, seed=5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, randint((60,), low=0, high=1000, seed=6))
    assert not np.array_equal(randint((60,), low=0, high=1000), randint((60,), low=0, high=1000))
    # The whole int32 range (high - 1 is INT32_MAX).
    x = randint((1000,), "int32", low=-(2**31), high=2**31 - 1, seed=1)
    assert x.min() < -(2**30) and x.max() > 2**30


def test_randint_errors():
    with pytest.raises(tide.TideError, match=r"randint.*low \(3\) must be below high \(3\)"):
        randint((2,), low=3, high=3)
    with pytest.raises(tide.TideError, match=r"randint.*dtype must be int32 or int64, got float32"):
        randint((2,), "float32", low=0, high=3)


# --- randperm ------------------------------------------------------------------------------


def randperm(n, dtype="int64", **attrs):
    attrs.update(n=n, dtype=CODE[dtype])
    out = run("randperm", {}, {"Out": np.zeros((n,), dtype)}, attrs)["Out"]
    assert out.dtype == np.dtype(dtype) and out.shape == (n,)
    return out


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_randperm_is_a_permutation(dtype):
    for n in [1, 2, 7, 1000]:
        p = randperm(n, dtype, seed=n)
        np.testing.assert_array_equal(np.sort(p), np.arange(n, dtype=dtype))
    assert randperm(0, dtype).shape == (0,)


def test_randperm_uniform_and_seeded():
    # Where 0 lands over 600 seeds: each of 6 places 1/6 of the time.
    places = np.array([int(np.argmax(randperm(6, seed=s) == 0)) for s in range(1, 601)])
    counts = np.bincount(places, minlength=6)
    assert np.all(np.abs(counts - 100) < 5 * np.sqrt(600 / 6 * 5 / 6)), counts
    np.testing.assert_array_equal(randperm(50, seed=4), randperm(50, seed=4))
    assert not np.array_equal(randperm(50), randperm(50))  # seed 0: fresh each run


def test_randperm_errors():
    with pytest.raises(tide.TideError, match=r"randperm.*n must be >= 0, got -1"):
        run("randperm", {}, {"Out": np.zeros((1,), np.int64)}, {"n": -1})
    with pytest.raises(tide.TideError, match=r"randperm.*dtype must be int32, int64, float32"):
        run("randperm", {}, {"Out": np.zeros((3,), bool)}, {"n": 3, "dtype": CODE["bool"]})


# --- bernoulli -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli_statistics(dtype):
    p = np.repeat(np.array([0.0, 0.1, 0.5, 0.9, 1.0]), 4000).reshape(5, 40, 100).astype(dtype)
    out = run("bernoulli", {"X": p}, {"Out": p}, {"seed": 12})["Out"]
    assert out.dtype == np.dtype(dtype) and out.shape == p.shape
    assert set(np.unique(out)) <= {0.0, 1.0}
    assert np.all(out[0] == 0) and np.all(out[4] == 1)  # probability 0 and 1 are certain
    for i, q in enumerate([0.0, 0.1, 0.5, 0.9, 1.0]):
        assert abs(out[i].mean() - q) <= 5 * np.sqrt(q * (1 - q) / 4000) + 1e-12


def test_bernoulli_seed():
    p = np.full((200,), 0.5)
    a = run("bernoulli", {"X": p}, {"Out": p}, {"seed": 3})["Out"]
    np.testing.assert_array_equal(a, run("bernoulli", {"X": p}, {"Out": p}, {"seed": 3})["Out"])
    assert not np.array_equal(a, run("bernoulli", {"X": p}, {"Out": p}, {"seed": 4})["Out"])
    fresh = [run("bernoulli", {"X": p}, {"Out": p}, {})["Out"] for _ in range(2)]
    assert not np.array_equal(*fresh)


@pytest.mark.parametrize("bad", [1.5, -0.1, np.nan])
def test_bernoulli_errors(bad):
    p = np.array([[0.2, 0.3], [0.4, bad]])
    with pytest.raises(tide.TideError, match=r"bernoulli.*X \('x_in'\).*\[0, 1\]; element 3 is"):
        run("bernoulli", {"X": p}, {"Out": p}, {})


# --- multinomial ---------------------------------------------------------------------------


def multinomial(x, k, replacement, **attrs):
    attrs.update(num_samples=k, replacement=replacement)
    shape = x.shape[:-1] + (k,)
    out = run("multinomial", {"X": x}, {"Out": np.zeros(shape, np.int64)}, attrs)["Out"]
    assert out.dtype == np.int64 and out.shape == shape
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_multinomial_with_replacement(dtype):
    w = np.array([[1.0, 0.0, 3.0, 6.0], [0.5, 0.5, 0.0, 0.0]], dtype)
    out = multinomial(w, 20000, True, seed=8)
    for r in range(2):
        p = w[r].astype(np.float64) / w[r].sum()
        freq = np.bincount(out[r], minlength=4) / 20000.0
        assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / 20000) + 1e-12), freq
    # 1-D weights: [num_samples]
    one = multinomial(np.array([0.0, 2.0, 0.0], dtype), 7, True, seed=1)
    np.testing.assert_array_equal(one, [1] * 7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_multinomial_without_replacement(dtype):
    w = np.array([1.0, 2.0, 0.0, 3.0, 4.0], dtype)
    rows = np.tile(w, (3000, 1))
    out = multinomial(rows, 3, False, seed=21)
    assert np.all(out != 2)  # weight 0: never
    assert all(len(set(r)) == 3 for r in out)  # distinct within a row
    # The first draw follows the weights; the second, the weights without the first pick.
    p = w.astype(np.float64) / w.sum()
    freq = np.bincount(out[:, 0], minlength=5) / 3000.0
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / 3000) + 1e-12), freq
    p2 = sum(p[i] * np.where(np.arange(5) == i, 0, p) / (1 - p[i]) for i in range(5))
    freq2 = np.bincount(out[:, 1], minlength=5) / 3000.0
    assert np.all(np.abs(freq2 - p2) <= 5 * np.sqrt(p2 * (1 - p2) / 3000) + 1e-12), freq2
    # All the non-zero categories: a permutation of them.
    full = multinomial(np.array([[0.1, 0.2, 0.3, 0.4]], dtype), 4, False, seed=2)
    np.testing.assert_array_equal(np.sort(full[0]), [0, 1, 2, 3])


def test_multinomial_seed():
    w = np.ones((100,))
    a = multinomial(w, 50, False, seed=77)
    np.testing.assert_array_equal(a, multinomial(w, 50, False, seed=77))
    assert not np.array_equal(multinomial(w, 50, False), multinomial(w, 50, False))


def test_multinomial_errors():
    def draw(x, k=1, replacement=False, shape=None):
        out = np.zeros(shape or x.shape[:-1] + (k,), np.int64)
        run("multinomial", {"X": x}, {"Out": out}, {"num_samples": k, "replacement": replacement})

    with pytest.raises(tide.TideError, match=r"multinomial.*X \('x_in'\) must be 1-D .* 2-D"):
        draw(np.ones((2, 2, 3)))
    with pytest.raises(tide.TideError, match=r"multinomial.*num_samples must be > 0, got 0"):
        draw(np.ones((3,)), 0, shape=(1,))
    with pytest.raises(
        tide.TideError, match=r"multinomial.*num_samples \(4\) must be at most the 3"
    ):
        draw(np.ones((2, 3)), 4)
    with pytest.raises(
        tide.TideError, match=r"multinomial.*finite and >= 0; row 1 category 2 is -1"
    ):
        draw(np.array([[1.0, 1.0, 1.0], [1.0, 1.0, -1.0]]))
    with pytest.raises(tide.TideError, match=r"multinomial.*row 0 category 0 is inf"):
        draw(np.array([np.inf, 1.0]))
    with pytest.raises(tide.TideError, match=r"multinomial.*weights of row 1 .* are all 0"):
        draw(np.array([[1.0, 2.0], [0.0, 0.0]]), 1, True)
    with pytest.raises(
        tide.TideError, match=r"multinomial.*num_samples \(2\) must be at most the 1 non-zero"
    ):
        draw(np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 5.0]]), 2)


# --- gumbel_softmax ------------------------------------------------------------------------


def gumbel(x, **attrs):
    return run("gumbel_softmax", {"X": x}, {"Out": x}, attrs)["Out"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_gumbel_softmax_soft_and_hard(dtype, axis):
    x = RNG.uniform(-2, 2, (3, 4, 5)).astype(dtype)
    soft = gumbel(x, axis=axis, seed=5)
    assert soft.dtype == np.dtype(dtype) and soft.shape == x.shape
    assert np.all(soft > 0)
    np.testing.assert_allclose(soft.sum(axis=axis), 1.0, rtol=1e-5)
    # hard: the one-hot of the same draw's argmax
    hard = gumbel(x, axis=axis, hard=True, seed=5)
    assert set(np.unique(hard)) == {0.0, 1.0}
    np.testing.assert_array_equal(hard.sum(axis=axis), 1.0)
    np.testing.assert_array_equal(np.argmax(hard, axis=axis), np.argmax(soft, axis=axis))


def test_gumbel_softmax_temperature_on_a_fixed_draw():
    """log Out = (X + g) / T - log-sum-exp: on one draw g, X -> X + d moves log Out_i - log
    Out_j by (d_i - d_j) / T exactly."""
    x = RNG.uniform(-1, 1, (4, 6))
    d = RNG.uniform(-1, 1, (4, 6))
    for temperature in [0.5, 1.0, 3.0]:
        a = np.log(gumbel(x, temperature=temperature, seed=7))
        b = np.log(gumbel(x + d, temperature=temperature, seed=7))
        diff = (b - a) - (b - a)[:, :1]
        np.testing.assert_allclose(diff, (d - d[:, :1]) / np.float32(temperature), atol=1e-10)


def test_gumbel_softmax_argmax_follows_softmax():
    """The Gumbel-max trick: the hard sample's index is distributed as softmax(X)."""
    logits = np.array([0.0, 1.0, -1.0, 2.0])
    x = np.tile(logits, (20000, 1))
    idx = np.argmax(gumbel(x, hard=True, seed=13, temperature=0.7), axis=1)
    p = np.exp(logits) / np.exp(logits).sum()
    freq = np.bincount(idx, minlength=4) / 20000.0
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / 20000)), freq


def test_gumbel_softmax_grad():
    # On a fixed draw at temperature 1 the op is softmax(X + g): central differences.
    for axis in [-1, 0]:
        x = RNG.uniform(-1, 1, (3, 4))
        t = make("gumbel_softmax", {"X": x}, {"Out": x}, {"axis": axis, "seed": 11})
        t.check_grad(["X"], "Out", **GRAD)
    # Paddle's grad is softmax's of Out whatever the temperature (no 1 / T), and 0 with hard
    # (Out one-hot).
    out = gumbel(RNG.uniform(-1, 1, (3, 4, 2)), temperature=2.0, axis=1, seed=3)
    g = RNG.uniform(-1, 1, out.shape)
    want = out * (g - (g * out).sum(axis=1, keepdims=True))
    got = run("gumbel_softmax_grad", {"Out": out, "Out@GRAD": g}, {"X@GRAD": out}, {"axis": 1})[
        "X@GRAD"
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    x = RNG.uniform(-1, 1, (3, 4))
    t = make("gumbel_softmax", {"X": x}, {"Out": x}, {"hard": True, "seed": 2})
    t.check_grad(["X"], "Out", **GRAD)  # hard: piecewise constant, grad 0 both ways


def test_gumbel_softmax_errors():
    x = np.zeros((2, 3))
    with pytest.raises(tide.TideError, match=r"temperature' must be > 0, got 0"):
        gumbel(x, temperature=0.0)
    with pytest.raises(tide.TideError, match=r"gumbel_softmax.*axis 2 is out of range for rank 2"):
        gumbel(x, axis=2)


# --- rrelu ---------------------------------------------------------------------------------


def away_from_zero(shape, dtype="float64"):
    x = RNG.uniform(-1, 1, shape)
    return (x + np.where(x < 0, -0.05, 0.05)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower,upper", [(0.125, 1.0 / 3.0), (0.0, 1.0), (0.2, 0.2)])
def test_rrelu_test_mode(dtype, lower, upper):
    x = RNG.uniform(-1, 1, (3, 4, 5)).astype(dtype)
    mid = (np.float32(lower) + np.float32(upper)) / 2.0
    want_noise = np.where(x >= 0, 1.0, mid)
    t = make(
        "rrelu",
        {"X": x},
        {"Out": (x * want_noise).astype(dtype), "Noise": want_noise.astype(dtype)},
        {"lower": lower, "upper": upper, "is_test": True},
    )
    t.check_output(atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rrelu_training(dtype):
    lower, upper = 0.1, 0.6
    x = away_from_zero((100, 100), dtype)
    res = run(
        "rrelu", {"X": x}, {"Out": x, "Noise": x}, {"lower": lower, "upper": upper, "seed": 4}
    )
    out, noise = res["Out"], res["Noise"]
    assert out.dtype == np.dtype(dtype) and noise.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(noise[x >= 0], 1.0)
    slopes = noise[x < 0].astype(np.float64)
    assert slopes.min() >= np.float32(lower) and slopes.max() < np.float32(upper)
    n, w = slopes.size, upper - lower
    assert abs(slopes.mean() - (lower + upper) / 2) < 5 * w / np.sqrt(12 * n)
    assert abs(slopes.var() - w * w / 12) < 5 * w * w * np.sqrt(1 / 180.0 / n)
    np.testing.assert_allclose(out, x * noise, rtol=1e-6)
    again = run("rrelu", {"X": x}, {"Out": x}, {"lower": lower, "upper": upper, "seed": 4})["Out"]
    np.testing.assert_array_equal(out, again)  # a fixed seed repeats its slopes
    fresh = [run("rrelu", {"X": x}, {"Out": x}, {"lower": lower, "upper": upper})["Out"]]
    fresh.append(run("rrelu", {"X": x}, {"Out": x}, {"lower": lower, "upper": upper})["Out"])
    assert not np.array_equal(*fresh)


@pytest.mark.parametrize("is_test", [True, False])
def test_rrelu_grad(is_test):
    x = away_from_zero((4, 5))
    attrs = {"lower": 0.2, "upper": 0.5, "is_test": is_test, "seed": 6}
    t = make("rrelu", {"X": x}, {"Out": x, "Noise": None}, attrs)
    t.check_grad(["X"], "Out", **GRAD)


def test_rrelu_errors():
    x = np.zeros((2, 3))
    outs = {"Out": x, "Noise": x}
    for attrs, msg in [
        ({"lower": 0.5, "upper": 0.2}, r"lower \(0.5\) must be at most upper \(0.2\)"),
        ({"lower": -0.1, "upper": 0.2}, r"lower must be in \[0, 1\], got -0.1"),
        ({"lower": 0.1, "upper": 1.5}, r"upper must be in \[0, 1\], got 1.5"),
    ]:
        with pytest.raises(tide.TideError, match=r"rrelu.*" + msg):
            run("rrelu", {"X": x}, outs, attrs)
