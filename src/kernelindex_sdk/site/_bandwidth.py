"""Peak device-memory bandwidth of common GPUs, for the dashboard's roofline percentage.

v1alpha1 records carry no peak bandwidth (the environment names the product), so the
dashboard looks the product up here, or in the table the caller passes
(``kernelindex site --bandwidth "NVIDIA H200=4.8"``), which wins. The figures are the
vendors' data-sheet numbers; a kernel can exceed a few percent of them on a read-only
stream (docs/jsd-forward-h200.md measured 4.53-4.68 TB/s reads on an H200).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["GPU_BANDWIDTH", "peak_bandwidth"]

#: Data-sheet peak device-memory bandwidth in bytes per second, by the product name the
#: driver reports (``hardware.product``), matched without regard to case.
GPU_BANDWIDTH: Mapping[str, float] = {
    "NVIDIA B200": 8.0e12,
    "NVIDIA GB200": 8.0e12,
    "NVIDIA H200": 4.8e12,
    "NVIDIA H200 NVL": 4.8e12,
    "NVIDIA H100 80GB HBM3": 3.35e12,
    "NVIDIA H100 NVL": 3.9e12,
    "NVIDIA H100 PCIe": 2.0e12,
    "NVIDIA A100-SXM4-80GB": 2.039e12,
    "NVIDIA A100-SXM4-40GB": 1.555e12,
    "NVIDIA A100 80GB PCIe": 1.935e12,
    "NVIDIA A100-PCIE-40GB": 1.555e12,
    "NVIDIA L40S": 8.64e11,
    "NVIDIA L4": 3.0e11,
    "AMD Instinct MI355X": 8.0e12,
    "AMD Instinct MI325X": 6.0e12,
    "AMD Instinct MI300X": 5.3e12,
    "AMD Instinct MI250X": 3.2e12,
}


def peak_bandwidth(product: str | None, table: Mapping[str, float] | None = None) -> float | None:
    """The peak bandwidth of ``product`` in bytes/s: ``table`` first, then GPU_BANDWIDTH.

    Args:
        product: ``hardware.product`` as the record gives it (None when unknown).
        table: Extra or overriding entries, product name to bytes per second.

    Returns:
        The bandwidth, or None when neither table names the product.
    """
    if product is None:
        return None
    wanted = product.strip().casefold()
    for source in (table or {}, GPU_BANDWIDTH):
        for name, value in source.items():
            if name.strip().casefold() == wanted:
                return value
    return None
