"""What each data file of the dashboard holds, computed from the lines (no I/O).

The shapes are the page's contract (static/app.js reads them): a run is a list of cells
(name, status, commit, branch, observedAt, order key, median, p20, p80 in ns, degraded
reason); a relative point a list (commit, order key, GPU, ratio, p20, p80, run, baseline
run, degraded reason, observedAt); a step a list (index in the line, ratio, cause, what
differs, verdict, evidence, causes, co-measured lines that moved with it); a series entry
an object. Every verdict the pages show is here, from :func:`kernelindex_sdk.verdict.judge`
through history and the PR check's rule: the page computes none.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..store import RunRow
from ..store.branch_compare import SeriesBase
from ..store.history import Change
from ..store.relative import RelativeHistory
from ..store.series import row_degraded, utc_instant
from ..verdict import IMPROVEMENT, REGRESSION
from ._bandwidth import peak_bandwidth
from ._model import Line, Step, relative_id

__all__ = [
    "COMPARE_BRANCHES",
    "COMPARE_COMMITS",
    "facets",
    "health",
    "refs",
    "relative_entry",
    "relative_payload",
    "run_cells",
    "series_entry",
    "step_cells",
]

#: Health lists at most this many lines of each kind (worst first); the rest are in Trends.
HEALTH_LIMIT: Final = 200
#: Medians a Health sparkline shows (the line's last ones).
SPARK_POINTS: Final = 40
#: The Compare page offers the latest this many commits, each against the main branch's
#: history before it, and this many branches, each against the main branch now.
COMPARE_COMMITS: Final = 200
COMPARE_BRANCHES: Final = 50


def _workload_facts(workload: Mapping[str, Any]) -> tuple[str | None, str, int | None]:
    """dtype, the parameters as ``k=v`` text, and bytesMoved of a workload spec."""
    params = workload.get("parameters")
    params = params if isinstance(params, Mapping) else {}
    dtype = params.get("dtype")
    text = " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "dtype")
    moved = workload.get("bytesMoved")
    moved = moved if isinstance(moved, int) and not isinstance(moved, bool) else None
    return (dtype if isinstance(dtype, str) else None), text, moved


def _changed(steps: Sequence[Step]) -> bool:
    return any(s.verdict in (REGRESSION, IMPROVEMENT) for s in steps)


def series_entry(s: Line, bandwidths: Mapping[str, float] | None) -> dict[str, Any]:
    """One series as data/index.js lists it (and its own file starts)."""
    first = s.runs[0]
    # The line's last timed run (a memory-only or failed run has no median).
    timed = [i for i in s.line if s.runs[i].median_ns is not None]
    last = s.runs[timed[-1] if timed else (s.line[-1] if s.line else 0)]
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
        "timed": len(timed),
        "status": dict(Counter(run.status for run in s.runs)),
        "lastMedianNs": last.median_ns,
        "lastCommit": last.commit,
        "changed": _changed(s.steps),
        "stale": s.stale,
        "baseline": s.baseline,
        "degraded": row_degraded(last),
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
        row_degraded(run),
    ]


def step_cells(step: Step) -> list[Any]:
    """One change point as a series file lists it."""
    return [
        step.index,
        step.ratio,
        step.cause,
        step.detail,
        step.verdict,
        step.evidence,
        list(step.causes or (step.cause,)),
        list(step.moved_with),
    ]


def _change_cells(change: Change) -> list[Any]:
    return [
        change.index,
        change.ratio,
        change.cause,
        "; ".join(str(d) for d in change.differences),
        "" if change.verdict is None else change.verdict.kind,
        "" if change.verdict is None else change.verdict.reason,
        list(change.causes or (change.cause,)),
        list(change.moved_with),
    ]


def relative_entry(h: RelativeHistory, stale: bool) -> dict[str, Any]:
    """One relative series as data/index.js lists it."""
    first = h.series.points[0].run
    last = h.series.points[-1]
    dtype, params, _ = _workload_facts(h.workload or {})
    return {
        "id": relative_id(h),
        "workload": h.key.workload_digest,
        "dtype": dtype,
        "params": params,
        "workloads": sorted({p.run.workload_digest for p in h.series.points}),
        "operation": first.operation,
        "pass": first.pass_,
        "provider": h.key.provider,
        "entryPoint": h.key.entry_point or None,
        "baseline": h.key.baseline,
        "gpus": list(h.series.hardware),
        "points": len(h.series.points),
        "lastRatio": last.ratio,
        "lastCommit": last.run.commit,
        "changed": any(c.verdict is not None and c.verdict.changed for c in h.changes),
        "stale": stale,
    }


def relative_payload(h: RelativeHistory) -> dict[str, Any]:
    """One relative series' file: its points and change points."""
    return {
        "points": [
            [
                p.run.commit,
                p.run.order_key,
                p.hardware,
                p.ratio,
                p.p20,
                p.p80,
                p.run.name,
                p.baseline.name,
                p.degraded,
                p.run.observed_at,
            ]
            for p in h.series.points
        ],
        "steps": [_change_cells(c) for c in h.changes],
    }


