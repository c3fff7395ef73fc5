"""The semantic checks of a common record in one pass: True only where every check passes.

:data:`_semantic.CHECKS` runs eleven small functions, each walking the run's measurements
and building pointers as it goes; for a valid record nothing is reported, and most of
that work is lost. :func:`passes` answers the same question (does any check report a
problem?) in one walk, for the records compare and validate read by the thousand. It
only ever says "no problem": where it is not sure (a failed run, a protocol that timed
nothing with a timing or a duration, a measurement in a unit of the wrong dimension, any
value it would have to report), it returns False and the caller runs the table, which
says what is wrong.

It follows the table as it stands: should a check be added to, removed from or reordered
in :data:`_semantic.CHECKS`, :func:`passes` turns itself off (always False) until it is
taught. A change inside a check's function it cannot see: tests/test_quick_checks.py pins
each check's source, and holds the two to the same answers on generated records.
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any, Final

from .._base.units import UNITS
from . import _semantic
from ._semantic import _METRIC_DIMENSION, _ORDER, _scaled, _Value

__all__ = ["passes"]

# The checks :func:`passes` decides, in the table's order.
_COVERED: Final = (
    _semantic.check_observed_at,
    _semantic.check_units,
    _semantic.check_failed_run,
    _semantic.check_protocol_timer,
    _semantic.check_min_samples,
    _semantic.check_primary_statistic,
    _semantic.check_quantile_order,
    _semantic.check_mean_in_range,
    _semantic.check_median_matches,
    _semantic.check_duplicate_measurements,
    _semantic.check_sampled_ranges,
)
# The table as imported, when it is the one taught here (else None).
_IMPORTED: Final = _semantic.CHECKS if _semantic.CHECKS == _COVERED else None
# Years of the proleptic Gregorian calendar with a 29 February: the multiples of 4 but
# not of 100 (the last two digits a multiple of 4 other than 00), and the multiples of
# 400 (a century a multiple of 4, other than 00: there is no year 0).
_LEAP_YEAR: Final = (
    r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
)
# observedAt on a real date from year 0001 and with the time of day in range (hour < 24,
# minute and second < 60): what datetime() accepts, in one match, with no date cache to
# slice, hash and look up (tests/test_quick_checks.py holds it to _semantic._is_instant
# on every year's edge days and every month and day of the kinds of year).
_INSTANT: Final = re.compile(
    r"(?:(?!0000)[0-9]{4}-"
    r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    rf"|{_LEAP_YEAR}-02-29)"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z"
)
_NOT_RANKED: Final = len(_ORDER)
_INSTANT_MATCH: Final = _INSTANT.fullmatch
_P20: Final = _ORDER["p20"]
_P80: Final = _ORDER["p80"]
_MEDIAN: Final = _ORDER["median"]
_isfinite: Final = math.isfinite


def _instant(text: str) -> bool:
    """``_semantic._is_instant(text)``."""
    return _INSTANT_MATCH(text) is not None


def passes(  # noqa: PLR0911, PLR0912, PLR0915
    run: dict[str, Any], protocol: dict[str, Any] | None
) -> bool:
    """Whether no check of :data:`_semantic.CHECKS` reports a problem for a schema-valid
    run (and the protocol its input carries); False also where it cannot tell quickly.

    Args:
        run: The run document (schema-valid).
        protocol: The protocol document of the same input, or None.

    Returns:
        True only where the table would report nothing.
    """
    # One body, calling only _rising (for a metric's several values) on the common path:
    # a call costs as much as a check.
    checks = _semantic.CHECKS
    # The taught table as imported is the same object: compared item by item only once
    # replaced.
    if checks is not _IMPORTED and checks != _COVERED:
        return False
    spec = run["spec"]
    # A failed run's rules are left to the table, and so are a run's conditions.
    if spec["status"] == "failed" or "conditions" in spec:
        return False
    # check_observed_at, as _instant.
    if _INSTANT_MATCH(spec["observedAt"]) is None:
        return False
    # check_protocol_timer, check_min_samples and check_primary_statistic.
    timing = spec.get("timing")
    untimed = False
    if protocol is not None:
        method = protocol["spec"]["measurement"]
        if method["timer"] == "not_applicable":
            # Nothing was timed (Liger's memory rows): fine only without a timing, and
            # (below) without a duration.
            if timing is not None:
                return False
            untimed = True
        elif timing is not None:
            least, samples = method.get("minSamples"), timing.get("samples")
            if least is not None and samples is not None and samples < least:
                return False
            if method["primaryStatistic"] != timing["primaryStatistic"]:
                return False
    # The values: _plain_values' rules for the common layouts (each metric's
    # measurements side by side), else _plain_values itself, then _values.
    ranked: list[tuple[int, Any]] = []
    if timing is None:
        latency = _NO_LATENCY
    else:
        latency = timing["latencyNs"]
        if timing["primaryStatistic"] not in latency:
            return False
        for statistic, value in latency.items():
            rank = _ORDER.get(statistic)
            if rank is None or type(value) is not int or not 0 <= value < _WHOLE_LIMIT:
                return _general(spec, latency, untimed)
            ranked.append((rank, value))
    # The metric other than latency being read, its unit, number type and values; the
    # metrics read before it.
    group = group_unit = group_kind = group_value = None
    group_rank = 0
    # The values of the metric being read, once it has a second; the metrics before it.
    items: list[tuple[int, Any]] | None = None
    done: set[str] | None = None
    for m in spec.get("measurements", ()):
        metric, statistic, value = m["metric"], m["statistic"], m["value"]
        # The common statistics by comparison: a dictionary would first hash the
        # freshly parsed string.
        if statistic == "p20":
            rank = _P20
        elif statistic == "p80":
            rank = _P80
        elif statistic == "median":
            rank = _MEDIAN
        else:
            found = _ORDER.get(statistic)
            if found is None:
                return _general(spec, latency, untimed)
            rank = found
        if metric == "latency":
            if untimed or m["unit"] != "ns" or type(value) is not int:
                return _general(spec, latency, untimed)
            if not 0 <= value < _WHOLE_LIMIT:
                return _general(spec, latency, untimed)
            ranked.append((rank, value))
            continue
        unit = m["unit"]
        dimension, factor = UNITS[unit]
        kind = type(value)
        if kind is float:
            if not _isfinite(value * factor):
                return _general(spec, latency, untimed)
        # Below 2^52 an integer times any factor is a finite double.
        elif kind is not int or not -_WHOLE_LIMIT < value < _WHOLE_LIMIT:
            return _general(spec, latency, untimed)
        if metric == group:
            # One unit and one number type per metric: then the written values keep
            # the exact values' order (see _plain_values).
            if unit != group_unit or kind is not group_kind:
                return _general(spec, latency, untimed)
            if items is None:
                items = [(group_rank, group_value), (rank, value)]
            else:
                items.append((rank, value))
            continue
        if dimension != _METRIC_DIMENSION.get(metric, dimension) or (
            untimed and dimension == "time"
        ):
            return _general(spec, latency, untimed)
        if group is not None:
            if items is not None:
                if not _rising(items):
                    return _general(spec, latency, untimed)
                items = None
            if done is None:
                done = {group}
            else:
                done.add(group)
            # A metric met again after another: its values are not side by side.
            if metric in done:
                return _general(spec, latency, untimed)
        group, group_unit, group_kind, group_rank, group_value = metric, unit, kind, rank, value
    if items is not None and not _rising(items):
        return _general(spec, latency, untimed)
    if len(ranked) > 1 and not _rising(ranked):
        return _general(spec, latency, untimed)
    return True


def _general(spec: dict[str, Any], latency: dict[str, Any], untimed: bool) -> bool:
    """The value checks of :func:`passes` for any layout: check_units,
    check_protocol_timer's durations, check_quantile_order, check_mean_in_range,
    check_median_matches and check_duplicate_measurements."""
    if _plain_values(spec, latency, untimed):
        return True
    values = _values(spec, latency, untimed=untimed)
    return values is not None and all(
        len(found) == 1 or _ordered(found) for found in values.values()
    )


_NO_LATENCY: Final[dict[str, Any]] = {}
# Below 2^52 an integer, its sum with 0.5 and every difference of two are exact doubles.
_WHOLE_LIMIT: Final = 2**52


# One pass with nothing called that need not be: on this path a call costs as much as
# a check.
def _plain_values(  # noqa: PLR0911
    spec: dict[str, Any], latency: dict[str, Any], untimed: bool
) -> bool:
    """True where the value checks certainly pass for the common run, whose values compare
    as plain numbers; False to leave the record to :func:`_values`.

    Within each metric every statistic has its own rank (no mean or stddev, none given
    twice, no measured median beside latencyNs'); latencies, in latencyNs or measured,
    are integers of nanoseconds in [0, 2^52); each other metric's measurements share one
    unit and one number type. For such values ``_semantic._below(a, b)`` is ``a < b``:
    latencyNs' half-nanosecond slack cannot separate two integers (its floating point
    decides only by more than its own error), and within one unit and type the exact
    values keep the order of the written ones (distinct doubles have their shortest
    decimals in the same order). So check_quantile_order asks only that each metric's
    values, in the order of their ranks, never fall; check_duplicate_measurements,
    check_mean_in_range and check_median_matches have nothing to report; check_units
    asks a dimension and a finite value of each measurement, check_protocol_timer
    (``untimed``) no duration.
    """
    ranked = []
    for statistic, value in latency.items():
        rank = _ORDER.get(statistic)
        if rank is None or type(value) is not int or not 0 <= value < _WHOLE_LIMIT:
            return False
        ranked.append((rank, value))
    others: list[dict[str, Any]] | None = None
    for m in spec.get("measurements", ()):
        metric, value = m["metric"], m["value"]
        rank = _ORDER.get(m["statistic"])
        if rank is None:
            return False
        if metric == "latency":
            if untimed or m["unit"] != "ns" or type(value) is not int:
                return False
            if not 0 <= value < _WHOLE_LIMIT:
                return False
            ranked.append((rank, value))
            continue
        dimension, factor = UNITS[m["unit"]]
        scaled = value * factor if type(value) is float else _scaled(value, factor)
        if (
            dimension != _METRIC_DIMENSION.get(metric, dimension)
            or (untimed and dimension == "time")
            or not math.isfinite(scaled)
        ):
            return False
        if others is None:
            others = [m]
        else:
            others.append(m)
    if len(ranked) > 1 and not _rising(ranked):
        return False
    # Other metrics given once each (the common case) have no order to keep.
    return (
        others is None or len({m["metric"] for m in others}) == len(others) or _plain_others(others)
    )


def _plain_others(measurements: list[dict[str, Any]]) -> bool:
    """:func:`_plain_values` for several measurements of metrics other than latency,
    each of a ranked statistic, a dimension its metric takes and a finite value."""
    groups: dict[str, list[tuple[int, Any]]] = {}
    forms: dict[str, tuple[str, type]] = {}
    for m in measurements:
        metric, value = m["metric"], m["value"]
        form = (m["unit"], type(value))
        if forms.setdefault(metric, form) != form:
            return False
        groups.setdefault(metric, []).append((_ORDER[m["statistic"]], value))
    return all(len(found) == 1 or _rising(found) for found in groups.values())


def _rising(found: list[tuple[int, Any]]) -> bool:
    """Whether the values, in the order of their ranks (each rank once), never fall."""
    if len(found) == 3:
        # The common case (p20, median and p80) ordered by three comparisons of ranks,
        # not by a sort of tuples.
        (a, x), (b, y), (c, z) = found
        if a > b:
            a, b, x, y = b, a, y, x
        if b > c:
            b, c, y, z = c, b, z, y
            if a > b:
                a, b, x, y = b, a, y, x
        return a < b < c and not x > y and not y > z
    found.sort()
    low = found[0]
    for high in found[1:]:
        if low[0] == high[0] or low[1] > high[1]:
            return False
        low = high
    return True


# One value of a metric, as check_quantile_order sees it: (rank, approx, rounded, raw,
# factor, statistic, unit); see _semantic._Value. Plain tuples: a few per record.
_Item = tuple[int, float, bool, float, int, str, str]


def _values(
    spec: dict[str, Any], latency: dict[str, Any], *, untimed: bool = False
) -> dict[str, list[_Item]] | None:
    """Each metric's values as check_quantile_order ranks them; None where check_units,
    check_median_matches or check_duplicate_measurements would report, or (``untimed``:
    the protocol timed nothing) check_protocol_timer would report a duration."""
    values: dict[str, list[_Item]] = {}
    if latency:
        values["latency"] = [
            (_ORDER.get(s, _NOT_RANKED), v, True, v, 1, s, "ns") for s, v in latency.items()
        ]
    median = latency.get("median")
    dimensions: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for m in spec.get("measurements", ()):
        metric, statistic, unit, value = m["metric"], m["statistic"], m["unit"], m["value"]
        key = (metric, statistic)
        dimension, factor = UNITS[unit]
        expected = _METRIC_DIMENSION.get(metric) or dimensions.setdefault(metric, dimension)
        scaled = _scaled(value, factor)
        if (
            key in seen
            or (untimed and dimension == "time")
            or dimension != expected
            or not math.isfinite(scaled)
            or (
                statistic == "median"
                and metric == "latency"
                and median is not None
                and round(scaled) != median
            )
        ):
            return None
        seen.add(key)
        item = (_ORDER.get(statistic, _NOT_RANKED), scaled, False, value, factor, statistic, unit)
        found = values.get(metric)
        if found is None:
            values[metric] = [item]
        else:
            found.append(item)
    return values


def _below(a: _Item, b: _Item) -> bool:
    """``_semantic._below`` of the two values; floating point where it decides."""
    slack = 0.5 if a[2] != b[2] else 0.0
    gap = b[1] - a[1] - slack
    margin = 1e-12 * (abs(a[1]) + abs(b[1]) + 1.0)
    if gap > margin:
        return True
    if gap < -margin:
        return False
    if a[2] == b[2] and a[4] == b[4]:
        # Ties (Liger's p20 = median = p80): in one unit and rounded alike, the written
        # values are in the exact values' order (distinct doubles have their shortest
        # decimals in the same order), so no Fraction is needed.
        return a[3] < b[3]
    return _semantic._below(_value(a), _value(b))


def _value(item: _Item) -> _Value:
    _, approx, rounded, raw, factor, statistic, unit = item
    return _Value(statistic, approx, raw, factor, unit, "", rounded)


def _ordered(found: list[_Item]) -> bool:
    """check_quantile_order and check_mean_in_range for one metric's values."""
    found.sort(key=_RANK)
    # lower: the largest value of the ranks below the current one; top: of those so far.
    lower = top = None
    current = -1
    for v in found:
        rank = v[0]
        if rank == _NOT_RANKED:
            break
        if rank != current:
            lower, current = top, rank
        if lower is not None and _below(v, lower):
            return False
        if top is None or _below(top, v):
            top = v
    else:
        return True
    # The statistics without a rank (mean, stddev) sort last; a mean lies in [min, max].
    for mean in found:
        if mean[5] != "mean":
            continue
        for v in found:
            if v[5] == "min" and _below(mean, v):
                return False
            if v[5] == "max" and _below(v, mean):
                return False
    return True


_RANK: Final = operator.itemgetter(0)
