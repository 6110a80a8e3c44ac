"""The core's synchronisation with an asynchronous device: the test-only 'sim' device runs its
kernels and copies on a worker thread (with random delays from TIDE_SIM_MAX_DELAY_US), checks its
allocator, and counts its contexts and finalize. Each case runs in a subprocess, since the device
reads its configuration when it is loaded."""

import json
import os
import textwrap

import pytest
from sim_scripts import SIM, needs_sim, with_counters, with_mlp
from sim_scripts import run_script as _run

pytestmark = needs_sim

# A net mixing sim kernels (scale, relu, elementwise_add) and CPU fallbacks (matmul, softmax,
# reduce_mean; ops whose sim kernels would sum in another order than the CPU's),
# so data goes to and from the device between ops, run many times with fresh inputs; prints
# whether every run matched the CPU's bit for bit, and the device's counters.
NET = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    sim = tide.load_plugin(sys.argv[1])
    runs = int(sys.argv[2])

    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS

    x = layers.data(name="x", shape=[8, 16], dtype="float32", append_batch_size=False)
    w = layers.data(name="w", shape=[16, 16], dtype="float32", append_batch_size=False)
    h = layers.relu(layers.scale(x, 2.0, bias=-0.5))
    h = layers.elementwise_add(layers.matmul(h, w), h)
    h = layers.elementwise_add(layers.scale(layers.softmax(h), 3.0), h)
    out = layers.reduce_mean(h)
    program = tide.default_main_program()
    cpu, dev = tide.Executor(tide.Place("cpu", 0)), tide.Executor(tide.Place("sim", 0))
    rng = np.random.default_rng(0)
    same = True
    for _ in range(runs):
        feed = {"x": rng.standard_normal((8, 16), dtype="float32"),
                "w": rng.standard_normal((16, 16), dtype="float32")}
        want = cpu.run(program, feed=feed, fetch_list=[h, out])
        got = dev.run(program, feed=feed, fetch_list=[h, out])
        same = same and all(np.array_equal(a, b) for a, b in zip(want, got))
    c = lib.tide_sim_counters()
    print(json.dumps({"same": bool(same), "allocator_errors": c.allocator_errors,
                      "h2d": c.h2d, "d2h": c.d2h, "wrong_kind": c.wrong_kind}))
""")
)


@pytest.mark.parametrize("host_accessible", ["0", "1"])
def test_runs_on_an_async_device_match_the_cpu_bit_for_bit(host_accessible):
    # Random delays on the device's stream: any copy that does not wait for the kernel writing
    # its source (or any numpy view handed out early) reads stale or unwritten data.
    p = _run(
        NET,
        SIM,
        "1000",
        env={"TIDE_SIM_MAX_DELAY_US": "200", "TIDE_SIM_HOST_ACCESSIBLE": host_accessible},
    )
    result = json.loads(p.stdout.strip().splitlines()[-1])
    assert result["same"], result
    assert result["allocator_errors"] == 0, p.stderr
    if host_accessible == "0":
        assert result["h2d"] > 0 and result["d2h"] > 0  # the fallbacks really moved data
    # Every copy's kind said where its pointers were: between the CPU and a host-accessible sim,
    # HOST_TO_DEVICE (the sim checks each copy against its blocks), never DEVICE_TO_DEVICE.
    assert result["wrong_kind"] == 0, p.stderr


# The device-contract checks (what tide-conformance runs first), in this process: the declared
# contract the core follows, and each check's result.
CONTRACT = textwrap.dedent("""
    import json, sys
    import tide
    from tide import _C
    tide.load_plugin(sys.argv[1])
    place = tide.Place("sim", 0)
    print(json.dumps({"declared": _C.device_contract(place),
                      "passed": {c["contract"]: c["passed"] for c in _C.check_device_contracts(place)}}))
