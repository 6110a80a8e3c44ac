"""The C++ in the docs is compiled from the docs themselves, so they cannot drift from the SDK.

Every ```cpp block of the README and docs/*.md follows a marker comment saying what it is:

    <!-- doc-test: plugin NAME (free text) -->   a complete plugin: built with
        tide.utils.cpp_extension (-Wall -Wextra -Werror), loaded in a fresh process, and its ops
        run by RUNNERS[NAME] below (forward, and gradients where the example has them)
    <!-- doc-test: compile                        a fragment: compiled (-fsyntax-only, the same
    CODE                                          warnings) after <tide/plugin.hpp> and CODE; a
    -->                                           line "..." in CODE stands for the block (CODE
                                                  wraps it, e.g. in a kernel's body)
    <!-- doc-test: skip WHY -->                    not compiled, saying why

A ```cpp block without a marker fails the test. Plugins build in the build tree
($TIDE_BUILD_DIR/doc_examples/<name>), so an unchanged example is not compiled again.
"""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from ctest_env import require

from tide import sdk

SOURCE = os.environ.get("TIDE_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..")
)
WARNINGS = ["-Wall", "-Wextra", "-Werror"]
_BLOCK = re.compile(
    r"(?:<!--\s*doc-test:\s*(?P<marker>.*?)-->[ \t]*\n)?"  # the marker, if any
    r"[ \t]*```cpp\n(?P<code>.*?)```",
    re.S,
)


def _docs():
    docs = [os.path.join(SOURCE, "README.md")]
    docs += sorted(
        os.path.join(SOURCE, "docs", f)
        for f in os.listdir(os.path.join(SOURCE, "docs"))
        if f.endswith(".md")
    )
    return docs


def _examples():
    """[(doc, line, kind, name, wrapper, code)] of every ```cpp block in the docs."""
    out = []
    for doc in _docs():
        with open(doc) as f:
            text = f.read()
        for m in _BLOCK.finditer(text):
            line = text.count("\n", 0, m.start("code"))
            marker = m.group("marker") or ""
            first, _, rest = marker.partition("\n")
            words = first.split()
            kind = words[0] if words else ""
            name = words[1] if kind == "plugin" and len(words) > 1 else ""
            out.append((os.path.relpath(doc, SOURCE), line, kind, name, rest, m.group("code")))
    return out


EXAMPLES = _examples()


def _id(example):
    return "%s:%d" % (example[0], example[1])


def _compiler():
    return os.environ.get("CXX") or "c++"


def test_every_cpp_block_in_the_docs_is_marked():
    unmarked = [_id(e) for e in EXAMPLES if e[2] not in ("plugin", "compile", "skip")]
    assert not unmarked, (
        "```cpp blocks without a "
        "<!-- doc-test: plugin NAME | compile | skip WHY --> "
        "marker before them: %s" % unmarked
    )
    assert [e for e in EXAMPLES if e[2] == "plugin"], "no complete plugin example found in the docs"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e[2] == "compile"], ids=_id)
def test_doc_fragment_compiles(example, tmp_path):
    doc, line, _, _, wrapper, code = example
    code = ('#line %d "%s"\n' % (line + 1, doc)) + code
    if re.search(r"^\.\.\.$", wrapper, re.M):
        source = re.sub(r"^\.\.\.$", lambda _: code, wrapper, flags=re.M)
    else:
        source = wrapper + "\n" + code
    src = tmp_path / "fragment.cc"
    src.write_text("#include <tide/plugin.hpp>\n" + source)
    r = subprocess.run(
        [_compiler(), "-std=c++17", "-fsyntax-only"]
        + WARNINGS
        + ["-I" + sdk.include_dir(), str(src)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, "%s:%d does not compile:\n%s\n%s" % (
        doc,
        line,
        src.read_text(),
        r.stderr,
    )


# Runners of the complete examples: each gets the plugin's load record, in a fresh process.
def _run_readme_axpb(record):
    assert "acme.axpb" in record["ops"], record
    from tide.testing.op_test import OpTest

    x = np.random.RandomState(0).uniform(-1, 1, (3, 4))

    class T(OpTest):
        op_type = "acme.axpb"

        def setup(self, dtype):
            self.inputs = {"X": x.astype(dtype)}
            self.attrs = {"a": 2.0, "b": 0.5}
            self.outputs = {"Out": (2.0 * x + 0.5).astype(dtype)}

    for dtype in ("float32", "float64"):
        t = T()
        t.setup(dtype)
        t.check_output()


def _run_guide_axpy(record):
    assert {"acme.axpy", "acme.axpy_grad"} <= set(record["ops"]), record
    from tide.testing.op_test import OpTest

    rng = np.random.RandomState(0)
    x, y = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))

    class T(OpTest):
        op_type = "acme.axpy"

        def setup(self, dtype):
            self.inputs = {"X": x.astype(dtype), "Y": y.astype(dtype)}
            self.attrs = {"a": 3.0}
            self.outputs = {"Out": (3.0 * x + y).astype(dtype)}

    t = T()
    t.setup("float64")
    t.check_output()
    # Both gradients, and each alone: the other's output is @EMPTY@.
    exact = {"max_relative_error": 1e-5, "numeric_grad_delta": 1e-5}
    t.check_grad(["X", "Y"], "Out", **exact)
    t.check_grad(["X"], "Out", no_grad_set={"y_in"}, **exact)
    t.check_grad(["Y"], "Out", no_grad_set={"x_in"}, **exact)


