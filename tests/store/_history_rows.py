"""RunRow series for the history tests: seeded, with known steps and causes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kernelindex_sdk.store._rows import RunRow

BASE: dict[str, Any] = {
    "workload_digest": "sha256:" + "a" * 64,
    "implementation_digest": "sha256:" + "1" * 64,
    "protocol_digest": "sha256:" + "b" * 64,
    "environment_digest": "sha256:" + "e" * 64,
    "operation": "jsd",
    "pass_": "forward",
    "provider": "triton",
    "entry_point": "pkg.mod:jsd",
    "hardware": "NVIDIA H200",
    "status": "passed",
}


def row(i: int, median: float | None, **fields: Any) -> RunRow:
    """Run ``i`` of a series: committed at minute ``i``, its p20/p80 0.4% around the median."""
    values = {**BASE, **fields}
    values.setdefault("name", f"run-{i:05d}")
    values.setdefault("commit", f"{i:040x}")
    values.setdefault("commit_time", f"2026-01-01T{i // 60 % 24:02d}:{i % 60:02d}:00+00:00")
    values.setdefault("observed_at", f"2026-02-01T00:00:{i % 60:02d}.000Z")
    if median is not None:
        values.setdefault("median_ns", round(median))
        values.setdefault("p20_ns", round(median * 0.996))
        values.setdefault("p80_ns", round(median * 1.004))
    return RunRow(**values)


def medians(n: int, steps: Sequence[tuple[int, float]] = (), seed: int = 0) -> list[float]:
    """``n`` medians with 1% noise around 1 ms, times each (position, factor) step."""
    rng = np.random.default_rng(seed)
    level = np.full(n, 1e6)
    for at, factor in steps:
        level[at:] *= factor
    return list(level * (1 + 0.01 * rng.standard_normal(n)))


def series_rows(values: Sequence[float], **changes: Any) -> list[RunRow]:
    """Rows for ``values``; ``changes`` maps a field to (position, value after)."""
    rows = []
    for i, m in enumerate(values):
        fields = {k: v for k, (at, v) in changes.items() if i >= at}
        rows.append(row(i, m, **fields))
    return rows