""")


@pytest.mark.parametrize("contract", ["0", "1", "2"])
def test_a_device_of_the_earlier_contract_gets_the_synchronisation_it_needs(contract):
    # The sim breaks contract 2 on purpose: its host-to-device copies read their source late and
    # its frees poison the block at once. Declaring no contract (0, a plugin built against the
    # earlier 1.0) or contract 1, it works: the core synchronises after each upload and before
    # each free, so the contract checks pass and a net runs bit for bit as on the CPU. Declaring
    # contract 2 while breaking it, the checks catch both rules broken.
    env = {
        "TIDE_SIM_CONTRACT": contract,
        "TIDE_SIM_PLANT_BUG": "copy_reads_late,free_at_once",
        "TIDE_SIM_MAX_DELAY_US": "200",
        "TIDE_SIM_NO_PINNED": "1",
        "TIDE_USE_SYSTEM_ALLOCATOR": "1",
    }
    p = _run(CONTRACT, SIM, env=env)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    old = contract != "2"
    assert r["declared"] == (1 if old else 2), r
    assert r["passed"] == {"copy": old, "free": old}, r
    if old:
        # Told once, naming the device and its plugin.
        declared = "no device contract" if contract == "0" else "declares device contract 1"
        assert declared in p.stderr and "the core follows contract 1 for it" in p.stderr, p.stderr
        assert "libtide_device_sim.so" in p.stderr
        p = _run(NET, SIM, "100", env=env)
        result = json.loads(p.stdout.strip().splitlines()[-1])
        assert result["same"] and result["allocator_errors"] == 0, (result, p.stderr)


def test_a_device_of_a_newer_contract_is_refused_naming_both():
    code = "import sys, tide\ntide.load_plugin(sys.argv[1])\n"
    p = _run(code, SIM, env={"TIDE_SIM_CONTRACT": "3"}, check=False)
    assert p.returncode != 0
    assert "device 'sim'" in p.stderr and "declares device contract 3" in p.stderr, p.stderr
    assert "this core knows contracts 1 to 2" in p.stderr, p.stderr


def test_contexts_are_destroyed_and_the_device_finalized_once_at_exit(tmp_path):
    log = tmp_path / "lifecycle.txt"
    _run(NET, SIM, "3", env={"TIDE_SIM_LIFECYCLE_LOG": str(log)})
    fields = dict(kv.split("=") for kv in log.read_text().split())
    assert fields["finalized"] == "1"
    # Then the plugin's own finalize (TIDE_ON_FINALIZE), once, after its device's.
    assert fields["plugin_finalized"] == "1" and fields["device_finalized_before"] == "1"
    assert int(fields["contexts_created"]) >= 1
    assert fields["contexts_destroyed"] == fields["contexts_created"]
    assert fields["allocator_errors"] == "0"
    # Staging buffers for feeds were made, and given back before finalize.
    assert int(fields["pinned_allocs"]) >= 1
    assert fields["pinned_frees"] == fields["pinned_allocs"]


VENDOR_MISTAKE = textwrap.dedent("""
    import sys
    import numpy as np
    import tide
    tide.load_plugin(sys.argv[1])
    cpu = tide.Executor(tide.CPUPlace())  # a context that exists before the failing one
    cpu.run(tide.Program())
    if sys.argv[2] == "context":
        try:
            tide.Executor(tide.Place("sim", 0)).run(tide.Program())
        except tide.TideError as e:
            print("raised:", e)
    else:
        t = tide.LoDTensor(np.ones(1 << 16, "float32"), tide.Place("sim", 0))
        del t
        tide.memory.empty_cache(tide.Place("sim", 0))
        print("freed")
""")


@pytest.mark.parametrize("mistake", ["context", "free"])
def test_a_device_entry_that_fails_leaves_the_process_able_to_exit(mistake):
    bug = {"context": "context_fails", "free": "free_throws"}[mistake]
    p = _run(VENDOR_MISTAKE, SIM, mistake, env={"TIDE_SIM_PLANT_BUG": bug}, check=False)
    assert p.returncode == 0, p.stdout + p.stderr  # no crash at exit (a null context, terminate)
    if mistake == "context":
        assert "raised:" in p.stdout and "planted: no stream" in p.stdout, p.stdout
    else:  # logged under the device's kind, naming the entry, not thrown across the C ABI
        assert "freed" in p.stdout, p.stdout + p.stderr
        assert "device 'sim': Free threw" in p.stderr and "planted free failure" in p.stderr


def test_copy_false_on_a_place_the_host_cannot_read_is_a_value_error():
    """NumPy 2's copy=False means never a copy: a tensor on sim:0 (not host-accessible) cannot be
    viewed, so np.array(t, copy=False) raises instead of copying in silence."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import tide
        tide.load_plugin(sys.argv[1])
        t = tide.LoDTensor(np.arange(4, dtype="float32"), tide.Place("sim", 0))
        assert np.array(t).tolist() == [0, 1, 2, 3]  # a copy, asked for
        try:
            np.array(t, copy=False)
        except ValueError as e:
            print("refused:", e)
        host = tide.LoDTensor(np.arange(4, dtype="float32"))
        assert np.shares_memory(np.array(host, copy=False), np.asarray(host))
    """)
    p = _run(code, SIM)
    assert "refused: the tensor is on sim:0, whose memory the host cannot read" in p.stdout, (
        p.stdout
    )


FAULT = textwrap.dedent("""
    import sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    x = layers.data(name="x", shape=[4], dtype="float32", append_batch_size=False)
    block = tide.default_main_program().global_block()
    bad = block.create_var(name="bad", shape=[4], dtype="float32")
    block.append_op(type="sim.fail", inputs={"X": [x]}, outputs={"Out": [bad]})
    out = layers.scale(layers.relu(bad), 2.0)
    exe = tide.Executor(tide.Place("sim", 0))
    exe.run(feed={"x": np.ones(4, "float32")}, fetch_list=[out])
