"""History: each series' points and its change points, each with the cause the records name.

Runs of a series at one commit with the same implementation and environment digests are
replicates of one point (DESIGN.md): they are pooled (the median of their medians) before
change points are looked for, so they are never a step, and the noise they show is the
series' (:func:`kernelindex_sdk.verdict.replicate_noise`). A change point (see
:mod:`.changepoints` for the test) gets the one verdict on the levels either side of it,
and a cause from what the stored runs say changed between the last point before the step
and the first after it:

- ``implementation``: the implementation digest changed (its code's sourceDigest, its
  packages or config); the differing fields are named;
- ``environment``: the environment digest changed on the same GPU (driver, CUDA, torch...),
  or every implementation measured in the same sweep moved by the same factor (a shared
  shift: the machine or its software, not the code);
- ``labels``: only the runs' labels changed;
- ``unexplained``: nothing recorded changed: the hardware, the host or noise.

A step the test located within one point of a recorded change is placed at that change:
the test locates a step to about a point, the records say exactly where the code moved.
A step the verdict found between two neighbours (a series too short to test) stays where
it was found.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from .._base.arguments import instance, integer, records
from ..errors import ArgumentError
from ..verdict import Noise, Point, Verdict, fewest_samples, judge, replicate_noise
from ..verdict import scatter_noise as _scatter_noise
from ._history_causes import Causes, Sweeps, diff, explain, shared_shifts
from ._history_json import history_as_json, history_json_text
from ._history_render import render_table
from ._history_types import CAUSES, Change, Difference, MethodChange, SeriesHistory
from ._rows import RunRow
from .changepoints import DEFAULT_ALPHA, DEFAULT_MIN_SEGMENT, ChangePoint, find_change_points
from .series import (
    Series,
    SeriesKey,
    degraded_column,
    group_series,
    row_degraded,
    skip_notice,
    utc_instant,
)

__all__ = [
    "CAUSES",
    "FORMATS",
    "Change",
    "Difference",
    "MethodChange",
    "SeriesHistory",
    "SpecLookup",
    "history",
    "history_as_json",
    "render_history",
    "series_history",
    "skipped_notices",
]

# A run's statistics, read by position (in C; by name each is a Python lookup).
_MEDIAN: Final = operator.itemgetter(RunRow._fields.index("median_ns"))
_P20: Final = operator.itemgetter(RunRow._fields.index("p20_ns"))
_P80: Final = operator.itemgetter(RunRow._fields.index("p80_ns"))
_SAMPLES: Final = operator.itemgetter(RunRow._fields.index("samples"))

#: How many of a series' latest points its scatter noise is read from.
SCATTER_POINTS: Final = 256

#: The formats of :func:`render_history`.
FORMATS: Final = ("text", "markdown", "json")

#: ``spec(kind, digest)``: a stored object's spec (Store.spec), or None when unknown.
SpecLookup = Callable[[str, str], "Mapping[str, Any] | None"]


def _median(values: Sequence[Any]) -> Any:
    if None in values:
        return None
    return statistics.median(values)


@attrs.frozen
class Line:
    """A series as change detection sees it: one point per replicate group.

    Attributes:
        series: The series.
        groups: ``(start, stop)`` of each point's runs in the series' points.
        medians: Each point's median (of its runs' medians), in ns.
        lows: Each point's p20 (None where a run lacks one).
        highs: Each point's p80, likewise.
        runs: How many runs each point pools.
        degraded: Why each point is unfit to compare, or None.
        samples: The fewest samples a run of each point took (None where a run's count
            is unrecorded): the verdict bounds a point's own p20-p80 by it.
    """

    series: Series
    groups: list[tuple[int, int]]
    medians: list[float]
    lows: list[Any]
    highs: list[Any]
    runs: list[int]
    degraded: list[str | None]
    samples: list[int | None]

    @classmethod
    def of(cls, series: Series) -> Line:
        """The points of ``series``: its replicates pooled."""
        points = series.points
        groups = series.groups()
        degraded = degraded_column(points)
        if len(groups) == len(points):
            return cls(
                series,
                groups,
                list(map(_MEDIAN, points)),
                list(map(_P20, points)),
                list(map(_P80, points)),
                [1] * len(points),
                degraded,
                list(map(_SAMPLES, points)),
            )
        medians, lows, highs, runs, marks, counts = [], [], [], [], [], []
        for start, stop in groups:
            members = points[start:stop]
            # A degraded replicate is left out of its point while a fit one remains.
            fit = [r for r in members if row_degraded(r) is None] or list(members)
            medians.append(_median([r.median_ns for r in fit]))
            lows.append(_median([r.p20_ns for r in fit]))
            highs.append(_median([r.p80_ns for r in fit]))
            runs.append(len(fit))
            reasons = sorted({d for d in map(row_degraded, fit) if d is not None})
            marks.append("; ".join(reasons) or None)
            counts.append(fewest_samples([r.samples for r in fit]))
        return cls(series, groups, medians, lows, highs, runs, marks, counts)

    def point(self, g: int) -> Point:
        """Point ``g``, pooled, as the verdict reads it."""
        return Point(
            median=self.medians[g],
            p20=self.lows[g],
            p80=self.highs[g],
            runs=self.runs[g],
            samples=self.samples[g],
            degraded=self.degraded[g],
        )

    def noise(self) -> Noise | None:
        """The noise its replicates show, else the scatter between its last
        :data:`SCATTER_POINTS` points (the noise it shows lately)."""
        points = self.series.points
        groups = [
            [r.median_ns for r in points[a:b] if r.median_ns] for a, b in self.groups if b - a > 1
        ]
        found = replicate_noise(groups) if groups else None
        if found is None:
            found = _scatter_noise(self.medians[-SCATTER_POINTS:])
        return found

    def group_at(self, index: int) -> int:
        """The point whose runs include position ``index`` of the series' points."""
        return bisect.bisect_right([a for a, _ in self.groups], index) - 1


