"""The rules a record must also meet to go into the store: what its columns can hold.

The store keeps each run's median, p20 and p80 latency in nanoseconds as 64-bit integers
(both SQLite and PostgreSQL). A valid record may give any finite number (1e19 ns is one),
so these are rules of the store, not of the format: ``validate`` and ``compare`` take
such a record, ``ingest`` refuses it. The record reader applies them for the store
(``RecordReader(for_store=True)``), after every other check, as the semantic checks are
applied: one function each, taking a :class:`~._semantic.RecordView`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Final

from .._base.units import NS_PER
from ..errors import Problem
from ._semantic import Check, RecordView

__all__ = ["NS_MAX", "NS_MIN", "STORE_CHECKS"]

#: The range of the store's latency columns (64-bit signed integers).
NS_MIN: Final = -(2**63)
NS_MAX: Final = 2**63 - 1
# The statistics the store keeps a column of.
_STORED: Final = ("median", "p20", "p80")


def _stored_latency(spec: dict[str, Any], statistic: str) -> float | None:
    """A statistic's latency as the store takes it: ``timing.latencyNs``'s, else that of
    the first latency measurement of the statistic in a time unit, rounded to the ns."""
    value: float | None = spec.get("timing", {}).get("latencyNs", {}).get(statistic)
    if value is not None:
        return value
    for m in spec.get("measurements", ()):
        if m["metric"] == "latency" and m["statistic"] == statistic and m["unit"] in NS_PER:
            ns = m["value"] * NS_PER[m["unit"]]
            return ns if isinstance(ns, int) else (round(ns) if math.isfinite(ns) else ns)
    return None


def check_latency_columns(view: RecordView) -> Iterator[Problem]:
    """Each latency the store keeps (median, p20, p80) fits its 64-bit integer column."""
    if view.run is None:
        return
    for statistic in _STORED:
        value = _stored_latency(view.run["spec"], statistic)
        if value is not None and not NS_MIN <= value <= NS_MAX:
            yield Problem(
                pointer=f"{view.run_at}/spec",
                message=(
                    f"latency {statistic} of {value} ns does not fit the store's 64-bit"
                    f" integer column (at most {NS_MAX} ns)"
                ),
                code="store-range",
            )


#: Checks run for the store, after the semantic checks, on every valid record.
STORE_CHECKS: Final[tuple[Check, ...]] = (check_latency_columns,)