""")


def test_an_async_fault_names_its_op_with_sync_ops():
    p = _run(FAULT, SIM, env={"TIDE_SYNC_OPS": "1"}, check=False)
    assert p.returncode != 0
    assert "sim.fail" in p.stderr and "illegal address" in p.stderr, p.stderr


def test_an_async_fault_still_surfaces_without_sync_ops():
    # Without the flag the fault is reported at the next synchronisation (the fetch), not lost.
    p = _run(FAULT, SIM, check=False)
    assert p.returncode != 0
    assert "illegal address" in p.stderr, p.stderr


def test_an_async_fault_names_the_op_that_queued_it_and_the_last_op_launched():
    # Reported by the fetch's synchronisation: the device's error names the op whose queued work
    # failed (the sim tags each task with its op), and the core names the last op launched on
    # the place, as such, not only the fetch that synchronised.
    p = _run(FAULT, SIM, check=False)
    assert p.returncode != 0
    assert "op 'sim.fail': illegal address" in p.stderr, p.stderr
    assert "the last op launched on sim:0 was op 'scale'" in p.stderr, p.stderr
    assert "TIDE_SYNC_OPS=1" in p.stderr


# Everything dropped, then tide.shutdown(): the contexts go, the core's pools give every block
# back to the device, the device is finalized once (also not again at exit), and the place
# refuses further use.
SHUTDOWN = with_counters(
    textwrap.dedent("""
    import ctypes, gc, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    x = layers.data(name="x", shape=[8, 16], dtype="float32", append_batch_size=False)
    out = layers.relu(layers.scale(x, 2.0))
    scope = tide.Scope()
    exe = tide.Executor(tide.Place("sim", 0))
    for _ in range(3):
        exe.run(feed={"x": np.ones((8, 16), "float32")}, fetch_list=[out], scope=scope)
    big = tide.LoDTensor(np.zeros(1 << 20, dtype="float32"), tide.Place("sim", 0))  # own block
    before = lib.tide_sim_counters()
    del big, exe, scope
    gc.collect()
    tide.shutdown()
    after = lib.tide_sim_counters()
    try:
        tide.Executor(tide.Place("sim", 0))
        refused = ""
    except Exception as e:
        refused = str(e)
    print(json.dumps({"allocs": after.allocs, "frees": after.frees, "live": after.live_blocks,
                      "live_before": before.live_blocks, "finalized": after.finalized,
                      "destroyed": after.contexts_destroyed, "created": after.contexts_created,
                      "errors": after.allocator_errors, "refused": refused}))
