"""Where the Tide SDK of this tide package is: the headers (tide/plugin_api.h, tide/plugin.hpp)
and the CMake package (find_package(Tide)) an out-of-tree plugin builds against.

    cmake -S my_plugin -B build \\
      -DCMAKE_PREFIX_PATH=$(python -c 'import tide.sdk; print(tide.sdk.cmake_prefix_path())')

Pip-installed, the SDK is inside the package (tide/include, tide/lib/cmake/Tide); installed by
`cmake --install`, under the prefix; run from a build tree, the headers are the source tree's and
there is no CMake package (install Tide, or pip install it). Importing this module loads no plugin
beyond what `import tide` loads.
"""

import os

try:  # the build tree's paths (a module the build writes next to the package; never installed)
    from . import _build_paths
except ImportError:
    _build_paths = None

_PKG = os.path.dirname(os.path.abspath(__file__))


def _prefixes():
    # pip install (the package is the prefix); cmake --install (<prefix>/lib/pythonX.Y/site-packages/tide)
    yield _PKG
    yield os.path.normpath(os.path.join(_PKG, "..", "..", "..", ".."))


def _installed_prefix():
    for p in _prefixes():
        if os.path.isfile(os.path.join(p, "include", "tide", "plugin_api.h")):
            return p
    return None


def include_dir():
    """The directory holding tide/plugin_api.h and tide/plugin.hpp (pass it as -I)."""
    p = _installed_prefix()
    if p:
        return os.path.join(p, "include")
    if _build_paths is not None:
        return _build_paths.SDK_INCLUDE_DIR
    raise FileNotFoundError("tide.sdk: no SDK headers next to the tide package at %s" % _PKG)


def cmake_dir():
    """The directory holding TideConfig.cmake."""
    p = cmake_prefix_path()
    for libdir in ("lib", "lib64"):
        d = os.path.join(p, libdir, "cmake", "Tide")
        if os.path.isfile(os.path.join(d, "TideConfig.cmake")):
            return d
    raise FileNotFoundError("tide.sdk: no TideConfig.cmake under %s" % p)


def examples_dir():
    """The plugin examples installed with the SDK: acme_ops, sim_device (docs/writing_plugins.md
    says what they show)."""
    d = os.path.join(cmake_prefix_path(), "share", "tide", "examples")
    if not os.path.isdir(d):
        raise FileNotFoundError("tide.sdk: no plugin examples at %s" % d)
    return d


def cmake_prefix_path():
    """The prefix to put on CMAKE_PREFIX_PATH so that find_package(Tide) finds this Tide."""
    p = _installed_prefix()
    if p:
        for libdir in ("lib", "lib64"):
            if os.path.isfile(os.path.join(p, libdir, "cmake", "Tide", "TideConfig.cmake")):
                return p
        libs = [os.path.join(p, libdir) for libdir in ("lib", "lib64")]
        for libdir in libs:  # Debian's multiarch libdir: lib/<triplet>/cmake/Tide
            for sub in os.listdir(libdir) if os.path.isdir(libdir) else []:
                if os.path.isfile(os.path.join(libdir, sub, "cmake", "Tide", "TideConfig.cmake")):
                    return p
    raise FileNotFoundError(
        "tide.sdk: this tide package (%s) has no CMake package: it runs from a build tree; "
        "build plugins against an installed Tide (pip install, or cmake --install)" % _PKG
    )
