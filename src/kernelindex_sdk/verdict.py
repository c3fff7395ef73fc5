"""The one verdict: whether two points differ beyond the noise, and which way.

``kernelindex compare``, ``compare --history``, ``history``, the regression gate, the
summary table and every page of the dashboard ask :func:`judge`; none decides on its own
(DESIGN.md, "One verdict"). docs/compare.md states the rule; in short, with
``r = new / base`` and every spread in natural-log units:

- A **point** is one run, or the replicates of one point pooled (runs of one series at one
  commit with the same implementation and environment digests): the median of their
  medians, p20s and p80s, and how many runs it pools.
- Its **noise** ``s`` is the largest of what its own samples show (``ln(p80 / p20) /
  1.683``, the standard deviation of a Gaussian with that p20-p80; for a noisy run, p80 /
  p20 above 1.10, its whole ``ln(p80 / p20)``), what the series' replicates show (their
  standard deviation, raised to its 95% upper bound for their degrees of freedom) and
  0.5%, the least run-to-run noise a run is assumed to have; divided by the root of the
  runs pooled. What its own samples show is an estimate from ``n`` samples: where ``n``
  is known it is raised to its 95% upper bound for ``n - 1`` degrees of freedom (x1.13 at
  100 samples, x1.04 at 1,000, x2.4 at 5), as the replicates' is. A run of one sample has
  no spread.
- The change is **beyond the noise** when ``|ln r| > 3.29 * sqrt(s_base^2 + s_new^2)`` (a
  two-sided 0.1% test: one false alarm in 1,000 comparisons of Gaussian noise).
- It **counts** when it may reach the threshold (the smallest change that counts): its
  upper 95% bound ``|ln r| + 1.645 * sqrt(...)`` is beyond ``ln(1 + threshold)`` (slower)
  or ``-ln(1 - threshold)`` (faster). A change the noise puts credibly under the threshold
  never counts; between two single runs at 5%, one of 3.8% or more may.
- A **degraded** point (:func:`kernelindex_sdk.conditions.degraded_reason`) gets no verdict
  unless asked for; a point whose median is not a positive number cannot be judged.

Pure: numbers in, a :class:`Verdict` out; no I/O, nothing below it but ``errors``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Final

import attrs

from ._base.arguments import at_least
from ._base.noise import NOISY_SPREAD
from .errors import ArgumentError

__all__ = [
    "BASELINE_LABEL",
    "CREDIBLE_Z",
    "DEFAULT_THRESHOLD",
    "DEGRADED",
    "IMPROVEMENT",
    "KINDS",
    "NOISE_Z",
    "REGRESSION",
    "RUN_NOISE_FLOOR",
    "SAME",
    "SPREAD_SD",
    "UNJUDGED",
    "Noise",
    "Point",
    "Verdict",
    "fewest_samples",
    "judge",
    "pool",
    "replicate_noise",
    "scatter_noise",
    "summary",
    "upper_sd",
]

#: The run label that names a run's baseline: the provider, measured in the same sweep
#: (same commit, environment and workload), that its relative series divides it by
#: (``liger`` over ``huggingface``, ``triton`` over ``torch``). Set by the producer: the
#: harness and the Liger importer set it; ``kernelindex history --baseline`` for runs
#: without it. A label, not identity: no digest covers it.
BASELINE_LABEL: Final = "kernelindex.dev/baseline"
#: A change smaller than this fraction of the base is never counted (``--threshold 5``).
DEFAULT_THRESHOLD: Final = 0.05
#: How many noise standard deviations a change must pass: two-sided 0.1% of a Gaussian.
NOISE_Z: Final = 3.29
#: How far above the measured change its upper bound reaches: one-sided 95% of a Gaussian.
CREDIBLE_Z: Final = 1.645
#: The least run-to-run noise a point is assumed to have (log units, 0.5%): a run's own
#: p20-p80 can understate how far its median moves between runs. On the H100 replicates
#: (/work/shared/data/h100-replicates) the noisiest point's medians had a standard
#: deviation of 0.50% where its spread said 0.17%, and eager torch's 0.02-0.04% where its
#: spread said 0.01%.
RUN_NOISE_FLOOR: Final = 0.005
#: The log spread past which a run is noisy (p80 / p20 above 1.10, ``_base.noise``).
_NOISY_LOG: Final = math.log(NOISY_SPREAD)
#: p80 - p20 of a standard Gaussian (2 x 0.8416): a p20-p80 spread over this is its sd.
SPREAD_SD: Final = 1.6832
#: The 95% lower quantile of a standard Gaussian, for the noise's upper bound.
_LOWER_Z: Final = -1.6449

#: The verdicts: worse, better, within the noise or under the threshold, a point that is
#: unfit to compare, and values that cannot be compared.
REGRESSION: Final = "regression"
IMPROVEMENT: Final = "improvement"
SAME: Final = "same"
DEGRADED: Final = "degraded"
UNJUDGED: Final = "cannot-judge"
KINDS: Final = (REGRESSION, IMPROVEMENT, SAME, DEGRADED, UNJUDGED)


def _chi2_lower(df: int) -> float:
    """The 5% quantile of chi-square with ``df`` degrees of freedom (exact for 1 and 2,
    Wilson-Hilferty's cube above, within 7% at 3 and 1% from 10)."""
    if df == 1:
        return 0.0039321
    if df == 2:
        return 0.1025866
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + _LOWER_Z * math.sqrt(a)) ** 3


def upper_sd(sd: float, df: int) -> float:
    """The 95% upper bound of a standard deviation estimated with ``df`` degrees of freedom."""
    if df <= 0:
        return sd
    return sd * math.sqrt(df / _chi2_lower(df))


@attrs.frozen
class Noise:
    """The run-to-run noise of a series: how far the medians of runs of the same code move.

    Attributes:
        sd: Its standard deviation in natural-log units (0.01 is about 1%).
        df: The degrees of freedom it was estimated with (its upper bound uses them).
        source: ``replicates`` (runs at one commit, same digests) or ``series`` (the scatter
            between neighbouring points of a series).
    """

    sd: float
    df: int
    source: str = "replicates"

    @property
    def bound(self) -> float:
        """The 95% upper bound of :attr:`sd`: what a verdict assumes."""
        return upper_sd(self.sd, self.df)


def _sample_count(value: object) -> int | None:
    """A point's sample count: None (unknown) or a whole number >= 1; a record's ``5.0``
    (the schema's number) is 5.

    Raises:
        ArgumentError: for anything else (a bool, text, a fraction, 0 or less).
    """
    if value is None:
        return None
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 1
        and value == int(value)
    ):
        return int(value)
    raise ArgumentError(argument="samples", reason=f"expected a whole number >= 1, got {value!r}")


@attrs.frozen(kw_only=True)
class Point:
    """One point: a run, or the replicates of one point pooled (see :func:`pool`).

    Attributes:
        median: The median (of the runs' medians, when pooled); any positive unit.
        p20: The 20th percentile of the run's samples (the median of the runs' p20s).
        p80: The 80th percentile, likewise.
        runs: How many runs the point pools.
        samples: How many samples each run timed (the fewest, when pooled); None unknown.
            Its p20-p80 is an estimate from them: :attr:`own_sd` takes its upper bound.
        degraded: Why the point is unfit to compare (a run of it was degraded), or None.
    """

    median: float
    p20: float | None = None
    p80: float | None = None
    runs: int = 1
    samples: int | None = attrs.field(default=None, converter=_sample_count)
    degraded: str | None = None

    @property
    def spread(self) -> float | None:
        """``ln(p80 / p20)``; None when either is missing, not positive, or one sample."""
        low, high = self.p20, self.p80
        if low is None or high is None or self.samples == 1:
            return None
        if not (low > 0 and high >= low and math.isfinite(high)):
            return None
        return math.log(high / low)

    @property
    def own_sd(self) -> float:
        """What its own samples say of a run's noise (log units): the standard deviation of
        a Gaussian with its p20-p80; for a noisy run (p80 / p20 above
        :data:`~kernelindex_sdk._base.noise.NOISY_SPREAD`, the one rule) its whole
        p20-p80 range; raised to its 95% upper bound for ``samples - 1`` degrees of
        freedom (:func:`upper_sd`) when :attr:`samples` is known; 0 without a spread (a
        single sample has none)."""
        spread = self.spread
        if spread is None:
            return 0.0
        # A disturbed run's median moves between runs by more than its spread shows: on
        # the CPU reruns under load, 5 times slower with p80/p20 of 1.5 to 1.9.
        sd = spread if spread > _NOISY_LOG else spread / SPREAD_SD
        if self.samples is None:
            # Unknown (a store of 0.6.1's layout, a foreign record): the spread as read.
            return sd
        # A p20-p80 read from few samples may understate the run's spread: the same
        # bound the replicates' standard deviation gets (tests/test_verdict.py,
        # test_the_same_spread_from_few_samples_is_judged_more_cautiously). It is the
        # sample standard deviation's bound: quantiles are less efficient, so it is a
        # floor on the uncertainty, not all of it.
        return upper_sd(sd, self.samples - 1)

    def sd(self, noise: Noise | None = None) -> float:
        """This point's noise in log units: the largest of :attr:`own_sd`, ``noise``'s
        upper bound and :data:`RUN_NOISE_FLOOR`, over the root of the runs it pools."""
        between = RUN_NOISE_FLOOR if noise is None else max(noise.bound, RUN_NOISE_FLOOR)
        return max(self.own_sd, between) / math.sqrt(max(1, self.runs))


@attrs.frozen(kw_only=True)
class Verdict:
    """What :func:`judge` decided, with its evidence.

    Attributes:
        kind: One of :data:`KINDS`.
        ratio: new / base (None when it cannot be computed, or a side is degraded and
            not asked for).
        noise: The standard deviation of ``ln(ratio)`` the verdict assumed (log units).
        threshold: The smallest change that counts, as a fraction.
        reason: One line of evidence: the change, the noise and where it came from, or
            why there is no verdict.
        base: The base median judged (None when there is no ratio).
        new: The new median judged (None when there is no ratio).
        higher_is_better: Whether a larger value was an improvement.
    """

    kind: str
    ratio: float | None
    noise: float
    threshold: float
    reason: str
    base: float | None = None
    new: float | None = None
    higher_is_better: bool = False

    @property
    def changed(self) -> bool:
        """Whether the verdict is a regression or an improvement."""
        return self.kind in (REGRESSION, IMPROVEMENT)

    @property
    def percent(self) -> float | None:
        """The change in percent of the base (``+12.5`` is 12.5% larger)."""
        return None if self.ratio is None else (self.ratio - 1.0) * 100.0

    def at(self, threshold: float) -> Verdict:
        """The same judgement at another threshold (the gate's ``--fail-on-regression``):
        the same medians and noise; a verdict that is not a change stays as it is.

        Raises:
            ArgumentError: when ``threshold`` is not a finite number >= 0.
        """
        threshold = _fraction("threshold", threshold)
        if not self.changed or self.base is None or self.new is None:
            return attrs.evolve(self, threshold=threshold)
        if _reaches(self.base, self.new, threshold, self.noise):
            return attrs.evolve(self, threshold=threshold)
        return attrs.evolve(
            self,
            kind=SAME,
            threshold=threshold,
            reason=f"under {threshold * 100:g}%: {self.reason}",
        )


def _exact(x: float) -> Fraction:
    # A float's decimal text: a 5% threshold is exactly 1/20, so the edge is where it reads.
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


def _beyond(base: float, new: float, fraction: float) -> bool:
    """``|new - base| > fraction * base``, exact at the edge (5% of 100 is 5, not 5.000001)."""
    diff, edge = abs(new - base), fraction * base
    # Floats decide unless the two sides are within rounding of each other.
    if abs(diff - edge) > 1e-9 * max(abs(base), abs(new), 1.0):
        return diff > edge
    return abs(_exact(new) - _exact(base)) > _exact(fraction) * _exact(base)


def _fraction(name: str, value: object) -> float:
    return float(at_least(value, name))


def _reaches(base: float, new: float, threshold: float, u: float) -> bool:
    """Whether the change may reach the threshold: exactly ``|new - base| > threshold *
    base`` without noise; else its upper 95% bound passes the threshold's edge."""
    if u == 0.0:
        return _beyond(base, new, threshold)
    change = math.log(new / base)
    if change > 0:
        edge = math.log1p(threshold)
    elif threshold < 1.0:
        edge = -math.log1p(-threshold)
    else:
        return False  # nothing can be 100% faster
    return abs(change) + CREDIBLE_Z * u > edge


def _said(kind: str, ratio: float | None, u: float, threshold: float, reason: str) -> Verdict:
    return Verdict(kind=kind, ratio=ratio, noise=u, threshold=threshold, reason=reason)


def _judged(
    kind: str,
    ratio: float,
    u: float,
    threshold: float,
    reason: str,
    sides: tuple[float, float, bool],
) -> Verdict:
    base, new, higher = sides
    return Verdict(
        kind=kind,
        ratio=ratio,
        noise=u,
        threshold=threshold,
        reason=reason,
        base=base,
        new=new,
        higher_is_better=higher,
    )


def _percent(ratio: float) -> str:
    return f"{(ratio - 1.0) * 100.0:+.1f}%"


def _source(base: Point, new: Point, noise: Noise | None) -> str:
    own = max(base.own_sd, new.own_sd)
    known = 0.0 if noise is None else noise.bound
    if max(own, known) <= RUN_NOISE_FLOOR:
        return "the least a run has"
    if known >= own:
        return f"from {noise.source}, {noise.df} df" if noise is not None else ""
    counts = [p.samples for p in (base, new) if p.own_sd == own and p.samples is not None]
    if counts:
        return f"from the runs' p20-p80, {counts[0]:,} samples"
    return "from the runs' p20-p80"


def _unjudgeable(b: float, n: float) -> str | None:
    """Why two medians have no ratio, or None."""
    for side, value in (("BASE", b), ("NEW", n)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            return f"{side} median is {value!r}: no ratio"
    if not 0 < n / b < math.inf:
        return f"NEW/BASE of {n!r} / {b!r} is not a number"
    return None


def judge(
    base: Point,
    new: Point,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    noise: Noise | None = None,
    higher_is_better: bool = False,
    include_degraded: bool = False,
) -> Verdict:
    """Whether ``new`` differs from ``base`` beyond the noise, and which way.

    Args:
        base: The base point.
        new: The new point, in the same unit.
        threshold: The smallest change that counts, as a fraction (0.05 = 5%).
        noise: The series' run-to-run noise, when known (:func:`replicate_noise`).
        higher_is_better: A larger value is an improvement (bandwidth, throughput).
        include_degraded: Judge degraded points too (by default they get ``degraded``).

    Returns:
        The :class:`Verdict`.

    Raises:
        ArgumentError: when ``threshold`` is not a finite number >= 0, or a point is not
            a :class:`Point`.
    """
    threshold = _fraction("threshold", threshold)
    for name, point in (("base", base), ("new", new)):
        if not isinstance(point, Point):
            raise ArgumentError(argument=name, reason=f"expected a Point, got {point!r}")
    b, n = base.median, new.median
    problem = _unjudgeable(b, n)
    if problem is not None:
        return _said(UNJUDGED, None, 0.0, threshold, problem)
    ratio = n / b
    sides = (float(b), float(n), higher_is_better)
    degraded = [f"{side} {p.degraded}" for side, p in (("BASE", base), ("NEW", new)) if p.degraded]
    u = math.hypot(base.sd(noise), new.sd(noise))
    if degraded and not include_degraded:
        return _judged(DEGRADED, ratio, u, threshold, "degraded: " + "; ".join(degraded), sides)
    change = math.log(ratio)
    where = _source(base, new, noise)
    said = f"{_percent(ratio)}, noise ±{u * 100:.1f}% ({where}), threshold {threshold * 100:g}%"
    if abs(change) <= NOISE_Z * u:
        return _judged(SAME, ratio, u, threshold, f"within the noise: {said}", sides)
    if not _reaches(b, n, threshold, u):
        return _judged(SAME, ratio, u, threshold, f"under the threshold: {said}", sides)
    worse = (ratio < 1.0) if higher_is_better else (ratio > 1.0)
    return _judged(REGRESSION if worse else IMPROVEMENT, ratio, u, threshold, said, sides)


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2.0


def fewest_samples(counts: Iterable[int | None]) -> int | None:
    """The sample count of points taken together: the fewest, None when one is unknown
    (as :func:`pool` counts a pooled point's)."""
    found = list(counts)
    if not found or None in found:
        return None
    return min(c for c in found if c is not None)


def pool(points: Iterable[Point]) -> Point:
    """The replicates of one point as one: the medians of their medians, p20s and p80s
    (None when a run lacks one), the runs summed, the fewest samples, any degraded reason.

    Raises:
        ArgumentError: when ``points`` is empty.
    """
    found = list(points)
    if not found:
        raise ArgumentError(argument="points", reason="expected at least one point")
    if len(found) == 1:
        return found[0]
    lows = [p.p20 for p in found]
    highs = [p.p80 for p in found]
    reasons = sorted({p.degraded for p in found if p.degraded})
    return Point(
        median=_median([p.median for p in found]),
        p20=None if None in lows else _median([x for x in lows if x is not None]),
        p80=None if None in highs else _median([x for x in highs if x is not None]),
        runs=sum(p.runs for p in found),
        samples=fewest_samples(p.samples for p in found),
        degraded="; ".join(reasons) or None,
    )


def replicate_noise(groups: Iterable[Sequence[float]]) -> Noise | None:
    """The noise replicates show: the pooled standard deviation of the log medians within
    each group of replicates (runs of one point); None when no group has two runs.

    Args:
        groups: Each point's runs' medians (positive numbers).
    """
    total, df = 0.0, 0
    for medians in groups:
        logs = [math.log(m) for m in medians if m > 0]
        if len(logs) < 2:
            continue
        mean = math.fsum(logs) / len(logs)
        total += math.fsum((x - mean) ** 2 for x in logs)
        df += len(logs) - 1
    if df == 0:
        return None
    return Noise(sd=math.sqrt(total / df), df=df, source="replicates")


#: The fewest neighbouring differences :func:`scatter_noise` estimates from.
SCATTER_MIN: Final = 4


def scatter_noise(levels: Sequence[float]) -> Noise | None:
    """The noise a series shows between neighbouring points: 1.4826 times the median
    absolute difference of neighbouring log medians, over the root of 2 (robust to the
    few steps a series makes); None with fewer than :data:`SCATTER_MIN` differences.

    Args:
        levels: The series' points' medians, oldest first (positive numbers).
    """
    logs = [math.log(v) for v in levels if v > 0]
    diffs = [abs(b - a) for a, b in itertools.pairwise(logs)]
    if len(diffs) < SCATTER_MIN:
        return None
    sd = 1.4826 * _median(diffs) / math.sqrt(2.0)
    # A median of absolute values has about 40% of the efficiency of a variance.
    return Noise(sd=sd, df=max(1, int(0.4 * len(diffs))), source="series")


def summary(verdicts: Iterable[Verdict], ratio: float, threshold: float) -> Verdict:
    """The verdict of a geometric mean over rows: a change only when it passes the
    threshold and at least one of its rows changed that way; within the noise otherwise
    (a mean over rows all within noise is not a change).

    Args:
        verdicts: The rows' verdicts.
        ratio: The geometric mean of their ratios.
        threshold: The smallest change that counts.
    """
    threshold = _fraction("threshold", threshold)
    rows = list(verdicts)
    slower = ratio > 1.0
    moved = [
        v
        for v in rows
        if v.changed and v.ratio is not None and (v.ratio > 1.0) == slower and v.ratio != 1.0
    ]
    said = f"{_percent(ratio)} over {len(rows)} row(s), {len(moved)} of them changed that way"
    if not moved:
        return _said(SAME, ratio, 0.0, threshold, f"no row changed that way: {said}")
    if not _beyond(1.0, ratio, threshold):
        return _said(SAME, ratio, 0.0, threshold, f"under the threshold: {said}")
    return _said(moved[0].kind, ratio, 0.0, threshold, said)
