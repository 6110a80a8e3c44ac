"""OpTest: checks one op of a loaded op pack like PaddlePaddle's OpTest: its outputs against a
numpy reference, and its gradients (from the grad ops append_backward generates through the
op's registered grad maker) against central finite differences. With place= it doubles as the
device conformance check: a vendor runs the same tests on their place.

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
import numpy as np

import tide


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


def _expected(param, value):
    """[(var name, expected array or None, lod)] of an output as _build names its variables."""
    if isinstance(value, list):
        return [(n, None if v is None else a, lod)
                for (n, a, lod), (_, v) in zip(_as_list(param, value), value)]
    if value is None:
        return [(param.lower() + "_out", None, None)]
    return [(param.lower() + "_out",) + _as_list(param, value)[0][1:]]


class OpTest:
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
                    v = block.create_var(name=name, shape=arr.shape, dtype=arr.dtype.name,
                                         lod_level=len(lod) if lod else 0,
                                         stop_gradient=stop_gradient_inputs or not _is_float(arr))
                    t = tide.LoDTensor(np.ascontiguousarray(arr))
                    if lod:
                        t.set_recursive_sequence_lengths(lod)
                    feeds[name] = t
                    vs.append(v)
                ins[param] = vs if isinstance(value, list) else vs[0]
            outs = {}
            for param, value in self.outputs.items():
                names = [n for n, _, _ in _as_list(param, value)] if isinstance(value, list) \
                    else [param.lower() + "_out"]
                vs = [block.create_var(name=n, dtype=self._out_dtype(param)) for n in names]
                outs[param] = vs if isinstance(value, list) else vs[0]
                for n, v in zip(names, vs):
                    out_vars[n] = v
            block.append_op(self.op_type, inputs=ins, outputs=outs, attrs=getattr(self, "attrs", {}))
        return main, startup, feeds, out_vars

    def _out_dtype(self, param):
        value = self.outputs[param]
        if isinstance(value, list):
            value = value[0][1]
        if isinstance(value, tuple):
            value = value[0]
        return np.asarray(value).dtype.name if value is not None else "float32"

    def _place(self):
        return self.place if self.place is not None else tide.CPUPlace()

    def _run(self, program, feeds, fetch, scope=None):
        exe = tide.Executor(self._place())
        with tide.scope_guard(scope or tide.Scope()):
            return exe.run(program, feed=dict(feeds), fetch_list=fetch, return_numpy=False)

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
        main, _, feeds, out_vars = self._build()
        expected = self._expected_outputs()
        names = [n for n in out_vars if expected[n][1] is not None]
        got = dict(zip(names, (t.numpy() for t in self._run(main, feeds, names))))
        result = {}
        for param, value in self.outputs.items():
            arrs = [got[n] for n, _, _ in _expected(param, value) if n in got]
            if arrs:
                result[param] = arrs if isinstance(value, list) else arrs[0]
        return result

    def check_output(self, atol=1e-5, rtol=1e-5, no_check_set=()):
        """Compares every output (but those in no_check_set) with its expected value; outputs
        expected None are neither fetched nor compared. Returns the fetched LoDTensors."""
        main, _, feeds, out_vars = self._build()
        expected = self._expected_outputs()
        names = [n for n in out_vars if expected[n][1] is not None]
        got = self._run(main, feeds, names)
        for name, tensor in zip(names, got):
            param, want, lod = expected[name]
            if param in no_check_set or want.dtype == object:
                continue
            arr = tensor.numpy()
            assert arr.shape == want.shape, "%s %s: shape %s, expected %s" % (
                self.op_type, param, arr.shape, want.shape)
            if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
                assert arr.dtype == want.dtype, "%s %s: dtype %s, expected %s" % (
                    self.op_type, param, arr.dtype, want.dtype)
                np.testing.assert_array_equal(arr, want,
                                              err_msg="%s output %s" % (self.op_type, param))
            else:
                np.testing.assert_allclose(arr, want, rtol=rtol, atol=atol,
                                           err_msg="%s output %s" % (self.op_type, param))
            if lod is not None:
                assert tensor.recursive_sequence_lengths() == lod, "%s %s: LoD" % (self.op_type, param)
        return got

    def check_grad(self, inputs_to_check, output_names, max_relative_error=0.005,
                   numeric_grad_delta=0.005, no_grad_set=None, seed=7):
        """d(sum_o mean(w_o * out_o))/d(input) from the grad ops vs central differences.

        output_names: output params (a duplicable one contributes each of its parts);
        inputs_to_check: input params (each part of a duplicable one is checked) or the variable
        names of single parts of duplicable inputs."""
        if isinstance(output_names, str):
            output_names = [output_names]
        rng = np.random.RandomState(seed)
        main, startup, feeds, out_vars = self._build(stop_gradient_inputs=False)
        loss_outs = [n for p in output_names for n, _, _ in _expected(p, self.outputs[p])]
        fwd_outs = self._run(main, feeds, loss_outs)
        # An empty output (e.g. a 0-size part of split) adds nothing to the loss.
        kept = [(n, o) for n, o in zip(loss_outs, fwd_outs) if o.numpy().size]
        assert kept, "%s: every output in %s is empty" % (self.op_type, output_names)
        loss_outs = [n for n, _ in kept]
        weights = {n: rng.uniform(0.5, 1.5, size=o.shape()).astype(o.numpy().dtype)
                   for n, o in kept}
        with tide.program_guard(main, startup):
            block = main.global_block()
            terms = []
            for n in loss_outs:
                w = block.create_var(name="weight_" + n, shape=weights[n].shape,
                                     dtype=weights[n].dtype.name, stop_gradient=True)
                feeds[w.name] = tide.LoDTensor(weights[n])
                terms.append(tide.layers.mean(tide.layers.elementwise_mul(out_vars[n], w)))
            loss = terms[0] if len(terms) == 1 else tide.layers.sums(terms)
        forward_only = main.clone()
        checked = []  # (var name, base array)
        for item in inputs_to_check:
            if item in self.inputs:
                checked.extend((n, a) for n, a, _ in _as_list(item, self.inputs[item]))
            else:  # one part of a duplicable input, by variable name
                parts = [(n, a) for p, v in self.inputs.items() if isinstance(v, list)
                         for n, a, _ in _as_list(p, v) if n == item]
                assert parts, "%s: no input or input variable named %r" % (self.op_type, item)
                checked.extend(parts)
        grad_names = [n + "@GRAD" for n, _ in checked]
        tide.append_backward(loss, parameter_list=None,
                             no_grad_set=set(no_grad_set or []) | {w for w in feeds if w.startswith("weight_")})
        analytic = [t.numpy() for t in self._run(main, feeds, grad_names)]

        def loss_at(name, arr):
            f = dict(feeds)
            t = tide.LoDTensor(arr)
            old = feeds[name]
            if old.lod():
                t.set_lod(old.lod())
            f[name] = t
            return float(self._run(forward_only, f, [loss.name])[0].numpy().reshape(-1)[0])

        for (name, base), a in zip(checked, analytic):
            base = np.array(base, dtype=np.float64 if base.dtype == np.float64 else base.dtype)
            numeric = np.zeros(base.size)
            flat = base.reshape(-1)
            for i in range(flat.size):
                orig = flat[i]
                flat[i] = orig + numeric_grad_delta
                hi = loss_at(name, base.copy())
                flat[i] = orig - numeric_grad_delta
                lo = loss_at(name, base.copy())
                flat[i] = orig
                numeric[i] = (hi - lo) / (2 * numeric_grad_delta)
            numeric = numeric.reshape(base.shape)
            assert a.shape == numeric.shape, "%s: grad of %s has shape %s, expected %s" % (
                self.op_type, name, a.shape, numeric.shape)
            scale = np.maximum(np.abs(numeric), 1e-3)
            err = np.max(np.abs(a - numeric) / scale) if a.size else 0.0
            assert err <= max_relative_error, (
                "%s: gradient of %s differs from finite differences by %.3g (max %.3g)\n"
                "analytic:\n%s\nnumeric:\n%s" % (self.op_type, name, err, max_relative_error, a, numeric))


def make(op_type, inputs, outputs, attrs=None):
    """An OpTest for one configuration."""
    class T(OpTest):
        pass
    t = T()
    t.op_type = op_type
    t.inputs, t.outputs, t.attrs = inputs, outputs, dict(attrs or {})
    return t
