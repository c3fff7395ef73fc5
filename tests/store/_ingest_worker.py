"""One concurrent ingester (a process of its own): ingests files in order, returns counts."""

from __future__ import annotations

from kernelindex_sdk.store import open_store


def ingest(url: str, paths: list[str]) -> dict[str, object]:
    """Ingest ``paths`` one call per file; return the summed counts and problem codes."""
    totals: dict[str, object] = {"added": 0, "identical": 0, "provenance_only": 0, "refused": 0}
    codes: list[tuple[str, str]] = []
    with open_store(url) as store:
        for path in paths:
            report = store.ingest([path])
            for key in ("added", "identical", "provenance_only", "refused"):
                totals[key] = int(totals[key]) + getattr(report, key)  # type: ignore[call-overload]
            codes.extend((p.source, p.problem.code) for p in report.problems)
    totals["problems"] = codes
    return totals
