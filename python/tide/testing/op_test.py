"""OpTest: checks one op of a loaded op pack like PaddlePaddle's OpTest: its outputs against a
numpy reference, and its gradients (from the grad ops append_backward generates through the
op's registered grad maker) against central finite differences. With place= a test runs on
another place; the conformance kit (tide.testing.conformance) runs every op's tests on a device
and, through the observer hook below, judges only the kernels that ran on it::

    class TestScale(OpTest):
        op_type = "scale"
        def setup(self, dtype):
            x = np.random.rand(3, 4).astype(dtype)
            self.inputs = {"X": x}
            self.attrs = {"scale": 2.0}
            self.outputs = {"Out": x * 2.0}

A duplicable input or output is a list of (variable name, array) pairs; an array may be an
(array, recursive sequence lengths) pair. An output expected None is created (a grad op may need
it, e.g. XShape) but neither fetched nor compared; forward() returns the fetched outputs for tests
whose expectations depend on them (random ops, dropout's Mask). Integer and bool inputs never
take gradients, and integer and bool outputs must match exactly.
"""

import contextlib

import numpy as np

import tide

# Set by the conformance kit (tide.testing.runner): chooses the place of tests that name none
# and is told, per check, which kernel each op under test ran with.
_observer = None


# The loss weights' names: no op input may start with this (an input called "Weight" once did,
# and its gradient was silently left out).
_LOSS_WEIGHT = "__optest_loss_weight__"


def _as_list(param, value):
    """An input/output value as [(var name, array, lod)]."""
    if isinstance(value, list):  # duplicable: [(name, array) or (name, (array, lod))]
        out = []
        for name, v in value:
            arr, lod = v if isinstance(v, tuple) else (v, None)
            out.append((name, np.asarray(arr), lod))
        return out
    arr, lod = value if isinstance(value, tuple) else (value, None)
    return [(param.lower() + "_in", np.asarray(arr), lod)]


def _is_float(arr):
    return np.issubdtype(np.asarray(arr).dtype, np.floating)


def _is_differentiable(arr):
    """Float and complex inputs take gradients."""
    return np.issubdtype(np.asarray(arr).dtype, np.inexact)


def _expected(param, value):
    """[(var name, expected array or None, lod)] of an output as _build names its variables."""
    if isinstance(value, list):
        return [
            (n, None if v is None else a, lod)
            for (n, a, lod), (_, v) in zip(_as_list(param, value), value)
        ]
    if value is None:
        return [(param.lower() + "_out", None, None)]
    return [(param.lower() + "_out",) + _as_list(param, value)[0][1:]]


__all__ = ["OpTest", "make"]


