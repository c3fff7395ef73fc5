"""Processes of the layout-3 concurrency test: ingesters that start at one moment, and a
reader that runs histories until told to stop (each a process of its own, spawned)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kernelindex_sdk.store import open_store
from kernelindex_sdk.store.history import history


def ingest_at(
    url: str, paths: list[str], start: float, branch: str | None = None
) -> dict[str, Any]:
    """Open the store, wait for ``start`` (time.time()), then ingest ``paths`` one call per
    file (``branch`` for runs that lack one); return the summed counts and each problem's
    code."""
    totals: dict[str, Any] = {
        "added": 0,
        "identical": 0,
        "provenance_only": 0,
        "refused": 0,
        "problems": [],
    }
    with open_store(url) as store:
        time.sleep(max(0.0, start - time.time()))
        for path in paths:
            report = store.ingest([path], branch=branch)
            totals["added"] += report.added
            totals["identical"] += report.identical
            totals["provenance_only"] += report.provenance_only
            totals["refused"] += report.refused
            totals["problems"] += [(p.source, p.problem.code) for p in report.problems]
    return totals


def read_until(
    url: str, stop: str, expected: dict[str, tuple[Any, ...]], start: float
) -> dict[str, Any]:
    """Read every run and its history until the file ``stop`` exists; each run read must
    carry its own status, branch and labels (read through its group)."""
    reads, wrong, most = 0, [], 0
    with open_store(url) as store:
        time.sleep(max(0.0, start - time.time()))
        while True:
            done = Path(stop).exists()
            rows = store.rows()
            history(rows, spec=store.spec)
            reads += 1
            most = max(most, len(rows))
            for row in rows:
                got = (row.status, row.branch, dict(row.labels))
                if got != expected[row.name]:
                    wrong.append((row.name, got))
            if done:
                break
    return {"reads": reads, "wrong": wrong[:5], "most": most}
