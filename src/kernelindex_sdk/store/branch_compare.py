"""The PR check: NEW's records against the latest points of a branch's series in the store.

``kernelindex compare --history BRANCH NEW`` pairs each NEW run with the series of the
same workload, implementation (provider and entry point), protocol and GPU on BRANCH,
and compares it with the series' latest point (its replicates pooled), or with the median
of its last N points (``window``): the median, p20 and p80 of the base are then each the
median of those points' own. The verdict knows the series' noise: what its replicates
show, else the scatter between its points.

NEW is never its own base: the stored runs that are NEW's records (the same names, as
when NEW was ingested before the check) and the runs of NEW's own commit (a CI job run
again) are left out of the series first, and the note says how many. A degraded point is
passed over for the latest fit one.

Pairing, the formats and the regression gate are ``kernelindex compare``'s own: this
module only builds the base side from the store's columns, so no stored record text is
parsed.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from .. import compare as _compare
from .._analysis.runs import Run, RunSet, Stat, Workload, run_set
from ..errors import ArgumentError
from ..verdict import (
    DEFAULT_THRESHOLD,
    Noise,
    Verdict,
    fewest_samples,
    judge,
    pool,
    replicate_noise,
    scatter_noise,
)
from ._rows import RunRow
from .history import SCATTER_POINTS, Line, SpecLookup
from .series import Series, SeriesKey, group_series, row_point, utc_instant

__all__ = ["Baseline", "Judged", "SeriesBase", "baseline", "compare_to_branch", "judge_new"]


@attrs.frozen
class Baseline:
    """The base side of the PR check.

    Attributes:
        runs: One run per series NEW measured: its latest point, or the median of its
            last points (``window``).
        notes: Per base run name, what the base is (``main: latest of 12 point(s)...``).
        hardware: Per base run name, its series' GPU.
        noise: Per base run name, the series' noise (its replicates', else the scatter
            between its points), when known.
    """

    runs: RunSet
    notes: dict[str, str]
    hardware: dict[str, str]
    noise: dict[str, Noise | None] = attrs.field(factory=dict)


def _hardware(run: Run, new: RunSet) -> str:
    spec = new.objects.get(run.environment_digest)
    if isinstance(spec, Mapping):
        product = spec.get("hardware", {}).get("product")
        if product:
            return str(product)
    # A run without its environment object: its digest stands for the GPU, as in a series.
    return run.environment_digest


def _provider(run: Run) -> str:
    return run.provider if run.provider is not None else run.implementation_digest


def _wanted(new: RunSet) -> dict[tuple[str, str, str, str], set[str]]:
    """(workload, provider, entry point, GPU) of each NEW run, with its protocols."""
    found: dict[tuple[str, str, str, str], set[str]] = {}
    for r in new.runs:
        measured = (r.workload_digest, _provider(r), r.entry_point or "", _hardware(r, new))
        found.setdefault(measured, set()).add(r.protocol_digest)
    return found


def _chosen(
    grouped: Iterable[Series], wanted: dict[tuple[str, str, str, str], set[str]]
) -> Iterator[Series]:
    """The series NEW measured: of one measurement under several protocols, those of
    NEW's protocols, else the latest (so that the row says the protocols differ)."""
    by_measurement: dict[tuple[str, str, str, str], list[Series]] = {}
    for series in grouped:
        k = series.key
        measured = (k.workload_digest, k.provider, k.entry_point, k.hardware)
        if series.points and measured in wanted:
            by_measurement.setdefault(measured, []).append(series)
    for measured, found in by_measurement.items():
        same = [s for s in found if s.key.protocol_digest in wanted[measured]]
        # group_series lists one measurement's series oldest first.
        yield from same or found[-1:]


def _median(values: list[Any]) -> float | None:
    known = [v for v in values if v is not None]
    return None if len(known) < len(values) or not known else float(statistics.median(known))


def _workload(spec: SpecLookup | None, digest: str, row: RunRow) -> Workload | None:
    found = None if spec is None else spec("workload", digest)
    if found is None:
        if row.operation is None or row.pass_ is None:
            return None
        return Workload(operation=row.operation, pass_=row.pass_, parameters=())
    return Workload(
        operation=found["operation"],
        pass_=found["pass"],
        parameters=tuple(sorted(found.get("parameters", {}).items())),
        bytes_moved=found.get("bytesMoved"),
    )


@attrs.frozen
class _Base:
    """The base of one series: its chosen points and what they pool."""

    line: Line
    chosen: list[int]
    left_out: int
    passed_over: int

    @property
    def latest(self) -> RunRow:
        line = self.line
        return line.series.points[line.groups[self.chosen[-1]][0]]


