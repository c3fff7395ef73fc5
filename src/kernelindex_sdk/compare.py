"""Pair runs of two inputs by their digests; ratios, significance and the regression gate.

Two runs may be compared when they computed the same workload under the same protocol
in the same environment: their workload, protocol and environment digests agree. What
computed it (the implementation) is what a comparison is about, so it is not part of
the key: it pairs the runs of one key when a side has several. See docs/compare.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

import attrs

from . import verdict as _verdict
from ._analysis import compare_render as _render
from ._analysis.compare_render import FORMATS
from ._analysis.labels import environment_label
from ._analysis.runs import Run, RunSet, Stat, load_runs, run_set, short_digest
from ._base import arguments as _arguments
from ._base.display import short_repr
from ._base.units import BASE_UNIT, RATE_DIMENSIONS, UNITS
from .errors import ArgumentError
from .verdict import (
    DEGRADED,
    REGRESSION,
    Noise,
    Point,
    Verdict,
    judge,
    pool,
    replicate_noise,
    summary,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "FORMATS",
    "Comparison",
    "Pair",
    "Run",
    "RunSet",
    "Stat",
    "compare",
    "environment_label",
    "field_differences",
    "higher_is_better",
    "is_significant",
    "load_runs",
    "pairs_as_json",
    "render",
    "workload_label",
]

#: A change smaller than this fraction of the base median never counts (the verdict's).
DEFAULT_THRESHOLD: Final = _verdict.DEFAULT_THRESHOLD
#: How many differing fields an unpaired reason names, and how many candidates it tries.
_MAX_FIELDS: Final = 3
_MAX_CANDIDATES: Final = 32
_DIGEST_NAMES: Final = {
    "workload": "workload_digest",
    "protocol": "protocol_digest",
    "environment": "environment_digest",
}


def _fraction(argument: str, value: Any) -> float:
    """``value`` when it is a finite number >= 0 (a threshold); ArgumentError otherwise.

    An infinite threshold (``1e309`` read as a float) would pass every change: a gate
    that cannot trip is refused, not run.
    """
    return _arguments.at_least(value, argument)


def _in_base_unit(stat: Stat) -> Stat:
    """``stat`` in its dimension's base unit (MiB and GiB in bytes, ms in ns); a unit the
    table does not know stays as it is."""
    dimension = UNITS.get(stat.unit)
    if dimension is None or dimension[1] == 1:
        return stat
    factor = dimension[1]
    return Stat(
        stat.metric,
        BASE_UNIT[dimension[0]],
        stat.median * factor,
        None if stat.p20 is None else stat.p20 * factor,
        None if stat.p80 is None else stat.p80 * factor,
    )


def _comparable(base: Stat, new: Stat) -> tuple[Stat, Stat] | str:
    """The two statistics in one unit, or why they cannot be compared.

    Units of one dimension are converted (1 MiB against 10 GiB compares 2^20 bytes with
    10 * 2^30); units of different dimensions, unknown units that differ, and medians that
    are not positive (a ratio of or to 0 means nothing) cannot be compared.
    """
    if base.unit != new.unit:
        b, n = UNITS.get(base.unit), UNITS.get(new.unit)
        if b is None or n is None or b[0] != n[0]:
            return f"units differ: {base.unit!r} vs {new.unit!r}"
        base, new = _in_base_unit(base), _in_base_unit(new)
    if not base.median > 0:
        return f"BASE median is {short_repr(base.median)} {base.unit}: no ratio"
    if not new.median > 0:
        return f"NEW median is {short_repr(new.median)} {new.unit}: no ratio"
    ratio = new.median / base.median
    if not 0 < ratio < math.inf:
        return f"NEW/BASE of {short_repr(new.median)} / {short_repr(base.median)} is not a number"
    return base, new


def is_significant(base: Stat, new: Stat, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """Whether NEW differs from BASE beyond the noise, by the one verdict.

    The answer of :func:`kernelindex_sdk.verdict.judge` for two single runs (no samples
    counted, no replicates known): the change passes 3.29 times the noise the two
    p20-p80 spreads show, and may reach ``threshold``. A run without p20 or p80, as a
    single-sample run (p20 = p80), has no spread: only the threshold decides, exactly
    (``|new - base| > threshold * base``). See docs/compare.md.

    Args:
        base: The base run's statistic.
        new: The new run's statistic (same metric and unit).
        threshold: The smallest relative change that counts, as a fraction (0.05 = 5%).

    Returns:
        True when the verdict is a regression or an improvement.
    """
    threshold = _fraction("threshold", threshold)
    _arguments.instance(base, Stat, "base")
    _arguments.instance(new, Stat, "new")
    return _stat_verdict(base, new, threshold).changed


def _stat_verdict(base: Stat, new: Stat, threshold: float) -> Verdict:
    def point(stat: Stat) -> Point:
        return Point(median=stat.median, p20=stat.p20, p80=stat.p80)

    return judge(point(base), point(new), threshold=threshold, higher_is_better=_rate(base))


def higher_is_better(stat: Stat) -> bool:
    """Whether a larger value of ``stat`` is an improvement: rates (bytes or FLOP per
    second); time, memory and unknown units are better smaller.

    Raises:
        ArgumentError: when ``stat`` is not a Stat.
    """
    _arguments.instance(stat, Stat, "stat")
    return _rate(stat)


def _rate(stat: Stat) -> bool:
    return UNITS.get(stat.unit, ("", 1))[0] in RATE_DIMENSIONS


@attrs.frozen
class Pair:
    """One row of a comparison: two paired runs, or one run that found no partner.

    Attributes:
        base: The BASE run (None for a run only in NEW).
        new: The NEW run (None for a run only in BASE).
        ratio: NEW median / BASE median; None unless both runs have a value.
        significant: Whether the verdict is a change (regression or improvement).
        notes: Facts a reader needs (``latest of 3 BASE runs``, ``protocols differ``).
        reason: Why a run could not be paired (None for a pair).
        problem: Why a pair of values has no ratio: units of different dimensions, a
            median that is not positive (None when it has one, or a side failed).
        verdict: The one verdict on the pair (:func:`kernelindex_sdk.verdict.judge`):
            its kind, the noise it assumed and its evidence; None when a side failed,
            is absent, or cannot be compared.
    """

    base: Run | None
    new: Run | None
    ratio: float | None = None
    significant: bool = False
    notes: tuple[str, ...] = ()
    reason: str | None = None
    problem: str | None = None
    verdict: Verdict | None = None

    @property
    def degraded(self) -> bool:
        """Whether a side is degraded, so that the pair got no verdict."""
        return self.verdict is not None and self.verdict.kind == DEGRADED

    @property
    def paired(self) -> bool:
        """Whether both sides are present."""
        return self.base is not None and self.new is not None

    @property
    def failed(self) -> bool:
        """Whether a side of the pair failed (it then has no numbers)."""
        return any(r is not None and r.status == "failed" for r in (self.base, self.new))

    @property
    def run(self) -> Run:
        """The run of a one-sided row (BASE when both are present).

        Raises:
            ArgumentError: for a Pair built with neither side (it is a ValueError too).
        """
        run = self.base if self.base is not None else self.new
        if run is None:  # only a Pair built by hand with neither side
            raise ArgumentError(
                argument="base", reason="a pair without runs (base and new are None)"
            )
        return run

    def slower_than(self, fraction: float) -> bool:
        """Whether the verdict calls NEW worse than BASE, at the comparison's threshold
        and at ``fraction`` alike: larger for time and memory, smaller for rates.

        Raises:
            ArgumentError: when ``fraction`` is not a finite number >= 0.
        """
        fraction = _fraction("fraction", fraction)
        v = self.verdict
        if v is None or v.kind != REGRESSION:
            return False
        return v.at(max(fraction, v.threshold)).kind == REGRESSION


@attrs.frozen
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        pairs: Paired rows (failed ones included), in BASE's input order.
        unpaired: Runs that found no partner, each with its reason.
        threshold: The threshold the significance used, as a fraction.
        varying: Parameter names whose values differ between rows (for labels).
        base: The BASE runs, with the invalid records in ``base.problems``.
        new: The NEW runs, likewise.
        several_environments: Whether the rows come from more than one environment.
        several_metrics: Whether the rows measure more than one metric (labels then
            name the metric of rows other than latency).
    """

    pairs: list[Pair]
    unpaired: list[Pair]
    threshold: float
    varying: tuple[str, ...]
    base: RunSet
    new: RunSet
    several_environments: bool = False
    several_metrics: bool = False
    # Labels worked out so far: one per workload and environment, not one per row.
    _labels: dict[tuple[int, str, str, str], str] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )

    def geomeans(self) -> dict[str, float]:
        """Geometric mean of the ratios, per metric (latency, memory), over pairs with one."""
        logs: dict[str, list[float]] = {}
        for pair in self.pairs:
            if pair.ratio is not None and pair.ratio > 0:
                logs.setdefault(pair.run.metric, []).append(math.log(pair.ratio))
        return {m: math.exp(math.fsum(v) / len(v)) for m, v in logs.items()}

    def geomean_verdicts(self) -> dict[str, Verdict]:
        """The verdict of each metric's geometric mean (:func:`kernelindex_sdk.verdict.summary`):
        a change only when it passes the threshold and a row of it changed that way."""
        rows: dict[str, list[Verdict]] = {}
        for pair in self.pairs:
            if pair.verdict is not None and pair.ratio is not None and pair.ratio > 0:
                rows.setdefault(pair.run.metric, []).append(pair.verdict)
        return {
            metric: summary(rows.get(metric, ()), mean, self.threshold)
            for metric, mean in self.geomeans().items()
        }

    def regressions(self, percent: float) -> list[Pair]:
        """Pairs the verdict calls worse, at ``percent``% as at the threshold.

        Raises:
            ArgumentError: when ``percent`` is not a finite number >= 0.
        """
        fraction = _fraction("percent", percent) / 100
        return [p for p in self.pairs if p.slower_than(fraction)]

    @property
    def problems(self) -> list[Pair]:
        """Pairs whose values cannot be compared (see :attr:`Pair.problem`): a gate cannot
        pass what it cannot judge."""
        return [p for p in self.pairs if p.problem is not None]

    def label(self, run: Run) -> str:
        """The run's workload, readable: operation, pass and the parameters that vary.

        When the rows come from more than one environment, the run's GPU (or its
        environment digest) follows an ``@``.
        """
        # The Workload object (shared by a set's runs of one digest) stands for its content.
        key = (id(run.workload), run.workload_digest, run.environment_digest, run.metric)
        text = self._labels.get(key)
        if text is None:
            text = workload_label(run, self.varying)
            if self.several_metrics and run.metric != "latency":
                # A memory row of one workload must not read as its latency row.
                text = f"{text} ({run.metric})"
            if self.several_environments:
                text = f"{text} @ {environment_label(run, self.base, self.new)}"
            self._labels[key] = text
        return text


