"""Checks JSON Schema cannot express, one small function each, registered in a table.

Each check takes a RecordView of an already schema-valid document and yields
problems; validation.py runs them in table order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from datetime import date
from fractions import Fraction
from typing import Any, Final, NamedTuple

import attrs
import rfc8785

from .. import digest as _digest
from .._base.display import short_repr
from .._base.units import BASE_UNIT, UNITS
from ..errors import Problem
from ..provenance import COMMIT_TIME

__all__ = [
    "CHECKS",
    "COMMIT_TIME",
    "DIGEST_CHECK",
    "DigestComparison",
    "RecordView",
    "digest_comparisons",
    "own_digests",
]

# Rank of each statistic in a distribution; mean and stddev have none.
_ORDER: Final = {
    s: i
    for i, s in enumerate(
        ["min", "p5", "p10", "p20", "p25", "median", "p75", "p80", "p90", "p95", "p99", "max"]
    )
}
# The dimension a metric's unit must have, for the metrics the schema names (common.json
# Metric: "latency, memory, bandwidth or throughput"); throughput counts operations per
# second, the only such units being FLOP/s and its multiples.
_METRIC_DIMENSION: Final = {
    "latency": "time",
    "memory": "bytes",
    "bandwidth": "bytes/s",
    "throughput": "flop/s",
}
# How a message names a dimension before "unit".
_ADJECTIVE: Final = {"one": "dimensionless"}
# latencyNs holds integers, so each is its value rounded to the nanosecond: compared
# with a measurement, it may be off by half a nanosecond.
_ROUNDING: Final = Fraction(1, 2)
# The published UTC form: its date (checked against the calendar by _is_instant), then
# a time of day in range.
_INSTANT: Final = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z"
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


def _units_of(dimension: str) -> str:
    return ", ".join(repr(u) for u, (dim, _) in UNITS.items() if dim == dimension)


def _dimensions(run: dict[str, Any]) -> dict[str, str]:
    """Each metric's dimension: the schema's for the metrics it names, otherwise that of
    the metric's first measurement."""
    found = dict(_METRIC_DIMENSION)
    for m in run["spec"].get("measurements", ()):
        found.setdefault(m["metric"], UNITS[m["unit"]][0])
    return found


def _exact(value: float, factor: int) -> float | Fraction:
    # The decimal the document wrote (repr is the shortest text reading back as the
    # double), times the factor: no rounding, so equal values in ms and ns compare equal.
    # In the base unit already, the value is its own exact form (Python compares ints
    # and floats exactly).
    if factor == 1:
        return value
    return (Fraction(repr(value)) if isinstance(value, float) else Fraction(value)) * factor


class _Value(NamedTuple):
    """One statistic of a metric, in its dimension's base unit."""

    statistic: str
    approx: float  # raw * factor in floating point: within 2^-52 relative of the exact value
    raw: float  # as the document writes it, in unit
    factor: int
    unit: str
    pointer: str
    rounded: bool  # from latencyNs: an integer rounded to the nanosecond

    @property
    def value(self) -> float | Fraction:
        """The exact value in the base unit (see :func:`_exact`)."""
        return _exact(self.raw, self.factor)


def _shown(v: _Value) -> str:
    return f"{short_repr(v.raw)} {v.unit}"


def _below(a: _Value, b: _Value) -> bool:
    """Whether ``a`` is certainly below ``b``: by more than the rounding of latencyNs
    when exactly one of them comes from it (both rounded alike keep their order)."""
    # Floating point decides wherever its error (2^-52 relative per product) cannot
    # matter; values too close to call are compared exactly.
    slack = 0.5 if a.rounded != b.rounded else 0.0
    gap = b.approx - a.approx - slack
    margin = 1e-12 * (abs(a.approx) + abs(b.approx) + 1.0)
    if gap > margin:
        return True
    if gap < -margin:
        return False
    av, bv = a.value, b.value
    if a.rounded == b.rounded:
        return av < bv
    if type(av) is int and type(bv) is int:
        return 2 * av + 1 < 2 * bv  # the same, without Fraction's cost
    return Fraction(av) + _ROUNDING < Fraction(bv)


