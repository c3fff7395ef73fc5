"""What the dashboard shows, computed once from the store's rows: series, lines, steps.

The runs are grouped into series once (:func:`kernelindex_sdk.store.series.group_series`,
the one ``Series`` history uses too). A series' *line* is its runs on the main branch, or
all its runs when none carries that branch (a store filled without provenance, or from one
branch only). The line's change points, their verdicts and causes are
:func:`kernelindex_sdk.store.history.series_history`'s, and the relative series (each
implementation over its baseline) :func:`kernelindex_sdk.store.relative.relative_history`'s:
the site computes none of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ..store import RunRow
from ..store.history import Change, SeriesHistory, SpecLookup, series_history
from ..store.relative import RelativeHistory, relative_history
from ..store.series import Series, SeriesKey, row_point, utc_instant
from ..verdict import BASELINE_LABEL, judge

__all__ = ["Line", "Step", "StepFinder", "build_lines", "series_id"]


@attrs.frozen(kw_only=True)
class Step:
    """A change point of a line: the level moved at ``index``, for ``cause``.

    Attributes:
        index: Position in the line of the first run at the new level.
        ratio: New median over the old one (above 1: slower).
        cause: ``implementation``, ``environment``, ``labels`` or ``unexplained`` (one of
            :data:`kernelindex_sdk.store.history.CAUSES`).
        detail: What differs across the step, in words (``torch 2.10 -> 2.11``).
        verdict: The one verdict on the step (``regression``, ``improvement``, ``same``,
            ``degraded``); "" when the finder gave none (the site then judges the points
            either side of it).
        evidence: The verdict's evidence, one line.
        causes: Every cause that applies, :attr:`cause` first.
        moved_with: The co-measured lines that moved with it (a shared shift).
    """

    index: int
    ratio: float
    cause: str
    detail: str = ""
    verdict: str = ""
    evidence: str = ""
    causes: tuple[str, ...] = ()
    moved_with: tuple[str, ...] = ()


#: Finds the steps of one line (its runs in order).
StepFinder = Callable[[Sequence[RunRow]], Sequence[Step]]


def series_id(key: SeriesKey) -> str:
    """16 hex digits of the SHA-256 of the key's parts (NUL-separated)."""
    return hashlib.sha256("\0".join(attrs.astuple(key)).encode("utf-8")).hexdigest()[:16]


@attrs.frozen(kw_only=True)
class Line:
    """One series as the pages show it.

    Attributes:
        id: 16 hex digits naming its data files (from its key, stable across builds).
        series: The series: every run of it.
        runs: Every run, in the series' order.
        line: The positions in ``runs`` of the line's runs (main branch, else all).
        workload: The workload spec (operation, pass, parameters, bytesMoved), or {}.
        history: The line's history (None when a custom step finder was given).
        steps: The line's steps, in order.
        stale: Whether its family (the series of its operation and pass) ran later
            without it: not re-measured since, so not "now".
        baseline: Whether its provider is the labelled baseline of another
            implementation measured on its workload.
    """

    id: str
    series: Series
    runs: Sequence[RunRow]
    line: Sequence[int]
    workload: Mapping[str, Any]
    history: SeriesHistory | None
    steps: Sequence[Step]
    stale: bool
    baseline: bool

    @property
    def key(self) -> SeriesKey:
        """What its runs share."""
        return self.series.key

    @property
    def line_runs(self) -> list[RunRow]:
        """The runs of the line, in order."""
        return [self.runs[i] for i in self.line]


def _detail(change: Change) -> str:
    return "; ".join(str(d) for d in change.differences)