def _sides(pair: Pair) -> Iterator[Run]:
    yield from (r for r in (pair.base, pair.new) if r is not None)


def workload_label(run: Run, names: Iterable[str] | None = None) -> str:
    """``operation pass name=value ...`` for the given parameter names (all when None).

    Raises:
        ArgumentError: when ``run`` is not a Run or ``names`` not an iterable of str.
    """
    _arguments.instance(run, Run, "run")
    if names is not None and (isinstance(names, str) or not isinstance(names, Iterable)):
        raise ArgumentError(
            argument="names", reason=f"expected parameter names, got {short_repr(names)}"
        )
    w = run.workload
    if w is None:
        return f"workload {run.workload_digest.split(':', 1)[-1][:12]}"
    wanted = None if names is None else set(names)
    params = [f"{k}={v}" for k, v in w.parameters if wanted is None or k in wanted]
    return " ".join([w.operation, w.pass_, *params])


def _key_function(
    across_environments: bool, across_protocols: bool
) -> Callable[[Run], tuple[str, ...]]:
    """The pairing key of a run: metric, workload, and the protocol and environment digests
    unless pairing across them. Across protocols implies across environments."""
    if across_protocols:
        return lambda r: (r.metric, r.workload_digest)
    if across_environments:
        return lambda r: (r.metric, r.workload_digest, r.protocol_digest)
    return lambda r: (r.metric, r.workload_digest, r.protocol_digest, r.environment_digest)


