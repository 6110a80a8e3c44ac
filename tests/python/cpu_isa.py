"""The CPU's feature flags, for tests whose expectations depend on the instructions oneDNN can use
(bfloat16: AVX-512, AVX-512 BF16, AMX)."""


def cpu_flags():
    """The flags of /proc/cpuinfo's first processor (empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":")[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []


def onednn_uses_amx():
    """Whether oneDNN runs AMX kernels here (a CPU with AMX, ONEDNN_MAX_CPU_ISA not below it):
    then device_mkldnn's bfloat16 convolutions run in bfloat16 and write blocked data."""
    import os

    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "ALL").upper()
    return "amx_bf16" in cpu_flags() and cap in ("ALL", "AVX512_CORE_AMX")