def _steps_of(h: SeriesHistory, line: Sequence[RunRow]) -> list[Step]:
    where = {run.name: i for i, run in enumerate(line)}
    steps = [
        Step(
            index=where[c.run],
            ratio=c.ratio,
            cause=c.cause,
            detail=_detail(c),
            verdict="" if c.verdict is None else c.verdict.kind,
            evidence="" if c.verdict is None else c.verdict.reason,
            causes=c.causes or (c.cause,),
            moved_with=c.moved_with,
        )
        for c in h.changes
    ]
    steps.sort(key=lambda s: s.index)
    return steps


def _judged(step: Step, line: Sequence[RunRow]) -> Step:
    """A finder's step judged by the one verdict: the runs either side of it."""
    if step.verdict or not 0 < step.index < len(line):
        return step
    found = judge(row_point(line[step.index - 1]), row_point(line[step.index]))
    return attrs.evolve(step, verdict=found.kind, evidence=found.reason)


def _families(grouped: Sequence[Series]) -> dict[tuple[str, str], str]:
    """The latest commit time (or observedAt) of each operation and pass."""
    latest: dict[tuple[str, str], str] = {}
    for s in grouped:
        if not s.points:
            continue
        family = (s.first.operation or "", s.first.pass_ or "")
        when = utc_instant(s.points[-1].order_key)
        if when > latest.get(family, ""):
            latest[family] = when
    return latest


def _baselines(grouped: Sequence[Series]) -> set[tuple[str, str]]:
    """(workload digest, provider) of each provider some run names as its baseline."""
    found = set()
    for s in grouped:
        for row in s.points:
            named = row.labels.get(BASELINE_LABEL)
            if named is not None:
                found.add((s.key.workload_digest, named))
    return found


def build_lines(
    grouped: Sequence[Series],
    *,
    main_branch: str,
    spec: SpecLookup | None,
    find_steps: StepFinder | None = None,
) -> tuple[list[Line], list[RelativeHistory]]:
    """Each series as the pages show it, and the relative series of the lines.

    Args:
        grouped: The store's series, grouped once.
        main_branch: The branch whose runs make each line (where it has any).
        spec: ``Store.spec`` (workloads, and the objects causes name).
        find_steps: A step finder in place of history's (tests, other detectors).

    Returns:
        The lines, sorted by operation, GPU, provider and id; the relative series.
    """
    on_main = [s.on_branch(main_branch) for s in grouped]
    histories = series_history(on_main, spec=spec) if find_steps is None else [None] * len(on_main)
    relative = relative_history(on_main, spec=spec) if find_steps is None else []
    families = _families(on_main)
    baselines = _baselines(grouped)
    specs: dict[str, Mapping[str, Any]] = {}
    out = []
    for series, main, h in zip(grouped, on_main, histories, strict=True):
        runs = series.runs()
        names = {row.name for row in (*main.points, *main.failed, *main.skipped)}
        line = [i for i, run in enumerate(runs) if run.name in names]
        line_runs = [runs[i] for i in line]
        if find_steps is not None:
            steps = [_judged(s, line_runs) for s in find_steps(line_runs)]
        elif h is not None:
            steps = _steps_of(h, line_runs)
        else:  # pragma: no cover - history gives one per series
            steps = []
        digest = series.key.workload_digest
        if digest not in specs:
            found = None if spec is None else spec("workload", digest)
            specs[digest] = found or {}
        family = (series.first.operation or "", series.first.pass_ or "")
        last = main.points[-1] if main.points else None
        stale = last is not None and utc_instant(last.order_key) < families.get(family, "")
        out.append(
            Line(
                id=series_id(series.key),
                series=series,
                runs=runs,
                line=line,
                workload=specs[digest],
                history=h,
                steps=steps,
                stale=stale,
                baseline=(digest, series.key.provider) in baselines,
            )
        )
    out.sort(key=lambda s: (s.runs[0].operation or "", s.key.hardware, s.key.provider, s.id))
    return out, relative


def relative_id(h: RelativeHistory) -> str:
    """16 hex digits naming a relative series' data file (from its key)."""
    text = "\0".join(("relative", *attrs.astuple(h.key)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
