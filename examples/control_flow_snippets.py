"""The control-flow snippets of Fluid's developer guide, runnable: a Switch that picks the first case that holds
(printing which), and a While loop that copies a tensor array element by element. Run:

    PYTHONPATH=build/python python examples/control_flow_snippets.py
"""

import numpy as np

import tide
from tide import layers


def switch_snippet(a_value):
    """The developer guide's switch: case a <= 10, case a > 0, default. Returns the case number taken."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        a = layers.fill_constant([1], "float32", a_value)
        taken = layers.fill_constant([1], "int64", 0)
        with layers.Switch() as switch:
            with switch.case(layers.less_equal(a, layers.fill_constant([1], "float32", 10))):
                layers.assign(
                    layers.Print(layers.fill_constant([1], "int64", 1), message="Case 1"), taken
                )
            with switch.case(layers.greater_than(a, layers.fill_constant([1], "float32", 0))):
                layers.assign(
                    layers.Print(layers.fill_constant([1], "int64", 2), message="Case 2"), taken
                )
            with switch.default():
                layers.assign(
                    layers.Print(layers.fill_constant([1], "int64", 3), message="Case 3"), taken
                )
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        return int(exe.run(main, fetch_list=[taken])[0][0])


def while_snippet(d0_value, length=3):
    """The developer guide's while: reads data_array[i] and writes it to result[i + 1], for i < length.
    Returns the result array's elements."""
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        d0 = layers.data("d0", shape=[10], dtype="float32")
        i = layers.fill_constant([1], "int64", 0)
        data_array = layers.array_write(x=d0, i=i)
        result = layers.create_array("float32")
        layers.array_write(d0, i=i, array=result)
        array_len = layers.fill_constant(shape=[1], dtype="int64", value=length)
        cond = layers.less_than(x=i, y=array_len)
        while_op = layers.While(cond=cond)
        with while_op.block():
            d = layers.array_read(array=data_array, i=i)
            i = layers.increment(x=i, in_place=True)
            layers.array_write(layers.scale(d, 2.0), i=i, array=data_array)  # the next element
            layers.array_write(d, i=i, array=result)
            layers.less_than(x=i, y=array_len, cond=cond)
        n = layers.array_length(result)
        reads = [
            layers.array_read(result, layers.fill_constant([1], "int64", k))
            for k in range(length + 1)
        ]
    exe = tide.Executor(tide.CPUPlace())
    with tide.scope_guard(tide.Scope()):
        out = exe.run(main, feed={"d0": d0_value}, fetch_list=[n] + reads)
    assert int(out[0][0]) == length + 1
    return out[1:]


def main():
    for a in (5.0, 20.0, -3.0):
        print("switch with a = %5.1f took case %d" % (a, switch_snippet(a)))
    d0 = np.arange(10, dtype="float32").reshape(1, 10)
    for k, v in enumerate(while_snippet(d0)):
        print("result[%d] = %s" % (k, v[0, :4]))


if __name__ == "__main__":
    main()
