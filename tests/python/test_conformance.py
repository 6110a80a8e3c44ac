"""The device conformance kit (tide.testing.conformance, `tide-conformance`): on the CPU it
passes the ops it covers; on the test-only sim device (kernels for elementwise_add, relu and
scale, forward only) it judges those kernels and reports every other op, and every gradient
whose grad op falls back to the CPU, as not covered; a planted wrong kernel
(TIDE_SIM_PLANT_BUG=scale) is a failure naming the op, with a non-zero exit status."""

import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from ctest_env import needs, path, require

import tide
from tide.testing import coverage, op_test

SIM_PARTS = ("tests", "plugins", "sim_device", "libtide_device_sim.so")
SIM = path("TIDE_BUILD_DIR", *SIM_PARTS)
needs_sim = needs("TIDE_BUILD_DIR", *SIM_PARTS, what="the sim device plugin")


def run_kit(tmp_path, *args, env=None, cmd=None):
    """Runs the kit; (process, the JSON report or None)."""
    out = tmp_path / "report.json"
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(
        (cmd or [sys.executable, "-m", "tide.testing.conformance"])
        + ["--json", str(out)]
        + list(args),
        env=e,
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = json.loads(out.read_text()) if out.exists() else None
    return p, report


def cells(report, op):
    """{dtype: row} of one op's rows."""
    return {r["dtype"]: r for r in report["rows"] if r["op"] == op}


class RecordingObserver:
    """An OpTest observer that records the kernels each check reports."""

    def __init__(self):
        self.checks = []

    def judges(self, op_type):
        return True

    def place_for(self, op_type):
        return tide.CPUPlace()

    @contextlib.contextmanager
    def check(self, test, kind):
        self.checks.append((kind, []))
        yield

    def ran(self, test, kernels):
        self.checks[-1][1].extend(kernels)


@pytest.mark.parametrize("op,grad_ops", [("softmax", ["softmax_grad"]), ("scale", ["scale"])])
def test_op_test_reports_the_kernels_of_the_op_under_test_only(op, grad_ops, monkeypatch):
    # The loss OpTest builds around the op (elementwise_mul, mean and their grads) is not judged.
    x = np.random.RandomState(0).rand(2, 3)
    want = np.exp(x) / np.exp(x).sum(1, keepdims=True) if op == "softmax" else x
    t = op_test.make(op, {"X": x}, {"Out": want})
    observer = RecordingObserver()
    monkeypatch.setattr(op_test, "_observer", observer)
    t.check_output()
    t.check_grad(["X"], "Out")
    (fwd_kind, fwd), (grad_kind, grad) = observer.checks
    assert (fwd_kind, grad_kind) == ("forward", "gradient")
    assert [o for o, _ in fwd] == [op] and [o for o, _ in grad] == grad_ops
    assert all(k.startswith("{cpu, float64") and k.endswith("on cpu:0") for _, k in fwd + grad)
    assert coverage.classify("cpu", grad)[:2] == ("device", "float64")


def test_classify_tells_device_kernels_from_fallbacks():
    on_sim = ("relu", "{sim, float32, ANY, plain} from device_sim on sim:0")
    on_cpu = ("relu_grad", "{cpu, float32, ANY, plain} from ops_math on cpu:0")
    assert coverage.classify("sim", [on_sim])[:2] == ("device", "float32")
    cov, _, details = coverage.classify("sim", [on_cpu])
    assert cov == "fallback" and details == ["relu_grad fell back to the cpu:0 kernel of ops_math"]
    assert coverage.classify("sim", [on_sim, on_cpu])[0] == "partial"
    assert coverage.classify("sim", [("while", "(runs without a kernel)")])[0] == "no kernel"
    assert coverage.tested_ops({"relu": [], "relu_grad": [], "scale": []}) == ["relu", "scale"]
    with pytest.raises(ValueError, match="KIND:N"):
        coverage.parse_place("sim:one")


def test_cpu_passes_the_ops_it_covers(tmp_path):
    ops = ["relu", "scale", "softmax", "elementwise_mul", "mean"]
    p, report = run_kit(tmp_path, "--place", "cpu:0", "--ops", ",".join(ops))
    assert p.returncode == 0, p.stdout + p.stderr
    assert report["passed"] and not report["errors"]
    for op in ops:
        rows = cells(report, op)
        for dtype in ("float32", "float64"):
            assert rows[dtype]["forward"]["status"] == "pass", (op, dtype, rows[dtype])
            assert rows[dtype]["gradient"]["status"] == "pass", (op, dtype, rows[dtype])
    # Only the ops asked for are judged; the table names them.
    assert {r["op"] for r in report["rows"]} <= set(ops)
    assert "relu" in p.stdout and "pass" in p.stdout


@pytest.mark.sweep
def test_cpu_passes_the_whole_suite(tmp_path):
    # Every op test, on the CPU kernels (the reference): CI's conformance run on the CPU.
    p, report = run_kit(tmp_path, "--place", "cpu:0")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    rows = report["rows"]
    assert len({r["op"] for r in rows}) > 100
    assert all(r["forward"]["status"] == "pass" for r in rows), [
        r for r in rows if r["forward"]["status"] != "pass"
    ]
    # A gradient is checked or has no test: on the CPU nothing falls back.
    assert all(
        r["gradient"]["status"] == "pass" or r["gradient"]["reason"] == "no test" for r in rows
    )
    assert sum(r["gradient"]["status"] == "pass" for r in rows) > 100
    assert all(c["coverage"] in ("device", "no kernel") for c in report["checks"])


@pytest.mark.sweep
@needs_sim
def test_sim_judges_its_own_kernels_and_nothing_else(tmp_path):
    p, report = run_kit(tmp_path, "--place", "sim:0", "--plugin", SIM)
    rows = report["rows"]
    assert {op for op in ("elementwise_add", "relu", "scale")} <= {r["op"] for r in rows}
    for op in ("elementwise_add", "relu", "scale"):
        for dtype in ("float32", "float64"):
            row = cells(report, op)[dtype]
            assert row["forward"]["status"] == "pass", row
    # relu_grad has a float32 sim kernel (for the MLP tests) but no float64 one: the float64
    # gradient fell back, so it is not covered.
    assert cells(report, "relu")["float32"]["gradient"]["status"] == "pass"
    relu_grad = cells(report, "relu")["float64"]["gradient"]
    assert relu_grad["status"] == "not covered" and "relu_grad fell back" in relu_grad["reason"]
    # scale's grad op is scale, which runs on sim: covered.
    assert cells(report, "scale")["float32"]["gradient"]["status"] == "pass"
    # sim has no integer kernels: those cases fell back.
    assert cells(report, "scale")["int32"]["forward"]["status"] == "not covered"
    # elementwise_add's broadcast cases (Fluid's, from the shared tide/ops/broadcast.hpp) ran on
    # sim and passed; its grad op has no float64 sim kernel.
    assert cells(report, "elementwise_add")["float64"]["gradient"]["status"] == "not covered"
    # Every op without a sim kernel ran on the CPU: not covered, whatever its tests found. (The
    # MLP ops' float32 sim kernels are judged too; the exit code says they passed.)
    mlp = ("mul", "softmax_with_cross_entropy", "mean", "fill_constant", "sgd")
    others = [r for r in rows if r["op"] not in ("elementwise_add", "relu", "scale") + mlp]
    assert len(others) > 50
    for r in others:
        assert (
            r["forward"]["status"] == "not covered" and r["gradient"]["status"] == "not covered"
        ), r
    assert p.returncode == 0, p.stdout + p.stderr  # everything sim runs is right


@needs_sim
def test_sim_judges_a_sample_of_ops(tmp_path):
    # The sweep's rules on a sample: sim's own ops pass, an op whose float64 grad has no sim
    # kernel is not covered there, ops without sim kernels (from several test modules) are not
    # covered, and the kit passes.
    own = ["elementwise_add", "relu", "scale"]
    others = ["conv2d", "sum", "transpose", "reduce_sum", "sequence_pool", "lookup_table"]
    p, report = run_kit(
        tmp_path, "--place", "sim:0", "--plugin", SIM, "--ops", ",".join(own + others)
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert report["passed"] and not report["errors"]
    assert "Conformance of sim:0" in p.stdout
    # The correct sim keeps the device contract it declares.
    assert report["device_contract"] == 2
    assert sorted(c["contract"] for c in report["contracts"]) == ["copy", "free"]
    assert all(c["passed"] for c in report["contracts"]), report["contracts"]
    # And the rules of its optional entries (issues 33, 34), none skipped: it has all six.
    entries = {
        c["contract"]: (c["passed"], c.get("skipped", False)) for c in report["device_entries"]
    }
    assert entries == {
        "event_timing": (True, False),
        "memory_stats": (True, False),
        "tracer": (True, False),
        "copy_stream": (True, False),
        "graphs": (True, False),
        "host_func": (True, False),
    }, report["device_entries"]
    assert "event_timing pass" in " ".join(p.stdout.split()), p.stdout
    for op in own:
        for dtype in ("float32", "float64"):
            assert cells(report, op)[dtype]["forward"]["status"] == "pass", (op, dtype)
    assert cells(report, "relu")["float32"]["gradient"]["status"] == "pass"
    assert cells(report, "relu")["float64"]["gradient"]["status"] == "not covered"
    assert cells(report, "scale")["int32"]["forward"]["status"] == "not covered"
    rows = [r for r in report["rows"] if r["op"] in others]
    assert {r["op"] for r in rows} == set(others)
    for r in rows:
        assert (
            r["forward"]["status"] == "not covered" and r["gradient"]["status"] == "not covered"
        ), r
    assert {r["op"] for r in report["rows"]} <= set(own + others)


@needs_sim
def test_a_planted_wrong_kernel_fails_naming_the_op(tmp_path):
    p, report = run_kit(
        tmp_path,
        "--place",
        "sim:0",
        "--plugin",
        SIM,
        "--ops",
        "relu,scale",
        env={"TIDE_SIM_PLANT_BUG": "scale"},
    )
    assert p.returncode == 1, p.stdout + p.stderr
    assert not report["passed"]
    for dtype in ("float32", "float64"):
        fwd = cells(report, "scale")[dtype]["forward"]
        assert fwd["status"] == "FAIL", fwd
        assert "scale output Out" in fwd["message"] and "Mismatched elements" in fwd["message"]
    # The table names the op; relu is unaffected.
    assert any(line.startswith("scale") and "FAIL" in line for line in p.stdout.splitlines())
    assert "FAIL scale float32 forward" in p.stdout
    assert cells(report, "relu")["float32"]["forward"]["status"] == "pass"


@needs_sim
@pytest.mark.parametrize("plant,contract", [("copy_reads_late", "copy"), ("free_at_once", "free")])
def test_a_broken_device_contract_fails_naming_the_contract(tmp_path, plant, contract):
    # The sim declares contract 2 but breaks one of its rules: the kit fails it, naming the
    # contract and the rule, though every kernel is right; the other rule still passes.
    p, report = run_kit(
        tmp_path,
        "--place",
        "sim:0",
        "--plugin",
        SIM,
        "--ops",
        "scale",
        env={"TIDE_SIM_PLANT_BUG": plant},
    )
    assert p.returncode == 1, p.stdout + p.stderr
    assert not report["passed"] and report["device_contract"] == 2
    by_name = {c["contract"]: c for c in report["contracts"]}
    assert not by_name[contract]["passed"], by_name
    other = "free" if contract == "copy" else "copy"
    assert by_name[other]["passed"], by_name
    assert "FAIL device contract '%s'" % contract in p.stdout, p.stdout
    if contract == "copy":
        assert "changed right after copy (HOST_TO_DEVICE) returned" in by_name["copy"]["message"]
    else:
        assert "freed while the stream of sim:0 was busy" in by_name["free"]["message"]
    assert cells(report, "scale")["float32"]["forward"]["status"] == "pass"


@needs_sim
def test_a_device_declaring_no_contract_passes_through_the_cores_synchronisation(tmp_path):
    # A plugin built against the earlier 1.0 (no contract declared) that reads host bytes late
    # and frees at once: the core synchronises for it, so what arrives is right.
    p, report = run_kit(
        tmp_path,
        "--place",
        "sim:0",
        "--plugin",
        SIM,
        "--ops",
        "scale",
        env={"TIDE_SIM_CONTRACT": "0", "TIDE_SIM_PLANT_BUG": "copy_reads_late,free_at_once"},
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert report["device_contract"] == 1
    assert all(c["passed"] for c in report["contracts"]), report["contracts"]
    assert "Device contract of sim:0: contract 1" in p.stdout


@needs_sim
def test_a_crashing_kernel_fails_its_op_and_the_rest_still_runs(tmp_path):
    # Each test module runs in its own process: the crash is blamed on the check in flight, and
    # the module goes on without that test.
    p, report = run_kit(
        tmp_path,
        "--place",
        "sim:0",
        "--plugin",
        SIM,
        "--ops",
        "relu,scale",
        env={"TIDE_SIM_PLANT_BUG": "relu_crash"},
    )
    assert p.returncode == 1, p.stdout + p.stderr
    crashes = [c for c in report["checks"] if c["op"] == "relu" and c["outcome"] == "fail"]
    assert crashes and all("died with status" in c["message"] for c in crashes)
    assert any(r["forward"]["status"] == "FAIL" for r in cells(report, "relu").values())
    assert cells(report, "scale")["float32"]["forward"]["status"] == "pass"
    assert not report["errors"]


def test_launcher_runs_the_kit(tmp_path):
    launcher = require(
        "TIDE_BUILD_DIR",
        "bin",
        "tide-conformance",
        what="the build tree's tide-conformance launcher",
    )
    p, report = run_kit(tmp_path, "--place", "cpu:0", "--ops", "scale", cmd=[launcher])
    assert p.returncode == 0, p.stdout + p.stderr
    assert cells(report, "scale")["float32"]["forward"]["status"] == "pass"


def test_bad_place_or_plugin_is_a_clear_error(tmp_path):
    p, report = run_kit(tmp_path, "--place", "nosuch:0")
    assert p.returncode == 2 and report is None
    assert "no loaded plugin provides the place kind 'nosuch'" in p.stderr
    assert "--plugin" in p.stderr
    if os.path.exists(SIM):  # sim has two devices
        p, report = run_kit(tmp_path, "--place", "sim:7", "--plugin", SIM)
        assert p.returncode == 2 and report is None and "sim:7" in p.stderr, p.stderr
    p, _ = run_kit(tmp_path, "--place", "cpu:x")
    assert p.returncode == 2 and "KIND:N" in p.stderr
    p, _ = run_kit(tmp_path, "--plugin", str(tmp_path / "missing.so"))
    assert p.returncode == 2 and "missing.so" in p.stderr
    p, _ = run_kit(tmp_path, "--tests", str(tmp_path))
    assert p.returncode == 2 and "no test_ops_*.py" in p.stderr
    p, _ = run_kit(tmp_path, "--jobs", "0")
    assert p.returncode == 2 and "--jobs must be at least 1" in p.stderr
