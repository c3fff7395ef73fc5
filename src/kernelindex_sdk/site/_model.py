"""What the dashboard shows, computed from the store's rows: series, lines, steps, health.

A series is the runs sharing workload, provider and entry point, protocol and GPU
(DESIGN.md), in commit-time order. Its *line* is the part the charts and Health read:
its runs on the main branch, or all its runs when none carries that branch (a store
filled without provenance, or from one branch only).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from ..store._rows import RunRow
from ..store.history import SpecLookup, history
from ..store.series import SeriesKey, series_key

__all__ = ["Series", "Step", "StepFinder", "group_series", "history_steps", "regressions"]


@attrs.frozen(kw_only=True)
class Step:
    """A change point of a line: the level moved at ``index``, for ``cause``.

    Attributes:
        index: Position in the line of the first run at the new level.
        ratio: New median over the old one (above 1: slower).
        cause: ``implementation``, ``environment``, ``labels`` or ``unexplained``.
        detail: What differs across the step, in words (``torch 2.10 -> 2.11``).
    """

    index: int
    ratio: float
    cause: str
    detail: str = ""


#: Finds the steps of one line (its runs in order).
StepFinder = Callable[[Sequence[RunRow]], Sequence[Step]]


@attrs.frozen(kw_only=True)
class Series:
    """One series and the facts the pages need about it.

    Attributes:
        id: 16 hex digits naming its data files (from its key, stable across builds).
        key: What its runs share (as history keys its series).
        runs: Every run of the series, in order.
        line: The indexes in ``runs`` of the line's runs.
        workload: The workload spec (operation, pass, parameters, bytesMoved), or {}.
    """

    id: str
    key: SeriesKey
    runs: Sequence[RunRow]
    line: Sequence[int]
    workload: Mapping[str, Any]

    @property
    def line_runs(self) -> list[RunRow]:
        """The runs of the line, in order."""
        return [self.runs[i] for i in self.line]


def _order(row: RunRow) -> tuple[str, str, str]:
    return (row.order_key, row.observed_at, row.name)


def series_id(key: SeriesKey) -> str:
    """16 hex digits of the SHA-256 of the key's parts (NUL-separated)."""
    return hashlib.sha256("\0".join(attrs.astuple(key)).encode("utf-8")).hexdigest()[:16]


def group_series(
    rows: Iterable[RunRow],
    *,
    main_branch: str,
    workload: Callable[[str], Mapping[str, Any] | None],
) -> list[Series]:
    """Group runs into series, ordered, each with its line.

    Args:
        rows: The store's runs.
        main_branch: The branch whose runs make each line (where it has any).
        workload: The workload spec of a workload digest (None when the store has none).

    Returns:
        The series, sorted by operation, GPU, provider and id.
    """
    groups: dict[SeriesKey, list[RunRow]] = defaultdict(list)
    for row in rows:
        groups[series_key(row)].append(row)
    out = []
    specs: dict[str, Mapping[str, Any]] = {}
    for key, runs in groups.items():
        runs.sort(key=_order)
        on_main = [i for i, run in enumerate(runs) if run.branch == main_branch]
        line = on_main or list(range(len(runs)))
        digest = key.workload_digest
        if digest not in specs:
            specs[digest] = workload(digest) or {}
        out.append(Series(id=series_id(key), key=key, runs=runs, line=line, workload=specs[digest]))
    out.sort(key=lambda s: (s.runs[0].operation or "", s.key.hardware, s.key.provider, s.id))
    return out


def history_steps(spec: SpecLookup | None) -> StepFinder:
    """The StepFinder of :func:`kernelindex_sdk.store.history.history`: its change points
    and causes, placed on the line by run name.

    Args:
        spec: ``Store.spec``, so that a cause names the fields that changed.

    Returns:
        A function from a line (runs of one series, in order) to its steps.
    """

    def find(line: Sequence[RunRow]) -> list[Step]:
        where = {run.name: i for i, run in enumerate(line)}
        steps = [
            Step(
                index=where[change.run],
                ratio=change.ratio,
                cause=change.cause,
                detail="; ".join(str(d) for d in change.differences),
            )
            for found in history(line, spec=spec)
            for change in found.changes
        ]
        steps.sort(key=lambda step: step.index)
        return steps

    return find


@attrs.frozen(kw_only=True)
class Regression:
    """A line whose last step made it slower: what Health lists.

    Attributes:
        series: The series.
        step: Its last step (``ratio`` > 1).
    """

    series: Series
    step: Step


def regressions(series: Iterable[Series], steps: Mapping[str, Sequence[Step]]) -> list[Regression]:
    """The lines that are slower now than before their last step, worst first.

    Args:
        series: Every series.
        steps: Each series id's steps, in line order.

    Returns:
        One Regression per series whose last step has a ratio above 1, largest ratio
        first (ties by series id).
    """
    found = []
    for s in series:
        own = steps.get(s.id) or ()
        if own and own[-1].ratio > 1:
            found.append(Regression(series=s, step=own[-1]))
    found.sort(key=lambda r: (-r.step.ratio, r.series.id))
    return found
