"""Checks JSON Schema cannot express, one small function each, registered in a table.

Each check takes a RecordView of an already schema-valid document and yields
problems; validation.py runs them in table order.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any, Final

import attrs
import rfc8785

from . import digest as _digest
from ._messages import short_repr
from .errors import Problem

__all__ = ["CHECKS", "DIGEST_CHECK", "DigestComparison", "RecordView", "digest_comparisons"]

# Rank of each statistic in a distribution; mean and stddev have none.
_ORDER: Final = {
    s: i
    for i, s in enumerate(
        ["min", "p5", "p10", "p20", "p25", "median", "p75", "p80", "p90", "p95", "p99", "max"]
    )
}
# Unit -> (dimension, factor to the dimension's base unit).
_UNITS: Final = {
    "ns": ("time", 1),
    "us": ("time", 10**3),
    "ms": ("time", 10**6),
    "s": ("time", 10**9),
    "B": ("bytes", 1),
    "KiB": ("bytes", 2**10),
    "MiB": ("bytes", 2**20),
    "GiB": ("bytes", 2**30),
    "B/s": ("bytes/s", 1),
    "GB/s": ("bytes/s", 10**9),
    "TB/s": ("bytes/s", 10**12),
    "FLOP/s": ("flop/s", 1),
    "GFLOP/s": ("flop/s", 10**9),
    "TFLOP/s": ("flop/s", 10**12),
    "1": ("one", 1),
}
# The unit each dimension's values are compared in.
_BASE_UNIT: Final = {"time": "ns", "bytes": "B", "bytes/s": "B/s", "flop/s": "FLOP/s", "one": "1"}
_TIME_UNITS: Final = ", ".join(repr(u) for u, (dim, _) in _UNITS.items() if dim == "time")
# The dimension a metric's unit must have, for metrics whose name fixes it.
_METRIC_DIMENSION: Final = {"latency": "time"}
# Year, month, day, hour, minute, second (the milliseconds need no check).
_OBSERVED_AT: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.[0-9]{3}Z"
)


@attrs.frozen
class RecordView:
    """The documents of one input and where each sits (JSON pointer prefix)."""

    run: dict[str, Any] | None = None
    protocol: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None
    run_at: str = "/run"
    protocol_at: str = "/protocol"
    environment_at: str = "/environment"


Check = Callable[[RecordView], Iterator[Problem]]


def _scaled(value: float, factor: int) -> float:
    """``value * factor`` as a float; infinite when no double can hold it (1e308 s in ns,
    or an integer of 400 digits)."""
    try:
        return float(value) * factor
    except OverflowError:
        return math.inf


def _statistics(run: dict[str, Any]) -> Iterator[tuple[str, str, float, str | int]]:
    """Yield (metric, statistic, value in base units, where) of a run's measured values.

    ``where`` is the latencyNs key, or the index in measurements: the pointer is built
    only for a problem (this runs on every record).
    """
    spec = run["spec"]
    for stat, value in spec.get("timing", {}).get("latencyNs", {}).items():
        yield "latency", stat, value, stat
    for i, m in enumerate(spec.get("measurements", ())):
        dimension, factor = _UNITS[m["unit"]]
        if _METRIC_DIMENSION.get(m["metric"], dimension) != dimension:
            continue  # check_units reports it; comparing GiB with ns means nothing
        value = _scaled(m["value"], factor)
        if math.isfinite(value):
            yield m["metric"], m["statistic"], value, i


def _statistic_pointer(run_at: str, where: str | int) -> str:
    if isinstance(where, int):
        return f"{run_at}/spec/measurements/{where}"
    return f"{run_at}/spec/timing/latencyNs/{where}"


def check_quantile_order(view: RecordView) -> Iterator[Problem]:
    """Quantiles of one metric are ordered: min <= p20 <= median <= p80 <= max, and so on."""
    if view.run is None:
        return
    groups: dict[str, list[tuple[int, str, float, str | int]]] = {}
    for metric, stat, value, where in _statistics(view.run):
        rank = _ORDER.get(stat)
        if rank is not None:
            groups.setdefault(metric, []).append((rank, stat, value, where))
    for metric, entries in groups.items():
        if len(entries) < 2:
            continue
        entries.sort(key=_order)
        for (rank_a, stat_a, a, _), (rank_b, stat_b, b, where_b) in itertools.pairwise(entries):
            if rank_a < rank_b and b < a:
                yield Problem(
                    pointer=_statistic_pointer(view.run_at, where_b),
                    message=f"{metric} {stat_b} is below its {stat_a}; quantiles must be ordered",
                    code="quantile-order",
                )


def _order(entry: tuple[int, str, float, str | int]) -> tuple[int, str, float, str]:
    """Rank, statistic, value, then the pointer's text order: measurements/10 before
    measurements/2, both before timing/latencyNs (ties report as they always have)."""
    rank, stat, value, where = entry
    return rank, stat, value, f"m{where}" if isinstance(where, int) else f"t{where}"


def check_median_matches(view: RecordView) -> Iterator[Problem]:
    """timing.latencyNs.median equals a median latency measurement when both exist."""
    if view.run is None:
        return
    spec = view.run["spec"]
    median = spec.get("timing", {}).get("latencyNs", {}).get("median")
    if median is None:
        return
    for i, m in enumerate(spec.get("measurements", ())):
        if m["metric"] == "latency" and m["statistic"] == "median":
            dimension, factor = _UNITS[m["unit"]]
            in_ns = _scaled(m["value"], factor)
            if dimension == "time" and math.isfinite(in_ns) and round(in_ns) != median:
                yield Problem(
                    pointer=f"{view.run_at}/spec/measurements/{i}/value",
                    message=(
                        f"median latency {m['value']} {m['unit']} differs from "
                        f"timing.latencyNs.median {median} ns"
                    ),
                    code="median-mismatch",
                )


def check_primary_statistic(view: RecordView) -> Iterator[Problem]:
    """The primary statistic is present in latencyNs and agrees with the protocol's."""
    if view.run is None:
        return
    timing = view.run["spec"].get("timing")
    if timing is None:
        return
    primary = timing["primaryStatistic"]
    if primary not in timing["latencyNs"]:
        yield Problem(
            pointer=f"{view.run_at}/spec/timing/latencyNs",
            message=f"primaryStatistic is {primary!r} but latencyNs has no {primary!r}",
            code="primary-statistic",
        )
    if view.protocol is not None:
        declared = view.protocol["spec"]["measurement"]["primaryStatistic"]
        if declared != primary:
            yield Problem(
                pointer=f"{view.run_at}/spec/timing/primaryStatistic",
                message=f"run says {primary!r}, its protocol says {declared!r}",
                code="primary-statistic",
            )


