"""What a device covers: the kernels its plugins registered (tide.plugins()), and whether the
kernels an op ran with were the device's own or another place's (the executor's fallback)."""

import re

import tide

_KERNEL = re.compile(r"^(\S+) \{([^,]+), ([^,]+), ([^,]+), ([^}]+)\}$")
_CHOICE = re.compile(r"^\{([^,]+), ([^,]+), [^}]*\} from (\S+) on (\S+)$")


def parse_place(text):
    """'KIND:N' (or 'KIND', device 0) as a tide.Place; ValueError naming what is wrong."""
    kind, _, index = text.partition(":")
    if not kind or (index and not index.isdigit()):
        raise ValueError("--place must be KIND:N (e.g. cpu:0, gpu:0), got %r" % text)
    return tide.Place(kind, int(index or 0))


def device_kernels(kind):
    """{op type: sorted dtypes} of the kernels loaded plugins registered for place kind `kind`."""
    ops = {}
    for record in tide.plugins():
        if record["status"] != "loaded":
            continue
        for kernel in record["kernels"]:
            m = _KERNEL.match(kernel)
            if m and m.group(2).strip() == kind:
                ops.setdefault(m.group(1), set()).add(m.group(3).strip())
    return {op: sorted(dtypes) for op, dtypes in ops.items()}


def tested_ops(kernels):
    """The forward ops of a device's kernel list: grad ops are reported with their forward op."""
    return sorted({op[: -len("_grad")] if op.endswith("_grad") else op for op in kernels})


def classify(kind, kernels):
    """How one check's ops under test ran, from [(op type, kernel description)]:
    ("device" | "fallback" | "partial" | "no kernel", dtype or None, details)."""
    on_device, elsewhere, dtype, details = 0, 0, None, []
    for op_type, choice in kernels:
        m = _CHOICE.match(choice or "")
        if not m:  # ops that run without a kernel (control flow), or an unknown layout
            details.append("%s: %s" % (op_type, choice or "kernel unknown"))
            continue
        key_kind, key_dtype, plugin, place = m.groups()
        dtype = dtype or key_dtype.strip()
        if key_kind.strip() == kind:
            on_device += 1
        else:
            elsewhere += 1
            details.append("%s fell back to the %s kernel of %s" % (op_type, place, plugin))
    if on_device and not elsewhere:
        return "device", dtype, details
    if on_device:
        return "partial", dtype, details
    return ("fallback" if elsewhere else "no kernel"), dtype, details
