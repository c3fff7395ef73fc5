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

import operator
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Final

import attrs

from .._analysis.runs import without_collection
from ._rows import RunRow

__all__ = ["Series", "SeriesKey", "group_series", "series_key", "utc_instant"]

#: Sort entries (when, observedAt, name, row) on all but the row.
_ORDER: Final = operator.itemgetter(0, 1, 2)
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


@attrs.frozen
class Series:
    """The runs of one series.

    Attributes:
        key: What its runs share.
        points: The runs with a latency median (not failed), oldest first.
        failed: Runs that failed, oldest first: they carry no timing, so they are
            listed beside the points and never enter change-point detection.
    """

    key: SeriesKey
    points: tuple[RunRow, ...]
    failed: tuple[RunRow, ...] = ()

    @property
    def first(self) -> RunRow:
        """A run of the series (the first point, else the first failure), for its labels."""
        return self.points[0] if self.points else self.failed[0]


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


@without_collection
def group_series(rows: Iterable[RunRow]) -> list[Series]:
    """The series of ``rows``, each in commit order.

    Series are sorted by workload, implementation and GPU, then by when they start: the
    series of one measurement under successive protocols follow each other.

    Runs that did not fail but carry no positive latency median (a memory-only
    measurement, or a median of 0 ns, which no ratio can compare) are in no series.

    Args:
        rows: Runs as the store's columns give them, in any order.

    Returns:
        One :class:`Series` per key, its points and failures in order.
    """
    instant = _Instants()
    # Plain tuples while grouping: a SeriesKey is built once per series, not per run.
    timed: dict[tuple[str, ...], list[tuple[str, str, str, RunRow]]] = {}
    failed: dict[tuple[str, ...], list[tuple[str, str, str, RunRow]]] = {}
    for row in rows:
        if row.status == "failed":
            bucket = failed
        elif row.median_ns is None or not row.median_ns > 0:
            continue
        else:
            bucket = timed
        observed = row.observed_at
        if len(observed) != _OBSERVED_LENGTH or observed[-1] != "Z":
            observed = instant(observed)
        when = row.commit_time
        when = observed if when is None else instant(when)
        provider = row.provider
        hardware = row.hardware
        parts = (
            row.workload_digest,
            row.implementation_digest if provider is None else provider,
            row.entry_point or "",
            row.protocol_digest,
            row.environment_digest if hardware is None else hardware,
        )
        entries = bucket.get(parts)
        if entries is None:
            entries = bucket[parts] = []
        entries.append((when, observed, row.name, row))
    found = []
    for grouped in timed.keys() | failed.keys():
        key = SeriesKey(*grouped)
        points = sorted(timed.get(grouped, ()), key=_ORDER)
        failures = sorted(failed.get(grouped, ()), key=_ORDER)
        start = (points or failures)[0][0]
        # One measurement's series under successive protocols stand together, oldest first.
        order = (key.workload_digest, key.provider, key.entry_point, key.hardware, start, key)
        found.append(
            (order, Series(key, tuple(e[3] for e in points), tuple(e[3] for e in failures)))
        )
    found.sort(key=lambda e: e[0])
    return [series for _, series in found]
