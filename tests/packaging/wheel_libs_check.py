"""Is the wheel self-contained? (scripts/wheel.sh runs it on the repaired wheel.)
Usage: python wheel_libs_check.py WHEEL, with a Python that has auditwheel (its policy file).

Every ELF file in the wheel (tide._C, the core, each plugin, tide-plugins, the bundled libraries)
must find each library it needs (DT_NEEDED) either inside the wheel, through its own RPATH
($ORIGIN-relative: a plugin finds tide.libs/ from its own directory, as dlopen resolves it), or
in the lib_whitelist of the manylinux policy the wheel's tag names (libc, libstdc++, libm...).
CUDA's libraries are never bundled (they are the user's): a wheel holding one fails. Prints, per
file, what it needs from where."""

import json
import os
import re
import sys
import tempfile
import zipfile

import auditwheel
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

CUDA_LIBS = re.compile(r"^lib(cuda|cudart|cublas|cublasLt|cudnn\w*|nvrtc|nccl)[-.]")

whl = sys.argv[1]
tag = re.search(r"-(manylinux_\d+_\d+)_x86_64\.whl$", os.path.basename(whl))
assert tag, "%s: not a manylinux wheel (auditwheel repair names its tag)" % whl
policies = json.load(
    open(os.path.join(os.path.dirname(auditwheel.__file__), "policy", "manylinux-policy.json"))
)
allowed = set(next(p for p in policies if p["name"] == tag.group(1))["lib_whitelist"])
allowed.add("ld-linux-x86-64.so.2")  # the loader itself (libc's)


def dynamic(path):
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            return None
        f.seek(0)
        elf = ELFFile(f)
        sec = next((s for s in elf.iter_sections() if isinstance(s, DynamicSection)), None)
        if sec is None:
            return [], []
        needed = [t.needed for t in sec.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        rpath = [
            p
            for t in sec.iter_tags()
            if t.entry.d_tag in ("DT_RPATH", "DT_RUNPATH")
            for p in (t.rpath if t.entry.d_tag == "DT_RPATH" else t.runpath).split(":")
        ]
        return needed, rpath


with tempfile.TemporaryDirectory() as root:
    zipfile.ZipFile(whl).extractall(root)
    problems, elves = [], 0
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if CUDA_LIBS.match(name):
                problems.append("%s: a CUDA library is bundled (it is the user's)" % rel)
            info = dynamic(path)
            if info is None:
                continue
            elves += 1
            needed, rpath = info
            dirs = [p.replace("$ORIGIN", dirpath) for p in rpath]
            for lib in needed:
                found = [d for d in dirs if os.path.isfile(os.path.join(d, lib))]
                if found:
                    where = os.path.relpath(os.path.normpath(found[0]), root)
                    if not os.path.normpath(found[0]).startswith(root):
                        problems.append("%s: %s found outside the wheel (%s)" % (rel, lib, where))
                elif lib in allowed:
                    where = "system (%s)" % tag.group(1)
                else:
                    where = "NOT FOUND"
                    problems.append(
                        "%s needs %s: not in the wheel through its RPATH %s, and not a library "
                        "the %s policy allows" % (rel, lib, rpath or "(none)", tag.group(1))
                    )
                print("  %-58s %-36s %s" % (rel, lib, where))
    assert elves, "no ELF file in %s" % whl
    if problems:
        sys.exit("wheel_libs_check: %s is not self-contained:\n  %s" % (whl, "\n  ".join(problems)))
    print(
        "wheel_libs_check: %d ELF files, each finds what it needs in the wheel or in %s's list"
        % (elves, tag.group(1))
    )