""")
)


def test_shutdown_hands_the_memory_pool_back_before_finalize(tmp_path):
    log = tmp_path / "lifecycle.txt"
    p = _run(SHUTDOWN, SIM, env={"TIDE_SIM_LIFECYCLE_LOG": str(log)})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["live_before"] > 0 and r["allocs"] > 0
    assert r["frees"] == r["allocs"] and r["live"] == 0, r  # every block the device lent came back
    assert r["finalized"] == 1 and r["destroyed"] == r["created"] >= 1, r
    assert r["errors"] == 0
    assert "already shut down" in r["refused"] and "tide.shutdown()" in r["refused"], r
    # At finalize (written by the device) the pool had given everything back; exit did not
    # finalize again.
    fields = dict(kv.split("=") for kv in log.read_text().split())
    assert fields["finalized"] == "1" and fields["live_blocks"] == "0", fields
    assert fields["allocs"] == fields["frees"], fields
    assert fields["plugin_finalized"] == "1" and fields["device_finalized_before"] == "1"


# Copies a run needs and no more: a feed only a CPU fallback reads stays on the host (it used to
# be uploaded and copied down again); a fetched tensor a fallback also read is copied down once
# (it used to be copied down by the fallback's conversion and again by the fetch).
COPIES = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    xs = np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8)
    sig = lambda v: 1 / (1 + np.exp(-v))
    exe = tide.Executor(tide.Place("sim", 0))
    def per_run(program, fetch, want):
        counts = []
        for _ in range(3):
            before = lib.tide_sim_counters()
            got = exe.run(program, feed={"x": xs}, fetch_list=fetch, scope=tide.Scope())
            after = lib.tide_sim_counters()
            assert all(np.allclose(g, w, rtol=1e-6) for g, w in zip(got, want))
            counts.append([after.h2d - before.h2d, after.d2h - before.d2h])
        return counts
    a, b = tide.Program(), tide.Program()
    with tide.program_guard(a, tide.Program()):
        x = layers.data(name="x", shape=[4, 8], dtype="float32", append_batch_size=False)
        out = layers.scale(layers.sigmoid(x), 2.0)  # sigmoid has no sim kernel
    with tide.program_guard(b, tide.Program()):
        x = layers.data(name="x", shape=[4, 8], dtype="float32", append_batch_size=False)
        h = layers.scale(x, 3.0)
        g = layers.sigmoid(h)
    print(json.dumps({"feed_for_fallback": per_run(a, [out], [2 * sig(xs)]),
                      "fetch_read_by_fallback": per_run(b, [h, g], [3 * xs, sig(3 * xs)])}))
""")
)


def test_a_run_copies_feeds_and_fetches_only_where_needed():
    p = _run(COPIES, SIM)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    # x stays on the host for sigmoid; sigmoid's result goes up for scale; scale's comes down.
    assert r["feed_for_fallback"] == [[1, 1]] * 3, r
    # x goes up for scale; h comes down once, for sigmoid and the fetch both.
    assert r["fetch_read_by_fallback"] == [[1, 1]] * 3, r


MEMORY = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    tide.load_plugin(sys.argv[1])
    place = tide.Place("sim", 1)
    before = tide.memory.stats(place)
    t = tide.LoDTensor(np.zeros(80 << 18, dtype="float32"), place)  # 80 MiB
    during = tide.memory.stats(place)
    del t
    freed = tide.memory.stats(place)
    tide.memory.empty_cache(place)
    emptied = tide.memory.stats(place)
    print(json.dumps({"before": before, "during": during, "freed": freed, "emptied": emptied,
                      "places": [str(p) for p in tide.places("sim")],
                      "count": tide.device_count("sim"), "none": tide.device_count("nope")}))
""")


# The buddy allocator's reserve and budget: absent when every tensor is its own system allocation
# (use_system_allocator, as scripts/sanitize.sh runs the suites).
needs_buddy_allocator = pytest.mark.skipif(
    os.environ.get("TIDE_USE_SYSTEM_ALLOCATOR", "").lower() in ("1", "true", "yes"),
    reason="use_system_allocator: no arena reserve or budget to check",
)


@needs_buddy_allocator
def test_a_large_tensor_reserves_about_its_size_and_empty_cache_returns_it():
    p = _run(MEMORY, SIM)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    size = 80 << 20
    grown = r["during"]["reserved"] - r["before"]["reserved"]
    assert size <= grown <= 1.1 * size, r  # not rounded up to 128 MiB
    assert r["freed"]["used"] == r["before"]["used"]
    assert r["freed"]["reserved"] == r["during"]["reserved"]  # kept for reuse...
    assert r["emptied"]["reserved"] <= r["before"]["reserved"]  # ...until empty_cache
    assert r["places"] == ["sim:0", "sim:1"] and r["count"] == 2 and r["none"] == 0


FLAGS = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    tide.load_plugin(sys.argv[1])
    print(json.dumps({"fraction": tide.get_flag("fraction_of_sim_memory_to_use"),
                      "initial": tide.get_flag("initial_sim_memory_in_mb"),
                      "budget": tide.memory.stats(tide.Place("sim", 0))["budget"]}))
""")


@needs_buddy_allocator
def test_a_vendor_kind_gets_its_own_memory_flags_from_the_environment():
    p = _run(
        FLAGS,
        SIM,
        env={"FLAGS_fraction_of_sim_memory_to_use": "0.25", "TIDE_INITIAL_SIM_MEMORY_IN_MB": "8"},
    )
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert float(r["fraction"]) == 0.25 and r["initial"] == "8"
    assert r["budget"] == (1 << 30) // 4  # a quarter of the sim device's 1 GiB