def _level_verdict(
    line: Line, kept: Sequence[int], cp: ChangePoint, noise: Noise | None, include: bool = False
) -> Verdict:
    """The verdict on a change point: the points either side (a short series), or the two
    segments' levels, each with its points' typical p20-p80 and as many runs as it pools
    (a tested one)."""
    if not cp.tested:
        return judge(
            line.point(kept[cp.index - 1]),
            line.point(kept[cp.index]),
            noise=noise,
            include_degraded=include,
        )
    before = _segment(line, kept[: cp.index], cp.before)
    after = _segment(line, kept[cp.index :], cp.after)
    return judge(before, after, noise=noise)


def _segment(line: Line, groups: Sequence[int], level: float) -> Point:
    """A segment of points as one: its level, the median of its points' p20s and p80s
    scaled to the level, as many runs as points, and their fewest samples."""
    lows = [line.lows[g] / line.medians[g] for g in groups if line.lows[g] is not None]
    highs = [line.highs[g] / line.medians[g] for g in groups if line.highs[g] is not None]
    if len(lows) < len(groups) or len(highs) < len(groups):
        return Point(median=level, runs=max(1, len(groups)))
    return Point(
        median=level,
        p20=level * statistics.median(lows),
        p80=level * statistics.median(highs),
        runs=max(1, len(groups)),
        samples=fewest_samples([line.samples[g] for g in groups]),
    )


