"""Relative series: each implementation over its baseline measured in the same sweep.

Runs on one commit, one environment and one workload, made by different implementations
in one sweep (Liger against huggingface, ours against torch), can be divided (DESIGN.md,
"Co-measured baselines"). Their ratio survives a change of GPU, which starts a new series
of absolute times: so a code change measured first on new hardware stays visible here.

Which provider is a run's baseline is explicit, never guessed from a name: the run's
label :data:`kernelindex_sdk.verdict.BASELINE_LABEL` (``kernelindex.dev/baseline``),
which the harness and the Liger importer set, or the ``baseline`` argument (``kernelindex
history --baseline PROVIDER``) for runs without the label.

A relative series is keyed by workload, provider and entry point, protocol and baseline
(not by GPU). Its points are the commits where both were measured in one environment: the
implementation's point over the baseline's (replicates pooled on each side), in commit
order. Its change points are found as any series' are, and a change names every cause:
the implementation's code, the baseline's code (``baseline``), the GPU (``hardware``), the
machine's software (``environment``) or the labels.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from ..verdict import BASELINE_LABEL, Point, Verdict, fewest_samples, judge, scatter_noise
from ._history_causes import Causes, explain
from ._history_types import Difference
from ._relative_render import relative_as_json, relative_json_text, relative_table
from ._relative_types import RelativeHistory, RelativeKey, RelativePoint, RelativeSeries
from ._rows import RunRow
from .changepoints import DEFAULT_ALPHA, DEFAULT_MIN_SEGMENT, ChangePoint, find_change_points
from .history import Line, SpecLookup
from .series import Series, utc_instant

__all__ = [
    "RelativeHistory",
    "RelativeKey",
    "RelativePoint",
    "RelativeSeries",
    "relative_as_json",
    "relative_history",
    "relative_json_text",
    "relative_series",
    "relative_table",
]

#: The order of a relative change's causes, most specific first.
_ORDER: Final = ("implementation", "baseline", "workload", "hardware", "environment", "labels")


def _ratio(a: Point, b: Point) -> tuple[float, float | None, float | None]:
    ratio = a.median / b.median
    sa, sb = a.spread, b.spread
    if sa is None or sb is None:
        return ratio, None, None
    half = 0.5 * math.hypot(sa, sb)
    return ratio, ratio * math.exp(-half), ratio * math.exp(half)


def _baseline_of(row: RunRow, default: str | None) -> str | None:
    return row.labels.get(BASELINE_LABEL, default)


_LABELS: Final = operator.itemgetter(RunRow._fields.index("labels"))


def _names_a_baseline(series: Series, default: str | None) -> bool:
    """Whether a run of ``series`` names a baseline other than its own provider."""
    # The runs of one store group share their labels' object: each is looked at once.
    distinct = {id(labels): labels for labels in map(_LABELS, series.points)}
    return any(
        (b := labels.get(BASELINE_LABEL, default)) is not None and b != series.key.provider
        for labels in distinct.values()
    )


def relative_series(
    grouped: Sequence[Series],
    *,
    baseline: str | None = None,
    spec: SpecLookup | None = None,
) -> list[RelativeSeries]:
    """The relative series of ``grouped`` (each implementation over its baseline).

    With ``spec``, a relative series whose workload only adds parameters to an earlier
    one's (the same operation and pass, every earlier parameter kept with its value; a
    benchmark that now records a config key) carries that series on: the producer named
    what it computed more fully, and the ratio still compares like with like. The step
    where it does names ``workload`` among its causes.

    Args:
        grouped: Series, as :func:`~.series.group_series` gives them.
        baseline: The baseline provider of runs that carry no ``kernelindex.dev/baseline``
            label (None: such runs have no relative series).
        spec: ``Store.spec``: the workloads' parameters, to carry a series on.

    Returns:
        One :class:`RelativeSeries` per key that has at least one point, sorted by key.
    """
    wanted = [
        s
        for s in grouped
        if s.points
        and any(
            (b := _baseline_of(r, baseline)) is not None and b != s.key.provider for r in s.points
        )
    ]
    if not wanted:
        return []
    # Every point of every series, by where and when it was measured.
    lines = {id(s): Line.of(s) for s in grouped if s.points}
    index: dict[tuple[str, ...], tuple[Line, int]] = {}
    for s in grouped:
        if not s.points:
            continue
        line = lines[id(s)]
        k = s.key
        for g, (start, _) in enumerate(line.groups):
            row = s.points[start]
            if row.commit is None:
                continue
            where = (
                k.workload_digest,
                k.protocol_digest,
                k.hardware,
                k.provider,
                row.commit,
                row.environment_digest,
            )
            index.setdefault(where, (line, g))
    found: dict[RelativeKey, list[tuple[tuple[str, str, str], RelativePoint]]] = {}
    for s in wanted:
        line = lines[id(s)]
        k = s.key
        for g, (start, _) in enumerate(line.groups):
            row = s.points[start]
            reference = _baseline_of(row, baseline)
            if row.commit is None or reference is None or reference == k.provider:
                continue
            other = index.get(
                (
                    k.workload_digest,
                    k.protocol_digest,
                    k.hardware,
                    reference,
                    row.commit,
                    row.environment_digest,
                )
            )
            if other is None:
                continue
            theirs, h = other
            mine, base = line.point(g), theirs.point(h)
            ratio, low, high = _ratio(mine, base)
            marks = sorted({d for d in (mine.degraded, base.degraded) if d})
            point = RelativePoint(
                run=row,
                baseline=theirs.series.points[theirs.groups[h][0]],
                ratio=ratio,
                p20=low,
                p80=high,
                runs=min(mine.runs, base.runs),
                degraded="; ".join(marks) or None,
                # The fewest samples of the two (pool's count): the ratio's spread is
                # no better known than its less sampled side's.
                samples=fewest_samples((mine.samples, base.samples)),
            )
            key = RelativeKey(
                k.workload_digest,
                k.provider,
                k.entry_point,
                k.protocol_digest,
                reference,
                k.hardware,
            )
            order = (utc_instant(row.order_key), row.observed_at, row.name)
            found.setdefault(key, []).append((order, point))
    chains = {key: sorted(members, key=lambda e: e[0]) for key, members in found.items()}
    chains = _carried_on(chains, spec)
    return [RelativeSeries(key, tuple(p for _, p in chains[key])) for key in sorted(chains)]


Chain = list[tuple[tuple[str, str, str], RelativePoint]]


def _carried_on(
    chains: dict[RelativeKey, Chain], spec: SpecLookup | None
) -> dict[RelativeKey, Chain]:
    """Each series joined to the one it carries on: measured after it ended, on another
    GPU (the old one replaced) or with a workload that only adds parameters to its own
    (the latest such ending, when several). Series measured side by side (two GPUs at the
    same commits) stay apart."""
    facts: dict[str, tuple[str, str, dict[str, Any]] | None] = {}

    def workload(digest: str) -> tuple[str, str, dict[str, Any]] | None:
        if spec is None:
            return None
        if digest not in facts:
            w = spec("workload", digest)
            params = None if w is None else w.get("parameters")
            facts[digest] = (
                None
                if w is None or not isinstance(params, Mapping)
                else (str(w.get("operation")), str(w.get("pass")), dict(params))
            )
        return facts[digest]

    def follows(earlier: RelativeKey, later: RelativeKey) -> bool:
        if earlier.workload_digest == later.workload_digest:
            return True
        a, b = workload(earlier.workload_digest), workload(later.workload_digest)
        return a is not None and b is not None and a[:2] == b[:2] and _adds_to(a[2], b[2])

    families: dict[tuple[Any, ...], list[RelativeKey]] = {}
    for key in chains:
        w = workload(key.workload_digest)
        what = key.workload_digest if w is None else w[:2]
        family = (what, key.provider, key.entry_point, key.protocol_digest, key.baseline)
        families.setdefault(family, []).append(key)
    merged = dict(chains)
    for keys in families.values():
        if len(keys) < 2:
            continue
        # Oldest first: a chain grows as its successors join it.
        keys.sort(key=lambda k: chains[k][0][0])
        for later in keys:
            start = chains[later][0][0]
            earlier = [
                k
                for k in keys
                if k != later and k in merged and merged[k][-1][0] < start and follows(k, later)
            ]
            if not earlier:
                continue
            before = max(earlier, key=lambda k: merged[k][-1][0])
            merged[later] = merged.pop(before) + merged[later]
    return merged


def _adds_to(earlier: dict[str, Any], later: dict[str, Any]) -> bool:
    """Whether ``later`` keeps every parameter of ``earlier`` with its value and adds some."""
    if len(later) <= len(earlier):
        return False
    return all(
        k in later and later[k] == v and type(later[k]) is type(v) for k, v in earlier.items()
    )


def _between(
    causes: Causes, a: RelativePoint, b: RelativePoint
) -> tuple[list[str], list[Difference]]:
    """The causes and differences of a step from point ``a`` to point ``b``."""
    found: list[str] = []
    differences: list[Difference] = []
    mine, mine_diff = causes.between(a.run, b.run)
    theirs, theirs_diff = causes.between(a.baseline, b.baseline, kind="baseline")
    if a.hardware != b.hardware:
        found.append("hardware")
        differences.append(Difference("hardware", "hardware.product", a.hardware, b.hardware))
        # The environment digest moves with the GPU: the GPU is the cause named.
        mine = [c for c in mine if c != "environment"]
        theirs = [c for c in theirs if c != "environment"]
        mine_diff = [d for d in mine_diff if d.object != "environment"]
        theirs_diff = [d for d in theirs_diff if d.object != "environment"]
    found += mine + [c for c in theirs if c not in ("labels", "environment")]
    differences += mine_diff + [d for d in theirs_diff if d.object == "baseline"]
    if a.run.workload_digest != b.run.workload_digest:
        found.append("workload")
        differences += causes.objects(
            "workload", a.run.workload_digest, b.run.workload_digest, "workload_digest", "workload"
        )
    ordered: list[str] = [c for c in _ORDER if c in found]
    return ordered, differences


def relative_history(
    grouped: Sequence[Series],
    *,
    spec: SpecLookup | None = None,
    baseline: str | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_segment: int = DEFAULT_MIN_SEGMENT,
    include_degraded: bool = False,
) -> list[RelativeHistory]:
    """The relative series of ``grouped`` and their change points, each with its causes.

    Args:
        grouped: Series, as :func:`~.series.group_series` gives them.
        spec: ``Store.spec``, so that a cause names the fields that changed.
        baseline: The baseline of runs without the label (see :func:`relative_series`).
        alpha: As for :func:`~.history.history`.
        min_segment: As for :func:`~.history.history`.
        include_degraded: Look for change points in degraded points too.

    Returns:
        One :class:`RelativeHistory` per relative series.
    """
    causes = Causes(spec)
    out = []
    for series in relative_series(grouped, baseline=baseline, spec=spec):
        h = _one(series, causes, alpha, min_segment, include_degraded)
        workload = None if spec is None else spec("workload", series.key.workload_digest)
        out.append(attrs.evolve(h, workload=None if workload is None else dict(workload)))
    return out


def _one(
    series: RelativeSeries,
    causes: Causes,
    alpha: float,
    min_segment: int,
    include_degraded: bool,
) -> RelativeHistory:
    points = series.points
    kept = [i for i, p in enumerate(points) if include_degraded or p.degraded is None]
    ratios = [points[i].ratio for i in kept]
    noise = scatter_noise(ratios)
    found = find_change_points(
        ratios,
        [points[i].p20 for i in kept],
        [points[i].p80 for i in kept],
        alpha=alpha,
        min_segment=min_segment,
        runs=[points[i].runs for i in kept],
        noise=noise,
        samples=[points[i].samples for i in kept],
    )

    def point(j: int) -> Point:
        p = points[kept[j]]
        return Point(
            median=p.ratio,
            p20=p.p20,
            p80=p.p80,
            runs=p.runs,
            samples=p.samples,
            degraded=p.degraded,
        )

    def verdict_of(cp: ChangePoint, at: int) -> Verdict:
        if not cp.tested:
            return judge(point(at - 1), point(at), noise=noise, include_degraded=include_degraded)
        before = Point(median=cp.before, runs=max(1, at))
        return judge(before, Point(median=cp.after, runs=max(1, len(kept) - at)), noise=noise)

    changes = explain(
        found,
        len(kept),
        lambda j: _between(causes, points[kept[j - 1]], points[kept[j]]),
        lambda j: points[kept[j]].run,
        verdict_of,
    )
    return RelativeHistory(
        series=series,
        # One verdict decides: a level the test moved within the noise is no change.
        changes=tuple(
            attrs.evolve(c, index=kept[c.index])
            for c in changes
            if c.verdict is not None and c.verdict.changed
        ),
        tested=len(kept) >= 2 * min_segment,
        noise=noise,
    )