def _statistics(run: dict[str, Any], run_at: str) -> dict[str, list[_Value]]:
    """Each metric's measured values, in its base unit; a measurement in a unit of
    another dimension than its metric's (comparing GiB with ns means nothing), or one
    that overflows a double in the base unit, is left out: check_units reports both."""
    spec = run["spec"]
    dimensions = _dimensions(run)
    found: dict[str, list[_Value]] = {}
    for stat, value in spec.get("timing", {}).get("latencyNs", {}).items():
        found.setdefault("latency", []).append(
            _Value(stat, value, value, 1, "ns", f"{run_at}/spec/timing/latencyNs/{stat}", True)
        )
    for i, m in enumerate(spec.get("measurements", ())):
        dimension, factor = UNITS[m["unit"]]
        if dimensions[m["metric"]] != dimension or not math.isfinite(_scaled(m["value"], factor)):
            continue  # check_units reports either: one problem, not one more per statistic
        found.setdefault(m["metric"], []).append(
            _Value(
                m["statistic"],
                _scaled(m["value"], factor),
                m["value"],
                factor,
                m["unit"],
                f"{run_at}/spec/measurements/{i}",
                False,
            )
        )
    return found


def check_quantile_order(view: RecordView) -> Iterator[Problem]:
    """Quantiles of one metric are ordered: min <= p20 <= median <= p80 <= max, and so on,
    compared exactly in the base unit (2.29 ms equals 2290000 ns), a latencyNs value
    (rounded to the nanosecond) within half a nanosecond of a measurement."""
    if view.run is None:
        return
    for metric, values in _statistics(view.run, view.run_at).items():
        ranked: dict[int, list[_Value]] = {}
        for v in values:
            if v.statistic in _ORDER:
                ranked.setdefault(_ORDER[v.statistic], []).append(v)
        # Every value of a rank is compared with the largest value of all lower ranks, so
        # a statistic given twice (latencyNs and a measurement) is checked both times.
        top: _Value | None = None
        for rank in sorted(ranked):
            group = ranked[rank]
            for b in group:
                if top is not None and _below(b, top):
                    yield Problem(
                        pointer=b.pointer,
                        message=(
                            f"{metric} {b.statistic} is below its {top.statistic};"
                            " quantiles must be ordered"
                        ),
                        code="quantile-order",
                    )
            for a in group:
                if top is None or _below(top, a):
                    top = a


