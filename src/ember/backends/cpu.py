"""``torch.backends.cpu``: what the CPU offers.

Example:
    >>> import ember
    >>> ember.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")
    True
"""

from __future__ import annotations


def _cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:  # not Linux: no flags known
        pass
    return set()


def get_cpu_capability() -> str:
    """torch's name for the widest vector ISA available: "AVX512", "AVX2" or "DEFAULT"."""
    flags = _cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        return "AVX512"
    if {"avx2", "fma"} <= flags:
        return "AVX2"
    return "DEFAULT"