class OpTest:
    """The base of op tests (see the module's description): a subclass sets op_type and, in setup(dtype), inputs, attrs and outputs; check_output() and check_grad() compare against them."""

    op_type = None
    place = None  # default: tide.CPUPlace()

    def setup(self, dtype):
        """Sets self.inputs, self.outputs (expected values, or None to skip), self.attrs."""
        raise NotImplementedError

    # -- building -----------------------------------------------------------------------------
    def _build(self, stop_gradient_inputs=True):
        main, startup = tide.Program(), tide.Program()
        feeds, out_vars = {}, {}
        with tide.program_guard(main, startup):
            block = main.global_block()
            ins = {}
            for param, value in self.inputs.items():
                vs = []
                for name, arr, lod in _as_list(param, value):
                    # Integer and bool inputs (labels, ids) never take gradients.
                    v = block.create_var(
                        name=name,
                        shape=arr.shape,
                        dtype=arr.dtype.name,
                        lod_level=len(lod) if lod else 0,
                        stop_gradient=stop_gradient_inputs or not _is_differentiable(arr),
                    )
                    t = tide.LoDTensor(np.require(arr, requirements="C"))
                    if lod:
                        t.set_recursive_sequence_lengths(lod)
                    feeds[name] = t
                    vs.append(v)
                ins[param] = vs if isinstance(value, list) else vs[0]
            outs = {}
            for param, value in self.outputs.items():
                names = (
                    [n for n, _, _ in _as_list(param, value)]
                    if isinstance(value, list)
                    else [param.lower() + "_out"]
                )
                vs = [block.create_var(name=n, dtype=self._out_dtype(param)) for n in names]
                outs[param] = vs if isinstance(value, list) else vs[0]
                for n, v in zip(names, vs):
                    out_vars[n] = v
            block.append_op(
                self.op_type, inputs=ins, outputs=outs, attrs=getattr(self, "attrs", {})
            )
            self._tested_ops = range(len(block.ops))
        return main, startup, feeds, out_vars

    def _out_dtype(self, param):
        value = self.outputs[param]
        if isinstance(value, list):
            value = value[0][1]
        if isinstance(value, tuple):
            value = value[0]
        return np.asarray(value).dtype.name if value is not None else "float32"

    def _place(self):
        if self.place is not None:
            return self.place
        return _observer.place_for(self.op_type) if _observer else tide.CPUPlace()

    def _run(self, program, feeds, fetch, scope=None, judged=None):
        """judged: the indices of the ops under test in `program` (their kernels are reported to
        the observer)."""
        exe = tide.Executor(self._place())
        try:
            with tide.scope_guard(scope or tide.Scope()):
                return exe.run(program, feed=dict(feeds), fetch_list=fetch, return_numpy=False)
        finally:  # a kernel that raised is reported too
            if _observer and judged is not None:
                _observer.ran(self, _kernels_of(program, exe.last_run_info(), judged))

    def _checking(self, kind):
        """Brackets one check ("forward" or "gradient") for the observer."""
        return _observer.check(self, kind) if _observer else contextlib.nullcontext()

    # -- checks -------------------------------------------------------------------------------
    def _expected_outputs(self):
        """{var name: (param, expected array or None, lod)} in _build's output order."""
        expected = {}
        for param, value in self.outputs.items():
            for name, arr, lod in _expected(param, value):
                expected[name] = (param, arr, lod)
        return expected

    def forward(self):
        """Runs the op once; {param: array} (a list of arrays for a duplicable output) for every
        output whose expected value is not None (those may be placeholders declaring the dtype)."""
        with self._checking("forward"):
            return self._forward()

    def _forward(self):
        main, _, feeds, out_vars = self._build()
        expected = self._expected_outputs()
        names = [n for n in out_vars if expected[n][1] is not None]
        got = dict(
            zip(names, (t.numpy() for t in self._run(main, feeds, names, judged=self._tested_ops)))
        )
        result = {}
        for param, value in self.outputs.items():
            arrs = [got[n] for n, _, _ in _expected(param, value) if n in got]
            if arrs:
                result[param] = arrs if isinstance(value, list) else arrs[0]
        return result

    def _check_declared(self, param, var, arr):
        """What the op's shape inference declared for an output when the program was built
        (its dtype, and each dim it knew) must be what the kernel wrote: ops after it are built
        on the declaration (as PyTorch's opcheck compares a fake kernel with the real one)."""
        declared = tide.core.convert_dtype(var.dtype)
        wrote = "bfloat16" if declared == "bfloat16" and arr.dtype == np.uint16 else arr.dtype.name
        assert declared == wrote, "%s %s: the kernel wrote %s, shape inference declared %s" % (
            self.op_type,
            param,
            wrote,
            declared,
        )
        dims = list(var.shape)
        assert len(dims) == arr.ndim and all(d in (-1, n) for d, n in zip(dims, arr.shape)), (
            "%s %s: the kernel wrote dims %s, shape inference declared %s"
            % (self.op_type, param, list(arr.shape), dims)
        )

    def check_output(self, atol=1e-5, rtol=1e-5, no_check_set=()):
        """Compares every output (but those in no_check_set) with its expected value; outputs
        expected None are neither fetched nor compared. Returns the fetched LoDTensors."""
        with self._checking("forward"):
            return self._check_output(atol, rtol, no_check_set)

    def _check_output(self, atol, rtol, no_check_set):
        main, _, feeds, out_vars = self._build()
        expected = self._expected_outputs()
        names = [n for n in out_vars if expected[n][1] is not None]
        got = self._run(main, feeds, names, judged=self._tested_ops)
        for name, tensor in zip(names, got):
            param, want, lod = expected[name]
            if param in no_check_set or want.dtype == object:
                continue
            arr = tensor.numpy()
            self._check_declared(param, out_vars[name], arr)
            assert arr.shape == want.shape, "%s %s: shape %s, expected %s" % (
                self.op_type,
                param,
                arr.shape,
                want.shape,
            )
            if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
                assert arr.dtype == want.dtype, "%s %s: dtype %s, expected %s" % (
                    self.op_type,
                    param,
                    arr.dtype,
                    want.dtype,
                )
                np.testing.assert_array_equal(
                    arr, want, err_msg="%s output %s" % (self.op_type, param)
                )
            else:
                np.testing.assert_allclose(
                    arr, want, rtol=rtol, atol=atol, err_msg="%s output %s" % (self.op_type, param)
                )
            if lod is not None:
                assert tensor.recursive_sequence_lengths() == lod, "%s %s: LoD" % (
                    self.op_type,
                    param,
                )
        return got

    def check_grad(
        self,
        inputs_to_check,
        output_names,
        max_relative_error=0.005,
        numeric_grad_delta=0.005,
        no_grad_set=None,
        seed=7,
    ):
        """d(sum_o mean(w_o * out_o))/d(input) from the grad ops vs central differences.

        output_names: output params (a duplicable one contributes each of its parts);
        inputs_to_check: input params (each part of a duplicable one is checked) or the variable
        names of single parts of duplicable inputs."""
        with self._checking("gradient"):
            if _observer and not _observer.judges(self.op_type):
                return  # the kit runs an op the device lacks on the CPU: no need to differentiate
            self._check_grad(
                inputs_to_check,
                output_names,
                max_relative_error,
                numeric_grad_delta,
                no_grad_set,
                seed,
            )

    def _check_grad(
        self,
        inputs_to_check,
        output_names,
        max_relative_error,
        numeric_grad_delta,
        no_grad_set,
        seed,
    ):
        if isinstance(output_names, str):
            output_names = [output_names]
        rng = np.random.RandomState(seed)
        main, startup, feeds, out_vars = self._build(stop_gradient_inputs=False)
        loss_outs = [n for p in output_names for n, _, _ in _expected(p, self.outputs[p])]
        fwd_outs = self._run(main, feeds, loss_outs)
        # An empty output (e.g. a 0-size part of split) adds nothing to the loss.
        kept = [(n, o) for n, o in zip(loss_outs, fwd_outs) if o.numpy().size]
        kept_shapes = {n: tuple(o.shape()) for n, o in kept}
        assert kept, "%s: every output in %s is empty" % (self.op_type, output_names)
        loss_outs = [n for n, _ in kept]
        # A complex output enters the loss through its (real, imaginary) pairs (as_real), each
        # part with a weight of its own.
        weights = {}
        for n, o in kept:
            a = o.numpy()
            real = a.real.dtype if np.iscomplexobj(a) else a.dtype
            shape = tuple(o.shape()) + ((2,) if np.iscomplexobj(a) else ())
            weights[n] = rng.uniform(0.5, 1.5, size=shape).astype(real)
        with tide.program_guard(main, startup):
            block = main.global_block()
            terms = []
            for n in loss_outs:
                w = block.create_var(
                    name=_LOSS_WEIGHT + n,
                    shape=weights[n].shape,
                    dtype=weights[n].dtype.name,
                    stop_gradient=True,
                )
                feeds[w.name] = tide.LoDTensor(weights[n])
                out = out_vars[n]
                if weights[n].ndim > len(kept_shapes[n]):
                    out = _as_real(block, out, weights[n].dtype.name)
                terms.append(tide.layers.mean(tide.layers.elementwise_mul(out, w)))
            loss = terms[0] if len(terms) == 1 else tide.layers.sums(terms)
        forward_only = main.clone()
        checked = []  # (var name, base array)
        for item in inputs_to_check:
            if item in self.inputs:
                checked.extend((n, a) for n, a, _ in _as_list(item, self.inputs[item]))
            else:  # one part of a duplicable input, by variable name
                parts = [
                    (n, a)
                    for p, v in self.inputs.items()
                    if isinstance(v, list)
                    for n, a, _ in _as_list(p, v)
                    if n == item
                ]
                assert parts, "%s: no input or input variable named %r" % (self.op_type, item)
                checked.extend(parts)
        grad_names = [n + "@GRAD" for n, _ in checked]
        backward_from = len(main.global_block().ops)
        tide.append_backward(
            loss,
            parameter_list=None,
            no_grad_set=set(no_grad_set or []) | {w for w in feeds if w.startswith(_LOSS_WEIGHT)},
        )
        grad_ops = _grad_ops_of(main.global_block(), self._tested_ops, backward_from)
        analytic = [t.numpy() for t in self._run(main, feeds, grad_names, judged=grad_ops)]

        def loss_at(name, arr):
            f = dict(feeds)
            t = tide.LoDTensor(arr)
            old = feeds[name]
            if old.lod():
                t.set_lod(old.lod())
            f[name] = t
            return float(self._run(forward_only, f, [loss.name])[0].numpy().reshape(-1)[0])

        for (name, base), a in zip(checked, analytic):
            base = np.array(base, dtype=base.dtype)
            # A complex input's gradient is dL/d(real) + i dL/d(imag): one difference each.
            steps = [numeric_grad_delta] + (
                [1j * numeric_grad_delta] if np.iscomplexobj(base) else []
            )
            numeric = np.zeros(base.size, dtype=np.complex128 if len(steps) == 2 else np.float64)
            flat = base.reshape(-1)
            for i in range(flat.size):
                orig = flat[i]
                for step in steps:
                    flat[i] = orig + step
                    hi = loss_at(name, base.copy())
                    flat[i] = orig - step
                    lo = loss_at(name, base.copy())
                    flat[i] = orig
                    numeric[i] += (hi - lo) / (2 * numeric_grad_delta) * (step / numeric_grad_delta)
            numeric = numeric.reshape(base.shape)
            assert a.shape == numeric.shape, "%s: grad of %s has shape %s, expected %s" % (
                self.op_type,
                name,
                a.shape,
                numeric.shape,
            )
            scale = np.maximum(np.abs(numeric), 1e-3)
            err = np.max(np.abs(a - numeric) / scale) if a.size else 0.0
            assert err <= max_relative_error, (
                "%s: gradient of %s differs from finite differences by %.3g (max %.3g)\n"
                "analytic:\n%s\nnumeric:\n%s"
                % (self.op_type, name, err, max_relative_error, a, numeric)
            )


