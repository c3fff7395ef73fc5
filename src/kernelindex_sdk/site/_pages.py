"""What each data file of the dashboard holds, computed from the series (no I/O).

The shapes are the page's contract (static/app.js reads them): a run is a list of cells
(name, status, commit, branch, observedAt, order key, median, p20, p80 in ns), a step
(index in the line, ratio, cause, what differs), a series entry an object.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..store import RunRow
from ._bandwidth import peak_bandwidth
from ._model import Series, Step, regressions

__all__ = ["facets", "health", "refs", "run_cells", "series_entry", "step_cells"]

#: Health lists at most this many regressions (worst first); the rest are in Trends.
HEALTH_LIMIT = 200
#: Medians a Health sparkline shows (the line's last ones).
SPARK_POINTS = 40


def _workload_facts(workload: Mapping[str, Any]) -> tuple[str | None, str, int | None]:
    """dtype, the parameters as ``k=v`` text, and bytesMoved of a workload spec."""
    params = workload.get("parameters")
    params = params if isinstance(params, Mapping) else {}
    dtype = params.get("dtype")
    text = " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "dtype")
    moved = workload.get("bytesMoved")
    moved = moved if isinstance(moved, int) and not isinstance(moved, bool) else None
    return (dtype if isinstance(dtype, str) else None), text, moved


def series_entry(s: Series, bandwidths: Mapping[str, float] | None) -> dict[str, Any]:
    """One series as data/index.js lists it (and its own file starts)."""
    first = s.runs[0]
    # The line's last timed run (a memory-only or failed run has no median).
    timed = [i for i in s.line if s.runs[i].median_ns is not None]
    last = s.runs[timed[-1] if timed else s.line[-1]]
    dtype, params, moved = _workload_facts(s.workload)
    return {
        "id": s.id,
        "workload": s.key.workload_digest,
        "operation": first.operation,
        "pass": first.pass_,
        "provider": first.provider,
        "entryPoint": first.entry_point,
        "gpu": first.hardware,
        "protocol": s.key.protocol_digest,
        "dtype": dtype,
        "params": params,
        "bytesMoved": moved,
        "peakBandwidth": peak_bandwidth(first.hardware, bandwidths),
        "runs": len(s.runs),
        "status": dict(Counter(run.status for run in s.runs)),
        "lastMedianNs": last.median_ns,
        "lastCommit": last.commit,
    }


def run_cells(run: RunRow) -> list[Any]:
    """One run as a series file lists it."""
    return [
        run.name,
        run.status,
        run.commit,
        run.branch,
        run.observed_at,
        run.order_key,
        run.median_ns,
        run.p20_ns,
        run.p80_ns,
    ]


def step_cells(step: Step) -> list[Any]:
    """One change point as a series file lists it."""
    return [step.index, step.ratio, step.cause, step.detail]


def _ref_key(kind: str, name: str) -> str:
    return hashlib.sha256(f"{kind}\0{name}".encode()).hexdigest()[:16]


def refs(series: Sequence[Series]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The Compare menu (data/refs.js), and each commit's and branch's latest run of each
    series (data/refs/KEY.js, by key)."""
    latest: dict[tuple[str, str], dict[str, RunRow]] = {}
    when: dict[tuple[str, str], str] = {}
    branch_of: dict[str, str | None] = {}
    for s in series:
        # Runs are in order, so the last one seen for a ref is its latest.
        for run in s.runs:
            refs = []
            if run.commit:
                refs.append(("commit", run.commit))
                branch_of.setdefault(run.commit, run.branch)
            if run.branch:
                refs.append(("branch", run.branch))
            for ref in refs:
                latest.setdefault(ref, {})[s.id] = run
                when[ref] = max(when.get(ref, ""), run.order_key)
    menu: dict[str, list[dict[str, Any]]] = {"branches": [], "commits": []}
    files = {}
    for (kind, name), runs in latest.items():
        key = _ref_key(kind, name)
        entry = {"name": name, "key": key, "time": when[(kind, name)], "series": len(runs)}
        if kind == "commit":
            entry["branch"] = branch_of.get(name)
        menu["branches" if kind == "branch" else "commits"].append(entry)
        files[key] = {
            "kind": kind,
            "name": name,
            "runs": {
                sid: [run.median_ns, run.p20_ns, run.p80_ns, run.name, run.status]
                for sid, run in runs.items()
            },
        }
    for entries in menu.values():
        entries.sort(key=lambda e: (e["time"], e["name"]), reverse=True)
    return dict(menu), files


def health(
    series: Sequence[Series], steps: Mapping[str, Sequence[Step]], bandwidths: Any
) -> list[dict[str, Any]]:
    """Health's rows: the regressed lines, worst first, each with its sparkline."""
    out = []
    for found in regressions(series, steps)[:HEALTH_LIMIT]:
        s, step = found.series, found.step
        line = s.line_runs
        entry = series_entry(s, bandwidths)
        entry.update(
            ratio=step.ratio,
            cause=step.cause,
            detail=step.detail,
            commit=line[step.index].commit if step.index < len(line) else None,
            spark=[run.median_ns for run in line[-SPARK_POINTS:]],
            stepAt=max(0, step.index - max(0, len(line) - SPARK_POINTS)),
        )
        out.append(entry)
    return out


def facets(rows: Sequence[RunRow], entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Runs per operation, GPU, provider, dtype and status: the Runs view's filters."""
    dtype_of = {e["workload"]: e["dtype"] for e in entries}
    return {
        "operation": dict(Counter(r.operation or "" for r in rows)),
        "gpu": dict(Counter(r.hardware or "" for r in rows)),
        "provider": dict(Counter(r.provider or "" for r in rows)),
        "dtype": dict(Counter(dtype_of.get(r.workload_digest) or "" for r in rows)),
        "status": dict(Counter(r.status for r in rows)),
    }
