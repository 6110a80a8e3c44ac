"""Trains two small models on the "opencl" place and on the CPU, from the same seed and batches,
and checks that their losses and parameters agree to float32 rounding: fit_a_line (fc, square
error, mean, SGD) and an MLP classifier (fc + relu, fc + tanh, fc, softmax_with_cross_entropy,
mean, SGD). The plugin has no tanh kernel: that op (and its grad) runs on the CPU, its inputs
and outputs copied, which is the point of the second model; then the same step with
strict_kernel_placement must fail naming tanh. Three executors then train the MLP at once on
the place and must get the same losses.

    python train_opencl.py [--plugin build/libtide_device_opencl.so] [--steps 40]

Exits 77 (ctest's skip) when the plugin finds no OpenCL device.
"""

import argparse
import os
import sys

import numpy as np

import tide

SKIP = 77


def load(plugin):
    tide.load_plugin(plugin)
    if tide.device_count("opencl") == 0:
        print("SKIP: the plugin loaded but found no OpenCL device (see its warning above)")
        sys.exit(SKIP)
    props = tide.device_properties(tide.Place("opencl", 0))
    print(f"opencl:0 is {props['name']} ({props['compute_capability']})")


def fit_a_line():
    """Linear regression on 13 noisy features (Boston housing's shape)."""
    x = tide.layers.data(name="x", shape=[13], dtype="float32")
    y = tide.layers.data(name="y", shape=[1], dtype="float32")
    pred = tide.layers.fc(input=x, size=1, act=None)
    loss = tide.layers.mean(tide.layers.square_error_cost(input=pred, label=y))
    tide.optimizer.SGD(learning_rate=0.05).minimize(loss)
    return loss


def fit_a_line_batches(steps, batch=32):
    rng = np.random.RandomState(0)
    w = rng.randn(13, 1).astype("float32")
    for _ in range(steps):
        x = rng.randn(batch, 13).astype("float32")
        y = (x @ w + 0.1 * rng.randn(batch, 1)).astype("float32")
        yield {"x": x, "y": y}


def mlp():
    """Four classes of 20 features; the second layer's tanh has no OpenCL kernel."""
    x = tide.layers.data(name="x", shape=[20], dtype="float32")
    label = tide.layers.data(name="label", shape=[1], dtype="int64")
    h = tide.layers.fc(input=x, size=32, act="relu")
    h = tide.layers.fc(input=h, size=16, act="tanh")
    logits = tide.layers.fc(input=h, size=4, act=None)
    loss = tide.layers.mean(tide.layers.softmax_with_cross_entropy(logits, label))
    tide.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return loss


def mlp_batches(steps, batch=64):
    rng = np.random.RandomState(1)
    centers = 2 * rng.randn(4, 20).astype("float32")
    for _ in range(steps):
        label = rng.randint(0, 4, size=(batch, 1)).astype("int64")
        x = (centers[label[:, 0]] + rng.randn(batch, 20)).astype("float32")
        yield {"x": x, "label": label}


def train(build, batches, place, steps, seed=7):
    """Per-step losses and the final parameters (by name) of `build` trained on `place`."""
    main, startup = tide.Program(), tide.Program()
    main.random_seed = startup.random_seed = seed
    with tide.program_guard(main, startup), tide.unique_name.guard():
        loss = build()
    scope = tide.Scope()
    exe = tide.Executor(place)
    with tide.scope_guard(scope):
        exe.run(startup)
        losses = [
            float(exe.run(main, feed=feed, fetch_list=[loss])[0].reshape(-1)[0])
            for feed in batches(steps)
        ]
        params = {
            p.name: np.array(scope.find_var(p.name).get_tensor()) for p in main.all_parameters()
        }
    return losses, params, (main, startup, loss), exe.last_run_info()


