"""Series: the stored runs of one measurement over time, in commit order.

A series is the runs that share a workload digest, an implementation's provider and entry
point, a protocol digest and the environment's hardware (the GPU). A new version of the
implementation (its code, packages or config) stays in its series, and so does a new
driver, CUDA or torch on the same GPU: those are what a change point's cause names. A new
protocol starts a new series: the method changed, nothing regressed.

Points are ordered by commit time, or by observedAt where a run has no commit time (both
compared as instants in UTC), then observedAt, then name. Runs read from the store's
columns (:class:`RunRow`): no record text is parsed.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import Any, Final

import attrs

from .._base.display import printable
from ..errors import ArgumentError
from ..verdict import Point
from ._rows import RunRow

__all__ = [
    "SKIP_REASONS",
    "Series",
    "SeriesKey",
    "degraded_column",
    "group_series",
    "replicate_groups",
    "row_degraded",
    "row_point",
    "series_key",
    "skip_notice",
    "skip_reason",
    "skip_text",
    "utc_instant",
]

# observedAt's published form: 24 characters, UTC, milliseconds ("...T17:14:29.123Z").
_OBSERVED_LENGTH: Final = 24


@attrs.frozen(order=True)
class SeriesKey:
    """What the runs of one series share.

    Attributes:
        workload_digest: The workload digest.
        provider: ``implementation.provider``; for a run that carries no implementation
            object, its implementation digest stands here (and every version is a series).
        entry_point: ``implementation.entryPoint`` ("" when absent).
        protocol_digest: The protocol digest.
        hardware: The environment's ``hardware.product``; for a run without one, its
            environment digest stands here.
    """

    workload_digest: str
    provider: str
    entry_point: str
    protocol_digest: str
    hardware: str


def series_key(row: RunRow) -> SeriesKey:
    """The series ``row`` belongs to."""
    return SeriesKey(
        row.workload_digest,
        row.provider if row.provider is not None else row.implementation_digest,
        row.entry_point or "",
        row.protocol_digest,
        row.hardware if row.hardware is not None else row.environment_digest,
    )


#: Why a run of a series is not one of its points (:attr:`Series.skipped`).
SKIP_REASONS: Final = {
    "no-median": "no latency median recorded",
    "zero-median": "a latency median of 0 ns, which no ratio can compare",
    "negative-median": "a negative latency median",
}


def skip_reason(row: RunRow) -> str | None:
    """Why ``row`` (a run that did not fail) cannot be a point, or None when it can.

    Returns:
        A key of :data:`SKIP_REASONS`, or None.
    """
    median = row.median_ns
    if median is None:
        return "no-median"
    if median > 0:
        return None
    return "zero-median" if median == 0 else "negative-median"


def skip_text(row: RunRow) -> str:
    """Why ``row``, one of a series' skipped runs, is not a point: a value of
    :data:`SKIP_REASONS`.

    Raises:
        ArgumentError: when ``row`` has a positive latency median (it is a point: only a
            :class:`Series` built by hand holds one among its skipped runs).
    """
    reason = skip_reason(row)
    if reason is None:
        raise ArgumentError(
            argument="skipped",
            reason=(
                f"run {row.name!r} has a positive latency median ({row.median_ns!r} ns):"
                " expected a run that cannot be a point"
            ),
        )
    return SKIP_REASONS[reason]


def skip_notice(row: RunRow, series: str) -> str:
    """The line a command writes for a run left out of its series' points: the run's
    name, the series (``series``, as the command names it) and why.

    Raises:
        ArgumentError: as :func:`skip_text`.
    """
    # The names are record text: control characters escaped.
    return f"run {row.name!r} left out of series {printable(series)}: {skip_text(row)}"


@attrs.frozen
class Series:
    """The runs of one series.

    Attributes:
        key: What its runs share.
        points: The runs with a latency median (not failed), oldest first.
        failed: Runs that failed, oldest first: they carry no timing, so they are
            listed beside the points and never enter change-point detection.
        skipped: Runs that did not fail but cannot be points (no latency median, or one
            of 0 ns: no ratio compares it), oldest first: reported, never plotted or
            tested; :func:`skip_reason` says why.
    """

    key: SeriesKey
    points: tuple[RunRow, ...]
    failed: tuple[RunRow, ...] = ()
    skipped: tuple[RunRow, ...] = ()

    @property
    def first(self) -> RunRow:
        """A run of the series (the first point, else the first failure or skipped run),
        for its labels."""
        return (self.points or self.failed or self.skipped)[0]

    def groups(self) -> list[tuple[int, int]]:
        """The points as replicate groups: ``(start, stop)`` of each point's runs in
        :attr:`points` (see :func:`replicate_groups`)."""
        return replicate_groups(self.points)

    def on_branch(self, branch: str) -> Series:
        """The series' runs on ``branch``; the whole series when none is on it (a store
        filled without ``kernelindex.dev/branch``, or from one branch only)."""
        every = (*self.points, *self.failed, *self.skipped)
        if all(row.branch == branch for row in every):
            return self
        if not any(row.branch == branch for row in every):
            return self
        return Series(
            self.key,
            tuple(r for r in self.points if r.branch == branch),
            tuple(r for r in self.failed if r.branch == branch),
            tuple(r for r in self.skipped if r.branch == branch),
        )

    def runs(self) -> list[RunRow]:
        """Every run of the series (points, failures and skipped runs) in its order."""
        if not self.failed and not self.skipped:
            return list(self.points)
        return sorted((*self.points, *self.failed, *self.skipped), key=_order_key())


def row_degraded(row: RunRow) -> str | None:
    """Why ``row``'s timing is unfit to compare (``RunRow.degraded``, filled at ingest by
    :func:`kernelindex_sdk.conditions.degraded_reason`), or None."""
    return row.degraded


def row_point(row: RunRow) -> Point:
    """One stored run as the verdict reads a point: its median, p20 and p80 in ns, its
    sample count and its degraded mark."""
    return Point(
        median=float(row.median_ns or 0),
        p20=row.p20_ns,
        p80=row.p80_ns,
        samples=row.samples,
        degraded=row_degraded(row),
    )


def degraded_column(rows: Sequence[RunRow]) -> list[str | None]:
    """:func:`row_degraded` of each of ``rows``, without a Python step per row where the
    store's rows cannot carry the field."""
    if "degraded" not in RunRow._fields and all(type(r) is RunRow for r in rows):
        # A RunRow is a tuple with no attributes beyond its fields.
        return [None] * len(rows)
    return list(map(row_degraded, rows))