def _choose(
    series: Series, window: int, new_names: set[str], new_commits: set[str]
) -> _Base | None:
    """The base points of ``series``: NEW's own runs left out, degraded points passed over."""
    points = series.points
    mine = [r for r in points if r.name not in new_names and r.commit not in new_commits]
    if not mine:
        return None
    line = Line.of(series if len(mine) == len(points) else attrs.evolve(series, points=tuple(mine)))
    fit = [g for g in range(len(line.groups)) if line.degraded[g] is None]
    # Every point degraded: the latest stands, and the verdict says degraded.
    chosen = fit[-window:] if fit else [len(line.groups) - 1]
    passed = sum(1 for g in range(len(line.groups)) if g > chosen[-1])
    return _Base(line, chosen, len(points) - len(mine), passed)


def _base_run(base: _Base, workload: Workload | None, branch: str) -> Run:
    line, chosen = base.line, base.chosen
    latest = base.latest
    if len(chosen) == 1:
        point = line.point(chosen[0])
        value = Stat("latency", "ns", float(point.median), point.p20, point.p80)
        runs, degraded, samples = point.runs, point.degraded, point.samples
    else:
        value = Stat(
            "latency",
            "ns",
            float(statistics.median(line.medians[g] for g in chosen)),
            _median([line.lows[g] for g in chosen]),
            _median([line.highs[g] for g in chosen]),
        )
        runs, degraded = len(chosen), None
        samples = fewest_samples(line.samples[g] for g in chosen)
    return Run(
        f"{branch}: {latest.name}",
        latest.name,
        latest.status,
        latest.observed_at,
        latest.workload_digest,
        latest.protocol_digest,
        latest.environment_digest,
        latest.implementation_digest,
        workload,
        latest.provider,
        latest.entry_point,
        None,
        value,
        None,
        samples,
        degraded,
        latest.commit,
        runs,
    )


def _note(base: _Base, window: int, branch: str) -> str:
    line = base.line
    count = len(line.groups)
    commit = base.latest.commit
    at = "" if commit is None else f", commit {commit[:12]}"
    if len(base.chosen) == 1:
        runs = line.runs[base.chosen[0]]
        pooled = f" ({runs} runs pooled)" if runs > 1 else ""
        text = f"{branch}: latest of {count} point(s){at}{pooled}"
    else:
        text = f"{branch}: median of its last {len(base.chosen)} point(s){at}"
    if base.passed_over:
        text += f"; {base.passed_over} later degraded point(s) passed over"
    if base.left_out:
        text += f"; {base.left_out} run(s) of NEW itself left out"
    return text


@attrs.frozen
class Judged:
    """NEW's point of one series against the series' base, as ``compare --history`` judges.

    Attributes:
        verdict: The one verdict.
        base: The run that stands for the base (its latest point's first run).
        new: The run that stands for NEW (its latest run).
        note: What the base is (``main: latest of 12 point(s), commit 1a2b3c4d5e6f``).
    """

    verdict: Verdict
    base: RunRow
    new: RunRow
    note: str


def _observed_at(row: RunRow) -> str:
    return row.observed_at


class SeriesBase:
    """A branch's series made ready to judge many NEWs against its history: the base and
    noise of any point's past read from lists built once (the dashboard's Compare page
    asks it for each commit it offers).

    Args:
        series: The branch's series.
    """

    def __init__(self, series: Series) -> None:
        self.series = series
        self.line = Line.of(series)
        points = series.points
        groups = self.line.groups
        self._starts = [utc_instant(points[a].order_key) for a, _ in groups]
        self._commits: dict[str, int] = {}
        self._names: dict[str, int] = {}
        for g, (a, b) in enumerate(groups):
            for row in points[a:b]:
                self._names[row.name] = g
                if row.commit is not None:
                    self._commits.setdefault(row.commit, g)
        # As Line.noise reads them: each group of two runs or more, its medians.
        self._replicated = [
            (g, [r.median_ns for r in points[a:b] if r.median_ns])
            for g, (a, b) in enumerate(groups)
            if b - a > 1
        ]

    def _noise(self, end: int) -> Noise | None:
        found = replicate_noise([m for g, m in self._replicated if g < end])
        if found is None:
            found = scatter_noise(self.line.medians[max(0, end - SCATTER_POINTS) : end])
        return found

    def judge(
        self,
        new: Sequence[RunRow],
        *,
        window: int = 1,
        threshold: float = DEFAULT_THRESHOLD,
        before: str | None = None,
        include_degraded: bool = False,
        branch: str = "BRANCH",
    ) -> Judged | None:
        """As :func:`judge_new` (its arguments but the series)."""
        if not new:
            return None
        names = {r.name for r in new}
        commits = {r.commit for r in new if r.commit is not None}
        end = len(self.line.groups) if before is None else bisect.bisect_left(self._starts, before)
        excluded = [self._names[n] for n in names if n in self._names]
        excluded += [self._commits[c] for c in commits if c in self._commits]
        if any(g < end for g in excluded):
            # NEW's own runs inside the history: left out one by one, as compare does.
            return _judge_leaving_out(
                self.series, new, window, threshold, before, include_degraded, branch
            )
        if end == 0:
            return None
        line = self.line
        prefix = Line(
            line.series,
            line.groups[:end],
            line.medians[:end],
            line.lows[:end],
            line.highs[:end],
            line.runs[:end],
            line.degraded[:end],
            line.samples[:end],
        )
        fit = [g for g in range(end) if prefix.degraded[g] is None]
        chosen = fit[-window:] if fit else [end - 1]
        base = _Base(prefix, chosen, 0, sum(1 for g in range(end) if g > chosen[-1]))
        return _judged(base, new, self._noise(end), threshold, include_degraded, window, branch)