def _run_guide_npu(record):
    """The guide's first device: two SGD steps of fc(relu) + mean on npu:0, every op of the step
    on the device, the loss and weights against numpy in float64."""
    import tide

    assert record["devices"] == ["npu"], record
    assert tide.device_count("npu") == 1
    main, startup = tide.Program(), tide.Program()
    with tide.program_guard(main, startup):
        x = tide.layers.data(name="x", shape=[3], dtype="float32")
        loss = tide.layers.mean(tide.layers.fc(input=x, size=4, act="relu"))
        tide.optimizer.SGD(learning_rate=0.1).minimize(loss)
    exe, scope = tide.Executor(tide.Place("npu", 0)), tide.Scope()
    exe.run(startup, scope=scope)
    w_name, b_name = (p.name for p in main.all_parameters())

    def param(name):
        return np.array(scope.find_var(name).get_tensor()).astype("float64")

    w, b = param(w_name), param(b_name)
    rng = np.random.RandomState(0)
    for _ in range(2):
        feed = rng.uniform(-1, 1, (8, 3)).astype("float32")
        (got,) = exe.run(main, feed={"x": feed}, fetch_list=[loss], scope=scope)
        h = feed.astype("float64") @ w + b
        np.testing.assert_allclose(got.reshape(-1)[0], np.maximum(h, 0).mean(), rtol=1e-5)
        dh = (h > 0) / h.size
        w, b = w - 0.1 * feed.T.astype("float64") @ dh, b - 0.1 * dh.sum(axis=0)
        np.testing.assert_allclose(param(w_name), w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(param(b_name), b, rtol=1e-5, atol=1e-6)
    ran = {
        op: kernel for op, kernel in exe.last_run_info()["kernels"] if op not in ("feed", "fetch")
    }
    assert all("from %s on npu:0" % record["name"] in k for k in ran.values()), ran
    assert {"mul_grad", "elementwise_add_grad", "relu_grad", "mean_grad", "sgd"} <= set(ran), ran


RUNNERS = {
    "readme_axpb": _run_readme_axpb,
    "guide_axpy": _run_guide_axpy,
    "guide_npu": _run_guide_npu,
}


def test_every_plugin_example_has_a_runner():
    names = [e[3] for e in EXAMPLES if e[2] == "plugin"]
    assert sorted(names) == sorted(RUNNERS), "plugin examples %s, runners %s" % (
        names,
        sorted(RUNNERS),
    )


def build_and_run(name, source):
    """In a fresh process (examples may share a plugin's name): builds, loads and runs one."""
    from tide.utils import cpp_extension

    record = cpp_extension.load(
        name,
        [source],
        extra_cflags=WARNINGS,
        build_directory=os.path.join(os.path.dirname(source), "build"),
    )
    RUNNERS[name](record)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e[2] == "plugin"], ids=_id)
def test_doc_plugin_builds_loads_and_runs(example):
    doc, line, _, name, _, code = example
    build_dir = require("TIDE_BUILD_DIR", what="the build tree, where the examples build")
    work = os.path.join(build_dir, "doc_examples", name)
    os.makedirs(work, exist_ok=True)
    source = os.path.join(work, name + ".cc")
    text = '#line %d "%s"\n%s' % (line + 1, doc, code)
    if not os.path.exists(source) or open(source).read() != text:  # unchanged: ninja builds nothing
        with open(source, "w") as f:
            f.write(text)
    runner = "import test_doc_examples as t; t.build_and_run(%r, %r)" % (name, source)
    r = subprocess.run(
        [sys.executable, "-c", runner],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    )
    assert r.returncode == 0, "%s:%d (%s):\n%s%s" % (doc, line, name, r.stdout, r.stderr)