PLACEMENT = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS

    x = layers.data(name="x", shape=[4], dtype="float32", append_batch_size=False)
    b = layers.create_parameter(shape=[4], dtype="float32", name="b",
                                default_initializer=tide.initializer.Constant(0.5))
    out = layers.relu(layers.elementwise_add(x, b))
    exe = tide.Executor(tide.Place("sim", 0))
    exe.run(tide.default_startup_program())  # fill_constant has no sim kernel: runs on the cpu
    where = str(tide.global_scope().find_var("b").get_tensor().place())
    per_run = []
    for i in range(3):
        before = lib.tide_sim_counters()
        got, = exe.run(feed={"x": np.full(4, float(i), "float32")}, fetch_list=[out])
        after = lib.tide_sim_counters()
        assert np.allclose(got, i + 0.5)
        per_run.append([after.h2d - before.h2d, after.d2h - before.d2h])
    print(json.dumps({"where": where, "per_run": per_run}))
""")
)


def test_parameters_made_by_a_fallback_kernel_live_on_the_run_place():
    # The startup program's initialiser ran on the host; the parameter still lives on sim:0,
    # so each inference run copies its feed in and its fetch out, and nothing else.
    p = _run(PLACEMENT, SIM)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["where"] == "sim:0", r
    assert r["per_run"] == [[1, 1]] * 3, r


# The MLP (sim_scripts.MLP_PROGRAM) trained on sim:0 and on the CPU with the same initial
# parameters. Prints both loss curves and the host<->device bytes of each step and of
# each inference run afterwards.
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
    steps = int(sys.argv[2])
    MLP_PROGRAM
    data = [(rng.standard_normal((batch, 64), dtype="float32"),
             rng.integers(0, 10, (batch, 1)).astype("int64")) for _ in range(4)]
    def train(place):
        scope = tide.Scope()
        exe = tide.Executor(place)
        exe.run(startup, scope=scope)  # seeded: the same parameters on both places
        losses, traffic = [], []
        for step in range(steps):
            xs, ys = data[step % len(data)]
            before = lib.tide_sim_counters()
            out, = exe.run(main, feed={"x": xs, "label": ys}, fetch_list=[loss], scope=scope)
            after = lib.tide_sim_counters()
            losses.append(float(out[0]))
            traffic.append([after.h2d_bytes - before.h2d_bytes, after.d2h_bytes - before.d2h_bytes])
        infer = []
        for _ in range(3):
            before = lib.tide_sim_counters()
            exe.run(test_program, feed={"x": data[0][0], "label": data[0][1]}, fetch_list=[loss],
                    scope=scope)
            after = lib.tide_sim_counters()
            infer.append([after.h2d_bytes - before.h2d_bytes, after.d2h_bytes - before.d2h_bytes])
        return losses, traffic, infer
    cpu_losses, _, _ = train(tide.Place("cpu", 0))
    sim_losses, traffic, infer = train(tide.Place("sim", 0))
    print(json.dumps({"cpu": cpu_losses, "sim": sim_losses, "traffic": traffic, "infer": infer,
                      "feed_bytes": batch * 64 * 4 + batch * 8, "fetch_bytes": 4,
                      "memsets": lib.tide_sim_counters().memsets}))
""")
    )
)


@pytest.mark.parametrize("delay", ["0", "100"])
def test_an_mlp_trains_on_the_device_moving_only_its_feeds_and_fetches(delay):
    p = _run(MLP, SIM, "12", env={"TIDE_SIM_MAX_DELAY_US": delay})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    # The same losses as the CPU (to rounding: the sim sums in another order), and it learns.
    np = pytest.importorskip("numpy")
    assert np.allclose(r["sim"], r["cpu"], rtol=1e-4, atol=1e-5), (r["sim"], r["cpu"])
    assert r["sim"][-1] < r["sim"][0]
    # Parameters never leave the device: each step moves its feeds in and its fetch out.
    want = [r["feed_bytes"], r["fetch_bytes"]]
    assert all(t == want for t in r["traffic"]), (r["traffic"], want)
    assert all(t == want for t in r["infer"]), (r["infer"], want)
    assert r["memsets"] > 0  # the zero-initialised biases, through DeviceContext_Memset


