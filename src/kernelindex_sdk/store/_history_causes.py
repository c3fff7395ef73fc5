"""Why a series stepped: what the records say changed, and the shifts co-measured lines share.

A change point's cause is read from the last run before the step and the first after it
(:class:`Causes`); a step found by the test is placed at a recorded change within one
point of it (:func:`explain`). Then :func:`shared_shifts` looks across series: where the
other implementations measured in the same sweep (same workload, commit and machine)
moved by the same factor, within the noise, the machine or its software moved, not the
code, and the cause is ``environment``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from ..verdict import DEFAULT_THRESHOLD, Noise, Point, fewest_samples, judge
from ._history_types import Change, Difference, SeriesHistory
from ._rows import RunRow
from .changepoints import ChangePoint

__all__ = ["Causes", "explain", "shared_shifts"]

#: ``spec(kind, digest)``: a stored object's spec (Store.spec), or None when unknown.
SpecLookup = Callable[[str, str], "Mapping[str, Any] | None"]

#: The causes a run's own records can name, most specific first.
_RECORDED: Final = (
    ("implementation", "implementation_digest"),
    ("environment", "environment_digest"),
)


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    # A whole object that is empty (no labels) has no fields; an empty one inside is a value.
    if isinstance(value, Mapping) and (value or not prefix):
        for k in sorted(value):
            yield from _flatten(value[k], f"{prefix}.{k}" if prefix else str(k))
    else:
        yield prefix, value


def diff(kind: str, before: Any, after: Any) -> list[Difference]:
    """Each field where two JSON objects differ, as :class:`Difference` of ``kind``."""
    a, b = dict(_flatten(before)), dict(_flatten(after))
    return [
        Difference(kind, path, a.get(path), b.get(path))
        for path in sorted(a.keys() | b.keys())
        if a.get(path) != b.get(path) or type(a.get(path)) is not type(b.get(path))
    ]


def _camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(p.title() for p in rest)


class Causes:
    """What changed between two runs, each pair of objects compared once."""

    def __init__(self, spec: SpecLookup | None) -> None:
        self._spec = spec
        self._seen: dict[tuple[str, str, str], list[Difference]] = {}

    def between(
        self, a: RunRow, b: RunRow, *, kind: str | None = None
    ) -> tuple[list[str], list[Difference]]:
        """The causes (most specific first) and the fields that differ from ``a`` to ``b``.

        Args:
            a: The last run before the step.
            b: The first run after it.
            kind: The object name the implementation's differences go under (``baseline``
                for the reference of a relative series).
        """
        found: list[Difference] = []
        causes = []
        for name, attr in _RECORDED:
            da, db = getattr(a, attr), getattr(b, attr)
            if da != db:
                shown = kind if (kind is not None and name == "implementation") else name
                causes.append(shown)
                found += self.objects(name, da, db, attr, shown)
        if dict(a.labels) != dict(b.labels):
            causes.append("labels")
            found += diff("labels", a.labels, b.labels)
        return causes, found

    def objects(self, kind: str, da: str, db: str, attr: str, shown: str) -> list[Difference]:
        """The fields where the stored objects of two digests differ (the digests when
        the objects are not stored)."""
        key = (shown, da, db)
        found = self._seen.get(key)
        if found is None:
            sa = None if self._spec is None else self._spec(kind, da)
            sb = None if self._spec is None else self._spec(kind, db)
            if sa is None or sb is None:
                found = [Difference(shown, _camel(attr), da, db)]
            else:
                found = diff(shown, sa, sb) or [Difference(shown, _camel(attr), da, db)]
            self._seen[key] = found
        return found


#: ``(last run before, first run after)`` of the step into point ``g`` (in the points
#: change detection saw).
Between = Callable[[int], "tuple[list[str], list[Difference]]"]


def explain(
    found: Sequence[ChangePoint],
    count: int,
    between: Between,
    first_run: Callable[[int], RunRow],
    verdict_of: Callable[[ChangePoint, int], Any],
) -> tuple[Change, ...]:
    """Changes from change points, each with its causes.

    A step the test located (``tested``) is placed at a recorded change within one point
    of it: the test locates a step to about a point, the records say where the code moved.
    A step the verdict found between two neighbours is where it is: nothing moves it.

    Args:
        found: The change points, by index among ``count`` points.
        count: How many points the detection saw.
        between: The causes and differences of the step into a point.
        first_run: The first run of a point (the change's run and commit).
        verdict_of: The verdict of a change point placed at a point.
    """
    out = []
    for i, cp in enumerate(found):
        lo = found[i - 1].index if i else 0
        hi = found[i + 1].index if i + 1 < len(found) else count
        at = cp.index
        causes, differences = between(at)
        if not causes and cp.tested:
            # The recorded change nearest the located step, within one point of it.
            for j in (at - 1, at + 1):
                if lo < j < hi:
                    c, d = between(j)
                    if c:
                        at, causes, differences = j, c, d
                        break
        row = first_run(at)
        out.append(
            Change(
                index=at,
                ratio=cp.ratio,
                direction="slower" if cp.ratio > 1 else "faster",
                cause=causes[0] if causes else "unexplained",
                differences=tuple(differences),
                before_ns=cp.before,
                after_ns=cp.after,
                p_value=cp.p_value,
                tested=cp.tested,
                run=row.name,
                commit=row.commit,
                verdict=verdict_of(cp, at),
                causes=tuple(causes) or ("unexplained",),
            )
        )
    return tuple(out)


#: (workload, protocol, GPU, commit) -> (series index, point index) of each point there.
Sweeps = dict[tuple[str, str, str, str], list[tuple[int, int]]]
#: The point ``j`` of series ``i``, pooled, and the environment digest it was measured in.
PointOf = Callable[[int, int], "tuple[Point, str]"]
#: The points either side of a change of series ``i`` (None when it has no commit).
StepOf = Callable[[int, Change], "tuple[int, int] | None"]


def _ratio_point(a: Point, b: Point) -> Point:
    """``a / b`` as a point: its p20-p80 spread the root of the sum of their squares."""
    ratio = a.median / b.median
    sa, sb = a.spread, b.spread
    if sa is None or sb is None:
        return Point(median=ratio, runs=min(a.runs, b.runs))
    half = 0.5 * math.hypot(sa, sb)
    return Point(
        median=ratio,
        p20=ratio * math.exp(-half),
        p80=ratio * math.exp(half),
        runs=min(a.runs, b.runs),
        # Known no better than its less sampled side (pool counts the fewest).
        samples=fewest_samples((a.samples, b.samples)),
    )


def moved_together(
    mine: tuple[Point, Point], theirs: tuple[Point, Point], noise: Noise | None = None
) -> bool:
    """Whether two lines moved by the same factor between two commits: the other line
    changed, by the one verdict (``noise`` its own), the same way as this one, and the
    ratio of one to the other did not change."""
    moved = judge(theirs[0], theirs[1], threshold=DEFAULT_THRESHOLD, noise=noise)
    if not moved.changed:
        return False
    if (theirs[1].median > theirs[0].median) != (mine[1].median > mine[0].median):
        return False
    before = _ratio_point(mine[0], theirs[0])
    after = _ratio_point(mine[1], theirs[1])
    return not judge(before, after, threshold=DEFAULT_THRESHOLD).changed


def shared_shifts(
    found: Sequence[SeriesHistory],
    sweeps: Sweeps,
    point_of: PointOf,
    step_of: StepOf,
    label: Callable[[SeriesHistory], str],
) -> list[SeriesHistory]:
    """The histories with each change that every co-measured line shared re-caused.

    A change of series S into commit C is a shared shift when at least one other
    implementation measured the same workload under the same protocol on the same GPU at
    C and at S's previous commit, in the same environment as S at each, and every such
    line moved by the same factor within the noise. Its cause becomes ``environment``
    (the other causes follow in :attr:`Change.causes`) and :attr:`Change.moved_with`
    names those lines.

    Args:
        found: The histories, by index.
        sweeps: Every point, by (workload, protocol, GPU, commit).
        point_of: A point of a series, pooled, with its environment digest.
        step_of: The points either side of a change.
        label: How a co-measured line is named.
    """
    out = []
    for i, h in enumerate(found):
        changes = list(h.changes)
        for c, change in enumerate(changes):
            step = step_of(i, change)
            if step is None:
                continue
            with_it = _co_measured(i, h, step, sweeps, point_of)
            if not with_it:
                continue
            mine = (point_of(i, step[0])[0], point_of(i, step[1])[0])
            moved = [
                label(found[j]) for j, theirs in with_it if moved_together(mine, theirs, h.noise)
            ]
            if len(moved) < len(with_it):
                continue
            causes = (
                "environment",
                *(x for x in change.causes if x not in ("environment", "unexplained")),
            )
            changes[c] = attrs.evolve(
                change, cause="environment", causes=causes, moved_with=tuple(sorted(moved))
            )
        out.append(attrs.evolve(h, changes=tuple(changes)) if changes != list(h.changes) else h)
    return out


def _co_measured(
    i: int, h: SeriesHistory, step: tuple[int, int], sweeps: Sweeps, point_of: PointOf
) -> list[tuple[int, tuple[Point, Point]]]:
    """The other lines measured with series ``i`` at both commits of a step, in the same
    environment as it at each: their index and their two points."""
    key = h.key
    points = h.series.points
    before, after = step
    b_commit = points[h.groups[before][0]].commit
    a_commit = points[h.groups[after][0]].commit
    if b_commit is None or a_commit is None:
        return []
    b_env, a_env = point_of(i, before)[1], point_of(i, after)[1]
    place = (key.workload_digest, key.protocol_digest, key.hardware)
    earlier: dict[int, Point] = {}
    for j, g in sweeps.get((*place, b_commit), ()):
        point, env = point_of(j, g)
        if j != i and env == b_env:
            earlier[j] = point
    pairs = []
    for j, g in sweeps.get((*place, a_commit), ()):
        point, env = point_of(j, g)
        if j == i or env != a_env or j not in earlier:
            continue
        pairs.append((j, (earlier[j], point)))
    return pairs