def _group(
    runs: Iterable[Run], keyed: Any, provider: str | None
) -> dict[tuple[str, ...], dict[tuple[str, ...], list[Run]]]:
    groups: dict[tuple[str, ...], dict[tuple[str, ...], list[Run]]] = {}
    for run in runs:
        if provider is not None and run.provider != provider:
            continue
        groups.setdefault(keyed(run), {}).setdefault(run.implementation_key, []).append(run)
    return groups


def _latest(runs: list[Run], side: str) -> tuple[Run, tuple[str, ...]]:
    if len(runs) == 1:
        return runs[0], ()
    run = max(runs, key=lambda r: r.observed_at)
    return run, (f"latest of {len(runs)} {side} runs of {run.implementation}",)


#: The noise of a pair from its BASE and NEW runs, where a caller knows more than the runs
#: show (``compare --history``: the series'); None lets the pair's replicates say.
NoiseOf = Callable[[list[Run], list[Run]], "Noise | None"]


def _no_noise(_base: list[Run], _new: list[Run]) -> Noise | None:
    return None


def compare(
    base: Iterable[Any] | RunSet,
    new: Iterable[Any] | RunSet,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    across_environments: bool = False,
    across_protocols: bool = False,
    base_provider: str | None = None,
    new_provider: str | None = None,
    include_degraded: bool = False,
    noise_of: NoiseOf | None = None,
) -> Comparison:
    """Pair the runs of BASE and NEW and compute each pair's ratio and verdict.

    Runs pair when they share metric, workload, protocol and environment digests.
    Where a side has several runs at one key, they pair by implementation (provider
    and entry point); where it has several of one implementation, the latest
    ``observedAt`` stands for them and the row says so; its replicates (runs of the same
    implementation digest, environment digest and commit) are pooled into one point, and
    the noise they show is the pair's (:func:`kernelindex_sdk.verdict.replicate_noise`).

    Args:
        base: Records (models or JSON values) or a RunSet from ``load_runs``.
        new: Likewise.
        threshold: The smallest relative change that can be significant (0.05 = 5%).
        across_environments: Pair on workload and protocol only (GPU against GPU).
        across_protocols: Pair on workload only; rows whose protocols differ say so.
        base_provider: Keep only BASE runs of this provider (torch against liger in one file).
        new_provider: Keep only NEW runs of this provider.
        include_degraded: Judge degraded runs too (by default a pair with a degraded side
            says ``degraded`` and is neither a regression nor an improvement).
        noise_of: The run-to-run noise of a pair, from its BASE and NEW runs, where the
            caller knows more than the runs show (``compare --history`` gives the
            series'); None from it, or by default, lets the pair's replicates say.

    Returns:
        The pairs, the unpaired runs with reasons, and the parameters that vary.

    Raises:
        SchemaValidationError: when a record given as a model or JSON value is invalid.
        ArgumentError: when ``threshold`` is not a finite number >= 0 (it is a ValueError
            too), or a provider is not a str.
    """
    threshold = _fraction("threshold", threshold)
    for argument, provider in (("base_provider", base_provider), ("new_provider", new_provider)):
        if provider is not None and not isinstance(provider, str):
            raise ArgumentError(
                argument=argument, reason=f"expected a str or None, got {short_repr(provider)}"
            )
    base_set, new_set = run_set(base), run_set(new)
    noise = _no_noise if noise_of is None else noise_of

    keyed = _key_function(across_environments, across_protocols)
    base_groups = _group(base_set.runs, keyed, base_provider)
    new_groups = _group(new_set.runs, keyed, new_provider)
    diagnose = _Diagnosis(
        base_set,
        new_set,
        base_groups,
        new_groups,
        across_environments=across_environments,
        across_protocols=across_protocols,
        providers={"BASE": base_provider, "NEW": new_provider},
    )
    pairs: list[Pair] = []
    unpaired: list[Pair] = []
    for key, base_impls in base_groups.items():
        new_impls = new_groups.get(key)
        if new_impls is None:
            for runs in base_impls.values():
                run, notes = _latest(runs, "BASE")
                unpaired.append(Pair(run, None, notes=notes, reason=diagnose.base_only(run)))
            continue
        if len(base_impls) == 1 and len(new_impls) == 1:
            matches = [(next(iter(base_impls.values())), next(iter(new_impls.values())))]
        else:
            matches = [(runs, new_impls[i]) for i, runs in base_impls.items() if i in new_impls]
            unpaired.extend(_missing_implementations(base_impls, new_impls))
        pairs.extend(
            _pair(base_runs, new_runs, threshold, include_degraded, noise(base_runs, new_runs))
            for base_runs, new_runs in matches
        )
    for key, new_impls in new_groups.items():
        if key in base_groups:
            continue
        for runs in new_impls.values():
            run, notes = _latest(runs, "NEW")
            unpaired.append(Pair(None, run, notes=notes, reason=diagnose.new_only(run)))
    rows = [r for p in (*pairs, *unpaired) for r in _sides(p)]
    return Comparison(
        pairs=pairs,
        unpaired=unpaired,
        threshold=threshold,
        varying=_varying(rows),
        base=base_set,
        new=new_set,
        several_environments=len({r.environment_digest for r in rows}) > 1,
        several_metrics=len({r.metric for r in rows}) > 1,
    )


def _missing_implementations(
    base_impls: dict[tuple[str, ...], list[Run]], new_impls: dict[tuple[str, ...], list[Run]]
) -> Iterator[Pair]:
    """The runs at one key whose implementation the other side lacks."""
    for side, mine, theirs in (("BASE", base_impls, new_impls), ("NEW", new_impls, base_impls)):
        other = "NEW" if side == "BASE" else "BASE"
        others = ", ".join(sorted({runs[0].implementation for runs in theirs.values()}))
        for impl, runs in mine.items():
            if impl in theirs:
                continue
            run, notes = _latest(runs, side)
            reason = (
                f"no {run.implementation} run in {other} at this workload ({other} has {others})"
            )
            row = Pair(run, None) if side == "BASE" else Pair(None, run)
            yield attrs.evolve(row, notes=notes, reason=reason)


def _replicates(runs: list[Run], run: Run) -> list[Run]:
    """The runs of ``runs`` that measured the same point as ``run``: the same code (its
    implementation digest) in the same environment, at the same commit."""
    return [
        r
        for r in runs
        if r.implementation_digest == run.implementation_digest
        and r.environment_digest == run.environment_digest
        and r.commit == run.commit
        and r.value is not None
        and run.value is not None
        and r.value.unit == run.value.unit
    ]


