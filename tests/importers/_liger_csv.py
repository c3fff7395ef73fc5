"""Liger CSV rows for the importer's tests: the published row and ways to write rows."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from kernelindex_sdk.importers import liger

EXAMPLE_ROW = {
    "kernel_name": "jsd",
    "kernel_provider": "torch",
    "kernel_operation_mode": "forward",
    "metric_name": "speed",
    "metric_unit": "ms",
    "x_name": "BT",
    "x_label": "total tokens",
    "x_value": "1024",
    "y_value_50": "2.2900800704956055",
    "y_value_20": "2.2883904933929444",
    "y_value_80": "2.2906303882598875",
    "extra_benchmark_config_str": '{"vocab_size": 128256, "bsz": 1, "seq_len": 8192}',
    "gpu_name": "NVIDIA B200",
    "timestamp": "2026-05-27 17:14:29",
    "liger_version": "0.8.0",
}


def row(**changes: str) -> dict[str, str]:
    """The published row with some fields changed."""
    return {**EXAMPLE_ROW, **changes}


def csv_text(rows: list[dict[str, str]], *, lineterminator: str = "\r\n") -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=liger.COLUMNS, lineterminator=lineterminator)
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    """Write rows as UTF-8; lone surrogates become the bytes they escape (invalid UTF-8)."""
    path.write_bytes(csv_text(rows).encode("utf-8", "surrogateescape"))
    return path