def _one(
    series: Series,
    causes: Causes,
    *,
    alpha: float,
    min_segment: int,
    include_degraded: bool,
) -> tuple[SeriesHistory, Line, list[int]]:
    line = Line.of(series)
    kept = [g for g in range(len(line.groups)) if include_degraded or line.degraded[g] is None]
    noise = line.noise()
    if len(kept) == len(line.groups):
        medians, lows, highs, runs = line.medians, line.lows, line.highs, line.runs
        samples = line.samples
    else:
        medians = [line.medians[g] for g in kept]
        lows = [line.lows[g] for g in kept]
        highs = [line.highs[g] for g in kept]
        runs = [line.runs[g] for g in kept]
        samples = [line.samples[g] for g in kept]
    found = find_change_points(
        medians,
        lows,
        highs,
        alpha=alpha,
        min_segment=min_segment,
        runs=None if max(runs, default=1) == 1 else runs,
        noise=noise,
        samples=samples,
    )
    points = series.points
    groups = line.groups

    def between(j: int) -> tuple[list[str], list[Difference]]:
        before, after = groups[kept[j - 1]], groups[kept[j]]
        return causes.between(points[before[1] - 1], points[after[0]])

    def verdict_of(cp: ChangePoint, at: int) -> Verdict:
        moved = cp if at == cp.index else attrs.evolve(cp, index=at)
        return _level_verdict(line, kept, moved, noise, include_degraded)

    changes = explain(
        found,
        len(kept),
        between,
        lambda j: points[groups[kept[j]][0]],
        verdict_of,
    )
    # Positions in the series' points: a change's index is its first run. A level the
    # test moved that the verdict calls within the noise, or under the threshold, is no
    # change (one verdict decides): a disturbed stretch of runs, or a step too small to
    # count.
    changes = tuple(
        attrs.evolve(c, index=groups[kept[c.index]][0])
        for c in changes
        if c.verdict is not None and c.verdict.changed
    )
    history = SeriesHistory(
        series=series,
        changes=changes,
        tested=len(kept) >= 2 * min_segment,
        follows=None,
        noise=noise,
        groups=tuple(groups),
    )
    return history, line, kept


def series_history(
    grouped: Sequence[Series],
    *,
    spec: SpecLookup | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_segment: int = DEFAULT_MIN_SEGMENT,
    include_degraded: bool = False,
) -> list[SeriesHistory]:
    """:func:`history` of series already grouped (:func:`~.series.group_series`), in order.

    Args:
        grouped: The series.
        spec: As for :func:`history`.
        alpha: As for :func:`history`.
        min_segment: As for :func:`history`.
        include_degraded: As for :func:`history`.
    """
    causes = Causes(spec)
    follows = _method_changes(grouped, spec)
    found: list[SeriesHistory] = []
    lines: list[tuple[Line, list[int]]] = []
    for series in grouped:
        h, line, kept = _one(
            series,
            causes,
            alpha=alpha,
            min_segment=min_segment,
            include_degraded=include_degraded,
        )
        workload = None if spec is None else spec("workload", series.key.workload_digest)
        found.append(attrs.evolve(h, workload=workload, follows=follows.get(series.key)))
        lines.append((line, kept))
    return _with_shared_shifts(found, lines)


def _with_shared_shifts(
    found: list[SeriesHistory], lines: list[tuple[Line, list[int]]]
) -> list[SeriesHistory]:
    """Re-cause the changes that every co-measured line shared (see ``_history_causes``)."""
    places: dict[tuple[str, str, str], list[int]] = {}
    for i, h in enumerate(found):
        k = h.key
        places.setdefault((k.workload_digest, k.protocol_digest, k.hardware), []).append(i)
    sweeps: Sweeps = {}
    wanted = False
    for place, members in places.items():
        if len(members) < 2:
            continue
        if any(found[i].changes for i in members):
            wanted = True
        for i in members:
            line = lines[i][0]
            points = line.series.points
            for g, (start, _) in enumerate(line.groups):
                commit = points[start].commit
                if commit is not None:
                    sweeps.setdefault((*place, commit), []).append((i, g))
    if not wanted:
        return found

    def point_of(i: int, g: int) -> tuple[Point, str]:
        line = lines[i][0]
        return line.point(g), line.series.points[line.groups[g][0]].environment_digest

    def step_of(i: int, change: Change) -> tuple[int, int] | None:
        line, kept = lines[i]
        after = line.group_at(change.index)
        at = kept.index(after) if after in kept else -1
        if at < 1:
            return None
        return kept[at - 1], after

    return shared_shifts(found, sweeps, point_of, step_of, _co_label)


def _co_label(h: SeriesHistory) -> str:
    return h.implementation


