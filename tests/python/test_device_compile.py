"""Subgraph claim-and-compile and program passes (issue 33) on the test-only 'sim' device with
TIDE_SIM_COMPILE=1 (tests/plugins/sim_device/sim_compiler.h): it takes chains of float32
elementwise ops (elementwise_add, relu, scale) and runs each as one fused kernel, and its program
pass drops scale ops of scale 1 and bias 0. Each case runs in a subprocess, since the device reads
its configuration when it is loaded."""

import json
import textwrap

import pytest
from sim_scripts import SIM, needs_sim, with_counters, with_mlp
from sim_scripts import run_script as _run

pytestmark = needs_sim

COMPILE = {"TIDE_SIM_COMPILE": "1"}

# x, y -> a = x + y -> b = relu(a) -> c = 2 b + 0.5, on sim:0, fetching c (and a with "a" as the
# first argument). Prints per run the fetched values, the sim's launches and compiles, and the
# groups the last run had.
CHAIN = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    fetch_a, batches = sys.argv[2] == "a", [int(b) for b in sys.argv[3].split(",")]
    x = layers.data(name="x", shape=[16], dtype="float32")
    y = layers.data(name="y", shape=[16], dtype="float32")
    a = layers.elementwise_add(x, y)
    b = layers.relu(a)
    c = layers.scale(b, 2.0, bias=0.5)
    exe = tide.Executor(tide.Place("sim", 0))
    rng = np.random.default_rng(0)
    runs = []
    for n in batches:
        xs = rng.standard_normal((n, 16), dtype="float32")
        ys = rng.standard_normal((n, 16), dtype="float32")
        before = lib.tide_sim_counters()
        got = exe.run(feed={"x": xs, "y": ys}, fetch_list=[c, a] if fetch_a else [c])
        after = lib.tide_sim_counters()
        want_a = xs + ys
        want = [np.maximum(want_a, 0) * np.float32(2) + np.float32(0.5)] + ([want_a] if fetch_a else [])
        runs.append({
            "exact": all(np.array_equal(g, w) for g, w in zip(got, want)),
            "launches": after.kernel_launches - before.kernel_launches,
            "fused": after.fused_launches - before.fused_launches,
            "compiles": after.compiles - before.compiles,
            "declines": after.compile_declines - before.compile_declines,
            "releases": after.compiled_releases - before.compiled_releases,
            "values": [g.tolist() for g in got]})
    info = exe.last_run_info()
    print(json.dumps({"runs": runs, "groups": info["compiled_groups"],
                      "ops": [k for k, _ in info["kernels"]]}))
