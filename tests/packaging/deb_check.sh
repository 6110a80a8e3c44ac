#!/usr/bin/env bash
# deb_check.sh DIR: run as root on a fresh Debian 12 (scripts/fresh_machine_check.sh --debs DIR):
# installs the tide and tide-dev packages from DIR with apt (their dependencies from the archive),
# then, from a clean clone's directory: the system python3 imports tide and trains a small
# regression, tide-plugins lists the plugins, and tests/sdk/acme_ops builds against the installed
# SDK (find_package(Tide)) and loads.
set -euo pipefail
debs="$1"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$debs"/tide*.deb make >/dev/null
dpkg -l tide tide-dev | tail -2
cd /tmp
python3 - <<'PY'
import numpy as np
import tide
names = sorted(p["name"] for p in tide.plugins() if p["status"] == "loaded")
assert {"ops_math", "device_cpu", "ops_optimizers"} <= set(names), tide.plugins()
assert not any("sim" in p["file"] or "acme" in p["file"] for p in tide.plugins())
rng = np.random.RandomState(0)
xs = rng.randn(64, 4).astype("float32"); ys = xs @ np.array([[1.], [-2.], [0.5], [3.]], "float32")
x = tide.layers.data(name="x", shape=[4]); y = tide.layers.data(name="y", shape=[1])
loss = tide.layers.mean(tide.layers.square_error_cost(input=tide.layers.fc(input=x, size=1), label=y))
tide.optimizer.SGD(learning_rate=0.1).minimize(loss)
exe = tide.Executor(tide.CPUPlace()); exe.run(tide.default_startup_program())
losses = [float(exe.run(feed={"x": xs, "y": ys}, fetch_list=[loss])[0][0]) for _ in range(50)]
assert losses[-1] < 0.01 * losses[0], losses
print("deb: %d plugins loaded (%s); loss %.3g -> %.3g" % (len(names), ", ".join(names), losses[0], losses[-1]))
PY
tide-plugins >/dev/null
cmake -S /root/tide/tests/sdk/acme_ops -B /tmp/acme -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build /tmp/acme >/dev/null
python3 -c "
import tide
r = tide.load_plugin('/tmp/acme/libacme_ops.so')
assert r['status'] == 'loaded' and 'acme.axpb' in r['ops'], r
print('deb: acme_ops built against tide-dev and loaded')"
