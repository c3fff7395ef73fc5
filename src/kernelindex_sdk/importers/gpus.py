"""Known accelerators: vendor and instruction-set architecture from a product name.

Benchmark CSVs name the GPU as the driver reports it ("NVIDIA H100 80GB HBM3",
"AMD Instinct MI300X"); the architecture is looked up here. Patterns are tried in
order, most specific first, as whole words of the upper-cased name.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

__all__ = ["GPU_TABLE", "GpuInfo", "lookup_gpu"]


@attrs.frozen
class GpuInfo:
    """What a product name says: vendor (lowercase) and architecture, when known."""

    vendor: str
    architecture: str | None


_NVIDIA = "nvidia"
_AMD = "amd"

#: (regular expression over the upper-cased name, vendor, architecture)
GPU_TABLE: Final[tuple[tuple[str, str, str], ...]] = (
    (r"\bGB300\b|\bB300\b", _NVIDIA, "sm_103"),
    (r"\bGB200\b|\bB200\b|\bB100\b", _NVIDIA, "sm_100"),
    (r"\bRTX (PRO )?6000 BLACKWELL\b|\bRTX 50[6-9]0( TI)?\b", _NVIDIA, "sm_120"),
    (r"\bGH200\b|\bH200\b|\bH100\b|\bH800\b|\bH20\b", _NVIDIA, "sm_90"),
    (
        r"\bL40S?\b|\bL4\b|\bRTX 40[5-9]0( TI)?\b|\bRTX 6000 ADA\b|\bRTX [2-5]000 ADA\b",
        _NVIDIA,
        "sm_89",
    ),
    (r"\bA100\b|\bA800\b|\bA30\b", _NVIDIA, "sm_80"),
    (
        r"\bA10G?\b|\bA40\b|\bA16\b|\bA2\b|\b(RTX )?A[4-6]000\b|\bRTX 30[5-9]0( TI)?\b",
        _NVIDIA,
        "sm_86",
    ),
    (r"\bT4\b|\bRTX 20[6-8]0( TI| SUPER)?\b|\bTITAN RTX\b", _NVIDIA, "sm_75"),
    (r"\bV100\b|\bTITAN V\b", _NVIDIA, "sm_70"),
    (r"\bMI355X?\b|\bMI350X?\b", _AMD, "gfx950"),
    (r"\bMI300X\b|\bMI300A\b|\bMI325X\b|\bMI300\b", _AMD, "gfx942"),
    (r"\bMI250X?\b|\bMI210\b", _AMD, "gfx90a"),
    (r"\bMI100\b", _AMD, "gfx908"),
)
_COMPILED: Final = tuple((re.compile(p), v, a) for p, v, a in GPU_TABLE)
_VENDOR_WORDS: Final = (
    (re.compile(r"\bNVIDIA\b|\bGEFORCE\b|\bTESLA\b|\bQUADRO\b"), _NVIDIA),
    (re.compile(r"\bAMD\b|\bRADEON\b|\bINSTINCT\b"), _AMD),
    (re.compile(r"\bINTEL\b"), "intel"),
)


def lookup_gpu(name: str) -> GpuInfo | None:
    """Return vendor and architecture of a product name, or ``None`` when it is unknown.

    An unknown product whose vendor is still recognizable (``NVIDIA Foo``) gets a
    GpuInfo with ``architecture=None``.
    """
    upper = name.upper()
    for pattern, vendor, architecture in _COMPILED:
        if pattern.search(upper):
            return GpuInfo(vendor=vendor, architecture=architecture)
    for pattern, vendor in _VENDOR_WORDS:
        if pattern.search(upper):
            return GpuInfo(vendor=vendor, architecture=None)
    return None