_GROUP_KEY: Final = operator.itemgetter(
    *map(RunRow._fields.index, ("commit", "implementation_digest", "environment_digest"))
)


def replicate_groups(points: Sequence[RunRow]) -> list[tuple[int, int]]:
    """Where a series' points (in order) are replicates of one point: runs next to each
    other at one commit with the same implementation and environment digests (DESIGN.md,
    "Replicates"). A run without a commit is a point of its own.

    Returns:
        ``(start, stop)`` of each point's runs, in order, covering every position once.
    """
    n = len(points)
    commits = [row.commit for row in points]
    if None not in commits and len(set(commits)) == n:
        # Every run its own commit (most histories): no group to look for.
        return [(i, i + 1) for i in range(n)]
    found: list[tuple[int, int]] = []
    start = 0
    for key, members in itertools.groupby(points, _GROUP_KEY):
        size = sum(1 for _ in members)
        if key[0] is None:
            found.extend((i, i + 1) for i in range(start, start + size))
        else:
            found.append((start, start + size))
        start += size
    return found


class _Instants:
    """Timestamps as UTC text that sorts as time, each distinct string parsed once."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        if len(text) == _OBSERVED_LENGTH and text.endswith("Z"):
            return text
        found = self._seen.get(text)
        if found is None:
            found = self._seen[text] = _utc(text)
        return found


def utc_instant(text: str) -> str:
    """An RFC 3339 timestamp as UTC text in observedAt's form, which sorts as time."""
    if len(text) == _OBSERVED_LENGTH and text.endswith("Z"):
        return text
    return _utc(text)