def compare(name, build, batches, steps, on_cpu=()):
    """Trains on both places; on opencl:0 every op with a kernel but those in `on_cpu` must have
    run the plugin's kernel, and a step must have converted (copied) nothing else."""
    cpu_losses, cpu_params, _, _ = train(build, batches, tide.CPUPlace(), steps)
    ocl_losses, ocl_params, programs, info = train(build, batches, tide.Place("opencl", 0), steps)
    ran = {op: kernel for op, kernel in info["kernels"] if "runs without a kernel" not in kernel}
    elsewhere = {op for op, kernel in ran.items() if "on opencl:0" not in kernel}
    assert elsewhere == set(on_cpu), f"{name}: ops not on opencl:0: {elsewhere}"
    if not on_cpu:
        assert info["transforms"]["copies"] == 0, f"{name}: a step copied {info['transforms']}"
    np.testing.assert_allclose(
        ocl_losses, cpu_losses, rtol=1e-4, atol=1e-6, err_msg=name + " losses"
    )
    for p, v in cpu_params.items():
        np.testing.assert_allclose(ocl_params[p], v, rtol=1e-4, atol=1e-5, err_msg=f"{name} {p}")
    assert ocl_losses[-1] < 0.5 * ocl_losses[0], f"{name} did not train: {ocl_losses}"
    worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ocl_losses, cpu_losses))
    print(
        f"{name}: {steps} steps, loss {ocl_losses[0]:.4f} -> {ocl_losses[-1]:.4f} on opencl:0, "
        f"{cpu_losses[-1]:.4f} on the CPU (largest relative difference {worst:.1e}); "
        f"{len(cpu_params)} parameters match; on the CPU: {sorted(elsewhere) or 'nothing'}, "
        f"copies in the last step: {info['transforms']['copies']}"
    )
    return programs, ocl_losses


def strict_placement_names_the_op(programs, batches):
    """With strict_kernel_placement the CPU fallback of tanh is an error naming it."""
    main, startup, loss = programs
    scope = tide.Scope()
    exe = tide.Executor(tide.Place("opencl", 0))
    with tide.scope_guard(scope):
        exe.run(startup)  # its initializers (uniform_random) run on the CPU: not strict yet
        tide.set_flags({"strict_kernel_placement": True})
        try:
            exe.run(main, feed=next(batches(1)), fetch_list=[loss])
        except tide.TideError as e:
            assert "'tanh'" in str(e) and "strict" in str(e), str(e)
            print("strict_kernel_placement: " + str(e).splitlines()[0][:200])
        else:
            raise AssertionError("strict_kernel_placement let tanh's CPU fallback run")
        finally:
            tide.set_flags({"strict_kernel_placement": False})


def concurrent_executors(programs, batches, steps, want, threads=3):
    """Executors training at once on opencl:0 (each with a Scope of its own, as
    docs/robustness.md asks): kernels of one op type then run concurrently on one command queue,
    which the plugin's per-kernel locks must keep apart. Each must get the single run's losses."""
    import threading

    main, startup, loss = programs
    got, errors = {}, []

    def worker(k):
        try:
            exe, scope = tide.Executor(tide.Place("opencl", 0)), tide.Scope()
            exe.run(startup, scope=scope)
            got[k] = [
                float(exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0].reshape(-1)[0])
                for f in batches(steps)
            ]
        except Exception as e:  # reported below, with the thread's number
            errors.append((k, e))

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors
    for k in range(threads):
        np.testing.assert_allclose(got[k], want, rtol=1e-6, err_msg=f"thread {k}")
    print(f"{threads} executors training at once on opencl:0: the single run's losses")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", default=os.path.join(here, "build", "libtide_device_opencl.so"))
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    load(args.plugin)
    compare("fit_a_line", fit_a_line, fit_a_line_batches, args.steps)
    programs, losses = compare("mlp", mlp, mlp_batches, args.steps, on_cpu=("tanh", "tanh_grad"))
    concurrent_executors(programs, mlp_batches, args.steps, losses)
    strict_placement_names_the_op(programs, mlp_batches)


if __name__ == "__main__":
    main()
