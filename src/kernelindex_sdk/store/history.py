"""History: each series' points and its change points, each with the cause the records name.

A change point (see :mod:`.changepoints` for the test) gets a cause from what the stored
runs say changed between the last point before the step and the first after it:

- ``implementation``: the implementation digest changed (its code's sourceDigest, its
  packages or config); the differing fields are named;
- ``environment``: the environment digest changed on the same GPU (driver, CUDA, torch...);
  the differing fields are named;
- ``labels``: only the runs' labels changed (e.g. ``liger_version`` 0.5.3 -> 0.5.4);
- ``unexplained``: nothing recorded changed: the hardware, the host or noise.

A step located within one point of a recorded change is placed at that change: the test
locates a step to about a point, the records say exactly where the code moved.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from .._base.arguments import instance, integer, records
from ..errors import ArgumentError
from ._history_json import history_as_json, history_json_text
from ._history_render import render_table
from ._history_types import CAUSES, Change, Difference, MethodChange, SeriesHistory
from ._rows import RunRow
from .changepoints import DEFAULT_ALPHA, DEFAULT_MIN_SEGMENT, ChangePoint, find_change_points
from .series import Series, SeriesKey, group_series, skip_notice, utc_instant

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
    "skipped_notices",
]

# A run's statistics, read by position (in C; by name each is a Python lookup).
_MEDIAN: Final = operator.itemgetter(RunRow._fields.index("median_ns"))
_P20: Final = operator.itemgetter(RunRow._fields.index("p20_ns"))
_P80: Final = operator.itemgetter(RunRow._fields.index("p80_ns"))

#: The formats of :func:`render_history`.
FORMATS: Final = ("text", "markdown", "json")

#: ``spec(kind, digest)``: a stored object's spec (Store.spec), or None when unknown.
SpecLookup = Callable[[str, str], "Mapping[str, Any] | None"]


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    # A whole object that is empty (no labels) has no fields; an empty one inside is a value.
    if isinstance(value, Mapping) and (value or not prefix):
        for k in sorted(value):
            yield from _flatten(value[k], f"{prefix}.{k}" if prefix else str(k))
    else:
        yield prefix, value


def _diff(kind: str, before: Any, after: Any) -> list[Difference]:
    a, b = dict(_flatten(before)), dict(_flatten(after))
    return [
        Difference(kind, path, a.get(path), b.get(path))
        for path in sorted(a.keys() | b.keys())
        if a.get(path) != b.get(path) or type(a.get(path)) is not type(b.get(path))
    ]


class _Causes:
    """What changed between two runs, each pair of objects compared once."""

    def __init__(self, spec: SpecLookup | None) -> None:
        self._spec = spec
        self._seen: dict[tuple[str, str, str], list[Difference]] = {}

    def between(self, a: RunRow, b: RunRow) -> tuple[str, tuple[Difference, ...]]:
        found: list[Difference] = []
        causes = []
        for kind, attr in (
            ("implementation", "implementation_digest"),
            ("environment", "environment_digest"),
        ):
            da, db = getattr(a, attr), getattr(b, attr)
            if da != db:
                causes.append(kind)
                found += self._objects(kind, da, db, attr)
        if dict(a.labels) != dict(b.labels):
            causes.append("labels")
            found += _diff("labels", a.labels, b.labels)
        return (causes[0] if causes else "unexplained"), tuple(found)

    def _objects(self, kind: str, da: str, db: str, attr: str) -> list[Difference]:
        key = (kind, da, db)
        found = self._seen.get(key)
        if found is None:
            sa = None if self._spec is None else self._spec(kind, da)
            sb = None if self._spec is None else self._spec(kind, db)
            if sa is None or sb is None:
                found = [Difference(kind, _camel(attr), da, db)]
            else:
                found = _diff(kind, sa, sb) or [Difference(kind, _camel(attr), da, db)]
            self._seen[key] = found
        return found


def _camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(p.title() for p in rest)


def _explain(series: Series, found: Sequence[ChangePoint], causes: _Causes) -> tuple[Change, ...]:
    points = series.points
    out = []
    for i, cp in enumerate(found):
        lo = found[i - 1].index if i else 0
        hi = found[i + 1].index if i + 1 < len(found) else len(points)
        at, cause = cp.index, "unexplained"
        differences: tuple[Difference, ...] = ()
        # The recorded change nearest the located step, within one point of it.
        for j in (cp.index, cp.index - 1, cp.index + 1):
            if lo < j < hi or j == cp.index:
                c, d = causes.between(points[j - 1], points[j])
                if c != "unexplained":
                    at, cause, differences = j, c, d
                    break
        row = points[at]
        out.append(
            Change(
                index=at,
                ratio=cp.ratio,
                direction="slower" if cp.ratio > 1 else "faster",
                cause=cause,
                differences=differences,
                before_ns=cp.before,
                after_ns=cp.after,
                p_value=cp.p_value,
                tested=cp.tested,
                run=row.name,
                commit=row.commit,
            )
        )
    return tuple(out)


def history(
    rows: Iterable[RunRow],
    *,
    spec: SpecLookup | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_segment: int = DEFAULT_MIN_SEGMENT,
) -> list[SeriesHistory]:
    """Group ``rows`` into series and find each one's change points and their causes.

    Args:
        rows: Runs as the store gives them (``Store.rows(...)``), in any order.
        spec: ``Store.spec``: the stored implementation and environment objects name
            the fields that changed at a step, the workload its parameters. Without it
            a change names the digests that differ.
        alpha: Significance level of each split's test.
        min_segment: The fewest points on each side of a tested change; a series of
            fewer than twice as many is judged step by step with compare's rule.

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
    causes = _Causes(spec)
    out = []
    grouped = group_series(rows)
    follows = _method_changes(grouped, spec)
    for series in grouped:
        points = series.points
        found = find_change_points(
            list(map(_MEDIAN, points)),
            list(map(_P20, points)),
            list(map(_P80, points)),
            alpha=alpha,
            min_segment=min_segment,
        )
        workload = None if spec is None else spec("workload", series.key.workload_digest)
        out.append(
            SeriesHistory(
                series=series,
                changes=_explain(series, found, causes),
                tested=len(points) >= 2 * min_segment,
                workload=workload,
                follows=follows.get(series.key),
            )
        )
    return out


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
            differences = () if sa is None or sb is None else tuple(_diff("protocol", sa, sb))
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
