"""Op packs built from Python, as PyTorch's torch.utils.cpp_extension.load builds extensions:

    from tide.utils import cpp_extension
    record = cpp_extension.load("my_ops", ["my_ops.cc"], extra_cflags=["-O3"])
    y = tide.layers.my_scale(x)          # the ops of the plugin are usable at once

compiles the sources into a Tide plugin against this tide package's SDK headers (tide.sdk) with
ninja, in a build directory named by the hash of everything that makes the plugin (the sources'
text, the flags, the compiler, Tide's version, ABI and SDK directory): loading the same sources
again reuses the plugin, changing any of them builds anew (the old build stays until removed).
The directory is $TIDE_EXTENSIONS_DIR/<name>-<hash>, by default ~/.cache/tide_extensions/.
A plugin that does not compile raises ExtensionBuildError with the compiler's output; one that
loads badly raises tide.PluginError with the loader's reason.
"""

import fcntl
import hashlib
import os
import shlex
import shutil
import subprocess
import sys

from .. import __version__, sdk
from ..plugins import load_plugin

__all__ = ["load", "default_build_directory", "ExtensionBuildError"]


class ExtensionBuildError(RuntimeError):
    """The plugin did not build: the message holds the command that failed and its output."""


def _cache_root():
    root = os.environ.get("TIDE_EXTENSIONS_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tide_extensions")
    return root


def _compiler():
    return os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "c++"


def _ninja():
    exe = shutil.which("ninja") or shutil.which("ninja-build")
    if not exe:
        try:  # the `ninja` wheel from PyPI
            import ninja

            exe = os.path.join(ninja.BIN_DIR, "ninja")
        except ImportError:
            raise ExtensionBuildError(
                "tide.utils.cpp_extension needs ninja: install the Debian "
                "package ninja-build or `pip install ninja`"
            ) from None
    return exe


def _check_name(name):
    if not isinstance(name, str) or not name or not all(c.isalnum() or c == "_" for c in name):
        raise ValueError(
            "cpp_extension.load: name must be letters, digits and '_', got %r" % (name,)
        )


def _flags(flags, what):
    if flags is None:
        return []
    if isinstance(flags, str):
        raise TypeError(
            "cpp_extension.load: %s is a list of flags, not a string: %r" % (what, flags)
        )
    return [str(f) for f in flags]


def default_build_directory(
    name, sources, extra_cflags=None, extra_ldflags=None, extra_include_paths=None
):
    """The cache directory load() builds `name` in for these sources and flags."""
    _check_name(name)
    h = hashlib.sha256()
    parts = [name, __version__, sdk.include_dir(), _compiler(), sys.platform]
    parts += _flags(extra_cflags, "extra_cflags") + ["--"] + _flags(extra_ldflags, "extra_ldflags")
    parts += ["--"] + [os.path.abspath(p) for p in (extra_include_paths or [])]
    for p in parts:
        h.update(p.encode() + b"\0")
    # The SDK's headers (their ABI version among them): a changed SDK builds anew.
    for root, dirs, files in sorted(os.walk(os.path.join(sdk.include_dir(), "tide"))):
        dirs.sort()
        for f in sorted(files):
            with open(os.path.join(root, f), "rb") as fh:
                h.update(f.encode() + b"\0" + hashlib.sha256(fh.read()).digest())
    for src in sources:
        path = os.path.abspath(src)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise FileNotFoundError(
                "cpp_extension.load(%r): cannot read source %s: %s" % (name, src, e.strerror)
            ) from None
        h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return os.path.join(_cache_root(), "%s-%s" % (name, h.hexdigest()[:16]))


def _write_ninja(path, name, sources, cflags, ldflags):
    q = lambda s: s.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")  # noqa: E731
    lines = [
        "# Written by tide.utils.cpp_extension.load(%r)." % name,
        "ninja_required_version = 1.3",
        "cxx = %s" % _compiler(),
        "cflags = %s" % " ".join(shlex.quote(f) for f in cflags),
        "ldflags = %s" % " ".join(shlex.quote(f) for f in ldflags),
        "rule compile",
        "  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out",
        "  description = compile $in",
        "  depfile = $out.d",
        "  deps = gcc",
        "rule link",
        "  command = $cxx $in $ldflags -o $out",
        "  description = link $out",
    ]
    objs = []
    for i, src in enumerate(sources):
        obj = "%d_%s.o" % (i, os.path.splitext(os.path.basename(src))[0])
        objs.append(obj)
        lines.append("build %s: compile %s" % (q(obj), q(os.path.abspath(src))))
    lib = "lib%s.so" % name
    lines.append("build %s: link %s" % (lib, " ".join(q(o) for o in objs)))
    lines.append("default %s" % lib)
    text = "\n".join(lines) + "\n"
    try:
        with open(path) as f:
            if f.read() == text:
                return lib
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)
    return lib


def load(
    name,
    sources,
    extra_cflags=None,
    extra_ldflags=None,
    extra_include_paths=None,
    build_directory=None,
    verbose=False,
):
    """Builds the plugin `name` from `sources` (C++ files using <tide/plugin.hpp>) unless this
    exact build is cached, loads it into this process and returns its load record (a dict:
    name, file, status, ops, kernels, ...). extra_cflags / extra_ldflags are lists of compiler /
    linker flags, extra_include_paths more -I directories; build_directory overrides the cache
    directory; verbose prints the build's commands.
    """
    _check_name(name)
    if isinstance(sources, str):
        sources = [sources]
    sources = [os.path.abspath(s) for s in sources]
    if not sources:
        raise ValueError("cpp_extension.load(%r): no sources" % name)
    cflags = [
        "-std=c++17",
        "-O2",
        "-fPIC",
        "-fvisibility=hidden",
        "-fvisibility-inlines-hidden",
        "-I" + sdk.include_dir(),
    ]
    cflags += ["-I" + os.path.abspath(p) for p in (extra_include_paths or [])]
    cflags += _flags(extra_cflags, "extra_cflags")
    # Like tide_add_plugin(): a plugin may rely on no symbol of the core's (or anyone's).
    ldflags = ["-shared", "-Wl,--no-undefined"] + _flags(extra_ldflags, "extra_ldflags")
    d = build_directory or default_build_directory(
        name, sources, extra_cflags, extra_ldflags, extra_include_paths
    )
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building the same plugin waits
        lib = _write_ninja(os.path.join(d, "build.ninja"), name, sources, cflags, ldflags)
        cmd = [_ninja(), "-C", d] + (["-v"] if verbose else [])
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if verbose:
            sys.stdout.write(r.stdout)
        if r.returncode != 0:
            raise ExtensionBuildError(
                "cpp_extension.load(%r): building %s failed (in %s):\n%s"
                % (name, lib, d, r.stdout.rstrip())
            )
    return load_plugin(os.path.join(d, lib))