def _utc(text: str) -> str:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        # Not a timestamp: sorts as it reads, after nothing in particular.
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_AT: Final = RunRow._fields.index
_STATUS: Final = _AT("status")
_MEDIAN: Final = _AT("median_ns")
# What a run's series key is made of, read by position in C: grouping 10,000 runs by
# it costs a fraction of building a key in Python (or reading fields by name) for each.
_KEY_FIELDS: Final = tuple(
    map(
        _AT,
        (
            "workload_digest",
            "implementation_digest",
            "protocol_digest",
            "environment_digest",
            "provider",
            "entry_point",
            "hardware",
        ),
    )
)
_RAW_KEY: Final = operator.itemgetter(*_KEY_FIELDS)
_COMMIT_TIME: Final = _AT("commit_time")
_OBSERVED: Final = _AT("observed_at")
# The order keys of runs whose times are all in observedAt's UTC form (which sorts as
# time): (commit time, observedAt, name) when every run has a commit time, and when none
# has, (observedAt, name), the same order as (observedAt, observedAt, name).
_NAME: Final = operator.itemgetter(_AT("name"))
_OBSERVED_AT: Final = operator.itemgetter(_OBSERVED)
_COMMIT_TIME_AT: Final = operator.itemgetter(_COMMIT_TIME)


def group_series(rows: Iterable[RunRow]) -> list[Series]:
    """The series of ``rows``, each in commit order.

    Series are sorted by workload, implementation and GPU, then by when they start: the
    series of one measurement under successive protocols follow each other.

    Runs that did not fail but carry no positive latency median (a median of 0 ns,
    which no ratio can compare, or none at all) are not points: they are the series'
    :attr:`Series.skipped`, reported beside it. A series none of whose runs has a
    latency median (a memory benchmark's) is no latency series: it is not returned.

    Args:
        rows: Runs as the store's columns give them, in any order.

    Returns:
        One :class:`Series` per key, its points, failures and skipped runs in order.
    """
    rows = list(rows)
    merged: dict[tuple[str, ...], list[RunRow]] = {}
    columns = tuple(zip(*rows, strict=True))
    # A history of one series (its rows all share a key) is grouped by its fields alone,
    # in C; their columns serve the series' checks below.
    whole = bool(rows) and all(columns[at].count(columns[at][0]) == len(rows) for at in _KEY_FIELDS)
    for (
        workload,
        implementation,
        protocol,
        environment,
        provider,
        entry,
        hardware,
    ), bucket in ((_RAW_KEY(rows[0]), rows),) if whole else _by_raw_key(rows):
        parts = (
            workload,
            implementation if provider is None else provider,
            entry or "",
            protocol,
            environment if hardware is None else hardware,
        )
        known = merged.get(parts)
        if known is None:
            merged[parts] = bucket
        else:
            known.extend(bucket)
    order = _order_key()
    found = []
    for grouped, members in merged.items():
        timed, failures, skipped, fields = _split(members, columns if whole else None)
        if not timed and not failures and all(row.median_ns is None for row in skipped):
            # No run of it measured latency (a memory benchmark's): not a latency series.
            continue
        _sort(timed, fields, order)
        failures.sort(key=order)
        skipped.sort(key=order)
        key = SeriesKey(*grouped)
        start = order((timed or failures or skipped)[0])[0]
        # One measurement's series under successive protocols stand together, oldest first.
        sort_by = (key.workload_digest, key.provider, key.entry_point, key.hardware, start, key)
        found.append((sort_by, Series(key, tuple(timed), tuple(failures), tuple(skipped))))
    found.sort(key=lambda e: e[0])
    return [series for _, series in found]


