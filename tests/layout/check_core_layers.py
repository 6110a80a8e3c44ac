#!/usr/bin/env python3
"""check_core_layers.py CORE_DIR: fails when a core source includes a layer above its own.

The core's folders form a stack, written once in CORE_DIR/LAYERS: one layer a line, the lowest
first; folders on one line are siblings. A source may include its own folder and the folders of
the lines above its own, never a sibling's or a later line's. A folder that is in no layer, a
layer that is no folder, and a quoted include that is not a "core/..." path (a relative one would
hide a layer) fail too; generated protobuf headers (*.pb.h) are exempt.

check_core_layers.py --self-test CORE_DIR: checks the checker on planted trees laid out like
CORE_DIR/LAYERS: an upward include and a sibling include must fail, naming the file, the include
and both layers; the same tree without them must pass.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".h", ".hpp", ".cc", ".cpp", ".cu", ".cuh", ".inc")


def read_layers(core):
    """{folder: rank} from CORE_DIR/LAYERS (rank 0 is the lowest line)."""
    path = os.path.join(core, "LAYERS")
    rank, problems = {}, []
    with open(path) as f:
        for line in f:
            names = line.split("#", 1)[0].split()
            if not names:
                continue
            level = len(set(rank.values()))
            for name in names:
                if name in rank:
                    problems.append("%s: folder '%s' is listed twice" % (path, name))
                rank[name] = level
    return rank, problems


def sources(core):
    for root, dirs, files in os.walk(core):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(root, name)


def check(core):
    """The problems found, one line each; empty when every include goes down the stack."""
    core = os.path.normpath(core)
    rank, problems = read_layers(core)
    folders = sorted(d for d in os.listdir(core) if os.path.isdir(os.path.join(core, d)))
    for d in folders:
        if d not in rank:
            problems.append("core/%s/ is in no layer: add it to core/LAYERS where it belongs" % d)
    for name in sorted(rank):
        if name not in folders:
            problems.append("core/LAYERS names '%s', which is no folder of core/" % name)
    count = 0
    for path in sources(core):
        rel = os.path.relpath(path, core)
        parts = rel.split(os.sep)
        if len(parts) < 2 or parts[0] not in rank:
            continue  # a file at core/'s root, or in an unlisted folder (reported above)
        mine = parts[0]
        with open(path, errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                where = 'core/%s:%d: includes "%s"' % (rel.replace(os.sep, "/"), lineno, inc)
                if not inc.startswith("core/"):
                    if not inc.endswith(".pb.h"):
                        problems.append(
                            "%s: name core headers by their core/ path, so the layer "
                            "check sees them" % where
                        )
                    continue
                count += 1
                theirs = inc.split("/")[1] if inc.count("/") >= 2 else ""
                if theirs == mine:
                    continue
                if theirs not in rank:
                    problems.append("%s: '%s' is no layer of core/LAYERS" % (where, theirs))
                elif rank[theirs] > rank[mine]:
                    problems.append(
                        "%s: layer '%s' may not include layer '%s', which is above it "
                        "(core/LAYERS)" % (where, mine, theirs)
                    )
                elif rank[theirs] == rank[mine]:
                    problems.append(
                        "%s: layer '%s' may not include layer '%s', its sibling on the "
                        "same line of core/LAYERS" % (where, mine, theirs)
                    )
    return problems, count, rank


def order(rank):
    lines = {}
    for name, level in rank.items():
        lines.setdefault(level, []).append(name)
    return " < ".join(" | ".join(sorted(lines[k])) for k in sorted(lines))


def main(core):
    problems, count, rank = check(core)
    if problems:
        print(
            "FAIL: the core breaks its layering (%d problem(s)):" % len(problems), file=sys.stderr
        )
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print("ok: %d core includes go down the stack %s" % (count, order(rank)))
    return 0


def self_test(core):
    """Plants bad includes in a copy of the layout and checks that each is caught and named."""
    rank, problems = read_layers(core)
    if problems:
        print("FAIL: " + "; ".join(problems), file=sys.stderr)
        return 1
    by_level = sorted(rank, key=lambda n: rank[n])
    lowest, highest = by_level[0], by_level[-1]
    siblings = [n for n in rank if sum(1 for m in rank if rank[m] == rank[n]) > 1]
    failures = []

    def run(tree, expect_ok, expect_text):
        p = subprocess.run(
            [sys.executable, os.path.abspath(__file__), os.path.join(tree, "core")],
            capture_output=True,
            text=True,
        )
        out = p.stdout + p.stderr
        if (p.returncode == 0) != expect_ok:
            failures.append(
                "expected %s, got exit %d:\n%s"
                % ("a pass" if expect_ok else "a failure", p.returncode, out)
            )
        for t in expect_text:
            if t not in out:
                failures.append("the output does not name %r:\n%s" % (t, out))

    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "clean")
        os.makedirs(os.path.join(tree, "core"))
        shutil.copy(os.path.join(core, "LAYERS"), os.path.join(tree, "core", "LAYERS"))
        for name in rank:
            os.makedirs(os.path.join(tree, "core", name))
            with open(os.path.join(tree, "core", name, "a.h"), "w") as f:
                f.write('#pragma once\n#include "core/%s/a.h"\n' % lowest)
        run(tree, True, ["ok:"])

        up = os.path.join(tmp, "upward")
        shutil.copytree(tree, up)
        with open(os.path.join(up, "core", lowest, "planted.cc"), "w") as f:
            f.write('#include "core/%s/a.h"\n' % lowest)
            f.write('#include "core/%s/a.h"\n' % highest)
        run(
            up,
            False,
            [
                "core/%s/planted.cc:2" % lowest,
                "core/%s/a.h" % highest,
                "'%s'" % lowest,
                "'%s'" % highest,
            ],
        )

        rel = os.path.join(tmp, "relative")
        shutil.copytree(tree, rel)
        with open(os.path.join(rel, "core", lowest, "planted.h"), "w") as f:
            f.write('#include "../%s/a.h"\n' % highest)
        run(rel, False, ["core/%s/planted.h:1" % lowest])

        if siblings:
            a = siblings[0]
            b = next(n for n in siblings if n != a and rank[n] == rank[a])
            sib = os.path.join(tmp, "sibling")
            shutil.copytree(tree, sib)
            with open(os.path.join(sib, "core", a, "planted.h"), "w") as f:
                f.write('#include "core/%s/a.h"\n' % b)
            run(sib, False, ["core/%s/planted.h:1" % a, "'%s'" % a, "'%s'" % b, "sibling"])

        stray = os.path.join(tmp, "stray")
        shutil.copytree(tree, stray)
        os.makedirs(os.path.join(stray, "core", "stray_folder"))
        run(stray, False, ["core/stray_folder/ is in no layer"])

    if failures:
        print("FAIL: the layer check misjudged a planted tree:", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        return 1
    print(
        "ok: the layer check fails on an upward, a sibling and a relative include and on a "
        "folder in no layer, and passes the same tree without them"
    )
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--self-test":
        sys.exit(self_test(args[1]))
    if len(args) != 1:
        sys.exit(__doc__)
    sys.exit(main(args[0]))
