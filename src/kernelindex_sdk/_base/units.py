"""The one table of units: each unit a measurement may carry, its dimension and scale.

The semantic and quick checks, runs, compare, tables and the store all read it here.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BASE_UNIT", "NS_PER", "RATE_DIMENSIONS", "TIME_UNITS", "UNITS"]

#: Unit -> (dimension, factor to the dimension's base unit): every unit a measurement
#: may carry (the schema's Unit).
UNITS: Final = {
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
#: The unit each dimension's values are compared in.
BASE_UNIT: Final = {"time": "ns", "bytes": "B", "bytes/s": "B/s", "flop/s": "FLOP/s", "one": "1"}
#: Nanoseconds per time unit.
NS_PER: Final = {unit: factor for unit, (dimension, factor) in UNITS.items() if dimension == "time"}
#: The time units from the largest down, with nanoseconds per unit (for display).
TIME_UNITS: Final = tuple(
    (unit, float(factor)) for unit, factor in sorted(NS_PER.items(), key=lambda item: -item[1])
)
#: Dimensions whose larger values are better (rates), unlike times and sizes.
RATE_DIMENSIONS: Final = ("bytes/s", "flop/s")
