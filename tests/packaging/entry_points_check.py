"""Plugins found by "tide.plugins" entry points, from the build tree (seconds): a fake installed
distribution (a *.dist-info with an entry_points.txt) on sys.path names a package directory
holding a copy of the acme_ops test plugin; a child `import tide` must load it without importing
that package, warn about broken entry points by name and still import, and skip entry points when
TIDE_PLUGIN_PATH_ONLY=1. Also: TIDE_PLUGIN_PATH adds to the default plugins.
Usage: python entry_points_check.py ACME_PLUGIN_FILE (PYTHONPATH / TIDE_PLUGIN_PATH as ctest sets)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

acme = os.path.abspath(sys.argv[1])
site = tempfile.mkdtemp(prefix="tide_ep_site_")
try:
    pkg = os.path.join(site, "acme_vendor")
    os.makedirs(os.path.join(pkg, "plugins"))
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write("raise RuntimeError('acme_vendor must not be imported by import tide')\n")
    shutil.copy(acme, os.path.join(pkg, "plugins", "libacme_vendor_ops.so"))
    dist = os.path.join(site, "acme_vendor-1.0.dist-info")
    os.makedirs(dist)
    with open(os.path.join(dist, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: acme-vendor\nVersion: 1.0\n")
    with open(os.path.join(dist, "entry_points.txt"), "w") as f:
        f.write(
            "[console_scripts]\nacme = acme_vendor:main\n\n"
            "[tide.plugins]\nacme = acme_vendor.plugins\n"
            "by_object = acme_vendor:plugin_dir\nmissing = acme_vendor.not_there\n"
        )

    child = r"""
import json, sys, warnings
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    import tide
print(json.dumps({"plugins": tide.plugins(), "dirs": tide.entry_point_plugin_dirs(),
                  "warnings": [str(x.message) for x in w], "imported": "acme_vendor" in sys.modules,
                  "path": tide.plugin_search_path()}))
"""

    def run(**env_extra):
        env = dict(os.environ, PYTHONPATH=os.environ["PYTHONPATH"] + os.pathsep + site, **env_extra)
        r = subprocess.run(
            [sys.executable, "-c", child],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=site,
        )
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    # Default: the entry point's directory is loaded, the package never imported, and the two
    # broken entry points are warnings naming them and their distribution.
    out = run()
    vendor = [p for p in out["plugins"] if p["file"].startswith(pkg)]
    assert (
        len(vendor) == 1 and vendor[0]["status"] == "loaded" and "acme.axpb" in vendor[0]["ops"]
    ), vendor
    assert out["dirs"] == [os.path.join(pkg, "plugins")], out["dirs"]
    assert not out["imported"]
    msgs = " | ".join(out["warnings"])
    assert "by_object" in msgs and "names an object" in msgs and "acme_vendor" in msgs, msgs
    assert "missing" in msgs and "acme_vendor/not_there" in msgs, msgs
    builtin = {p["name"] for p in out["plugins"] if p["status"] == "loaded"}
    assert {"ops_math", "device_cpu"} <= builtin, builtin  # Tide's own plugins too

    # TIDE_PLUGIN_PATH adds to the default directory: naming the vendor directory there loads
    # it once (not twice through the entry point), and Tide's own plugins still load.
    out = run(TIDE_PLUGIN_PATH=os.path.join(pkg, "plugins"))
    assert out["path"][0] == os.path.join(pkg, "plugins") and len(out["path"]) == 2, out["path"]
    assert sum(p["file"].startswith(pkg) for p in out["plugins"]) == 1
    assert {"ops_math", "device_cpu"} <= {
        p["name"] for p in out["plugins"] if p["status"] == "loaded"
    }

    # TIDE_PLUGIN_PATH_ONLY=1: exactly the given path, no entry points.
    out = run(TIDE_PLUGIN_PATH=os.environ["TIDE_PLUGIN_PATH"], TIDE_PLUGIN_PATH_ONLY="1")
    assert out["dirs"] == [] and not any(p["file"].startswith(pkg) for p in out["plugins"])
    assert out["path"] == [os.environ["TIDE_PLUGIN_PATH"]], out["path"]
    out = run(TIDE_PLUGIN_PATH="", TIDE_PLUGIN_PATH_ONLY="1")
    assert out["plugins"] == [] and out["path"] == [], out
    print(
        "entry points: loaded without import, broken ones warned, TIDE_PLUGIN_PATH adds, _ONLY restricts"
    )
finally:
    shutil.rmtree(site, ignore_errors=True)