""")
)


def chain(fetch="c", batches="4,4,4", env=None, check=True):
    p = _run(CHAIN, SIM, fetch, batches, env=dict(COMPILE, **(env or {})), check=check)
    return p if not check else json.loads(p.stdout.strip().splitlines()[-1])


def test_a_chain_runs_as_one_fused_kernel_equal_to_the_ops_one_by_one():
    fused = chain()
    alone = chain(env={"TIDE_DISABLE_DEVICE_COMPILE": "1"})
    # The fused loop does the ops' arithmetic in their order: the same bits.
    assert [r["values"] for r in fused["runs"]] == [r["values"] for r in alone["runs"]]
    assert all(r["exact"] for r in fused["runs"] + alone["runs"])
    # One kernel a run instead of three, compiled once.
    assert [r["launches"] for r in fused["runs"]] == [1, 1, 1], fused["runs"]
    assert [r["fused"] for r in fused["runs"]] == [1, 1, 1]
    assert [r["compiles"] for r in fused["runs"]] == [1, 0, 0]
    assert [r["launches"] for r in alone["runs"]] == [3, 3, 3], alone["runs"]
    # The group is one node of the prepared block, named with its device, plugin and ops.
    (group,) = fused["groups"]
    assert "device 'sim'" in group["label"] and "libtide_device_sim.so" in group["label"]
    assert "elementwise_add" in group["label"] and "scale" in group["label"]
    assert group["compiled_runs"] == 3 and group["fallback_runs"] == 0
    assert "device_compiled_group" in fused["ops"] and "relu" not in fused["ops"]


def test_tide_disable_device_compile_runs_op_by_op():
    alone = chain(env={"TIDE_DISABLE_DEVICE_COMPILE": "1"})
    assert alone["groups"] == [] and "relu" in alone["ops"]
    assert all(r["fused"] == 0 and r["compiles"] == 0 for r in alone["runs"])


def test_a_fetched_intermediate_is_an_output_of_the_group():
    r = chain(fetch="a")
    assert all(run["exact"] for run in r["runs"]), r["runs"]
    assert [run["launches"] for run in r["runs"]] == [1, 1, 1]


def test_a_new_shape_compiles_again_and_a_declined_one_runs_op_by_op():
    r = chain(batches="4,8,4,8")
    assert all(run["exact"] for run in r["runs"])
    assert [run["compiles"] for run in r["runs"]] == [1, 1, 0, 0]  # cached by shape
    assert [run["launches"] for run in r["runs"]] == [1, 1, 1, 1]
    # The device declines more than 100 elements: batch 8 (128) runs through the ops' kernels.
    r = chain(batches="4,8,4,8", env={"TIDE_SIM_FUSE_MAX_ELEMENTS": "100"})
    assert all(run["exact"] for run in r["runs"])
    assert [run["launches"] for run in r["runs"]] == [1, 3, 1, 3], r["runs"]
    assert [run["declines"] for run in r["runs"]] == [0, 1, 0, 0]  # asked once per shape
    assert r["groups"][0]["compiled_runs"] == 2 and r["groups"][0]["fallback_runs"] == 2


def test_the_cache_keeps_the_most_recently_used_functions_and_gives_back_the_others():
    # Capacity 2: batch 12's function drops batch 4's (the least recently used, which no node
    # holds: the node holds the one it runs), given back to the device at once; batch 4 then
    # compiles again and drops 8's; 12 and 4 stay cached.
    r = chain(batches="4,8,12,4,12,4", env={"TIDE_DEVICE_COMPILE_CACHE_CAPACITY": "2"})
    assert all(run["exact"] for run in r["runs"]), r["runs"]
    assert [run["compiles"] for run in r["runs"]] == [1, 1, 1, 1, 0, 0], r["runs"]
    assert [run["releases"] for run in r["runs"]] == [0, 0, 1, 1, 0, 0], r["runs"]
    assert [run["launches"] for run in r["runs"]] == [1] * 6
    # The default keeps them all.
    r = chain(batches="4,8,12,4")
    assert [run["compiles"] for run in r["runs"]] == [1, 1, 1, 0]
    assert sum(run["releases"] for run in r["runs"]) == 0


# x, y, z -> a = x + y; u = 3 z; b = relu(a); c = 2 b + 0.5: the chain add, relu, scale skips
# over the independent scale of z, which runs before the group's node.
AROUND = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    x, y, z = (layers.data(name=n, shape=[16], dtype="float32") for n in "xyz")
    a = layers.elementwise_add(x, y)
    u = layers.scale(z, 3.0)
    c = layers.scale(layers.relu(a), 2.0, bias=0.5)
    exe = tide.Executor(tide.Place("sim", 0))
    xs, ys, zs = (np.random.default_rng(i).standard_normal((4, 16), dtype="float32")
                  for i in range(3))
    launches = []
    for _ in range(2):
        before = lib.tide_sim_counters()
        got_c, got_u = exe.run(feed={"x": xs, "y": ys, "z": zs}, fetch_list=[c, u])
        launches.append(lib.tide_sim_counters().kernel_launches - before.kernel_launches)
    info = exe.last_run_info()
    print(json.dumps({
        "exact": bool(np.array_equal(got_c, np.maximum(xs + ys, 0) * np.float32(2) + np.float32(0.5))
                      and np.array_equal(got_u, zs * np.float32(3))),
        "launches": launches, "groups": [g["label"] for g in info["compiled_groups"]],
        "ops": [k for k, _ in info["kernels"]]}))
""")
)


