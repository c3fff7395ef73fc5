"""Records for the history tests: the project's own H200 bundle, timed and committed anew."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OWN_H200 = ROOT / "benchmarks" / "results" / "jsd_forward_h200.jsonl"


def template() -> dict[str, Any]:
    """The first bundle of the project's own H200 results (all four objects carried)."""
    with OWN_H200.open(encoding="utf-8") as f:
        return json.loads(f.readline())  # type: ignore[no-any-return]


def bundle(
    base: dict[str, Any],
    i: int,
    median: int,
    *,
    commit: str | None = None,
    branch: str | None = None,
    spread: float = 0.004,
    name: str | None = None,
) -> dict[str, Any]:
    """Copy ``base`` as run ``i``: its median, p20/p80 ``spread`` around it, a name,
    an observedAt at minute ``i`` and, when given, its provenance annotations."""
    doc = copy.deepcopy(base)
    spec = doc["run"]["spec"]
    spec["timing"]["latencyNs"]["median"] = median
    spec["observedAt"] = f"2026-03-01T{i // 60 % 24:02d}:{i % 60:02d}:00.000Z"
    spec["measurements"] = [
        {
            "unit": "ns",
            "value": round(median * (1 - spread)),
            "metric": "latency",
            "statistic": "p20",
        },
        {
            "unit": "ns",
            "value": round(median * (1 + spread)),
            "metric": "latency",
            "statistic": "p80",
        },
    ]
    meta = doc["run"]["metadata"]
    meta["name"] = name or f"history-test-{i:05d}"
    annotations = meta.setdefault("annotations", {})
    if commit is not None:
        annotations["kernelindex.dev/commit"] = commit
        annotations["kernelindex.dev/commit-time"] = (
            f"2026-02-01T{i // 60 % 24:02d}:{i % 60:02d}:00.000Z"
        )
    if branch is not None:
        annotations["kernelindex.dev/branch"] = branch
    return doc


def write_jsonl(path: Path, docs: Iterable[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    return path