def _judged(
    chosen: _Base,
    new: Sequence[RunRow],
    noise: Noise | None,
    threshold: float,
    include_degraded: bool,
    window: int,
    branch: str,
) -> Judged | None:
    base = _base_run(chosen, None, branch).point
    if base is None:  # pragma: no cover - a base run always has a value
        return None
    # The latest observed stands for NEW, the first of equals, as compare chooses it.
    latest = max(new, key=_observed_at)
    same = [
        r
        for r in new
        if r.implementation_digest == latest.implementation_digest
        and r.environment_digest == latest.environment_digest
        and r.commit == latest.commit
    ]
    mine = pool(row_point(r) for r in same)
    found = judge(base, mine, threshold=threshold, noise=noise, include_degraded=include_degraded)
    return Judged(found, chosen.latest, latest, _note(chosen, window, branch))


def judge_new(
    series: Series,
    new: Sequence[RunRow],
    *,
    window: int = 1,
    threshold: float = DEFAULT_THRESHOLD,
    before: str | None = None,
    include_degraded: bool = False,
    branch: str = "BRANCH",
) -> Judged | None:
    """NEW's runs of ``series`` (its replicates pooled) against the series' base.

    The rule of :func:`compare_to_branch`, for runs already read as rows: NEW's own runs
    and commit are left out of the series, degraded points passed over, the base is the
    latest point (or the median of the last ``window``), and the verdict knows the series'
    noise. :class:`SeriesBase` asks the same of one series many times.

    Args:
        series: The branch's series.
        new: NEW's runs of that series (timed, in order).
        window: As for :func:`compare_to_branch`.
        threshold: As for :func:`compare_to_branch`.
        before: Only the series' points ordered before this UTC instant (a commit
            against the history before it); None: all.
        include_degraded: As for :func:`compare_to_branch`.
        branch: The branch's name, for the note.

    Returns:
        The verdict with its base, or None when the series has no base for NEW.
    """
    return SeriesBase(series).judge(
        new,
        window=window,
        threshold=threshold,
        before=before,
        include_degraded=include_degraded,
        branch=branch,
    )


def _judge_leaving_out(
    series: Series,
    new: Sequence[RunRow],
    window: int,
    threshold: float,
    before: str | None,
    include_degraded: bool,
    branch: str,
) -> Judged | None:
    """:func:`judge_new` where NEW's own runs sit in the history: left out one by one."""
    points = series.points
    if before is not None:
        points = tuple(p for p in points if utc_instant(p.order_key) < before)
    chosen = _choose(
        attrs.evolve(series, points=points),
        window,
        {r.name for r in new},
        {r.commit for r in new if r.commit is not None},
    )
    if chosen is None:
        return None
    return _judged(chosen, new, chosen.line.noise(), threshold, include_degraded, window, branch)


def baseline(
    rows: Iterable[RunRow],
    new: RunSet,
    *,
    window: int = 1,
    spec: SpecLookup | None = None,
    branch: str = "BRANCH",
) -> Baseline:
    """The base side of the PR check: one run per series of ``rows`` that NEW measured.

    Args:
        rows: The branch's runs (``Store.rows(branch=...)``).
        new: NEW's runs.
        window: How many of each series' latest points make its base (their median).
        spec: ``Store.spec``: the stored objects, for labels and unpaired reasons.
        branch: The branch's name, for the notes.

    Returns:
        The base runs, with each one's note and GPU.

    Raises:
        ArgumentError: for a window below 1.
    """
    if window < 1:
        raise ArgumentError(argument="window", reason=f"expected an integer >= 1, got {window!r}")
    wanted = _wanted(new)
    new_names = {r.name for r in new.runs}
    new_commits = {r.commit for r in new.runs if r.commit is not None}
    base = RunSet()
    notes: dict[str, str] = {}
    hardware: dict[str, str] = {}
    noise: dict[str, Noise | None] = {}
    seen_objects: set[str] = set()
    for series in _chosen(group_series(rows), wanted):
        key: SeriesKey = series.key
        chosen = _choose(series, window, new_names, new_commits)
        if chosen is None:
            continue
        latest = chosen.latest
        run = _base_run(chosen, _workload(spec, key.workload_digest, latest), branch)
        base.runs.append(run)
        notes[run.name] = _note(chosen, window, branch)
        hardware[run.name] = key.hardware
        noise[run.name] = chosen.line.noise()
        if spec is None:
            continue
        for kind, digest in (
            ("protocol", run.protocol_digest),
            ("environment", run.environment_digest),
            ("implementation", run.implementation_digest),
        ):
            if digest not in seen_objects:
                seen_objects.add(digest)
                found = spec(kind, digest)
                if found is not None:
                    base.objects[digest] = found
    return Baseline(base, notes, hardware, noise)