def check_mean_in_range(view: RecordView) -> Iterator[Problem]:
    """A metric's mean lies between its min and its max, when they are given; compared
    as quantiles are.

    A mean of samples is never below the smallest nor above the largest.
    """
    if view.run is None:
        return
    spec = view.run["spec"]
    if "mean" not in spec.get("timing", {}).get("latencyNs", {}) and not any(
        m["statistic"] == "mean" for m in spec.get("measurements", ())
    ):
        return  # the common case, decided without converting any value
    for metric, values in _statistics(view.run, view.run_at).items():
        means = [v for v in values if v.statistic == "mean"]
        lows = [v for v in values if v.statistic == "min"]
        highs = [v for v in values if v.statistic == "max"]
        for mean in means:
            low = next((v for v in lows if _below(mean, v)), None)
            high = next((v for v in highs if _below(v, mean)), None)
            for bound, side in ((low, "below its min"), (high, "above its max")):
                if bound is not None:
                    yield Problem(
                        pointer=mean.pointer,
                        message=(
                            f"{metric} mean {_shown(mean)} is {side} {_shown(bound)};"
                            " a mean lies between min and max"
                        ),
                        code="mean-range",
                    )


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
            dimension, factor = UNITS[m["unit"]]
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
    """Each measurement's unit has its metric's dimension (latency a time, memory bytes,
    bandwidth bytes per second, throughput FLOP per second, any other metric that of its
    first measurement), and its value converts to the base unit (ns, B, B/s, FLOP/s)
    without overflowing a double.

    The units: time ns, us, ms, s; bytes B, KiB, MiB, GiB; B/s, GB/s, TB/s; FLOP/s,
    GFLOP/s, TFLOP/s. One dimension per metric keeps its statistics comparable: a
    bandwidth median in GB/s with a p80 in GiB, or a custom metric's median in ms with
    its p20 in B, is a contradiction, reported here rather than as a quantile order.
    """
    if view.run is None:
        return
    dimensions = _dimensions(view.run)
    first: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(view.run["spec"].get("measurements", ())):
        dimension, factor = UNITS[m["unit"]]
        expected = dimensions[m["metric"]]
        earlier = first.setdefault(m["metric"], m)
        if dimension != expected:
            because = (
                ""
                if m["metric"] in _METRIC_DIMENSION
                else f" as its {earlier['statistic']} in {earlier['unit']!r} is"
            )
            yield Problem(
                pointer=f"{view.run_at}/spec/measurements/{i}/unit",
                message=(
                    f"{m['metric']} {m['statistic']} is in {m['unit']!r}, a unit of {dimension};"
                    f" expected a {_ADJECTIVE.get(expected, expected)} unit{because}:"
                    f" {_units_of(expected)}"
                ),
                code="unit-dimension",
            )
        elif not math.isfinite(_scaled(m["value"], factor)):
            base = BASE_UNIT[dimension]
            yield Problem(
                pointer=f"{view.run_at}/spec/measurements/{i}/value",
                message=(
                    f"{short_repr(m['value'])} {m['unit']} overflows a double"
                    + (f" when converted to {base}" if base != m["unit"] else "")
                ),
                code="out-of-range",
            )


def check_failed_run(view: RecordView) -> Iterator[Problem]:
    """A failed run carries no measurement with a dimension (a duration, size, bandwidth
    or throughput, whatever its metric): the schema says it has no valid measurement.

    The schema's RunStatus: failed means "no valid measurement; failure says why"; the
    schema itself forbids timing. A dimensionless value (unit ``'1'``) stays allowed:
    the harness records there the errors that made a mismatch fail, evidence of the
    failure as correctness is, not a measurement of the run.
    """
    if view.run is None or view.run["spec"]["status"] != "failed":
        return
    for i, m in enumerate(view.run["spec"].get("measurements", ())):
        if UNITS[m["unit"]][0] != "one":
            yield Problem(
                pointer=f"{view.run_at}/spec/measurements/{i}",
                message=(
                    f"a failed run has no valid measurement, but carries {m['metric']}"
                    f" {m['statistic']} = {short_repr(m['value'])} {m['unit']}"
                ),
                code="failed-with-measurement",
            )


def check_protocol_timer(view: RecordView) -> Iterator[Problem]:
    """Where the input carries the protocol, a timer of ``not_applicable`` (nothing was
    timed, says the schema) means the run has no timing and no measurement in a time unit.

    Only the timing is reported when there is one: its latency measurements follow
    from it.
    """
    if view.run is None or view.protocol is None:
        return
    if view.protocol["spec"]["measurement"]["timer"] != "not_applicable":
        return
    because = "its protocol's timer is 'not_applicable' (nothing was timed)"
    spec = view.run["spec"]
    if "timing" in spec:
        yield Problem(
            pointer=f"{view.run_at}/spec/timing",
            message=f"the run has timing, but {because}",
            code="timer-not-applicable",
        )
        return  # its latency measurements follow from it: one problem, not one each
    for i, m in enumerate(spec.get("measurements", ())):
        if UNITS[m["unit"]][0] == "time":
            yield Problem(
                pointer=f"{view.run_at}/spec/measurements/{i}",
                message=(
                    f"{m['metric']} {m['statistic']} is a duration"
                    f" ({short_repr(m['value'])} {m['unit']}), but {because}"
                ),
                code="timer-not-applicable",
            )