def check_duplicate_measurements(view: RecordView) -> Iterator[Problem]:
    """No two measurements of a run share metric and statistic."""
    if view.run is None:
        return
    seen: dict[tuple[str, str], int] = {}
    for i, m in enumerate(view.run["spec"].get("measurements", ())):
        key = (m["metric"], m["statistic"])
        if key in seen:
            yield Problem(
                pointer=f"{view.run_at}/spec/measurements/{i}",
                message=f"{key[0]} {key[1]} already given at measurements/{seen[key]}",
                code="duplicate-measurement",
            )
        else:
            seen[key] = i


def check_units(view: RecordView) -> Iterator[Problem]:
    """A latency is measured in a time unit; a value converts to its base unit (ns, B...)
    without overflowing a double."""
    if view.run is None:
        return
    for i, m in enumerate(view.run["spec"].get("measurements", ())):
        dimension, factor = _UNITS[m["unit"]]
        expected = _METRIC_DIMENSION.get(m["metric"])
        if expected is not None and dimension != expected:
            yield Problem(
                pointer=f"{view.run_at}/spec/measurements/{i}/unit",
                message=(
                    f"{m['metric']} {m['statistic']} is in {m['unit']!r}, a unit of {dimension};"
                    f" expected a time unit: {_TIME_UNITS}"
                ),
                code="unit-dimension",
            )
        elif not math.isfinite(_scaled(m["value"], factor)):
            base = _BASE_UNIT[dimension]
            yield Problem(
                pointer=f"{view.run_at}/spec/measurements/{i}/value",
                message=(
                    f"{short_repr(m['value'])} {m['unit']} overflows a double"
                    + (f" when converted to {base}" if base != m["unit"] else "")
                ),
                code="out-of-range",
            )


