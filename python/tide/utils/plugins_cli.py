"""`tide-plugins`, the console script of a pip-installed Tide: runs the package's own tide-plugins
program (bin/tide-plugins inside the package, or the build tree's) with the plugins of the
"tide.plugins" entry points added to its search path, as `import tide` loads them. With --timing
it also prints how long `import tide` took in this process."""
import os
import sys
import time


def _program():
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates = [os.path.join(pkg, "bin", "tide-plugins")]
    try:
        from .. import _build_paths  # the build tree: <build>/bin/tide-plugins
        candidates.append(os.path.join(os.path.dirname(os.path.dirname(_build_paths.PLUGIN_DIR)),
                                       "..", "bin", "tide-plugins"))
    except ImportError:
        pass
    for c in candidates:
        if os.path.isfile(c):
            return os.path.normpath(c)
    raise SystemExit("tide-plugins: the tide-plugins program is not in the tide package (%s)" % candidates[0])


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    t0 = time.perf_counter()
    import tide  # noqa: F401  (loads the plugins, entry points included, as a user's import does)
    import_ms = (time.perf_counter() - t0) * 1e3
    program = _program()
    env = dict(os.environ)
    extra = tide.entry_point_plugin_dirs()
    if extra:
        env["TIDE_PLUGIN_PATH"] = ":".join([p for p in [env.get("TIDE_PLUGIN_PATH", "")] if p] + extra)
    if "--timing" in argv:
        print("import tide: %.1f ms in this process (the plugins' share is listed below)" % import_ms)
        sys.stdout.flush()
    if not os.access(program, os.X_OK):  # a wheel unpacked without its modes
        os.chmod(program, 0o755)
    os.execve(program, [program] + argv, env)
