"""The rule that calls a timing noisy: its p20-p80 spread is too wide to trust the median.

One rule for the harness (an annotation on the run), the summary table, compare, report
and history, so a run is called noisy in the same words everywhere.
"""

from __future__ import annotations

import math

__all__ = ["NOISY_ANNOTATION", "NOISY_SPREAD", "is_noisy", "spread_ratio"]

#: A run is noisy when p80 / p20 of its latency exceeds this (the middle 60% of its
#: samples span more than 10%): a step smaller than that spread cannot be told from noise.
NOISY_SPREAD = 1.10

#: The run annotation the harness sets on a noisy run; its value is the ratio, e.g. ``"1.42"``.
NOISY_ANNOTATION = "kernelindex.dev/noisy"


def spread_ratio(p20: float | None, p80: float | None) -> float | None:
    """``p80 / p20``; None when either is missing, not finite, or p20 is not positive."""
    if p20 is None or p80 is None:
        return None
    if not (math.isfinite(p20) and math.isfinite(p80)) or p20 <= 0:
        return None
    return p80 / p20


def is_noisy(p20: float | None, p80: float | None) -> bool:
    """Whether the spread passes :data:`NOISY_SPREAD` (False when it cannot be computed)."""
    ratio = spread_ratio(p20, p80)
    return ratio is not None and ratio > NOISY_SPREAD
