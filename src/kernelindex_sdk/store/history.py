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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from .._analysis.runs import without_collection
from ..errors import ArgumentError
from ._history_json import history_as_json, history_json_text
from ._rows import RunRow
from .changepoints import DEFAULT_ALPHA, DEFAULT_MIN_SEGMENT, ChangePoint, find_change_points
from .series import Series, SeriesKey, group_series, utc_instant

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
]

#: What a change point's ``cause`` can be, most specific first.
CAUSES: Final = ("implementation", "environment", "labels", "unexplained")
#: The formats of :func:`render_history`.
FORMATS: Final = ("text", "markdown", "json")

#: ``spec(kind, digest)``: a stored object's spec (Store.spec), or None when unknown.
SpecLookup = Callable[[str, str], "Mapping[str, Any] | None"]


@attrs.frozen
class Difference:
    """One field that differs between the runs on either side of a step.

    Attributes:
        object: ``implementation``, ``environment`` or ``labels``.
        field: The dotted path in that object (``packages.torch``), or the digest's name
            when the objects themselves are not stored.
        before: The value before the step (None when absent).
        after: The value after it (None when absent).
    """

    object: str
    field: str
    before: Any
    after: Any

    def __str__(self) -> str:
        return f"{self.field} {_show(self.before)} -> {_show(self.after)}"


@attrs.frozen(kw_only=True)
class Change:
    """A change point of a series, with its cause.

    Attributes:
        index: Position in the series' points of the first point after the step.
        ratio: Level after / level before (each the median of its segment's medians).
        direction: ``slower`` (ratio > 1) or ``faster``: latency, smaller is better.
        cause: One of :data:`CAUSES`.
        differences: What changed at the step (empty when unexplained).
        before_ns: The level before the step, in ns.
        after_ns: The level after it, in ns.
        p_value: The test's p-value; None when the series was too short to test.
        tested: False when compare's rule between two neighbours decided (short series).
        run: The name of the first run after the step.
        commit: That run's commit, when recorded.
    """

    index: int
    ratio: float
    direction: str
    cause: str
    differences: tuple[Difference, ...]
    before_ns: float
    after_ns: float
    p_value: float | None
    tested: bool
    run: str
    commit: str | None


@attrs.frozen
class MethodChange:
    """The protocol change that started a series: the same workload, implementation and
    GPU were measured before under another protocol, in a series of their own.

    Attributes:
        protocol_digest: The earlier series' protocol digest.
        differences: The protocol fields that differ (empty when its object is unknown).
    """

    protocol_digest: str
    differences: tuple[Difference, ...]


@attrs.frozen
class SeriesHistory:
    """One series with its change points.

    Attributes:
        series: The series (its key, points and failed runs).
        changes: Its change points, oldest first.
        tested: Whether it was long enough for the significance test (else compare's
            rule judged each step between neighbours).
        workload: The workload object when stored (operation, pass, parameters).
        follows: When the same measurement was taken before under another protocol, that
            protocol and what differs: a method change, never compared across.
    """

    series: Series
    changes: tuple[Change, ...]
    tested: bool
    workload: Mapping[str, Any] | None = None
    follows: MethodChange | None = None

    @property
    def key(self) -> SeriesKey:
        """What the series' runs share."""
        return self.series.key

    @property
    def label(self) -> str:
        """``operation pass name=value ...``: the workload, every parameter shown."""
        return self.label_with()

    def label_with(self, names: Iterable[str] | None = None) -> str:
        """``operation pass name=value ...`` for the parameters ``names`` (all when None)."""
        row = self.series.first
        parts = [row.operation or "workload", row.pass_ or ""]
        if self.workload is not None:
            params = self.workload.get("parameters", {})
            wanted = params if names is None else [k for k in params if k in set(names)]
            parts += [f"{k}={_show(params[k], quote=False)}" for k in sorted(wanted)]
        return " ".join(p for p in parts if p)

    @property
    def implementation(self) -> str:
        """The provider (and entry point when there is one)."""
        key = self.key
        return key.provider if not key.entry_point else f"{key.provider} ({key.entry_point})"


def _show(value: Any, *, quote: bool = True) -> str:
    if value is None:
        return "absent"
    if isinstance(value, str) and not quote:
        return value
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
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


@without_collection
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
        ArgumentError: for ``alpha`` outside (0, 1) or ``min_segment`` below 2.
    """
    causes = _Causes(spec)
    out = []
    grouped = group_series(rows)
    follows = _method_changes(grouped, spec)
    for series in grouped:
        points = series.points
        found = find_change_points(
            [p.median_ns for p in points],  # type: ignore[misc]
            [p.p20_ns for p in points],
            [p.p80_ns for p in points],
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


def render_history(found: Sequence[SeriesHistory], fmt: str = "text", *, points: int = 10) -> str:
    """The history in one of :data:`FORMATS`, ending with a newline.

    Args:
        found: What :func:`history` returned.
        fmt: ``text``, ``markdown`` or ``json`` (every point; the others show the last
            ``points`` of each series and say how many are left out).
        points: How many of each series' latest points text and Markdown list (0: all).

    Raises:
        ArgumentError: for an unknown format or a negative ``points``.
    """
    if fmt not in FORMATS:
        raise ArgumentError(
            argument="format", reason=f"expected one of {', '.join(FORMATS)}, got {fmt!r}"
        )
    if points < 0:
        raise ArgumentError(argument="points", reason=f"expected an integer >= 0, got {points!r}")
    if fmt == "json":
        return history_json_text(found)
    from ._history_render import render_table  # noqa: PLC0415 - it imports this module

    return render_table(found, markdown=fmt == "markdown", points=points)