def check_failed_run(view: RecordView) -> Iterator[Problem]:
    """A failed run has no valid timing, so it carries no latency measurement."""
    if view.run is None or view.run["spec"]["status"] != "failed":
        return
    for i, m in enumerate(view.run["spec"].get("measurements", ())):
        if m["metric"] == "latency" or _UNITS[m["unit"]][0] == "time":
            yield Problem(
                pointer=f"{view.run_at}/spec/measurements/{i}",
                message=(
                    f"a failed run has no valid timing, but carries {m['metric']}"
                    f" {m['statistic']} = {short_repr(m['value'])} {m['unit']}"
                ),
                code="failed-with-timing",
            )


def _is_instant(text: str) -> bool:
    match = _OBSERVED_AT.fullmatch(text)
    if match is None:
        return False
    try:
        # The constructor checks the calendar (no 2026-02-30, no year 0) and is much
        # quicker than strptime.
        year, month, day, hour, minute, second = map(int, match.groups())
        datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
    except ValueError:
        return False
    return True


def check_observed_at(view: RecordView) -> Iterator[Problem]:
    """observedAt is a real instant in the published form, from year 0001 on.

    The schema's pattern checks the shape and its format the calendar, where the
    validator asserts formats; this check makes both hold whatever validator ran, so
    that validation and loading into a ``datetime`` agree.
    """
    if view.run is None:
        return
    text = view.run["spec"]["observedAt"]
    if not _is_instant(text):
        yield Problem(
            pointer=f"{view.run_at}/spec/observedAt",
            message=(
                "expected a UTC timestamp like '2026-05-27T17:14:29.000Z' on a real date"
                f" from year 0001, got {short_repr(text)}"
            ),
            code="observed-at",
        )


@attrs.frozen
class DigestComparison:
    """A digest a run declares beside the one computed from the content the input carries.

    ``computed`` is ``None`` when the input lacks the digested object, and ``error``
    says why it could not be computed when canonicalization failed.
    """

    field: str
    declared: str
    computed: str | None
    source: str | None
    error: str | None = None

    @property
    def matches(self) -> bool | None:
        """Whether declared and computed agree; ``None`` when nothing was computed."""
        return None if self.computed is None else self.computed == self.declared


def digest_comparisons(view: RecordView) -> Iterator[DigestComparison]:
    """Compare each of the run's four digests with the content the input carries."""
    if view.run is None:
        return
    spec = view.run["spec"]
    sources = {
        "protocolDigest": (view.protocol and view.protocol["spec"], f"{view.protocol_at}/spec"),
        "environmentDigest": (
            view.environment and view.environment["spec"],
            f"{view.environment_at}/spec",
        ),
        "workloadDigest": (spec.get("workload"), f"{view.run_at}/spec/workload"),
        "implementationDigest": (spec.get("implementation"), f"{view.run_at}/spec/implementation"),
    }
    for field, (content, where) in sources.items():
        if content is None:
            yield DigestComparison(field=field, declared=spec[field], computed=None, source=None)
            continue
        try:
            computed = _digest.digest(_digest.DIGEST_KINDS[field], content)
        except rfc8785.CanonicalizationError as err:
            yield DigestComparison(
                field=field, declared=spec[field], computed=None, source=where, error=str(err)
            )
            continue
        yield DigestComparison(field=field, declared=spec[field], computed=computed, source=where)


def check_digests(view: RecordView) -> Iterator[Problem]:
    """Every digest whose object the input carries matches the one recomputed from it."""
    for c in digest_comparisons(view):
        if c.error is not None:
            yield Problem(
                pointer=c.source or "",
                message=f"cannot canonicalize for {c.field}: {c.error}",
                code="digest",
            )
        elif c.matches is False:
            yield Problem(
                pointer=f"{view.run_at}/spec/{c.field}",
                message=(
                    f"declared {short_repr(c.declared)}, computed {c.computed!r} from {c.source}"
                ),
                code="digest",
            )


#: Checks run on every schema-valid document, in order.
# Non-finite numbers are no check here: validation refuses them before any check runs
# (_jsontext.scan_value), wherever they are.
CHECKS: Final[tuple[Check, ...]] = (
    check_observed_at,
    check_units,
    check_failed_run,
    check_primary_statistic,
    check_quantile_order,
    check_median_matches,
    check_duplicate_measurements,
)
#: Run when digests are to be verified.
DIGEST_CHECK: Final[Check] = check_digests
