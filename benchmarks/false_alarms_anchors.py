"""Run one anchor change-point detector over series read as JSON; print its change points.

Runs inside the anchor's own virtual environment (never the package's, never the shared
one), driven by benchmarks/false_alarms.py:

    .venv-otava/bin/python benchmarks/false_alarms_anchors.py otava < series.json
    .venv-asv/bin/python benchmarks/false_alarms_anchors.py asv < series.json

Input: ``{"series": [[median, ...], ...]}`` (each series oldest first). Output:
``{"detector", "version", "parameters", "changes": [[[index, direction], ...], ...]}``,
each index the position of the first point after a step, direction ``slower`` (the
level after is higher) or ``faster``. Detectors, each with its documented defaults:

- ``otava``: Apache Otava's ``otava.analysis.compute_change_points(series)``: window_len
  50, max_pvalue 0.001, min_magnitude 0.0 (the function's defaults, which its command
  line ``otava analyze`` uses too). Direction: the mean after against the mean before.
- ``asv``: asv's ``asv.step_detect.detect_steps(series)`` (no weights, as its published
  site calls it): every boundary between two fitted steps is a change, its direction from
  the two steps' values.
- ``asv-regressions``: what asv's regression page reports from those steps:
  ``detect_regressions(steps, threshold=0.05)``, 0.05 being the ``regressions_thresholds``
  default its plugin applies. It reports upward steps (slower) only.
"""

from __future__ import annotations

import itertools
import json
import sys
from importlib import metadata
from typing import Any

Changes = list[list[tuple[int, str]]]


def otava(series: list[list[float]]) -> tuple[dict[str, Any], Changes]:
    from otava.analysis import compute_change_points

    out = []
    for values in series:
        found, _weak = compute_change_points(values)
        out.append(
            [
                (int(cp.index), "slower" if cp.stats.mean_2 > cp.stats.mean_1 else "faster")
                for cp in sorted(found, key=lambda cp: cp.index)
            ]
        )
    params = {"window_len": 50, "max_pvalue": 0.001, "min_magnitude": 0.0}
    return params, out


def _steps(values: list[float]) -> list[tuple[int, int, float, float, float]]:
    from asv.step_detect import detect_steps

    return list(detect_steps(values)) if values else []


def asv(series: list[list[float]]) -> tuple[dict[str, Any], Changes]:
    out = []
    for values in series:
        steps = _steps(values)
        out.append(
            [
                (int(right[0]), "slower" if right[2] > left[2] else "faster")
                for left, right in itertools.pairwise(steps)
            ]
        )
    return {"w": None}, out


def asv_regressions(series: list[list[float]]) -> tuple[dict[str, Any], Changes]:
    from asv.step_detect import detect_regressions

    out = []
    for values in series:
        steps = _steps(values)
        _latest, _best, jumps = detect_regressions(steps, threshold=0.05) if steps else (0, 0, None)
        out.append([(int(after), "slower") for _before, after, _v0, _v1 in jumps or []])
    return {"threshold": 0.05, "min_size": 2}, out


DETECTORS = {"otava": otava, "asv": asv, "asv-regressions": asv_regressions}
PACKAGES = {"otava": "apache-otava", "asv": "asv", "asv-regressions": "asv"}


def main() -> int:
    which = sys.argv[1]
    series = json.load(sys.stdin)["series"]
    params, changes = DETECTORS[which](series)
    json.dump(
        {
            "detector": which,
            "version": metadata.version(PACKAGES[which]),
            "parameters": params,
            "changes": changes,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
