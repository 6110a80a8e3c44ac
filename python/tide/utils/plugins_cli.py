"""`tide-plugins`, the console script of a pip-installed Tide: runs the package's own tide-plugins
program (bin/tide-plugins inside the package, or the build tree's) with the plugins of the
"tide.plugins" entry points added to its search path, as `import tide` loads them. With --timing
it also prints how long `import tide` takes (measured in a fresh process)."""

import os
import subprocess
import sys

import tide  # loads the plugins, entry points included, as a user's import does

try:  # the build tree: <build>/bin/tide-plugins
    from .. import _build_paths
except ImportError:
    _build_paths = None


def _program():
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates = [os.path.join(pkg, "bin", "tide-plugins")]
    if _build_paths is not None:
        candidates.append(
            os.path.join(
                os.path.dirname(os.path.dirname(_build_paths.PLUGIN_DIR)),
                "..",
                "bin",
                "tide-plugins",
            )
        )
    for c in candidates:
        if os.path.isfile(c):
            return os.path.normpath(c)
    raise SystemExit(
        "tide-plugins: the tide-plugins program is not in the tide package (%s)" % candidates[0]
    )


def _import_times():
    """(import tide, import numpy) in ms, cumulative, from `python -X importtime` in a fresh
    process (this one imported tide before main() ran)."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import tide"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    times = {}
    for line in r.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] in ("tide", "numpy"):
            times[parts[2]] = int(parts[1]) / 1e3
    return times.get("tide"), times.get("numpy")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    program = _program()
    env = dict(os.environ)
    extra = tide.entry_point_plugin_dirs()
    if extra:
        env["TIDE_PLUGIN_PATH"] = ":".join(
            [p for p in [env.get("TIDE_PLUGIN_PATH", "")] if p] + extra
        )
    if "--timing" in argv:
        tide_ms, numpy_ms = _import_times()
        if tide_ms is not None:
            print(
                "import tide: %.1f ms (python -X importtime, a fresh process), of which numpy %.1f ms; "
                "the plugins' load times:" % (tide_ms, numpy_ms or 0.0)
            )
        sys.stdout.flush()
    if not os.access(program, os.X_OK):  # a wheel unpacked without its modes
        os.chmod(program, 0o755)
    os.execve(program, [program] + argv, env)


if __name__ == "__main__":  # python -m tide.utils.plugins_cli, as the tide-plugins script
    main()
