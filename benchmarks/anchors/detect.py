"""Run one anchor change-point detector over series read as JSON; print their change points.

Runs inside the anchor's own virtual environment (never the package's), driven by
benchmarks/changepoints.py:

    .venv-otava/bin/python benchmarks/anchors/detect.py otava < series.json
    .venv-asv/bin/python benchmarks/anchors/detect.py asv < series.json

Input: ``{"series": [[median, ...], ...]}``. Output: ``{"version": ..., "changes":
[[index, ...], ...]}``, each index the position of the first point after a step.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata


def otava(series: list[list[float]]) -> list[list[int]]:
    # Apache Otava 0.8's default analysis: e-divisive over sliding windows, p = 0.001.
    from otava.analysis import compute_change_points

    out = []
    for values in series:
        found, _weak = compute_change_points(values, max_pvalue=0.001)
        out.append(sorted(int(cp.index) for cp in found))
    return out


def asv(series: list[list[float]]) -> list[list[int]]:
    # asv 0.6.6's step detection, as its published site uses it (no weights).
    from asv.step_detect import detect_steps

    out = []
    for values in series:
        steps = detect_steps(values)
        out.append([int(step[0]) for step in steps[1:]])
    return out


def main() -> int:
    which = sys.argv[1]
    series = json.load(sys.stdin)["series"]
    detector = {"otava": otava, "asv": asv}[which]
    package = {"otava": "apache-otava", "asv": "asv"}[which]
    json.dump({"version": metadata.version(package), "changes": detector(series)}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
