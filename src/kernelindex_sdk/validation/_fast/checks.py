"""The semantic checks' verdict on a common run in one pass: True only where the table
(:data:`~kernelindex_sdk.validation._semantic.CHECKS`) reports nothing.

The table runs a dozen small functions, each walking the run's measurements and making
pointers as it goes: for a valid run nothing is reported, and that work is lost (with
the table, a record's reading takes twice the instructions for a Liger bundle and 1.4
times for a harness bundle; benchmarks/results/reader_fast_parts.json). :func:`passes`
answers the same question for the common run in one walk, and says False for anything
else (a failed run, a protocol that timed nothing with a timing, a mean, two units for
one metric, any value it would have to report): the caller then runs the table, which
says what is wrong.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Final

from ..._base.units import UNITS
from .. import _semantic
from .._semantic import _METRIC_DIMENSION, _ORDER, _is_instant

__all__ = ["passes"]

# The table :func:`passes` answers for, in its order. Should a check be added, removed or
# reordered, passes() turns itself off (always False) until it is taught the change.
# What a check's function says inside it is held to the table by
# tests/validation/test_fast_checks.py (test_passes_only_where_the_table_finds_nothing).
_TAUGHT: Final = (
    _semantic.check_observed_at,
    _semantic.check_commit_time,
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
# Below 2^52 an integer, and any difference of two, is an exact double.
_WHOLE_LIMIT: Final = 2**52


def passes(run: dict[str, Any], protocol: dict[str, Any] | None) -> bool:
    """Whether no check of the table reports a problem for a schema-valid run (and the
    protocol its input carries); False also where this pass cannot tell. True also
    means that the store's rules (``_store_rules.STORE_CHECKS``) report nothing: every
    latency it takes is an integer of nanoseconds in [0, 2^52) (:func:`_values_pass`).

    Args:
        run: The run document (schema-valid).
        protocol: The protocol document of the same input, or None.
    """
    if _semantic.CHECKS != _TAUGHT:
        return False
    spec = run["spec"]
    # check_failed_run's rules (no measurement with a dimension) are left to the table.
    if spec["status"] == "failed":
        return False
    untimed = protocol is not None and protocol["spec"]["measurement"]["timer"] == "not_applicable"
    return (
        _is_instant(spec["observedAt"])
        and _commit_time_passes(run)
        and _protocol_passes(spec, protocol, untimed)
        and _values_pass(spec, untimed)
        and _sampled_ranges_pass(spec)
    )


def _commit_time_passes(run: dict[str, Any]) -> bool:
    """check_commit_time: a commit-time annotation, where there is one, is an instant."""
    notes = run["metadata"].get("annotations")
    when = None if notes is None else notes.get(_semantic.COMMIT_TIME)
    return when is None or _is_instant(when)


def _protocol_passes(spec: dict[str, Any], protocol: dict[str, Any] | None, untimed: bool) -> bool:
    """check_protocol_timer (its timing part), check_min_samples and
    check_primary_statistic."""
    timing = spec.get("timing")
    if timing is None:
        return True
    if timing["primaryStatistic"] not in timing["latencyNs"]:
        return False
    if protocol is None:
        return True
    method = protocol["spec"]["measurement"]
    least, samples = method.get("minSamples"), timing.get("samples")
    return (
        not untimed
        and (least is None or samples is None or samples >= least)
        and method["primaryStatistic"] == timing["primaryStatistic"]
    )


def _values_pass(spec: dict[str, Any], untimed: bool) -> bool:
    """check_units, check_protocol_timer's durations, check_quantile_order,
    check_mean_in_range, check_median_matches and check_duplicate_measurements, for
    values that compare as plain numbers; False to leave any other run to the table.

    Plain: within each metric every statistic has a rank of its own (no mean or stddev,
    none given twice, no measured median beside latencyNs'); latencies, in latencyNs or
    measured, are integers of nanoseconds in [0, 2^52); each other metric's measurements
    share one unit and one number type. For such values the table's ``_below(a, b)`` is
    ``a < b``: latencyNs' half-nanosecond slack cannot separate two integers, and within
    one unit and type the exact values keep the order of the written ones. So the order
    of quantiles asks only that each metric's values, by rank, never fall; duplicates,
    means and medians have nothing to report; units ask each measurement for a
    dimension its metric takes and a finite value in the base unit; and where nothing
    was timed (``untimed``), for no duration.
    """
    # (metric, rank, value) of every value: sorted, each metric's values by rank.
    found: list[tuple[str, int, Any]] = []
    timing = spec.get("timing")
    if timing is not None:
        for statistic, value in timing["latencyNs"].items():
            rank = _ORDER.get(statistic)
            if rank is None or not _whole_ns(value):
                return False
            found.append(("latency", rank, value))
    # Each metric's unit and number type, other than latency's.
    forms: dict[str, tuple[str, type]] = {}
    for m in spec.get("measurements", ()):
        metric, unit, value = m["metric"], m["unit"], m["value"]
        rank = _ORDER.get(m["statistic"])
        if rank is None:
            return False
        if metric == "latency":
            # Whole nanoseconds; a duration, so none where nothing was timed.
            if untimed or unit != "ns" or not _whole_ns(value):
                return False
        else:
            dimension, factor = UNITS[unit]
            form = (unit, type(value))
            if (
                dimension != _METRIC_DIMENSION.get(metric, dimension)
                or forms.setdefault(metric, form) != form
                or not _finite(value, factor)
                or (untimed and dimension == "time")
            ):
                return False
        found.append((metric, rank, value))
    found.sort()
    # Within a metric, each rank once and no value below the one of the rank before.
    for low, high in itertools.pairwise(found):
        if low[0] == high[0] and (low[1] == high[1] or low[2] > high[2]):
            return False
    return True


def _whole_ns(value: Any) -> bool:
    return type(value) is int and 0 <= value < _WHOLE_LIMIT


def _finite(value: Any, factor: int) -> bool:
    """Whether ``value * factor`` is a finite double (an integer from 2^52 on: not known
    here, left to the table)."""
    if type(value) is float:
        return math.isfinite(value * factor)
    return bool(-_WHOLE_LIMIT < value < _WHOLE_LIMIT)


def _sampled_ranges_pass(spec: dict[str, Any]) -> bool:
    """check_sampled_ranges: each sampled range of the conditions is ordered."""
    conditions = spec.get("conditions")
    if conditions is None:
        return True
    for value in conditions.get("gpu", {}).values():
        if isinstance(value, dict) and not value["min"] <= value["median"] <= value["max"]:
            return False
    return True