def test_a_group_whose_ops_are_apart_runs_the_ops_between_before_its_node():
    r = json.loads(_run(AROUND, SIM, env=COMPILE).stdout.strip().splitlines()[-1])
    assert r["exact"]
    (label,) = r["groups"]
    assert "ops #3 elementwise_add, #5 relu, #6 scale" in label, label
    assert r["launches"] == [2, 2]  # the scale of z, then the fused chain
    # (u's fetch follows the scale that computes it: its download starts there, on the sim's
    # copy-out stream.)
    assert r["ops"][3:6] == ["scale", "fetch", "device_compiled_group"], r["ops"]


@pytest.mark.parametrize(
    "bug, why",
    [
        ("claim_overlap", "is also in group 0"),
        ("claim_out_of_range", "is out of range"),
        ("claim_cycle", "would make a cycle"),
    ],
)
def test_invalid_claims_are_refused_naming_the_plugin_and_the_group(bug, why):
    p = chain(env={"TIDE_SIM_PLANT_BUG": bug}, check=False)
    assert p.returncode != 0
    assert why in p.stderr, p.stderr
    assert "get_capability of device 'sim'" in p.stderr and "libtide_device_sim.so" in p.stderr
    assert "group" in p.stderr and "elementwise_add" in p.stderr


# The MLP (sim_scripts.MLP_PROGRAM; fc = mul + elementwise_add + relu): trained on sim:0 with the
# sim's claims on or off (TIDE_DISABLE_DEVICE_COMPILE in argv[2]); prints the losses, the bytes
# each step moved and the groups of the training and the test program.
MLP = with_mlp(
    with_counters(
        textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    steps = 8
    MLP_PROGRAM
    data = [(rng.standard_normal((batch, 64), dtype="float32"),
             rng.integers(0, 10, (batch, 1)).astype("int64")) for _ in range(4)]
    scope = tide.Scope()
    exe = tide.Executor(tide.Place("sim", 0))
    exe.run(startup, scope=scope)
    losses, traffic = [], []
    for step in range(steps):
        xs, ys = data[step % len(data)]
        before = lib.tide_sim_counters()
        out, = exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)
        after = lib.tide_sim_counters()
        losses.append(float(out[0]))
        traffic.append(after.h2d_bytes - before.h2d_bytes + after.d2h_bytes - before.d2h_bytes)
    train_groups = exe.last_run_info()["compiled_groups"]
    out, = exe.run(test_program, feed={"x": data[0][0], "label": data[0][1]}, fetch_list=[loss],
                   scope=scope)
    print(json.dumps({"losses": losses, "traffic": traffic, "infer": float(out[0]),
                      "train_groups": train_groups,
                      "test_groups": exe.last_run_info()["compiled_groups"]}))
""")
    )
)


def test_training_an_mlp_with_claims_gives_the_losses_without():
    def train(disable):
        env = dict(COMPILE, TIDE_DISABLE_DEVICE_COMPILE=disable)
        return json.loads(_run(MLP, SIM, env=env).stdout.strip().splitlines()[-1])

    fused, alone = train("0"), train("1")
    assert fused["losses"] == alone["losses"], (fused["losses"], alone["losses"])
    assert fused["infer"] == alone["infer"]
    assert fused["losses"][-1] < fused["losses"][0]
    # The first fc's bias add and relu are one group, in the training step (whose grad ops read
    # the add's and the relu's outputs) and in the test program; moving the same bytes.
    for groups in (fused["train_groups"], fused["test_groups"]):
        assert len(groups) == 1 and "elementwise_add, #" in groups[0]["label"], groups
        assert "relu" in groups[0]["label"]
    assert fused["train_groups"][0]["compiled_runs"] == 8
    assert alone["train_groups"] == [] and fused["traffic"] == alone["traffic"]


# --- The program pass hook ---

# An inference program x -> scale(1, 0) -> relu -> scale(3, 0), run on `place` (argv[2]) and
# transpiled for it; prints the ops each prepared and transpiled program has.
PASS = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    place = tide.Place(sys.argv[2], 0)
    x = layers.data(name="x", shape=[8], dtype="float32")
    out = layers.scale(layers.relu(layers.scale(x, 1.0)), 3.0)
    xs = np.linspace(-1, 1, 16, dtype="float32").reshape(2, 8)
    exe = tide.Executor(place)
    got, = exe.run(feed={"x": xs}, fetch_list=[out])
    ran = [k for k, _ in exe.last_run_info()["kernels"]]
    program = tide.default_main_program().clone(for_test=True)
    t = tide.transpiler.InferenceTranspiler()
    removed = t.transpile(program, place, keep=[out])
    got2, = tide.Executor(place).run(program, feed={"x": xs}, fetch_list=[out.name])
    want = np.maximum(xs, 0) * 3
    print(json.dumps({"exact": np.array_equal(got, want) and np.array_equal(got2, want),
                      "ran": ran, "removed": removed, "applied": t.plugin_passes_applied,
                      "ops": [op.type for op in program.global_block().ops]}))
""")