# A host-resident weight read by a sim kernel: copied to the device once, and again only after
# it changes; a numpy-shared weight (writes go unseen) is copied every run.
CACHE = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    x = layers.data(name="x", shape=[4, 8], dtype="float32", append_batch_size=False)
    block = tide.default_main_program().global_block()
    w = block.create_var(name="w", shape=[4, 8], dtype="float32", persistable=True)
    out = layers.elementwise_add(x, w)
    exe = tide.Executor(tide.Place("sim", 0))
    scope = tide.Scope()
    xs = np.ones((4, 8), "float32")
    def set_w(w_value, share):
        scope.var("w").get_tensor().set(w_value, tide.Place("cpu", 0), share)
    runs = []
    def step():
        before = lib.tide_sim_counters()
        got, = exe.run(feed={"x": xs}, fetch_list=[out], scope=scope)
        after = lib.tide_sim_counters()
        runs.append([after.h2d_bytes - before.h2d_bytes, float(got[0, 0])])
    set_w(np.full((4, 8), 2, "float32"), False)
    step(); step(); step()
    set_w(np.full((4, 8), 5, "float32"), False)  # changed: copied again, and the result follows
    step(); step()
    set_w(np.full((4, 8), 7, "float32"), True)  # numpy-shared: never cached
    step(); step()
    print(json.dumps(runs))
""")
)


def test_a_converted_input_is_reused_until_its_source_changes():
    p = _run(CACHE, SIM)
    runs = json.loads(p.stdout.strip().splitlines()[-1])
    feed, both = 4 * 8 * 4, 2 * 4 * 8 * 4
    assert runs == [
        [both, 3.0],
        [feed, 3.0],
        [feed, 3.0],
        [both, 6.0],
        [feed, 6.0],
        [both, 8.0],
        [both, 8.0],
    ], runs


PEER = with_counters(
    textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import tide
    from tide import layers
    tide.load_plugin(sys.argv[1])
    lib = ctypes.CDLL(sys.argv[1])
    COUNTERS
    x = layers.data(name="x", shape=[64, 64], dtype="float32", append_batch_size=False)
    block = tide.default_main_program().global_block()
    w = block.create_var(name="w", shape=[64, 64], dtype="float32", persistable=True)
    out = layers.elementwise_add(x, w)
    scope = tide.Scope()
    exe = tide.Executor(tide.Place("sim", 0))
    rng = np.random.default_rng(1)
    ok = True
    for i in range(50):
        # w is written on sim:1 by a copy still queued there, then read on sim:0.
        wv = rng.standard_normal((64, 64), dtype="float32")
        scope.var("w").get_tensor().set(wv, tide.Place("sim", 1), False)
        xs = rng.standard_normal((64, 64), dtype="float32")
        got, = exe.run(feed={"x": xs}, fetch_list=[out], scope=scope)
        ok = ok and np.array_equal(got, xs + wv)
    c = lib.tide_sim_counters()
    print(json.dumps({"ok": bool(ok), "peer": c.peer, "event_waits": c.event_waits,
                      "props": tide.device_properties("sim:0"),
                      "cpu": tide.device_properties(tide.Place("cpu", 0))}))
""")
)


def test_peer_copies_wait_on_an_event_and_devices_describe_themselves():
    p = _run(PEER, SIM, env={"TIDE_SIM_MAX_DELAY_US": "100"})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["ok"]
    assert r["peer"] >= 50 and r["event_waits"] >= 50, r
    assert r["props"]["name"] == "Tide sim device (test only)"
    assert r["props"]["compute_capability"] == "sim-1"
    assert r["props"]["total_memory"] == 1 << 30
    assert (
        r["cpu"]["name"] and r["cpu"]["total_memory"] > 0 and r["cpu"]["multiprocessor_count"] >= 1
    )


DLPACK = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tide
    tide.load_plugin(sys.argv[1])
    t = tide.LoDTensor()
    xs = np.arange(12, dtype="float32").reshape(3, 4)
    t.set(xs, tide.Place("sim", 1), False)  # an upload still queued on sim:1
    back = tide.from_dlpack(t)  # through __dlpack__: the sim declares kDLExtDev (12)
    print(json.dumps({"device": list(t.__dlpack_device__()), "place": str(back.place()),
                      "same": bool(np.array_equal(np.array(back), xs))}))
""")


def test_a_vendor_place_exchanges_tensors_by_dlpack():
    p = _run(DLPACK, SIM, env={"TIDE_SIM_MAX_DELAY_US": "200"})
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r == {"device": [12, 1], "place": "sim:1", "same": True}, r
