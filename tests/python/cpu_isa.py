"""The CPU's feature flags, for tests whose expectations depend on the instructions oneDNN can use
(bfloat16: AVX-512, AVX-512 BF16, AMX)."""


def cpu_flags():
    """The flags of /proc/cpuinfo's first processor (empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":")[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []
