"""What a history is made of: series, their change points and the differences named.

Apart from :mod:`.history`, which computes them, so that the renderers can take them as
arguments without importing the module that calls them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from ..verdict import Noise, Verdict
from .series import Series, SeriesKey

__all__ = ["CAUSES", "Change", "Difference", "MethodChange", "SeriesHistory"]

#: What a change point's ``cause`` can be, most specific first: the code that ran, the
#: baseline's code (a relative series), the machine's software (or a shift every
#: co-measured line shared), the workload's recorded parameters and the GPU (a relative
#: series carried on), only the labels, or nothing recorded.
CAUSES: Final = (
    "implementation",
    "baseline",
    "environment",
    "workload",
    "hardware",
    "labels",
    "unexplained",
)


def _show(value: Any, *, quote: bool = True) -> str:
    if value is None:
        return "absent"
    if isinstance(value, str) and not quote:
        return value
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@attrs.frozen
class Difference:
    """One field that differs between the runs on either side of a step.

    Attributes:
        object: ``implementation``, ``environment`` or ``labels``.
        field: The dotted path in that object (``packages.torch``), or the digest's name
            when the objects themselves are not stored.
        before: The value before the step (None when absent).
        after: The value after it (None when absent).
    """

    object: str
    field: str
    before: Any
    after: Any

    def __str__(self) -> str:
        return f"{self.field} {_show(self.before)} -> {_show(self.after)}"


@attrs.frozen(kw_only=True)
class Change:
    """A change point of a series, with its cause.

    Attributes:
        index: Position in the series' points of the first point after the step.
        ratio: Level after / level before (each the median of its segment's medians).
        direction: ``slower`` (ratio > 1) or ``faster``: latency, smaller is better.
        cause: One of :data:`CAUSES`.
        differences: What changed at the step (empty when unexplained).
        before_ns: The level before the step, in ns.
        after_ns: The level after it, in ns.
        p_value: The test's p-value; None when the series was too short to test.
        tested: False when the verdict between two neighbours decided (short series).
        run: The name of the first run after the step.
        commit: That run's commit, when recorded.
        verdict: The one verdict on the levels either side of the step
            (:func:`kernelindex_sdk.verdict.judge`): a regression or an improvement (a
            step it calls neither is no change, and not listed).
        causes: Every cause that applies, :attr:`cause` first (a relative series whose
            code and GPU changed at one step names both).
        moved_with: The co-measured lines (the same workload, commit and machine, other
            implementations) that moved by the same factor: a shared shift, which makes
            the cause ``environment``.
    """

    index: int
    ratio: float
    direction: str
    cause: str
    differences: tuple[Difference, ...]
    before_ns: float
    after_ns: float
    p_value: float | None
    tested: bool
    run: str
    commit: str | None
    verdict: Verdict | None = None
    causes: tuple[str, ...] = ()
    moved_with: tuple[str, ...] = ()


@attrs.frozen
class MethodChange:
    """The protocol change that started a series: the same workload, implementation and
    GPU were measured before under another protocol, in a series of their own.

    Attributes:
        protocol_digest: The earlier series' protocol digest.
        differences: The protocol fields that differ (empty when its object is unknown).
    """

    protocol_digest: str
    differences: tuple[Difference, ...]


@attrs.frozen
class SeriesHistory:
    """One series with its change points.

    Attributes:
        series: The series (its key, points and failed runs).
        changes: Its change points, oldest first.
        tested: Whether it was long enough for the significance test (else compare's
            rule judged each step between neighbours).
        workload: The workload object when stored (operation, pass, parameters).
        follows: When the same measurement was taken before under another protocol, that
            protocol and what differs: a method change, never compared across.
        noise: The run-to-run noise its replicates show (or, where it has none, the
            scatter between its neighbouring points), which its verdicts assume.
        groups: ``(start, stop)`` in the points of each point's replicates (one run each
            where no run repeats a commit): what the change points were found on.
    """

    series: Series
    changes: tuple[Change, ...]
    tested: bool
    workload: Mapping[str, Any] | None = None
    follows: MethodChange | None = None
    noise: Noise | None = None
    groups: tuple[tuple[int, int], ...] = ()

    @property
    def key(self) -> SeriesKey:
        """What the series' runs share."""
        return self.series.key

    @property
    def label(self) -> str:
        """``operation pass name=value ...``: the workload, every parameter shown."""
        return self.label_with()

    def label_with(self, names: Iterable[str] | None = None) -> str:
        """``operation pass name=value ...`` for the parameters ``names`` (all when None)."""
        row = self.series.first
        parts = [row.operation or "workload", row.pass_ or ""]
        if self.workload is not None:
            params = self.workload.get("parameters", {})
            wanted = params if names is None else [k for k in params if k in set(names)]
            parts += [f"{k}={_show(params[k], quote=False)}" for k in sorted(wanted)]
        return " ".join(p for p in parts if p)

    @property
    def implementation(self) -> str:
        """The provider (and entry point when there is one)."""
        key = self.key
        return key.provider if not key.entry_point else f"{key.provider} ({key.entry_point})"
