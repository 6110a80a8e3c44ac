#!/usr/bin/env python3
"""check_tide_plugins.py MODE TIDE_PLUGINS MIXED_DIR GOOD_DIR: runs tide-plugins on directories of
test plugins. MODE json: --json output is JSON listing the good plugin and the failures, exit 1.
MODE listing: the human-readable listing of both directories, exit 1 and 0."""

import json
import os
import subprocess
import sys


def run(exe, *args):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, output):
    if not cond:
        sys.exit(f"FAIL: {what}\n--- output ---\n{output}")


def check_json(exe, mixed, _good):
    rc, out, err = run(exe, "--json", "--plugin_path=" + mixed)
    check(rc == 1, f"exit code {rc}, expected 1 (a plugin failed)", out + err)
    try:
        d = json.loads(out)
    except ValueError as e:
        sys.exit(f"FAIL: --json output is not JSON ({e}):\n{out}")
    check(d["search_path"] == [mixed], f"search_path {d['search_path']} is not [{mixed}]", out)
    by_file = {os.path.basename(p["file"]): p for p in d["plugins"]}
    check(
        sorted(by_file) == ["libcli_good.so", "libcli_nosym.so", "libjunk.so"],
        f"plugins {sorted(by_file)}",
        out,
    )
    good = by_file["libcli_good.so"]
    check(
        good["name"] == "cli_good" and good["status"] == "loaded" and good["error"] == "",
        "cli_good did not load",
        out,
    )
    check(good["ops"] == ["test_cli.good_op"], "cli_good's ops", out)
    check(
        good["kernels"] == ["test_cli.good_op {cpu, float32, ANY, plain}"],
        "cli_good's kernels",
        out,
    )
    junk, nosym = by_file["libjunk.so"], by_file["libcli_nosym.so"]
    check(junk["status"] == "failed" and "not a shared object" in junk["error"], "libjunk.so", out)
    check(nosym["status"] == "failed" and "missing entry symbol" in nosym["error"], "nosym", out)


def check_listing(exe, mixed, good):
    rc, out, err = run(exe, "--plugin_path=" + mixed)
    check(rc == 1, f"exit code {rc}, expected 1 (a plugin failed)", out + err)
    for part in [
        mixed,
        "cli_good",
        "1.2.3",
        "status:   loaded",
        "test_cli.good_op",
        "failed: not a shared object",
        "failed: missing entry symbol",
    ]:
        check(part in out, f"listing lacks {part!r}", out)
    rc, out, err = run(exe, "--plugin_path=" + good)
    check(rc == 0, f"exit code {rc}, expected 0 (all loaded)", out + err)
    check("test_cligood.good_op x1" in out, "default listing lacks the per-op kernel count", out)
    check("{cpu, float32, ANY, plain}" not in out, "default listing lists kernel keys", out)
    rc, out, err = run(exe, "--verbose", "--plugin_path=" + good)
    check(
        rc == 0 and "test_cligood.good_op {cpu, float32, ANY, plain}" in out,
        "--verbose lacks the kernel key",
        out + err,
    )


if __name__ == "__main__":
    mode, exe, mixed, good = sys.argv[1:5]
    {"json": check_json, "listing": check_listing}[mode](exe, mixed, good)
    print(f"ok: tide-plugins {mode}")