def compare_to_branch(
    rows: Iterable[RunRow],
    new: Iterable[Any] | RunSet,
    *,
    window: int = 1,
    spec: SpecLookup | None = None,
    branch: str = "BRANCH",
    threshold: float = _compare.DEFAULT_THRESHOLD,
    include_degraded: bool = False,
) -> _compare.Comparison:
    """Compare NEW with each matching series' latest point(s) on a branch.

    NEW's own records and the runs of its commit are left out of the series first, so
    that NEW is never compared with itself (ingested before the check, or a job run
    again); the verdict knows each series' noise. Runs pair as in
    :func:`kernelindex_sdk.compare.compare` across environments (a series keeps its GPU
    but not its driver or torch: a row whose environments differ says so), each NEW run
    only with the series of its own GPU. Each pair notes what its base is
    (``main: latest of 12 point(s), commit 1a2b3c4d5e6f``).

    Args:
        rows: The branch's runs (``Store.rows(branch=...)``), failed ones included.
        new: NEW's records (models or JSON values) or a RunSet from ``load_runs``.
        window: Compare with the median of each series' last ``window`` points.
        spec: ``Store.spec``, for labels and the reasons of unpaired runs.
        branch: The branch's name, as the notes show it.
        threshold: compare's threshold (0.05 = 5%).
        include_degraded: Judge degraded runs too (by default such a pair says degraded).

    Returns:
        compare's :class:`~kernelindex_sdk.compare.Comparison`, BASE being the branch.

    Raises:
        ArgumentError: for a window below 1 or a bad threshold.
        SchemaValidationError: when a NEW record given as a model or JSON value is invalid.
    """
    new_set = run_set(new)
    # A series holds latency medians (the store's columns): a NEW run of another metric
    # (memory) has none to meet, and says so rather than pairing with nothing.
    other_metric = [r for r in new_set.runs if r.metric != "latency"]
    if other_metric:
        new_set = attrs.evolve(new_set, runs=[r for r in new_set.runs if r.metric == "latency"])
    found = baseline(rows, new_set, window=window, spec=spec, branch=branch)
    base = found.runs
    # One comparison per GPU: across environments, two GPUs' runs of one workload would
    # otherwise meet at one key.
    gpus: dict[str, tuple[RunSet, RunSet]] = {}
    for run in new_set.runs:
        sides = gpus.setdefault(_hardware(run, new_set), (_subset(base), _subset(new_set)))
        sides[1].runs.append(run)
    for run in base.runs:
        sides_of = gpus.get(found.hardware[run.name])
        if sides_of is not None:
            sides_of[0].runs.append(run)

    def noise_of(base_runs: list[Run], _new: list[Run]) -> Noise | None:
        return found.noise.get(base_runs[-1].name)

    def check(b: RunSet, n: RunSet) -> _compare.Comparison:
        return _compare.compare(
            b,
            n,
            threshold=threshold,
            across_environments=True,
            include_degraded=include_degraded,
            noise_of=noise_of,
        )

    parts = [check(b, n) for b, n in gpus.values()]
    if not parts:
        parts = [check(base, new_set)]
    pairs = [
        attrs.evolve(p, notes=(found.notes[p.base.name], *p.notes)) if p.base is not None else p
        for c in parts
        for p in c.pairs
    ]
    unpaired = [p for c in parts for p in c.unpaired]
    unpaired += [
        _compare.Pair(
            None, r, reason=f"a {r.metric} run: history keeps latency only ({branch} has no base)"
        )
        for r in other_metric
    ]
    first = parts[0]
    return attrs.evolve(
        first,
        pairs=pairs,
        unpaired=unpaired,
        varying=tuple(sorted({v for c in parts for v in c.varying})),
        base=base,
        new=new_set,
        several_environments=len(parts) > 1 or first.several_environments,
    )


def _subset(of: RunSet) -> RunSet:
    """An empty RunSet that shares ``of``'s objects (for labels and reasons)."""
    return RunSet(runs=[], objects=of.objects, problems=of.problems, invalid=of.invalid)