def _ref_key(kind: str, name: str) -> str:
    return hashlib.sha256(f"{kind}\0{name}".encode()).hexdigest()[:16]


def refs(
    lines: Sequence[Line], main_branch: str
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The Compare menu (data/refs.js) and each ref's rows (data/refs/KEY.js, by key).

    A commit is judged against the main branch's history before it, a branch against the
    main branch now (its own commits left out), as ``compare --history`` judges NEW: the
    latest :data:`COMPARE_COMMITS` commits and :data:`COMPARE_BRANCHES` branches.
    """
    runs_of: dict[tuple[str, str], dict[int, list[RunRow]]] = {}
    when: dict[tuple[str, str], str] = {}
    branch_of: dict[str, str | None] = {}
    for n, s in enumerate(lines):
        for run in s.runs:
            found = []
            if run.commit:
                found.append(("commit", run.commit))
                branch_of.setdefault(run.commit, run.branch)
            if run.branch:
                found.append(("branch", run.branch))
            for ref in found:
                runs_of.setdefault(ref, {}).setdefault(n, []).append(run)
                when[ref] = max(when.get(ref, ""), utc_instant(run.order_key))
    chosen = {
        kind: sorted(
            (ref for ref in runs_of if ref[0] == kind), key=lambda r: (when[r], r[1]), reverse=True
        )[:limit]
        for kind, limit in (("commit", COMPARE_COMMITS), ("branch", COMPARE_BRANCHES))
    }
    menu: dict[str, list[dict[str, Any]]] = {"branches": [], "commits": []}
    files = {}
    mains = [SeriesBase(s.series.on_branch(main_branch)) for s in lines]
    for kind, found_refs in chosen.items():
        for ref in found_refs:
            key = _ref_key(*ref)
            rows = _compare_rows(ref, runs_of[ref], lines, mains, when[ref], main_branch)
            entry = {"name": ref[1], "key": key, "time": when[ref], "series": len(rows)}
            if kind == "commit":
                entry["branch"] = branch_of.get(ref[1])
            menu["branches" if kind == "branch" else "commits"].append(entry)
            files[key] = {"kind": kind, "name": ref[1], "base": main_branch, "rows": rows}
    return dict(menu), files


def _compare_rows(
    ref: tuple[str, str],
    by_series: Mapping[int, list[RunRow]],
    lines: Sequence[Line],
    mains: Sequence[SeriesBase],
    at: str,
    main_branch: str,
) -> list[list[Any]]:
    """Each series the ref measured: [series id, base median, new median, ratio, verdict,
    evidence, base commit, new run, base note]."""
    rows = []
    for n, runs in by_series.items():
        timed = [r for r in runs if r.status != "failed" and (r.median_ns or 0) > 0]
        if not timed:
            continue
        if ref[0] == "branch":
            # A branch's latest commit stands for it (its replicates pooled).
            last = timed[-1].commit
            timed = [r for r in timed if r.commit == last]
        found = mains[n].judge(
            timed,
            before=at if ref[0] == "commit" else None,
            branch=main_branch,
        )
        new = found.new if found is not None else timed[-1]
        if found is None:
            rows.append([lines[n].id, None, new.median_ns, None, "", "", None, new.name, ""])
            continue
        v = found.verdict
        row: list[Any] = [
            lines[n].id,
            v.base,
            v.new,
            v.ratio,
            v.kind,
            v.reason,
            found.base.commit,
            new.name,
            found.note,
        ]
        rows.append(row)
    return rows


def _spark(line: Sequence[RunRow], index: int) -> tuple[list[Any], int]:
    start = max(0, len(line) - SPARK_POINTS)
    return [run.median_ns for run in line[start:]], max(0, index - start)


def health(
    lines: Sequence[Line], relative: Sequence[RelativeHistory], bandwidths: Any
) -> dict[str, list[dict[str, Any]]]:
    """Health's rows: each line and relative series whose last change the verdict calls a
    regression or an improvement, "now" (still measured) apart from stale, worst first."""
    rows: list[dict[str, Any]] = []
    for s in lines:
        judged = [step for step in s.steps if step.verdict in (REGRESSION, IMPROVEMENT)]
        if not judged:
            continue
        step = judged[-1]
        line = s.line_runs
        entry = series_entry(s, bandwidths)
        spark, at = _spark(line, step.index)
        entry.update(
            kind="series",
            verdict=step.verdict,
            evidence=step.evidence,
            ratio=step.ratio,
            cause=step.cause,
            causes=list(step.causes or (step.cause,)),
            movedWith=list(step.moved_with),
            detail=step.detail,
            commit=line[step.index].commit if step.index < len(line) else None,
            spark=spark,
            stepAt=at,
        )
        rows.append(entry)
    families = latest_by_family(lines)
    for h in relative:
        # A relative series adds to Health what no line shows: its last change, where code
        # changed as its absolute series started anew (a new GPU, a workload that gained a
        # parameter). A GPU alone moving the ratio is the hardware, nothing to act on.
        judged_changes = [c for c in h.changes if c.verdict is not None and c.verdict.changed]
        if not judged_changes or not _code_on_a_new_start(judged_changes[-1].causes):
            continue
        change = judged_changes[-1]
        stale = _relative_stale(h, families)
        entry = relative_entry(h, stale)
        start = max(0, len(h.series.points) - SPARK_POINTS)
        entry.update(
            kind="relative",
            gpu=", ".join(h.series.hardware),
            verdict=change.verdict.kind if change.verdict else "",
            evidence=change.verdict.reason if change.verdict else "",
            ratio=change.ratio,
            cause=change.cause,
            causes=list(change.causes),
            movedWith=list(change.moved_with),
            detail="; ".join(str(d) for d in change.differences),
            commit=change.commit,
            spark=[p.ratio for p in h.series.points[start:]],
            stepAt=max(0, change.index - start),
        )
        rows.append(entry)
    # Worst first: the largest slowdowns, then the largest speedups.
    rows.sort(key=lambda r: (r["verdict"] != REGRESSION, -abs(r["ratio"] - 1), r["id"]))
    now = [r for r in rows if not r["stale"]]
    stale_rows = [r for r in rows if r["stale"]]
    return {"now": now[:HEALTH_LIMIT], "stale": stale_rows[:HEALTH_LIMIT]}


def _code_on_a_new_start(causes: Sequence[str]) -> bool:
    """Whether a relative change came with code (or the workload) where its absolute
    series started anew: the change a line cannot show and a team can act on."""
    found = set(causes)
    return bool(found & {"hardware", "workload"}) and bool(
        found & {"implementation", "baseline", "workload"}
    )


def latest_by_family(lines: Sequence[Line]) -> dict[tuple[str, str], str]:
    """When each family (operation, pass) was last measured: a line not re-measured since
    is stale."""
    latest: dict[tuple[str, str], str] = {}
    for s in lines:
        for run in s.line_runs:
            family = (run.operation or "", run.pass_ or "")
            when = utc_instant(run.order_key)
            if when > latest.get(family, ""):
                latest[family] = when
    return latest


def _relative_stale(h: RelativeHistory, families: Mapping[tuple[str, str], str]) -> bool:
    last = h.series.points[-1].run
    family = (last.operation or "", last.pass_ or "")
    return utc_instant(last.order_key) < families.get(family, "")


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
