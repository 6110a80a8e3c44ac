"""The conformance kit's worker: runs one module of op tests under pytest in this process, with
OpTest's observer set, so the ops the device has kernels for run on it (the others on the CPU,
unjudged), and writes one JSON line per event to --out as it goes::

    {"event": "start", "test"}                              a test begins
    {"event": "begin", "test", "op", "kind", "on_device", "dtype"}   a check begins
    {"event": "check", "test", "op", "kind", "on_device", "coverage", "dtype", "details",
     "outcome", "message"}                                  a check's verdict (at its test's end)
    {"event": "done", "test"} / {"event": "finished", "status"}

A process that dies mid-test (a kernel's crash) leaves its last "begin" naming the op at fault;
the kit (conformance.py) restarts the module without the tests already run::

    python -m tide.testing.runner --place sim:0 --plugin libsim.so --module test_ops_x.py --out f
"""

import argparse
import contextlib
import inspect
import json
import re
import sys

import tide

from . import coverage, op_test


def _first_lines(exc, limit=8, width=400):
    """The first non-empty lines of an exception's text: the op, the output, the mismatch."""
    lines = [l.rstrip() for l in str(exc).splitlines() if l.strip()]
    text = "\n".join(lines[:limit]) or type(exc).__name__
    return ("%s: %s" % (type(exc).__name__, text))[:width]


class Observer:
    """OpTest's observer (op_test._observer): places tests and collects each check's kernels."""

    def __init__(self, place, kind, device_ops, selected, out):
        self.place, self.kind = place, kind
        self.device_ops, self.selected, self.out = device_ops, selected, out
        self.test, self.dtype_hint, self.checks, self.current = None, None, [], None

    def judges(self, op_type):
        if self.selected and op_type not in self.selected:
            return False
        return op_type in self.device_ops or op_type + "_grad" in self.device_ops

    def place_for(self, op_type):
        return self.place if self.judges(op_type) else tide.CPUPlace()

    def write(self, **event):
        self.out.write(json.dumps(event) + "\n")
        self.out.flush()

    @contextlib.contextmanager
    def check(self, test, kind):
        if self.current is not None or self.test is None:  # nested, or outside a pytest test
            yield
            return
        on_device = self.judges(test.op_type)
        rec = {
            "test": self.test,
            "op": test.op_type,
            "kind": kind,
            "on_device": on_device,
            "dtype": _dtype_of(test) or self.dtype_hint,
            "kernels": [],
            "raised": None,
        }
        self.write(
            event="begin", **{k: rec[k] for k in ("test", "op", "kind", "on_device", "dtype")}
        )
        self.current = rec
        try:
            yield
        except BaseException as e:
            rec["raised"] = e
            raise
        finally:
            self.current = None
            self.checks.append(rec)

    def ran(self, test, kernels):
        if self.current is not None:
            self.current["kernels"].extend(kernels)

    def start(self, item):
        self.test, self.checks = item.nodeid, []
        params = getattr(getattr(item, "callspec", None), "params", {})
        self.dtype_hint = params.get("dtype") if isinstance(params.get("dtype"), str) else None
        self.write(event="start", test=self.test)

    def finish(self, excinfo):
        """Gives this test's checks their verdicts: the check whose exception failed the test,
        or else (a test's own assertion on forward()'s result) its last check, failed."""
        failed = excinfo is not None and not excinfo.errisinstance(_skip_exception())
        blamed = None
        if failed:
            blamed = next((c for c in self.checks if c["raised"] is excinfo.value), None)
            if blamed is None and self.checks:
                blamed = self.checks[-1]
        for c in self.checks:
            if self.selected and c["op"] not in self.selected:
                continue
            cov, dtype, details = coverage.classify(self.kind, c["kernels"])
            if not c["on_device"]:
                cov = "no device kernel"
            self.write(
                event="check",
                test=c["test"],
                op=c["op"],
                kind=c["kind"],
                on_device=c["on_device"],
                coverage=cov,
                dtype=dtype or c["dtype"],
                details=details,
                outcome="fail" if c is blamed else "pass",
                message=_first_lines(excinfo.value) if c is blamed else "",
            )
        self.checks = []

    def done(self):
        self.write(event="done", test=self.test)
        self.test = None


def _dtype_of(test):
    """The dtype of an OpTest's first floating-point input (else its first input), or None."""
    try:
        arrays = [
            a for param, value in test.inputs.items() for _, a, _ in op_test._as_list(param, value)
        ]
    except Exception:  # inputs not set up yet, or in a form the check itself will reject
        return None
    floats = [a for a in arrays if op_test._is_float(a)]
    return (floats or arrays)[0].dtype.name if (floats or arrays) else None


def _skip_exception():
    import pytest

    return pytest.skip.Exception


def _mentions(item, ops):
    """Whether a test names one of `ops` (in its source, name or parameters): --ops runs only
    those, without running every other test for nothing."""
    try:
        text = inspect.getsource(item.function)
    except (OSError, TypeError):
        return True
    text += item.name + repr(getattr(getattr(item, "callspec", None), "params", {}))
    return any(re.search(r"(?<![\w.])%s(?!\w)" % re.escape(op), text) for op in ops)


class Plugin:
    """The pytest hooks driving the observer."""

    def __init__(self, observer, deselect):
        self.observer, self.deselect = observer, deselect

    def pytest_collection_modifyitems(self, config, items):
        keep = [
            i
            for i in items
            if i.nodeid not in self.deselect
            and (not self.observer.selected or _mentions(i, self.observer.selected))
        ]
        dropped = [i for i in items if i not in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep

    def pytest_runtest_protocol(self, item, nextitem):
        self.observer.start(item)

    def pytest_runtest_logfinish(self, nodeid, location):
        self.observer.done()

    def pytest_runtest_makereport(self, item, call):
        if call.when == "call":
            self.observer.finish(call.excinfo)


def main(argv=None):
    """The worker's entry point (see the module's description); returns the exit status.

    Args:
        argv (list): the arguments; None: sys.argv[1:].
    """
    import pytest

    ap = argparse.ArgumentParser(prog="python -m tide.testing.runner")
    ap.add_argument("--place", required=True)
    ap.add_argument("--plugin", action="append", default=[])
    ap.add_argument("--module", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ops", default="")
    ap.add_argument("--deselect", default="", help="a file of test ids not to run")
    args = ap.parse_args(argv)
    for path in args.plugin:
        tide.load_plugin(path)
    place = coverage.parse_place(args.place)
    deselect = set()
    if args.deselect:
        with open(args.deselect) as f:
            deselect = {l.strip() for l in f if l.strip()}
    selected = {o for o in args.ops.split(",") if o}
    with open(args.out, "a") as out:
        kind = args.place.split(":")[0]
        observer = Observer(place, kind, coverage.device_kernels(kind), selected, out)
        op_test._observer = observer
        status = pytest.main(
            [
                args.module,
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                "addopts=",
                "-W",
                "ignore::pytest.PytestAssertRewriteWarning",
            ],
            plugins=[Plugin(observer, deselect)],
        )
        observer.write(event="finished", status=int(status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
