"""What a relative series is made of: its key, its points, its history.

Apart from :mod:`.relative`, which computes them, so that the renderers can take them as
arguments without importing the module that calls them.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..verdict import Noise
from ._history_types import Change
from ._rows import RunRow

__all__ = ["RelativeHistory", "RelativeKey", "RelativePoint", "RelativeSeries"]


@attrs.frozen(order=True)
class RelativeKey:
    """What the points of one relative series share.

    Attributes:
        workload_digest: The workload digest.
        provider: The implementation's provider.
        entry_point: Its entry point ("" when absent).
        protocol_digest: The protocol digest.
        baseline: The baseline's provider.
        hardware: The GPU of its latest point (a series carried on to a new GPU keeps the
            new one's).
    """

    workload_digest: str
    provider: str
    entry_point: str
    protocol_digest: str
    baseline: str
    hardware: str = ""


@attrs.frozen
class RelativePoint:
    """One commit of a relative series: the implementation's point over the baseline's.

    Attributes:
        run: The implementation's run (the first of its replicates at that commit).
        baseline: The baseline's run, likewise.
        ratio: The implementation's median over the baseline's (below 1: faster).
        p20: The ratio less half the two points' p20-p80 spreads combined (None when
            either has none).
        p80: The ratio plus as much.
        runs: The fewer runs the two points pool.
        degraded: Why either point is unfit to compare, or None.
        samples: The fewest samples a run of either point took (None when a count is
            unknown): the verdict bounds the ratio's p20-p80 by it.
    """

    run: RunRow
    baseline: RunRow
    ratio: float
    p20: float | None
    p80: float | None
    runs: int = 1
    degraded: str | None = None
    samples: int | None = None

    @property
    def hardware(self) -> str | None:
        """The GPU both were measured on."""
        return self.run.hardware


@attrs.frozen
class RelativeSeries:
    """The points of one relative series, in commit order.

    Attributes:
        key: What its points share.
        points: Its points, oldest first.
    """

    key: RelativeKey
    points: tuple[RelativePoint, ...]

    @property
    def hardware(self) -> tuple[str, ...]:
        """The GPUs it was measured on, in the order first met."""
        return tuple(dict.fromkeys(p.hardware or "" for p in self.points))


@attrs.frozen
class RelativeHistory:
    """One relative series with its change points.

    Attributes:
        series: The relative series.
        changes: Its change points, oldest first (``index`` into its points).
        tested: Whether it was long enough for the test.
        noise: The scatter between its neighbouring points, when it has enough.
        workload: The workload object when stored.
    """

    series: RelativeSeries
    changes: tuple[Change, ...]
    tested: bool
    noise: Noise | None = None
    workload: Any = None

    @property
    def key(self) -> RelativeKey:
        """What its points share."""
        return self.series.key

    @property
    def label(self) -> str:
        """``operation pass name=value ...``: the workload, every parameter shown."""
        first = self.series.points[0].run
        parts = [first.operation or "workload", first.pass_ or ""]
        if isinstance(self.workload, dict):
            params = self.workload.get("parameters", {})
            parts += [f"{k}={params[k]}" for k in sorted(params)]
        return " ".join(p for p in parts if p)

    @property
    def title(self) -> str:
        """``provider over baseline``."""
        k = self.key
        who = k.provider if not k.entry_point else f"{k.provider} ({k.entry_point})"
        return f"{who} over {k.baseline}"