def _as_real(block, var, real_dtype):
    """as_real(var): a complex variable's (real, imaginary) pairs along a new last dim."""
    out = block.create_var(name=var.name + "@as_real", dtype=real_dtype)
    block.append_op("as_real", inputs={"X": var}, outputs={"Out": out})
    return out


def _grad_ops_of(block, tested, backward_from):
    """The indices of the grad ops append_backward made for the ops under test: those writing
    the gradients of their inputs, and the ops (from backward_from on) those read from, up to
    the gradients of their outputs (which the loss's own grad ops produce)."""
    tested_ops = [block.ops[i] for i in tested]
    inputs = {n for op in tested_ops for n in op.input_arg_names}
    outputs = {n for op in tested_ops for n in op.output_arg_names}
    base = lambda name: name.split("@GRAD")[0]  # noqa: E731  x@GRAD@RENAME@0 -> x
    forward_vars = {
        n for op in block.ops[:backward_from] for n in op.input_arg_names + op.output_arg_names
    }
    needed, picked = set(), []
    for i in range(len(block.ops) - 1, backward_from - 1, -1):
        op = block.ops[i]
        writes = op.output_arg_names
        if any("@GRAD" in n and base(n) in inputs for n in writes) or needed & set(writes):
            picked.append(i)
            needed |= {
                n
                for n in op.input_arg_names
                if n not in forward_vars and not ("@GRAD" in n and base(n) in outputs)
            }
    return sorted(picked)


def _kernels_of(program, run_info, indices):
    """[(op type, kernel description)] of the ops at `indices` of the program's global block,
    from Executor.last_run_info() (whose list also holds the feed and fetch ops it added)."""
    ops = program.global_block().ops
    choices = list(run_info["kernels"]) if run_info else []
    while choices and choices[0][0] == "feed" and len(choices) > len(ops):
        choices.pop(0)
    choices = choices[: len(ops)]
    if [t for t, _ in choices] != [op.type for op in ops]:
        return [(ops[i].type, None) for i in indices]  # unexpected layout: nothing judged
    return [choices[i] for i in indices]


def make(op_type, inputs, outputs, attrs=None):
    """An OpTest for one configuration."""

    class T(OpTest):
        pass

    t = T()
    t.op_type = op_type
    t.inputs, t.outputs, t.attrs = inputs, outputs, dict(attrs or {})
    return t