def _side(runs: list[Run], side: str) -> tuple[Run, Point | None, tuple[str, ...], list[Run]]:
    """The run that stands for ``runs`` (the latest), the point it gives (its replicates
    pooled), the notes that say so, and the replicates."""
    run, notes = _latest(runs, side)
    if run.value is None:
        return run, None, notes, [run]
    same = _replicates(runs, run)
    if len(same) < 2:
        return run, run.point, notes, [run]
    points = [r.point for r in same]
    pooled = pool(p for p in points if p is not None)
    said = f"{len(same)} {side} runs of {run.implementation} pooled (replicates)"
    notes = (said,) if len(same) == len(runs) else (*notes, said)
    # The row shows what was judged: the pooled median, p20, p80 and fewest samples.
    value = Stat(run.value.metric, run.value.unit, pooled.median, pooled.p20, pooled.p80)
    stands = run._replace(
        value=value, runs=pooled.runs, samples=pooled.samples, degraded=pooled.degraded
    )
    return stands, pooled, notes, same


def _noise(groups: Iterable[list[Run]]) -> Noise | None:
    return replicate_noise(
        [r.value.median for r in runs if r.value is not None and r.value.median > 0]
        for runs in groups
    )


def _pair(
    base_runs: list[Run],
    new_runs: list[Run],
    threshold: float,
    include_degraded: bool = False,
    noise: Noise | None = None,
) -> Pair:
    b, b_point, base_notes, b_same = _side(base_runs, "BASE")
    n, n_point, new_notes, n_same = _side(new_runs, "NEW")
    notes = base_notes + new_notes
    if b.protocol_digest != n.protocol_digest:
        notes += ("protocols differ",)
    if b.environment_digest != n.environment_digest:
        notes += ("environments differ",)
    bv, nv = b.value, n.value
    if bv is None or nv is None or b_point is None or n_point is None:
        return Pair(b, n, notes=notes)
    both = _comparable(bv, nv)
    if isinstance(both, str):
        return Pair(b, n, notes=(*notes, both), problem=both)
    bv, nv = both
    # Units of one dimension were converted: the points follow.
    factor_b = bv.median / b.value.median if b.value is not None else 1.0
    factor_n = nv.median / n.value.median if n.value is not None else 1.0
    if noise is None:
        noise = _noise([b_same, n_same])
    found = judge(
        _scaled(b_point, factor_b),
        _scaled(n_point, factor_n),
        threshold=threshold,
        noise=noise,
        higher_is_better=_rate(bv),
        include_degraded=include_degraded,
    )
    if found.kind == DEGRADED:
        notes += (found.reason,)
    return Pair(
        b,
        n,
        ratio=found.ratio,
        significant=found.changed,
        notes=notes,
        verdict=found,
    )


