"""Change points of one series of timings: where its level stepped, tested for significance.

The method (docs/performance.md states it in full):

- The series is taken as ``log(median)``, so a step is a ratio and 1% noise is 1% at
  any level.
- **Binary segmentation** (Scott & Knott 1974; Vostrikova 1981), as e-divisive
  (Matteson & James 2014) and Apache Otava do: the segment's best single split is
  tested; when significant, each side is searched again.
- **The test** at each split is the two-sample Student t statistic (pooled variance,
  ``n - 2`` degrees of freedom; Otava/Hunter also test their splits with Student's t,
  Fleming et al. ICPE 2023). The largest ``|t|`` over the allowed splits gets a
  Bonferroni p-value, ``m * P(|T| > t)`` over the ``m`` splits tried: conservative for
  Gaussian noise of equal weights (the weights below make it approximate).
- **The location** is the Bayes estimate under the "within one point" loss: the posterior
  of a single change point under a flat prior (Gaussian noise, flat priors on the two
  levels, Jeffreys prior on the noise; Smith 1975) summed over three neighbouring splits,
  and the centre of the heaviest three. It places a 3% step within one point more often
  than the likeliest split (the maximum-likelihood one) does: 98.9% against 97.8% in
  benchmarks/changepoints.py.
- **The circular test** (Olshen et al. 2004): where no single split of a segment is
  significant, the stretch ``[i, j)`` inside it that stands apart from the rest most is
  tested the same way (Bonferroni over the pairs tried), so a step there and back is
  found; segments of up to :data:`PAIR_TEST_MAX_POINTS` points.
- **Outlying runs** weigh less: a point more than 3 robust scales from the running
  median of 7 around it gets the Huber-type weight ``(3 * scale / residual)^2``.
- **The p20-p80 spread** weighs the points: a run whose spread is more than 1.5 times
  the series' typical (median) one counts less, by the inverse-variance weight
  ``(1.5 * typical / spread)^2`` (at least 0.1), so one disturbed run cannot make or
  hide a step. Where fewer than half the runs carry a spread, or none is past 1.5 times
  the typical one, every weight is 1 and the method is the unweighted one.

Series too short to test (fewer than ``2 * min_segment`` points) are judged step by step
with the one verdict instead (:func:`kernelindex_sdk.verdict.judge`: the change passes
3.29 times the noise that the points' p20-p80, their sample counts and the series'
replicates show, and may reach 5%); those changes say ``tested=False``.

numpy is imported when a series is searched, never by ``import kernelindex_sdk``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Final

import attrs

from ..errors import ArgumentError
from ..verdict import Noise, Point, judge

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_MIN_SEGMENT",
    "PAIR_TEST_MAX_POINTS",
    "SHORT_SERIES_THRESHOLD",
    "ChangePoint",
    "find_change_points",
    "student_t_sf",
]

#: The significance level of each split's test (Bonferroni over the splits tried).
DEFAULT_ALPHA: Final = 0.001
#: The fewest points a segment may have on each side of a tested change.
DEFAULT_MIN_SEGMENT: Final = 3
#: The smallest relative step the verdict counts on a series too short to test.
SHORT_SERIES_THRESHOLD: Final = 0.05
#: A spread up to this many times the series' typical one still gets the full weight.
_TYPICAL_SPREAD_SLACK: Final = 1.5
#: The longest segment the circular (two-split) test searches: its cost grows as the
#: square of the length.
PAIR_TEST_MAX_POINTS: Final = 1_000
#: Starts of the circular test's stretches computed at once.
_PAIR_BLOCK: Final = 64
#: Half the running median's window, which outlying runs are measured against.
_RUNNING_HALF: Final = 3
#: A residual past this many robust scales marks a run as outlying.
_OUTLIER_SCALES: Final = 3.0
#: Weights never fall below this: a very noisy run still counts a little.
_MIN_WEIGHT: Final = 0.1


@attrs.frozen(kw_only=True)
class ChangePoint:
    """A step in a series' level.

    Attributes:
        index: Position (in the timings given) of the first point after the step.
        before: The level before the step: the median of the segment's medians.
        after: The level after it, likewise (up to the next change point).
        ratio: ``after / before``.
        p_value: The Bonferroni p-value of the split's t statistic; None when untested.
        tested: False when the series was too short for the test and the verdict
            between the two neighbouring points decided.
    """

    index: int
    before: float
    after: float
    ratio: float
    p_value: float | None
    tested: bool = True


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_sf(t: float, df: float) -> float:
    """Two-sided tail ``P(|T| > |t|)`` of Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


def _weights(np: Any, p20: Any, p80: Any, n: int) -> Any:
    """Inverse-variance weights from each point's p20-p80 spread (1 where none is known)."""
    ones = np.ones(n)
    if p20 is None or p80 is None:
        return ones
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.log(p80 / p20)
    known = np.isfinite(spread) & (spread > 0)
    if known.sum() < max(3, n // 2):
        return ones
    typical = float(np.median(spread[known]))
    # Spreads vary from run to run by themselves: only one well past the typical one
    # (a disturbed run) is weighed down.
    bound = _TYPICAL_SPREAD_SLACK * typical
    w = np.where(known, np.minimum(1.0, (bound / np.where(known, spread, 1.0)) ** 2), 1.0)
    return np.maximum(w, _MIN_WEIGHT)


def _robust_weights(np: Any, y: Any) -> Any:
    """Weights that take the pull out of outlying runs, whatever their spread says.

    Each point's residual from the running median of 7 around it is compared with the
    residuals' robust scale (1.4826 times their median absolute value, the standard
    deviation for Gaussian noise): a point more than 3 scales out gets the Huber-type
    weight ``(3 * scale / residual)^2`` (at least 0.1), the rest 1. The running median
    follows a step within a point, so the points beside a step keep their weight.
    """
    n = len(y)
    half = _RUNNING_HALF
    if n < 2 * half + 1:
        return np.ones(n)
    padded = np.concatenate((np.full(half, y[0]), y, np.full(half, y[-1])))
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1)
    # Each window's median is its middle value once partitioned there: np.median's own
    # value for an odd window (the mean of that one value), at a third of its cost.
    residual = np.abs(y - np.partition(windows, half, axis=1)[:, half])
    scale = 1.4826 * float(np.median(residual))
    if scale == 0.0:
        return np.ones(n)
    bound = _OUTLIER_SCALES * scale
    with np.errstate(divide="ignore"):
        w = np.minimum(1.0, (bound / residual) ** 2)
    return np.maximum(w, _MIN_WEIGHT)


class _Segmenter:
    """Binary segmentation of one series (log medians ``y`` with weights ``w``)."""

    def __init__(self, np: Any, y: Any, w: Any, alpha: float, min_segment: int):
        self.np, self.y, self.w = np, y, w
        self.alpha, self.min_segment = alpha, min_segment
        self.found: dict[int, float] = {}

    def split(self, lo: int, hi: int) -> None:
        np = self.np
        # A stack, not recursion: a 10,000-point series with many steps stays shallow.
        stack = [(lo, hi)]
        while stack:
            lo, hi = stack.pop()
            n, k_min = hi - lo, self.min_segment
            if n < 2 * k_min:
                continue
            y, w = self.y[lo:hi], self.w[lo:hi]
            w = w * (n / w.sum())
            y = y - float(np.dot(w, y)) / n
            cw, cy, cyy = np.cumsum(w), np.cumsum(w * y), np.cumsum(w * y * y)
            # Splits k: left is [0, k), right is [k, n), k_min <= k <= n - k_min.
            k = np.arange(k_min, n - k_min + 1)
            wl, sl, ql = cw[k - 1], cy[k - 1], cyy[k - 1]
            wr, sr, qr = cw[-1] - wl, cy[-1] - sl, cyy[-1] - ql
            rss = np.maximum(ql - sl * sl / wl + (qr - sr * sr / wr), 0.0)
            diff = sr / wr - sl / wl
            df = n - 2
            with np.errstate(divide="ignore", invalid="ignore"):
                t2 = diff * diff / ((rss / df) * (1.0 / wl + 1.0 / wr))
            t2 = np.where(np.isnan(t2), 0.0, t2)
            best = int(np.argmax(t2))
            t_best = math.sqrt(float(t2[best]))
            if t_best == 0.0:
                continue
            p = min(1.0, len(k) * student_t_sf(t_best, df))
            if p > self.alpha:
                pair = self._pair(lo, hi)
                if pair is not None:
                    stack += pair
                continue
            at = lo + int(k[self._located(np, wl, wr, rss, n)])
            self.found[at] = p
            stack.append((lo, at))
            stack.append((at, hi))

    def _pair(self, lo: int, hi: int) -> list[tuple[int, int]] | None:
        """The circular test of ``[lo, hi)``: a stretch inside that stands apart from the
        rest (a step there and back, or two steps), which no single split may show.

        Returns the three segments to search again when it is significant, else None.
        """
        np, k_min = self.np, self.min_segment
        n = hi - lo
        if n < 3 * k_min or n > PAIR_TEST_MAX_POINTS:
            return None
        y, w = self.y[lo:hi], self.w[lo:hi]
        w = w * (n / w.sum())
        y = y - float(np.dot(w, y)) / n
        cw = np.concatenate(([0.0], np.cumsum(w)))
        cy = np.concatenate(([0.0], np.cumsum(w * y)))
        total = float(np.dot(w, y * y))
        # The stretch [i, j) against the rest; every part keeps k_min points. With y
        # centred, the rest's sum is minus the stretch's, so the between-parts sum of
        # squares is B = s^2 n / (w (n - w)), the residual one total - B, and
        # t^2 = df B / (total - B) grows with B: the largest B is the best pair.
        starts = np.arange(k_min, n - 2 * k_min + 1)
        ends = np.arange(2 * k_min, n - k_min + 1)
        best_b, best_at, pairs = -1.0, (0, 0), 0
        # Blocks of starts: the temporaries stay in the cache whatever the length.
        for first in range(0, len(starts), _PAIR_BLOCK):
            i = starts[first : first + _PAIR_BLOCK, None]
            allowed = ends[None, :] - i >= k_min
            wi = cw[ends][None, :] - cw[i]
            si = cy[ends][None, :] - cy[i]
            with np.errstate(divide="ignore", invalid="ignore"):
                between = si * si * n / (wi * (n - wi))
            between = np.where(allowed & np.isfinite(between), between, -1.0)
            at = int(np.argmax(between))
            row, col = divmod(at, between.shape[1])
            if between[row, col] > best_b:
                best_b, best_at = float(between[row, col]), (int(i[row, 0]), int(ends[col]))
            pairs += int(allowed.sum())
        df = n - 2
        residual = total - best_b
        if best_b <= 0.0:
            return None
        t_best = math.inf if residual <= 0.0 else math.sqrt(df * best_b / residual)
        p = min(1.0, pairs * student_t_sf(t_best, df))
        if p > self.alpha:
            return None
        a, b = lo + best_at[0], lo + best_at[1]
        # Each end placed as a single step between its neighbours (the Bayes location).
        a = self._relocated(lo, b, a)
        b = self._relocated(a, hi, b)
        self.found[a] = self.found[b] = p
        return [(lo, a), (a, b), (b, hi)]

    def _relocated(self, lo: int, hi: int, guess: int) -> int:
        """The Bayes location of a single step in ``[lo, hi)`` (``guess`` when too short)."""
        np, k_min = self.np, self.min_segment
        n = hi - lo
        if n < 2 * k_min:
            return guess
        y, w = self.y[lo:hi], self.w[lo:hi]
        w = w * (n / w.sum())
        y = y - float(np.dot(w, y)) / n
        cw, cy, cyy = np.cumsum(w), np.cumsum(w * y), np.cumsum(w * y * y)
        k = np.arange(k_min, n - k_min + 1)
        wl, sl, ql = cw[k - 1], cy[k - 1], cyy[k - 1]
        wr, sr, qr = cw[-1] - wl, cy[-1] - sl, cyy[-1] - ql
        rss = np.maximum(ql - sl * sl / wl + (qr - sr * sr / wr), 0.0)
        return lo + int(k[self._located(np, wl, wr, rss, n)])

    @staticmethod
    def _located(np: Any, wl: Any, wr: Any, rss: Any, n: int) -> int:
        """The centre of the three neighbouring splits of largest posterior mass."""
        # A floor keeps the log finite where a split leaves no residual (constant sides).
        floor = float(rss.max()) * 1e-12 + 1e-300
        logp = -0.5 * np.log(wl * wr) - 0.5 * (n - 2) * np.log(rss + floor)
        post = np.exp(logp - logp.max())
        if len(post) < 3:
            return int(np.argmax(post))
        # Mass of each split with its two neighbours (the end splits have one).
        window = post.copy()
        window[1:] += post[:-1]
        window[:-1] += post[1:]
        # Among windows as heavy as the heaviest, the one centred on the likeliest split:
        # a sure step (all mass on one split) is placed there, not one point beside it.
        heavy = np.flatnonzero(window >= window.max() * (1 - 1e-9))
        return int(heavy[np.argmax(post[heavy])])


def _levels(np: Any, medians: Any, cuts: list[int]) -> list[float]:
    bounds = [0, *cuts, len(medians)]
    return [float(np.median(medians[a:b])) for a, b in itertools.pairwise(bounds)]


def _check(name: str, values: Sequence[float | None] | None, n: int) -> None:
    if values is not None and len(values) != n:
        raise ArgumentError(
            argument=name, reason=f"expected {n} values (one per median), got {len(values)}"
        )


def find_change_points(
    medians: Sequence[float],
    p20: Sequence[float | None] | None = None,
    p80: Sequence[float | None] | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    min_segment: int = DEFAULT_MIN_SEGMENT,
    runs: Sequence[int] | None = None,
    noise: Noise | None = None,
    samples: Sequence[int | None] | None = None,
) -> list[ChangePoint]:
    """The steps in a series of positive timings (oldest first), by the method above.

    Args:
        medians: Each point's median (any positive unit, e.g. ns).
        p20: Each point's p20 (None where unknown), or None for none at all.
        p80: Each point's p80, likewise.
        alpha: Significance level of each split's test.
        min_segment: The fewest points on each side of a tested change (at least 2).
        runs: How many replicates each point pools (1 each when None): the verdict of a
            short series divides their noise by its root.
        noise: The series' run-to-run noise (:func:`kernelindex_sdk.verdict.replicate_noise`),
            for the verdict of a short series.
        samples: How many samples each point's runs took (the fewest; None where
            unknown), or None for none known: the verdict of a short series bounds a
            point's own p20-p80 by it (:attr:`kernelindex_sdk.verdict.Point.own_sd`).

    Returns:
        The change points, by index. A series of fewer than ``2 * min_segment`` points
        gets the verdict between neighbours instead (``tested=False``).

    Raises:
        ArgumentError: for a median that is not a positive finite number, lists of
            different lengths, ``alpha`` outside (0, 1) or ``min_segment`` below 2.
    """
    n = len(medians)
    _check("p20", p20, n)
    _check("p80", p80, n)
    _check("runs", runs, n)
    _check("samples", samples, n)
    if not 0.0 < alpha < 1.0:
        raise ArgumentError(argument="alpha", reason=f"expected 0 < alpha < 1, got {alpha!r}")
    if min_segment < 2:
        raise ArgumentError(
            argument="min_segment", reason=f"expected an integer >= 2, got {min_segment!r}"
        )
    import numpy as np  # noqa: PLC0415 - numpy stays out of `import kernelindex_sdk`

    try:
        values = np.asarray(medians, dtype=float)
        clean = bool(np.isfinite(values).all() and (values > 0).all()) and values.ndim == 1
        # True is 1.0 to numpy, not a timing.
        clean = clean and bool not in set(map(type, medians))
    except (TypeError, ValueError):
        clean = False
    if not clean:
        # The slow walk only to name the first bad value.
        for i, m in enumerate(medians):
            if isinstance(m, bool) or not (
                isinstance(m, int | float) and math.isfinite(m) and m > 0
            ):
                raise ArgumentError(
                    argument="medians", reason=f"[{i}]: expected a positive number, got {m!r}"
                )
    if n < 2:
        return []
    if n < 2 * min_segment:
        return _short_series(medians, p20, p80, runs, noise, samples)
    lows = highs = None
    if p20 is not None and p80 is not None:
        # numpy reads None as NaN (unknown) for a float array.
        lows = np.array(p20, dtype=float)
        highs = np.array(p80, dtype=float)
    logs = np.log(values)
    weights = _weights(np, lows, highs, n) * _robust_weights(np, logs)
    segmenter = _Segmenter(np, logs, np.maximum(weights, _MIN_WEIGHT), alpha, min_segment)
    segmenter.split(0, n)
    cuts = sorted(segmenter.found)
    levels = _levels(np, values, cuts)
    return [
        ChangePoint(
            index=at,
            before=levels[i],
            after=levels[i + 1],
            ratio=levels[i + 1] / levels[i],
            p_value=segmenter.found[at],
        )
        for i, at in enumerate(cuts)
    ]


def _short_series(
    medians: Sequence[float],
    p20: Sequence[float | None] | None,
    p80: Sequence[float | None] | None,
    runs: Sequence[int] | None,
    noise: Noise | None,
    samples: Sequence[int | None] | None = None,
) -> list[ChangePoint]:
    """The verdict between each point and the next: a series too short to test."""

    def point(i: int) -> Point:
        return Point(
            median=medians[i],
            p20=None if p20 is None else p20[i],
            p80=None if p80 is None else p80[i],
            runs=1 if runs is None else runs[i],
            samples=None if samples is None else samples[i],
        )

    out = []
    for i in range(1, len(medians)):
        found = judge(point(i - 1), point(i), threshold=SHORT_SERIES_THRESHOLD, noise=noise)
        if found.changed:
            out.append(
                ChangePoint(
                    index=i,
                    before=float(medians[i - 1]),
                    after=float(medians[i]),
                    ratio=float(medians[i]) / float(medians[i - 1]),
                    p_value=None,
                    tested=False,
                )
            )
    return out