def check_min_samples(view: RecordView) -> Iterator[Problem]:
    """Where the input carries the protocol, timing.samples is at least its minSamples
    (the "fewest timed samples behind any statistic", says the schema)."""
    if view.run is None or view.protocol is None:
        return
    least = view.protocol["spec"]["measurement"].get("minSamples")
    samples = view.run["spec"].get("timing", {}).get("samples")
    if least is not None and samples is not None and samples < least:
        yield Problem(
            pointer=f"{view.run_at}/spec/timing/samples",
            message=f"{samples} timed samples, below its protocol's minSamples {least}",
            code="min-samples",
        )


def check_sampled_ranges(view: RecordView) -> Iterator[Problem]:
    """Each sampled range of the run's conditions is ordered: min <= median <= max."""
    if view.run is None:
        return
    gpu = view.run["spec"].get("conditions", {}).get("gpu", {})
    for name, value in gpu.items():
        if isinstance(value, dict) and {"min", "median", "max"} <= value.keys():
            low, middle, high = value["min"], value["median"], value["max"]
            if not low <= middle <= high:
                yield Problem(
                    pointer=f"{view.run_at}/spec/conditions/gpu/{name}",
                    message=(
                        "expected min <= median <= max, got"
                        f" {short_repr(low)}, {short_repr(middle)}, {short_repr(high)}"
                    ),
                    code="sampled-range",
                )


def _is_instant(text: str) -> bool:
    """Whether ``text`` is a real instant in the published form (``observedAt``'s): its
    date a day of the calendar from year 0001 (no 2026-02-30), its time of day in range."""
    match = _INSTANT.fullmatch(text)
    if match is None:
        return False
    try:
        date.fromisoformat(match.group(1))
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


def check_commit_time(view: RecordView) -> Iterator[Problem]:
    """The run's ``kernelindex.dev/commit-time`` annotation, where it has one, is a real
    instant in observedAt's published form (docs/format.md): history orders a series by
    it as text, so every record of every reader must agree on one form."""
    if view.run is None:
        return
    when = (view.run["metadata"].get("annotations") or {}).get(COMMIT_TIME)
    if when is not None and not _is_instant(when):
        key = COMMIT_TIME.replace("~", "~0").replace("/", "~1")
        yield Problem(
            pointer=f"{view.run_at}/metadata/annotations/{key}",
            message=(
                "expected an RFC 3339 timestamp in UTC as published"
                f" (e.g. '2026-05-27T17:14:29.000Z'), got {short_repr(when)}"
            ),
            code="commit-time",
        )


@attrs.frozen
class DigestComparison:
    """A digest a run declares beside the one computed from the content the input carries.

    ``computed`` is ``None`` when the input lacks the digested object, and ``error``
    says why it could not be computed when canonicalization failed. ``declared`` is
    ``None`` for a standalone protocol or environment: nothing declares its digest, the
    computed one is the document's own.
    """

    field: str
    declared: str | None
    computed: str | None
    source: str | None
    error: str | None = None

    @property
    def matches(self) -> bool | None:
        """Whether declared and computed agree; ``None`` when either is missing."""
        if self.computed is None or self.declared is None:
            return None
        return self.computed == self.declared


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


def own_digests(view: RecordView) -> Iterator[DigestComparison]:
    """The digest of a standalone protocol's or environment's spec (nothing declares it)."""
    documents = (
        ("protocolDigest", view.protocol, view.protocol_at),
        ("environmentDigest", view.environment, view.environment_at),
    )
    for field, document, at in documents:
        if document is None:
            continue
        try:
            computed = _digest.digest(_digest.DIGEST_KINDS[field], document["spec"])
        except rfc8785.CanonicalizationError as err:
            yield DigestComparison(
                field=field, declared=None, computed=None, source=f"{at}/spec", error=str(err)
            )
            continue
        yield DigestComparison(field=field, declared=None, computed=computed, source=f"{at}/spec")


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
    check_commit_time,
    check_units,
    check_failed_run,
    check_protocol_timer,
    check_min_samples,
    check_primary_statistic,
    check_quantile_order,
    check_mean_in_range,
    check_median_matches,
    check_duplicate_measurements,
    check_sampled_ranges,
)
#: Run when digests are to be verified.
DIGEST_CHECK: Final[Check] = check_digests
