"""Which oneDNN the oneDNN plugin should build against: Debian's (2.6, what `scripts/install_deps.sh`
installs) or PyPI's newest (`onednn-devel-cpu-gomp`, 3.x, GNU OpenMP like Debian's), on the
primitives the plugin runs most (`cpp/onednn_version_bench.cc`: ResNet-50's convolutions, the
AMP nets' convolutions forward and backward, BERT-base's fc layers; float32 and bfloat16).
Both builds of the same source run in processes of their own, rounds interleaved; the decision
and its figures are in devices/mkldnn/README.md ("Which oneDNN").

    python3 benchmarks/onednn_versions.py [--pypi-version 2023.2.0] [--rounds 5] [--isa avx2]

Needs a C++ compiler, Debian's libdnnl-dev, and pip to fetch the two wheels (into
~/.cache/tide-onednn-wheels, once).
"""

import os
import statistics
import subprocess
import sys
import zipfile

from common import HERE, cpu_flags, machine_line, parser

CASES = [  # net, batch, dtype, mode, timed passes per process
    ("resnet50", 1, "f32", "infer", 15),
    ("resnet50", 16, "f32", "infer", 4),
    ("resnet50", 1, "bf16", "infer", 15),
    ("resnet50", 16, "bf16", "infer", 4),
    ("resnet50", 8, "f32", "train", 2),
    ("resnet50", 8, "bf16", "train", 2),
    ("amp_nets", 32, "f32", "train", 5),
    ("amp_nets", 32, "bf16", "train", 5),
    ("bert_fc", 1, "f32", "infer", 6),
    ("bert_fc", 8, "f32", "infer", 3),
    ("bert_fc", 1, "bf16", "infer", 6),
]


def fetch_pypi(version, cache):
    """The two wheels' lib and include directories, unpacked under cache/version."""
    root = os.path.join(cache, version)
    data = lambda pkg: os.path.join(root, "%s-%s.data" % (pkg, version), "data")  # noqa: E731
    if not os.path.isdir(data("onednn_devel_cpu_gomp")):
        os.makedirs(root, exist_ok=True)
        pkgs = ["onednn-devel-cpu-gomp==" + version, "onednn-cpu-gomp==" + version]
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", root] + pkgs
        subprocess.run(cmd, check=True)
        for name in os.listdir(root):
            if name.endswith(".whl"):
                zipfile.ZipFile(os.path.join(root, name)).extractall(root)
    return os.path.join(data("onednn_cpu_gomp"), "lib"), os.path.join(
        data("onednn_devel_cpu_gomp"), "include"
    )


def build(out, include=None, lib=None):
    src = os.path.join(HERE, "cpp", "onednn_version_bench.cc")
    cmd = [os.environ.get("CXX", "c++"), "-O2", "-std=c++17", src, "-o", out]
    if include:
        cmd += ["-I" + include, "-L" + lib, "-Wl,-rpath," + lib]
    subprocess.run(cmd + ["-ldnnl"], check=True)
    return out


def run(binary, case, env):
    net, batch, dtype, mode, passes = case
    proc = subprocess.run(
        [binary, net, str(batch), dtype, mode, str(passes)], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        return None
    version, median, _, *impls = proc.stdout.split()
    return version, float(median), impls


def main():
    ap = parser(__doc__.split("\n\n")[0])
    ap.add_argument("--pypi-version", default="2023.2.0", help="onednn-devel-cpu-gomp's version")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved processes per build")
    ap.add_argument("--isa", default=None, help="hold both to this ISA (e.g. avx2)")
    ap.add_argument("--cases", default=None, help="comma list of net:batch:dtype:mode")
    ap.add_argument("--show-impls", action="store_true", help="each case's implementations")
    args = ap.parse_args()
    cache = os.path.expanduser("~/.cache/tide-onednn-wheels")
    lib, include = fetch_pypi(args.pypi_version, cache)
    binaries = [
        build(os.path.join(cache, "bench_debian")),
        build(os.path.join(cache, "bench_pypi_" + args.pypi_version), include, lib),
    ]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    env.setdefault("GOMP_SPINCOUNT", "5000")  # what Tide's core sets (devices/mkldnn/README.md)
    if args.isa:
        env["ONEDNN_MAX_CPU_ISA"] = env["DNNL_MAX_CPU_ISA"] = args.isa.upper()
    cases = CASES
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in CASES if "%s:%d:%s:%s" % c[:4] in wanted]
    results = {}  # (case, build index) -> [median ms per process]
    names = ["debian", "pypi"]
    impls = {}
    for r in range(args.rounds):
        for case in cases:
            order = (0, 1) if r % 2 == 0 else (1, 0)  # neither build always runs first
            for i in order:
                out = run(binaries[i], case, env)
                if out:
                    names[i] = out[0]
                    results.setdefault((case, i), []).append(out[1])
                    impls[(case, i)] = out[2]
    head = "%-28s | %14s | %14s | %9s" % ("case (ms per pass)", names[0], names[1], "new/old")
    print(head)
    print("-" * len(head))
    for case in cases:
        old, new = (results.get((case, i)) for i in (0, 1))
        cell = lambda v: "%.1f" % statistics.median(v) if v else "refused"  # noqa: E731
        ratio = "%.2f" % (statistics.median(new) / statistics.median(old)) if old and new else "-"
        print(
            "%-28s | %14s | %14s | %9s" % ("%s b%d %s %s" % case[:4], cell(old), cell(new), ratio)
        )
        if args.show_impls:
            for i in (0, 1):
                print("    %s: %s" % (names[i], " ".join(sorted(set(impls.get((case, i), []))))))
    flags = cpu_flags()
    isa = args.isa or (
        "avx512_bf16" if "avx512_bf16" in flags else "avx512f" if "avx512f" in flags else "avx2"
    )
    print(machine_line("%d threads, ISA %s, load %.1f" % (args.threads, isa, os.getloadavg()[0])))


if __name__ == "__main__":
    main()