def _by_raw_key(rows: list[RunRow]) -> Iterable[tuple[tuple[Any, ...], list[RunRow]]]:
    """``rows`` by the fields their series key is made of, in order of first arrival."""
    raw: dict[tuple[Any, ...], list[RunRow]] = {}
    # Runs of one series mostly come together (a store's rows of one series, in time
    # order): each stretch of equal keys is looked up once.
    for raw_key, stretch in itertools.groupby(rows, _RAW_KEY):
        bucket = raw.get(raw_key)
        if bucket is None:
            bucket = raw[raw_key] = []
        bucket.extend(stretch)
    return raw.items()


def _split(
    members: list[RunRow], columns: Sequence[Sequence[Any]] | None
) -> tuple[list[RunRow], list[RunRow], list[RunRow], Sequence[Sequence[Any]] | None]:
    """``members`` (whose fields are ``columns``, when given) as (points, failures,
    skipped runs), each in the order given, and the points' fields when they are
    ``members`` (None otherwise)."""
    if columns is None:
        columns = tuple(zip(*members, strict=True))
    medians = columns[_MEDIAN]
    # Mostly every run is a point: checked in C, before a Python step per run.
    if "failed" not in columns[_STATUS] and set(map(type, medians)) == {int} and min(medians) > 0:
        return members, [], [], columns
    timed: list[RunRow] = []
    failures: list[RunRow] = []
    skipped: list[RunRow] = []
    for row in members:
        if row.status == "failed":
            failures.append(row)
        else:
            median = row.median_ns
            (timed if median is not None and median > 0 else skipped).append(row)
    return timed, failures, skipped, None


def _in_utc_form(times: Sequence[Any]) -> bool:
    """Whether every one of ``times`` is a str in observedAt's UTC form (24 characters,
    ending in ``Z``): such texts sort as the instants they name."""
    if set(map(type, times)) != {str} or set(map(len, times)) != {_OBSERVED_LENGTH}:
        return False
    return "".join(times)[_OBSERVED_LENGTH - 1 :: _OBSERVED_LENGTH] == "Z" * len(times)


def _sort(
    runs: list[RunRow],
    columns: Sequence[Sequence[Any]] | None,
    order: Callable[[RunRow], tuple[str, str, str]],
) -> None:
    """Sort ``runs`` (whose fields are ``columns``, when given) by ``order``: by their
    fields alone, in C, where those give the same order."""
    if not runs:
        return
    if columns is None:
        columns = tuple(zip(*runs, strict=True))
    if _in_utc_form(columns[_OBSERVED]):
        commit_times = columns[_COMMIT_TIME]
        # Stable sorts by one field each, the last the most significant: the order of
        # the tuple of them, without a tuple made and compared for each run.
        if commit_times.count(None) == len(commit_times):
            runs.sort(key=_NAME)
            runs.sort(key=_OBSERVED_AT)
            return
        if None not in commit_times and _in_utc_form(commit_times):
            runs.sort(key=_NAME)
            runs.sort(key=_OBSERVED_AT)
            runs.sort(key=_COMMIT_TIME_AT)
            return
    runs.sort(key=order)


def _order_key() -> Callable[[RunRow], tuple[str, str, str]]:
    """A run's place in its series: (commit time, else observedAt; observedAt; name),
    the times as UTC text that sorts as time (each distinct one parsed once)."""
    instant = _Instants()

    def order(row: RunRow) -> tuple[str, str, str]:
        observed = row.observed_at
        if len(observed) != _OBSERVED_LENGTH or observed[-1] != "Z":
            observed = instant(observed)
        when = row.commit_time
        return (observed if when is None else instant(when), observed, row.name)

    return order