def _scaled(point: Point, factor: float) -> Point:
    """``point`` in another unit of its dimension (its median times ``factor``)."""
    if factor == 1.0:
        return point
    return attrs.evolve(
        point,
        median=point.median * factor,
        p20=None if point.p20 is None else point.p20 * factor,
        p80=None if point.p80 is None else point.p80 * factor,
    )


def _varying(runs: list[Run]) -> tuple[str, ...]:
    """Parameters whose values differ between the runs' workloads, or that some lack
    (or hold as null); every parameter when there is one workload."""
    seen: dict[str, set[str]] = {}
    # How many workloads give each parameter a value other than null.
    given: dict[str, int] = {}
    # Runs of one digest share their Workload: one per digest first (digests hash once).
    # A run that carries only the digest must not hide the workload another run carries.
    by_digest = {r.workload_digest: r.workload for r in runs if r.workload is not None}
    workloads = set(by_digest.values())
    for w in workloads:
        for k, v in w.parameters:
            seen.setdefault(k, set()).add(repr(v))
            if v is not None:
                given[k] = given.get(k, 0) + 1
    if len(workloads) <= 1:
        return tuple(sorted(seen))
    return tuple(
        sorted(
            k for k, values in seen.items() if len(values) > 1 or given.get(k, 0) < len(workloads)
        )
    )


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for k in sorted(value):
            yield from _flatten(value[k], f"{prefix}.{k}" if prefix else k)
    else:
        yield prefix, value


_ABSENT: Final = object()


def field_differences(a: Any, b: Any, limit: int = _MAX_FIELDS) -> list[str]:
    """``path a vs b`` for each field where two JSON objects differ (at most ``limit``)."""
    fa, fb = dict(_flatten(a)), dict(_flatten(b))
    out = []
    for path in sorted(fa.keys() | fb.keys()):
        va, vb = fa.get(path, _ABSENT), fb.get(path, _ABSENT)
        if va != vb or type(va) is not type(vb):
            shown = ["absent" if v is _ABSENT else short_repr(v) for v in (va, vb)]
            out.append(f"{path} {shown[0]} vs {shown[1]}")
    if len(out) > limit:
        out = [*out[:limit], f"and {len(out) - limit} more"]
    return out


