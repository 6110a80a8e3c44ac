#!/usr/bin/env python3
"""check_cuda_host_reads.py CUDA_DIR: fails when a CUDA kernel reads an argument back to the host
with a wait (issue 33: "no CUDA kernel includes a synchronous host read-back of an argument").

The inputs a kernel needs on the host (shape, start, end, axis and value tensors) it declares host
inputs (TideKernelDef.host_inputs) and reads through host_ints.h, which copies nothing: the core
hands them over on the host. So the plugin's synchronous device-to-host helper,
Gpu::CopyToHostSync, is called only where the bytes are not such an argument; those calls are
listed below, each with why, by the exact text of the call. A call not listed (in any source,
host_ints.h included), a listed call that is gone, or a kernel source (*.cu, *.cuh) copying device
memory to the host by the CUDA runtime directly, fails, naming the file and line.

check_cuda_host_reads.py --self-test CUDA_DIR: the check on a copy of CUDA_DIR with a read-back
planted in host_ints.h and in a kernel source must fail naming both; the copy as it is passes.
"""

import os
import re
import shutil
import sys
import tempfile

# Where the helper itself lives (its declaration and definition).
HELPER_FILES = {"gpu.h", "gpu.cc"}

# The calls that stay: (file, the call's text) -> why the bytes are no argument of the kernel.
ALLOWED = {
    (
        "range_shape_where_ops.cu",
        "g.CopyToHostSync(&count, rank + n - 1, sizeof(int64_t));",
    ): "where_index: the count of true elements its own scan computed, the size of its output",
    (
        "tensor_ops.cu",
        "g.CopyToHostSync(rows.data(), a.ids, sizeof(int64_t) * size_t(n));",
    ): "lookup_table(_v2)_grad, sparse: the ids become the SelectedRows gradient's rows, an "
    "output whose rows live on the host (the dense gradient reads Ids on the device)",
}

CALL = re.compile(r"\bCopyToHostSync\s*\(")
RUNTIME_READ_BACK = re.compile(r"cudaMemcpyDeviceToHost|\bcudaMemcpy\s*\(|cudaMemcpyDefault")
SOURCE_SUFFIXES = (".h", ".hpp", ".cc", ".cu", ".cuh")
KERNEL_SUFFIXES = (".cu", ".cuh")


def check(cuda_dir):
    """The problems found in CUDA_DIR, one line each."""
    problems, seen = [], set()
    for name in sorted(os.listdir(cuda_dir)):
        if not name.endswith(SOURCE_SUFFIXES):
            continue
        with open(os.path.join(cuda_dir, name)) as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            code = line.split("//")[0].strip()
            where = "%s:%d" % (name, number)
            if CALL.search(code) and name not in HELPER_FILES:
                if (name, code) in ALLOWED:
                    seen.add((name, code))
                else:
                    problems.append(
                        "%s: %s: a synchronous read-back; declare the input a host input "
                        "(TIDE_REGISTER_KERNEL_HOST_INPUTS) and read it through host_ints.h, or, "
                        "where the bytes are no argument of the kernel, list the call in %s with "
                        "why" % (where, code, os.path.basename(__file__))
                    )
            if name.endswith(KERNEL_SUFFIXES) and RUNTIME_READ_BACK.search(code):
                problems.append(
                    "%s: %s: a kernel source copies device memory to the host" % (where, code)
                )
    for name, code in sorted(set(ALLOWED) - seen):
        problems.append("%s: the listed call '%s' is gone: remove it from the list" % (name, code))
    return problems


def self_test(cuda_dir):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "cuda")
        shutil.copytree(cuda_dir, copy)
        clean = check(copy)
        if clean:
            return ["the unplanted copy fails: %s" % clean]
        with open(os.path.join(copy, "host_ints.h"), "a") as f:
            f.write(
                "inline void Planted(const Gpu& g, void* d, const Tensor& t) {\n"
                "  g.CopyToHostSync(d, t.raw_data(), 8);\n}\n"
            )
        with open(os.path.join(copy, "planted_op.cu"), "w") as f:
            f.write(
                "void K(void* d, const void* s) {\n"
                "  cudaMemcpy(d, s, 8, cudaMemcpyDeviceToHost);\n}\n"
            )
        found = "\n".join(check(copy))
        missing = [w for w in ("host_ints.h:", "planted_op.cu:2") if w not in found]
        return ["planted read-back not named: %s (got: %s)" % (missing, found)] if missing else []


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        problems = self_test(argv[2])
    elif len(argv) == 2:
        problems = check(argv[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
