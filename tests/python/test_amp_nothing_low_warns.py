"""Mixed-precision training whose rewrite puts no op in the low type (float16 on the CPU, which
has no float16 kernels for the allow-listed ops) warns, as bf16 inference does, naming the place,
the type, why and what to do; a rewrite that converts some ops does not warn."""

import warnings

import pytest

import tide
from tide import layers
from tide.contrib import mixed_precision as amp
from tide.contrib.mixed_precision.rewrite import kernel_types


def _minimize(decorate):
    main, startup = tide.Program(), tide.Program()
    with tide.unique_name.guard(), tide.program_guard(main, startup):
        x = layers.data(name="x", shape=[13])
        y = layers.data(name="y", shape=[1])
        loss = layers.mean(layers.square_error_cost(layers.fc(x, size=1), y))
        opt = decorate(tide.optimizer.SGD(0.01))
        opt.minimize(loss)
    return opt


def _bf16_on_cpu():
    return "bfloat16" in kernel_types("mul", "cpu") and "bfloat16" in kernel_types(
        "mul_grad", "cpu"
    )


@pytest.mark.skipif(
    "float16" in kernel_types("mul", "cpu"), reason="this build has CPU float16 kernels"
)
def test_float16_on_the_cpu_warns_naming_place_dtype_and_what_to_do():
    with pytest.warns(RuntimeWarning) as record:
        opt = _minimize(amp.decorate)
    assert opt.low_precision_ops == []
    msg = [str(w.message) for w in record if "mixed precision" in str(w.message)]
    assert len(msg) == 1, [str(w.message) for w in record]
    assert msg[0].startswith("mixed precision: no op runs in float16 on cpu:0: "), msg[0]
    assert "(mul) have no float16 kernels" in msg[0], msg[0]
    assert "trains in float32" in msg[0] and "decorate_bf16" in msg[0], msg[0]


def test_lists_that_allow_nothing_warn_naming_the_white_list():
    # fc's mul and bias add, the program's only white ops
    lists = amp.AutoMixedPrecisionListsBF16(custom_black_list={"mul", "elementwise_add"})
    with pytest.warns(
        RuntimeWarning,
        match=r"no op runs in bfloat16 on cpu:0: none of its ops is on the lists' white list.*"
        r"custom_white_list",
    ):
        opt = _minimize(lambda o: amp.decorate_bf16(o, lists))
    assert opt.low_precision_ops == []


@pytest.mark.skipif(not _bf16_on_cpu(), reason="no bfloat16 mul kernels on the CPU (device_mkldnn)")
def test_a_rewrite_that_converts_ops_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        opt = _minimize(lambda o: amp.decorate_bf16(o, place=tide.CPUPlace()))
    assert "mul" in opt.low_precision_ops