class _Diagnosis:
    """Why a run found no partner: the nearest run of the other side, and what differs."""

    def __init__(
        self,
        base: RunSet,
        new: RunSet,
        base_groups: dict[tuple[str, ...], dict[tuple[str, ...], list[Run]]],
        new_groups: dict[tuple[str, ...], dict[tuple[str, ...], list[Run]]],
        *,
        across_environments: bool,
        across_protocols: bool,
        providers: dict[str, str | None],
    ) -> None:
        self._providers = providers
        # Objects come from the whole sets; candidates only from the runs kept for pairing.
        self._sets = {"BASE": base, "NEW": new}
        self._fields = ["workload"]
        if not across_protocols:
            self._fields.append("protocol")
        if not across_environments:
            self._fields.append("environment")
        self._kept = {"BASE": base_groups, "NEW": new_groups}
        self._indexes: tuple[dict[str, Any], dict[str, Any]] | None = None
        self._cache: dict[tuple[str, str, str], list[str]] = {}

    def base_only(self, run: Run) -> str:
        return self._reason(run, "BASE", "NEW")

    def new_only(self, run: Run) -> str:
        return self._reason(run, "NEW", "BASE")

    def _reason(self, run: Run, side: str, other: str) -> str:
        if self._indexes is None:
            # Built on the first unpaired run: a comparison where all pair never pays for it.
            kept = {
                side: [r for impls in groups.values() for rs in impls.values() for r in rs]
                for side, groups in self._kept.items()
            }
            self._indexes = (
                {side: _index(runs, _by_workload) for side, runs in kept.items()},
                {side: _index(runs, _by_family) for side, runs in kept.items()},
            )
        by_workload, by_family = self._indexes
        candidates = by_workload[other].get(_by_workload(run))
        if not candidates:
            candidates = by_family[other].get(_by_family(run), [])[:_MAX_CANDIDATES]
        if not candidates:
            what = (
                "workload"
                if run.workload is None
                else f"{run.workload.operation} {run.workload.pass_} {run.metric}"
            )
            provider = self._providers[other]
            of = "" if provider is None else f" of provider {provider!r}"
            return f"no {what} run{of} in {other}"
        best = min(candidates, key=lambda c: self._distance(run, c, side))
        return "; ".join(self._differences(run, best, side))

    def _distance(self, run: Run, candidate: Run, side: str) -> int:
        return sum(len(self._difference(f, run, candidate, side)) for f in self._fields)

    def _differences(self, run: Run, candidate: Run, side: str) -> list[str]:
        out = []
        for field in self._fields:
            diff = self._difference(field, run, candidate, side)
            if diff:
                out.append(f"{field}: {', '.join(diff)}")
        return out or ["no partner"]

    def _difference(self, field: str, run: Run, candidate: Run, side: str) -> list[str]:
        attr = _DIGEST_NAMES[field]
        mine, theirs = getattr(run, attr), getattr(candidate, attr)
        if mine == theirs:
            return []
        base_digest, new_digest = (mine, theirs) if side == "BASE" else (theirs, mine)
        key = (field, base_digest, new_digest)
        found = self._cache.get(key)
        if found is None:
            base_obj = self._sets["BASE"].spec(base_digest)
            new_obj = self._sets["NEW"].spec(new_digest)
            digests = f"digest {short_digest(base_digest)} vs {short_digest(new_digest)}"
            if base_obj is None or new_obj is None:
                found = [f"{digests} (objects absent)"]
            else:
                found = field_differences(base_obj, new_obj) or [digests]
            self._cache[key] = found
        return found


def _by_workload(run: Run) -> tuple[str, ...]:
    return (run.metric, run.workload_digest)


def _by_family(run: Run) -> tuple[str, ...]:
    w = run.workload
    return (run.metric, "") if w is None else (run.metric, w.operation, w.pass_)


def _index(runs: Iterable[Run], key: Any) -> dict[tuple[str, ...], list[Run]]:
    out: dict[tuple[str, ...], list[Run]] = {}
    for run in runs:
        out.setdefault(key(run), []).append(run)
    return out


def render(comparison: Comparison, fmt: str = "text") -> str:
    """The comparison in one of :data:`FORMATS`, ending with a newline.

    Raises:
        ArgumentError: for an unknown format (it is a ValueError too), or when
            ``comparison`` is not a Comparison.
    """
    # Checked here: the renderer takes what it draws and imports nothing from this module.
    _arguments.instance(comparison, Comparison, "comparison")
    return _render.render(comparison, fmt)


def pairs_as_json(c: Comparison) -> list[dict[str, Any]]:
    """The documented JSON form: one object per row, pairs first, then the unpaired.

    Raises:
        ArgumentError: when ``c`` is not a Comparison.
    """
    _arguments.instance(c, Comparison, "comparison")
    return _render.pairs_as_json(c)