def history(
    rows: Iterable[RunRow],
    *,
    spec: SpecLookup | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_segment: int = DEFAULT_MIN_SEGMENT,
    include_degraded: bool = False,
) -> list[SeriesHistory]:
    """Group ``rows`` into series and find each one's change points and their causes.

    Args:
        rows: Runs as the store gives them (``Store.rows(...)``), in any order.
        spec: ``Store.spec``: the stored implementation and environment objects name
            the fields that changed at a step, the workload its parameters. Without it
            a change names the digests that differ.
        alpha: Significance level of each split's test.
        min_segment: The fewest points on each side of a tested change; a series of
            fewer than twice as many is judged step by step with the one verdict.
        include_degraded: Judge degraded points too (by default they are listed but no
            change is drawn from them).

    Returns:
        One :class:`SeriesHistory` per series, sorted by key.

    Raises:
        ArgumentError: for ``alpha`` outside (0, 1) or ``min_segment`` below 2, or
            ``rows`` that are not an iterable of :class:`RunRow`.
    """
    rows = list(records(rows, "rows"))
    if not all(map(isinstance, rows, itertools.repeat(RunRow))):
        for i, r in enumerate(rows):
            instance(r, RunRow, f"rows[{i}]")
    if not 0.0 < alpha < 1.0:
        raise ArgumentError(argument="alpha", reason=f"expected 0 < alpha < 1, got {alpha!r}")
    return series_history(
        group_series(rows),
        spec=spec,
        alpha=alpha,
        min_segment=min_segment,
        include_degraded=include_degraded,
    )


def _method_changes(
    grouped: Sequence[Series], spec: SpecLookup | None
) -> dict[SeriesKey, MethodChange]:
    """For each series, the series of the same measurement under the protocol before it."""
    chains: dict[tuple[str, str, str, str], list[tuple[str, Series]]] = {}
    for series in grouped:
        k = series.key
        first = series.points[0] if series.points else series.first
        chains.setdefault((k.workload_digest, k.provider, k.entry_point, k.hardware), []).append(
            (utc_instant(first.order_key), series)
        )
    found: dict[SeriesKey, MethodChange] = {}
    for chain in chains.values():
        chain.sort(key=lambda e: (e[0], e[1].key))
        for (_, before), (_, after) in itertools.pairwise(chain):
            a, b = before.key.protocol_digest, after.key.protocol_digest
            sa = None if spec is None else spec("protocol", a)
            sb = None if spec is None else spec("protocol", b)
            differences = () if sa is None or sb is None else tuple(diff("protocol", sa, sb))
            found[after.key] = MethodChange(a, differences)
    return found


def skipped_notices(found: Iterable[SeriesHistory]) -> list[str]:
    """One line per run left out of its series' points (no positive latency median),
    naming the run, its series and why: what a command reports beside the history.

    Args:
        found: What :func:`history` returned.

    Raises:
        ArgumentError: as :func:`~kernelindex_sdk.store.series.skip_text`.
    """
    return [
        skip_notice(row, f"{h.label} · {h.implementation} · {h.key.hardware}")
        for h in found
        for row in h.series.skipped
    ]


def render_history(found: Sequence[SeriesHistory], fmt: str = "text", *, points: int = 10) -> str:
    """The history in one of :data:`FORMATS`, ending with a newline.

    Args:
        found: What :func:`history` returned.
        fmt: ``text``, ``markdown`` or ``json`` (every point; the others show the last
            ``points`` of each series and say how many are left out).
        points: How many of each series' latest points text and Markdown list (0: all).

    Raises:
        ArgumentError: for an unknown format, ``points`` not an int >= 0, or ``found``
            not an iterable of :class:`SeriesHistory`.
    """
    if fmt not in FORMATS:
        raise ArgumentError(
            argument="format", reason=f"expected one of {', '.join(FORMATS)}, got {fmt!r}"
        )
    found = [
        instance(h, SeriesHistory, f"found[{i}]") for i, h in enumerate(records(found, "found"))
    ]
    if integer(points, "points") < 0:
        raise ArgumentError(argument="points", reason=f"expected an integer >= 0, got {points!r}")
    if fmt == "json":
        return history_json_text(found)
    return render_table(found, markdown=fmt == "markdown", points=points)