# The sim's claims off, so that the ops it runs are the program's.
PASS_ENV = dict(COMPILE, TIDE_DISABLE_DEVICE_COMPILE="1")


def test_a_plugins_pass_runs_at_prepare_and_in_the_inference_transpiler():
    r = json.loads(_run(PASS, SIM, "sim", env=PASS_ENV).stdout.strip().splitlines()[-1])
    assert r["exact"]
    assert r["ran"].count("scale") == 1, r["ran"]  # the scale by 1 is gone
    assert r["applied"] == ["sim.drop_identity_scale"] and r["removed"] == 1
    assert r["ops"].count("scale") == 1, r["ops"]


def test_a_pass_for_another_place_kind_does_not_run():
    r = json.loads(_run(PASS, SIM, "cpu", env=PASS_ENV).stdout.strip().splitlines()[-1])
    assert r["exact"] and r["ran"].count("scale") == 2 and r["applied"] == []


@pytest.mark.parametrize(
    "names", ["sim.drop_identity_scale", "other.pass,sim.drop_identity_scale", "*"]
)
def test_a_pass_the_user_disables_by_name_does_not_run(names):
    env = dict(PASS_ENV, TIDE_DISABLE_PROGRAM_PASSES=names)
    r = json.loads(_run(PASS, SIM, "sim", env=env).stdout.strip().splitlines()[-1])
    assert r["exact"] and r["ran"].count("scale") == 2 and r["applied"] == [], r


def test_disabling_another_pass_leaves_this_one_on():
    env = dict(PASS_ENV, TIDE_DISABLE_PROGRAM_PASSES="sim.drop_identity")  # a prefix, not its name
    r = json.loads(_run(PASS, SIM, "sim", env=env).stdout.strip().splitlines()[-1])
    assert r["ran"].count("scale") == 1 and r["applied"] == ["sim.drop_identity_scale"], r


def test_a_pass_returning_no_program_is_refused_naming_it_and_its_plugin():
    p = _run(PASS, SIM, "sim", env=dict(PASS_ENV, TIDE_SIM_PLANT_BUG="pass_garbage"), check=False)
    assert p.returncode != 0
    assert "program pass 'sim.drop_identity_scale'" in p.stderr, p.stderr
    assert "libtide_device_sim.so" in p.stderr and "cannot load" in p.stderr


# --- The conformance kit ---


def _contracts(env):
    p = _run(
        "import sys\nfrom tide.testing import device_contracts\n"
        "sys.exit(device_contracts.main(sys.argv[1:]))",
        "--place",
        "sim:0",
        "--plugin",
        SIM,
        env=env,
        check=False,
    )
    return p


def test_the_conformance_kit_passes_the_sims_fused_kernels():
    p = _contracts(COMPILE)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "pass compiler" in p.stdout, p.stdout


def test_a_planted_wrong_fused_kernel_is_caught_naming_the_group_and_its_ops():
    p = _contracts(dict(COMPILE, TIDE_SIM_PLANT_BUG="fused_wrong"))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL compiler" in p.stdout, p.stdout
    assert "group 0 of block 0" in p.stdout and "relu" in p.stdout and "scale" in p.stdout
    assert "differently from its ops run one by one" in p.stdout


def test_a_device_without_a_compiler_reports_no_compiler_check():
    p = _contracts({})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "compiler" not in p.stdout
